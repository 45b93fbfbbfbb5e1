package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/msgyaml"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/msgs"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rcl_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/msg"
)

// run executes one command line without DDS and returns stdout, stderr and
// the exit status Main would give.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errs bytes.Buffer
	code := Main(msgs.Registry(), args, strings.NewReader(""), &out, &errs)
	return out.String(), errs.String(), code
}

func TestParseFlags(t *testing.T) {
	spec := flagSpec{"--once": false, "-1": false, "--rate": true, "-r": true}
	p, err := parseFlags([]string{"/x", "--rate=2", "std_msgs/msg/Int32", "-1", "{data: -1}", "-r", "5", "-3.5", "--", "--once"}, spec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.pos, []string{"/x", "std_msgs/msg/Int32", "{data: -1}", "-3.5", "--once"}) {
		t.Errorf("positionals = %q", p.pos)
	}
	if p.get("", "--rate") != "2" || p.get("", "-r") != "5" || !p.has("-1") || p.has("--once") {
		t.Errorf("flags = %v", p.flags)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, `unknown option "--bogus"`},
		{[]string{"--rate"}, "option --rate needs a value"},
		{[]string{"--once=yes"}, "option --once takes no value"},
	} {
		if _, err := parseFlags(c.args, spec); err == nil || err.Error() != c.want {
			t.Errorf("parseFlags(%q) = %v, want %s", c.args, err, c.want)
		}
	}
}

func TestInterfaceShow(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"geometry_msgs/msg/Twist"},
			"Vector3 linear\n\tfloat64 x\n\tfloat64 y\n\tfloat64 z\nVector3 angular\n\tfloat64 x\n\tfloat64 y\n\tfloat64 z\n"},
		{[]string{"std_srvs/srv/SetBool"}, "bool data\n---\nbool success\nstring message\n"},
		{[]string{"std_srvs/SetBool"}, "bool data\n---\nbool success\nstring message\n"},
		{[]string{"std_msgs/msg/Header", "--no-comments"},
			"builtin_interfaces/Time stamp\n\tint32 sec\n\tuint32 nanosec\nstring frame_id\n"},
	}
	for _, c := range cases {
		out, errs, code := run(t, append([]string{"interface", "show"}, c.args...)...)
		if code != 0 || out != c.want {
			t.Errorf("interface show %v: exit %d %s\n%s\nwant\n%s", c.args, code, errs, out, c.want)
		}
	}
	// Nested comments only with --all-comments.
	plain, _, _ := run(t, "interface", "show", "geometry_msgs/msg/PoseStamped")
	all, _, _ := run(t, "interface", "show", "geometry_msgs/msg/PoseStamped", "--all-comments")
	if strings.Count(all, "#") <= strings.Count(plain, "#") {
		t.Errorf("--all-comments shows no more comments:\n%s\n---\n%s", plain, all)
	}
	if _, errs, code := run(t, "interface", "show", "geometry_msgs/msg/Nope"); code != 1 ||
		errs != "fsmnodes: unknown message type \"geometry_msgs/msg/Nope\"\n" {
		t.Errorf("unknown type: exit %d %q", code, errs)
	}
}

func TestShowInterfaceTrailingComments(t *testing.T) {
	if i := commentStart(`string a "x#y" # note`); i != 15 {
		t.Errorf("commentStart = %d", i)
	}
	if i := commentStart(`string a`); i != 0 {
		t.Errorf("commentStart without comment = %d", i)
	}
	for line, want := range map[string]string{
		"Vector3 linear":                 "geometry_msgs/msg/Vector3",
		"geometry_msgs/Point[] points":   "geometry_msgs/msg/Point",
		"Header header":                  "std_msgs/msg/Header",
		"float64[36] covariance":         "",
		"string<=10 name":                "",
		"int32 X=1":                      "",
		"builtin_interfaces/Time[<=3] t": "builtin_interfaces/msg/Time",
	} {
		if got := nestedType("geometry_msgs", line); got != want {
			t.Errorf("nestedType(%q) = %q, want %q", line, got, want)
		}
	}
}

func TestInterfaceList(t *testing.T) {
	out, _, code := run(t, "interface", "list")
	if code != 0 || !strings.HasPrefix(out, "Messages:\n    ") || !strings.Contains(out, "\nServices:\n") ||
		!strings.Contains(out, "    std_srvs/srv/SetBool\n") || !strings.Contains(out, "\nActions:\n    ") {
		t.Errorf("interface list:\n%s", out)
	}
	if strings.Contains(out, "_Request") || strings.Contains(out, "_SendGoal") {
		t.Errorf("interface list shows derived types:\n%s", out)
	}
	srvs, _, _ := run(t, "interface", "list", "-s")
	if strings.Contains(srvs, "Messages:") || !strings.HasPrefix(srvs, "Services:\n") {
		t.Errorf("interface list -s:\n%s", srvs)
	}
	pkg, _, code := run(t, "interface", "package", "std_srvs")
	if code != 0 || pkg != "std_srvs/srv/Empty\nstd_srvs/srv/SetBool\nstd_srvs/srv/Trigger\n" {
		t.Errorf("interface package std_srvs:\n%s", pkg)
	}
}

func TestUsageAndHelp(t *testing.T) {
	cases := []struct {
		args       []string
		code       int
		stdout     string
		stderrPart string
	}{
		{[]string{"--help"}, 0, "usage: fsmnodes <command>", ""},
		{[]string{}, 2, "usage: fsmnodes <command>", "missing command"},
		{[]string{"topic"}, 2, "fsmnodes topic echo", "topic: missing verb"},
		{[]string{"topic", "--help"}, 0, "fsmnodes topic pub", ""},
		{[]string{"topic", "pub", "--help"}, 0, "usage: fsmnodes topic pub TOPIC TYPE", ""},
		{[]string{"topic", "nope"}, 2, "", `topic: unknown verb "nope"`},
		{[]string{"nope"}, 2, "", `unknown command "nope"`},
		{[]string{"topic", "pub", "/x", "std_msgs/msg/String", "{data: 1}"}, 1, "",
			`failed to populate field: field "data" of std_msgs/msg/String: expected a string, got int "1"`},
		{[]string{"topic", "pub", "/x", "std_msgs/msg/String", "-1", "-t", "3"}, 2, "", "cannot pass both --once and --times"},
		{[]string{"topic", "pub", "/x", "std_msgs/msg/String", "--qos-reliability", "sometimes"}, 2, "",
			`--qos-reliability: "sometimes" is not one of reliable, best_effort, system_default`},
		{[]string{"service", "call", "/s", "std_srvs/srv/SetBool", "{data: 2}"}, 1, "",
			`field "data" of std_srvs/srv/SetBool_Request: expected a bool (true or false), got int "2"`},
		{[]string{"action", "send_goal", "/a", "nav2_msgs/action/Nope"}, 1, "", `the passed action type "nav2_msgs/action/Nope" is invalid`},
		{[]string{"node", "info"}, 2, "", "usage: fsmnodes node info NODE"},
		{[]string{"launch"}, 2, "", "usage: fsmnodes launch [PACKAGE] FILE"},
		{[]string{"launch", "x.launch.xml", "robot=r1", "y"}, 2, "", "usage: fsmnodes launch"},
		{[]string{"lifecycle", "--help"}, 0, "fsmnodes lifecycle set NODE TRANSITION", ""},
		{[]string{"lifecycle", "set", "/n"}, 2, "", "usage: fsmnodes lifecycle set NODE TRANSITION"},
		{[]string{"lifecycle", "list"}, 2, "", "usage: fsmnodes lifecycle list NODE"},
		{[]string{"lifecycle", "get", "/a", "/b"}, 2, "", "usage: fsmnodes lifecycle get [NODE]"},
		{[]string{"lifecycle", "nodes", "extra"}, 2, "", "usage: fsmnodes lifecycle nodes"},
		{[]string{"lifecycle", "get", "/n", "--spin-time", "0"}, 2, "", "--spin-time"},
	}
	for _, c := range cases {
		out, errs, code := run(t, c.args...)
		if code != c.code || !strings.Contains(out, c.stdout) || !strings.Contains(errs, c.stderrPart) {
			t.Errorf("fsmnodes %q: exit %d\nstdout %q\nstderr %q\nwant exit %d, stdout with %q, stderr with %q",
				c.args, code, out, errs, c.code, c.stdout, c.stderrPart)
		}
	}
}

func TestLaunchPrintAndShowArgs(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "talker"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "t.launch.xml")
	xml := `<launch>
  <arg name="ns" default="robot" description="where it runs"><choice value="robot"/><choice value="other"/></arg>
  <node pkg="fsmnodes" exec="talker" name="talk er" namespace="$(var ns)"><param name="rate" value="2.5"/></node>
</launch>`
	if err := os.WriteFile(file, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := run(t, "launch", file, "--print", "--bin-dir", bin, "ns:=other")
	want := "talker-1 (" + file + ":3)\n  " + bin + "/talker --ros-args -r '__node:=talk er' -r __ns:=/other --params-file '<inline parameters>'\n" +
		"    | \"/other/talk er\":\n    |   ros__parameters:\n    |     rate: 2.5\n"
	if code != 0 || out != want {
		t.Errorf("launch --print: exit %d %s\n%s\nwant\n%s", code, errs, out, want)
	}
	out, _, code = run(t, "launch", file, "-s", "--bin-dir", bin)
	want = "Arguments (pass arguments as '<name>:=<value>'):\n\n    'ns':\n        where it runs\n" +
		"        Valid choices are: ['robot', 'other']\n        (default: 'robot')\n"
	if code != 0 || out != want {
		t.Errorf("launch --show-args: exit %d\n%s\nwant\n%s", code, out, want)
	}
	_, errs, code = run(t, "launch", file, "--bin-dir", bin, "ns:=third")
	if code != 1 || !strings.Contains(errs, `t.launch.xml:2: launch argument "ns" is "third"; valid choices are robot, other`) {
		t.Errorf("bad choice: exit %d %s", code, errs)
	}
}

func TestParameterValueFromString(t *testing.T) {
	cases := []struct {
		in   string
		want rcl_interfaces_msg.ParameterValue
	}{
		{"true", rcl_interfaces_msg.ParameterValue{Type: 1, BoolValue: true}},
		{"42", rcl_interfaces_msg.ParameterValue{Type: 2, IntegerValue: 42}},
		{"-1.5", rcl_interfaces_msg.ParameterValue{Type: 3, DoubleValue: -1.5}},
		{"hello", rcl_interfaces_msg.ParameterValue{Type: 4, StringValue: "hello"}},
		// ros2 keeps the text of anything that is not a number or bool,
		// quotes included.
		{"'42'", rcl_interfaces_msg.ParameterValue{Type: 4, StringValue: "'42'"}},
		{"[true, false]", rcl_interfaces_msg.ParameterValue{Type: 6, BoolArrayValue: []bool{true, false}}},
		{"[1, 2]", rcl_interfaces_msg.ParameterValue{Type: 7, IntegerArrayValue: []int64{1, 2}}},
		{"[1.0, 2.5]", rcl_interfaces_msg.ParameterValue{Type: 8, DoubleArrayValue: []float64{1, 2.5}}},
		{"[a, b]", rcl_interfaces_msg.ParameterValue{Type: 9, StringArrayValue: []string{"a", "b"}}},
		{"[1, a]", rcl_interfaces_msg.ParameterValue{Type: 4, StringValue: "[1, a]"}},
		{"{a: 1}", rcl_interfaces_msg.ParameterValue{Type: 4, StringValue: "{a: 1}"}},
		{"[1", rcl_interfaces_msg.ParameterValue{Type: 4, StringValue: "[1"}},
	}
	for _, c := range cases {
		got := ParameterValueFromString(c.in)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParameterValueFromString(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestParamValueText(t *testing.T) {
	cases := []struct {
		v            rcl_interfaces_msg.ParameterValue
		label, value string
	}{
		{rcl_interfaces_msg.ParameterValue{Type: 1}, "Boolean value is:", "False"},
		{rcl_interfaces_msg.ParameterValue{Type: 3, DoubleValue: 1}, "Double value is:", "1.0"},
		{rcl_interfaces_msg.ParameterValue{Type: 7, IntegerArrayValue: []int64{1, 2}}, "Integer values are:", "array('q', [1, 2])"},
		{rcl_interfaces_msg.ParameterValue{Type: 8, DoubleArrayValue: []float64{0.5}}, "Double values are:", "array('d', [0.5])"},
		{rcl_interfaces_msg.ParameterValue{Type: 9, StringArrayValue: []string{"a", "it's"}}, "String values are:", `['a', "it's"]`},
		{rcl_interfaces_msg.ParameterValue{Type: 0}, "Parameter not set.", ""},
	}
	for _, c := range cases {
		label, value, err := paramValueText(&c.v)
		if err != nil || label != c.label || value != c.value {
			t.Errorf("paramValueText(%+v) = %q %q %v", c.v, label, value, err)
		}
	}
	if _, _, err := paramValueText(&rcl_interfaces_msg.ParameterValue{Type: 77}); err == nil {
		t.Error("unknown type must fail")
	}
}

func TestAdaptQoS(t *testing.T) {
	rel := ros.EndpointInfo{QoS: ros.QoSDefault}
	tl := ros.EndpointInfo{QoS: ros.QoSLatched}
	be := ros.EndpointInfo{QoS: ros.QoSSensorData}
	if q := adaptQoS(ros.QoSDefault, []ros.EndpointInfo{tl}, false, false); q.Durability != ros.DurabilityTransientLocal ||
		q.Reliability != ros.ReliabilityReliable {
		t.Errorf("latched publisher: %+v", q)
	}
	if q := adaptQoS(ros.QoSDefault, []ros.EndpointInfo{tl, rel, be}, false, false); q.Durability != ros.DurabilityVolatile ||
		q.Reliability != ros.ReliabilityBestEffort {
		t.Errorf("mixed publishers: %+v", q)
	}
	if q := adaptQoS(ros.QoSDefault, []ros.EndpointInfo{be}, true, false); q.Reliability != ros.ReliabilityReliable {
		t.Errorf("explicit reliability overridden: %+v", q)
	}
	if q := adaptQoS(ros.QoSDefault, nil, false, false); q != ros.QoSDefault {
		t.Errorf("no publishers: %+v", q)
	}
}

func TestHzReport(t *testing.T) {
	t0 := time.Unix(100, 0)
	st := []time.Time{t0, t0.Add(100 * time.Millisecond), t0.Add(200 * time.Millisecond), t0.Add(300 * time.Millisecond)}
	want := "average rate: 10.000\n\tmin: 0.100s max: 0.100s std dev: 0.00000s window: 4\n"
	if got := hzReport(st); got != want {
		t.Errorf("hzReport = %q, want %q", got, want)
	}
}

func TestActionsOf(t *testing.T) {
	in := []ros.NameAndTypes{
		{Name: "/nav/_action/send_goal", Types: []string{"nav2_msgs/action/NavigateToPose_SendGoal"}},
		{Name: "/nav/_action/get_result", Types: []string{"nav2_msgs/action/NavigateToPose_GetResult"}},
		{Name: "/x/set", Types: []string{"std_srvs/srv/SetBool"}},
	}
	got := actionsOf(in)
	want := []ros.NameAndTypes{{Name: "/nav", Types: []string{"nav2_msgs/action/NavigateToPose"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("actionsOf = %+v", got)
	}
}

func TestQoSFromFlags(t *testing.T) {
	p, err := parseFlags([]string{"--qos-profile", "sensor_data", "--qos-depth", "3", "--qos-durability", "transient_local"}, qosFlags)
	if err != nil {
		t.Fatal(err)
	}
	q, setRel, setDur, err := qosFromFlags(p, ros.QoSDefault)
	if err != nil || setRel || !setDur || q.Depth != 3 || q.Reliability != ros.ReliabilityBestEffort || q.Durability != ros.DurabilityTransientLocal {
		t.Errorf("qos = %+v %v %v %v", q, setRel, setDur, err)
	}
	p, _ = parseFlags([]string{"--qos-depth", "-1"}, qosFlags)
	if _, _, _, err := qosFromFlags(p, ros.QoSDefault); err == nil {
		t.Error("negative depth accepted")
	}
}

func TestSplitNodeName(t *testing.T) {
	for in, want := range map[string][2]string{"/a/b/c": {"c", "/a/b"}, "/talker": {"talker", "/"}, "talker": {"talker", "/"}} {
		if n, ns := splitNodeName(in); n != want[0] || ns != want[1] {
			t.Errorf("splitNodeName(%q) = %q %q", in, n, ns)
		}
	}
	if got := formatGID("0110aa"); got != "01.10.aa" {
		t.Errorf("formatGID = %q", got)
	}
	if got := shellJoin([]string{"a", "b c", "it's", ""}); got != `a 'b c' 'it'\''s' ''` {
		t.Errorf("shellJoin = %s", got)
	}
}

func TestRunPassesArgumentsAndExitStatus(t *testing.T) {
	bin := t.TempDir()
	script := "#!/bin/sh\necho \"args: $*\"\nexit 3\n"
	if err := os.WriteFile(filepath.Join(bin, "tool"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out, errs, code := run(t, "run", "--bin-dir", bin, "fsmnodes", "tool", "--help", "--ros-args", "-p", "a:=1")
	if code != 3 || out != "args: --help --ros-args -p a:=1\n" || errs != "" {
		t.Errorf("run: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, errs, code := run(t, "run", "--bin-dir", bin, "fsmnodes", "nope"); code != 1 ||
		!strings.Contains(errs, `executable "nope" of package "fsmnodes" not found`) {
		t.Errorf("run of a missing executable: exit %d %s", code, errs)
	}
}

func TestBuildMessage_NowKeyword(t *testing.T) {
	ti, err := msgs.Registry().Message("geometry_msgs/msg/PoseStamped")
	if err != nil {
		t.Fatal(err)
	}
	m, err := buildMessage(ti, "{header: {stamp: now, frame_id: map}}")
	if err != nil {
		t.Fatal(err)
	}
	text := msgyaml.Repr(m)
	if !strings.Contains(text, "frame_id='map'") || strings.Contains(text, "sec=0,") {
		t.Errorf("stamp: now not applied: %s", text)
	}
}

func TestParamsForNode(t *testing.T) {
	file := []byte(`/**:
  ros__parameters:
    use_sim_time: true
    rate: 1
/ns/talker:
  ros__parameters:
    rate: 10
    gains:
      p: 0.5
      names: [a, b]
    label: "007"
other:
  ros__parameters:
    rate: 99
`)
	ps, err := paramsForNode(file, "/ns/talker", true)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]rcl_interfaces_msg.ParameterValue{}
	for _, p := range ps {
		got[p.Name] = p.Value
	}
	if strings.Join(sortedParamNames(ps), " ") != "gains.names gains.p label rate use_sim_time" {
		t.Errorf("names = %v", sortedParamNames(ps))
	}
	if got["rate"].IntegerValue != 10 || !got["use_sim_time"].BoolValue || got["gains.p"].DoubleValue != 0.5 ||
		got["label"].StringValue != "007" || got["label"].Type != 4 || len(got["gains.names"].StringArrayValue) != 2 {
		t.Errorf("values = %+v", got)
	}
	ps, _ = paramsForNode(file, "/ns/talker", false)
	if len(ps) != 4 {
		t.Errorf("without wildcard: %v", sortedParamNames(ps))
	}
	if _, err := paramsForNode([]byte("talker: {rate: 1}"), "/talker", true); err == nil ||
		err.Error() != `node key "talker" has no ros__parameters` {
		t.Errorf("missing ros__parameters: %v", err)
	}
	if _, err := paramsForNode([]byte("[1"), "/talker", true); err == nil {
		t.Error("bad YAML accepted")
	}
}

func sortedParamNames(ps []rcl_interfaces_msg.Parameter) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

func TestInterfaceProto(t *testing.T) {
	out, errs, code := run(t, "interface", "proto", "geometry_msgs/msg/Quaternion")
	if code != 0 || out != "\"x: 0.0\ny: 0.0\nz: 0.0\nw: 1.0\n\"\n" {
		t.Errorf("interface proto: exit %d %s\n%q", code, errs, out)
	}
	out, _, code = run(t, "interface", "proto", "std_srvs/srv/SetBool")
	if code != 0 || out != "\"data: false\n\"\n" {
		t.Errorf("interface proto of a service: exit %d %q", code, out)
	}
	if _, errs, code := run(t, "interface", "proto", "x/msg/Y"); code != 1 || !strings.Contains(errs, `unknown type "x/msg/Y"`) {
		t.Errorf("unknown type: exit %d %s", code, errs)
	}
}

func TestBwReport(t *testing.T) {
	t0 := time.Unix(50, 0)
	ws := []sample{{t0, 100}, {t0.Add(time.Second / 2), 300}}
	want := "400.00 B/s from 2 messages\n\tMessage size mean: 200.00 B min: 100.00 B max: 300.00 B\n"
	if got := bwReport(ws, t0.Add(time.Second)); got != want {
		t.Errorf("bwReport = %q, want %q", got, want)
	}
	ws = []sample{{t0, 2000}, {t0, 4000}}
	if got := bwReport(ws, t0.Add(time.Second)); got != "6.00 KB/s from 2 messages\n\tMessage size mean: 3.00 KB min: 2.00 KB max: 4.00 KB\n" {
		t.Errorf("bwReport KB = %q", got)
	}
}

func TestBuildStamped_SaysWhetherItStamped(t *testing.T) {
	ti, err := msgs.Registry().Message("geometry_msgs/msg/TwistStamped")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1700000000, 5)
	for _, tt := range []struct {
		values  string
		stamped bool
	}{
		{"{header: auto}", true},
		{"{header: {stamp: now}}", true},
		{"{header: {stamp: {sec: 3}}}", false},
		{"{twist: {linear: {x: 1}}}", false},
	} {
		m, stamped, err := buildStamped(ti, tt.values, at)
		if err != nil {
			t.Fatal(err)
		}
		if stamped != tt.stamped {
			t.Errorf("%s: stamped %v, want %v", tt.values, stamped, tt.stamped)
		}
		if got := m.(*geometry_msgs_msg.TwistStamped).Header.Stamp.AsTime(); tt.stamped && !got.Equal(at) {
			t.Errorf("%s: stamp %v, want %v", tt.values, got, at)
		}
	}
}
