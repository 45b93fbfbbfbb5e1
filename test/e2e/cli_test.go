package e2e

// Tests of the fsmnodes command line tool as separate processes over
// Cyclone DDS. Each test reserves its own domain (testenv.Domain).

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	action_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/action_msgs/msg"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
)

// cliWait bounds every wait of these tests; reaching it is a failure.
const cliWait = 60 * time.Second

// cliBins builds fsmnodes and the cliserver peer once per test run and
// returns the directory holding both.
func cliBins(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("multi-process test (skipped with -short)")
	}
	return testenv.ExecutableDir(t, "cmd/fsmnodes", "test/e2e/testdata/cliserver")
}

// cliEnv is the environment of processes of one test: its own domain,
// discovery on this machine only.
func cliEnv(domain uint32, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_LOCALHOST_ONLY", "ROS_STATIC_PEERS", "CYCLONEDDS_URI":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "ROS_DOMAIN_ID="+strconv.Itoa(int(domain)), "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST")
	return append(env, extra...)
}

// cliProc is a started process whose output is collected.
type cliProc struct {
	cmd            *exec.Cmd
	stdout, stderr *bytes.Buffer
	mu             *sync.Mutex
	done           chan error
}

type cliLockedBuf struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l cliLockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// cliStart starts a program of the bin directory in the test's domain. The
// process is killed when the test ends.
func cliStart(t *testing.T, bin string, domain uint32, name string, args ...string) *cliProc {
	t.Helper()
	p := &cliProc{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, mu: &sync.Mutex{}, done: make(chan error, 1)}
	p.cmd = exec.Command(filepath.Join(bin, name), args...)
	p.cmd.Env = cliEnv(domain)
	p.cmd.Stdout = cliLockedBuf{p.mu, p.stdout}
	p.cmd.Stderr = cliLockedBuf{p.mu, p.stderr}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *cliProc) output() (string, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stdout.String(), p.stderr.String()
}

// wait waits for the process to end and returns its exit code.
func (p *cliProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err // keep it for Cleanup
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(cliWait):
		out, errs := p.output()
		t.Fatalf("%s did not finish\nstdout:\n%s\nstderr:\n%s", p.cmd.Args, out, errs)
	}
	return -1
}

// cliRun runs fsmnodes to completion and returns stdout, stderr, exit code.
func cliRun(t *testing.T, bin string, domain uint32, args ...string) (string, string, int) {
	t.Helper()
	p := cliStart(t, bin, domain, "fsmnodes", args...)
	code := p.wait(t)
	out, errs := p.output()
	return out, errs, code
}

// cliPoll runs fsmnodes until its stdout satisfies ok.
func cliPoll(t *testing.T, bin string, domain uint32, ok func(string) bool, args ...string) string {
	t.Helper()
	deadline := time.Now().Add(cliWait)
	for {
		out, errs, code := cliRun(t, bin, domain, args...)
		if code == 0 && ok(out) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("fsmnodes %s never gave the expected output; last (exit %d):\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errs)
		}
	}
}

func TestCLI_PubOnceReachesEchoOnceInAnotherProcess(t *testing.T) {
	t.Parallel() // a domain of its own
	domainCLIPubEcho := testenv.Domain(t)
	bin := cliBins(t)
	cases := []struct {
		topic, typ, values, want string
	}{
		{"/cli_chatter", "std_msgs/msg/String", "{data: 'Hello World: 1'}", "data: 'Hello World: 1'\n---\n"},
		{"cli_cmd_vel", "geometry_msgs/msg/Twist", "{linear: {x: 0.5}, angular: {z: -1.0e-5}}",
			"linear:\n  x: 0.5\n  y: 0.0\n  z: 0.0\nangular:\n  x: 0.0\n  y: 0.0\n  z: -1.0e-05\n---\n"},
		{"/cli_joints", "sensor_msgs/msg/JointState", "name: [a, b]\nposition: [1, 2.5]",
			"header:\n  stamp:\n    sec: 0\n    nanosec: 0\n  frame_id: ''\nname:\n- a\n- b\nposition:\n- 1.0\n- 2.5\nvelocity: []\neffort: []\n---\n"},
	}
	for _, c := range cases {
		echo := cliStart(t, bin, domainCLIPubEcho, "fsmnodes", "topic", "echo", c.topic, c.typ, "--once")
		// pub --once waits for the echo's subscription before publishing.
		out, errs, code := cliRun(t, bin, domainCLIPubEcho, "topic", "pub", c.topic, c.typ, c.values, "--once")
		if code != 0 {
			t.Fatalf("pub exit %d: %s", code, errs)
		}
		if !strings.HasPrefix(out, "Waiting for at least 1 matching subscription(s)...\npublisher: beginning loop\npublishing #1: ") {
			t.Errorf("pub output:\n%s", out)
		}
		if code := echo.wait(t); code != 0 {
			_, errs := echo.output()
			t.Fatalf("echo exit %d: %s", code, errs)
		}
		if got, _ := echo.output(); got != c.want {
			t.Errorf("echo of %s printed\n%s\nwant\n%s", c.typ, got, c.want)
		}
	}
}

func TestCLI_EchoFindsTheTypeInTheGraph(t *testing.T) {
	t.Parallel() // a domain of its own
	domainCLIEchoType := testenv.Domain(t)
	bin := cliBins(t)
	cliStart(t, bin, domainCLIEchoType, "fsmnodes", "topic", "pub", "/cli_typed", "std_msgs/msg/Int32", "{data: -7}", "-r", "20")
	cliPoll(t, bin, domainCLIEchoType, func(s string) bool { return s == "data: -7\n---\n" },
		"topic", "echo", "/cli_typed", "--once")
	info := cliPoll(t, bin, domainCLIEchoType, func(s string) bool { return strings.Contains(s, "Publisher count: 1") },
		"topic", "info", "/cli_typed")
	if !strings.HasPrefix(info, "Type: std_msgs/msg/Int32\nPublisher count: 1\nSubscription count: ") {
		t.Errorf("topic info:\n%s", info)
	}
	field := cliPoll(t, bin, domainCLIEchoType, func(s string) bool { return s != "" },
		"topic", "echo", "/cli_typed", "--once", "--field", "data")
	if field != "-7\n...\n---\n" {
		t.Errorf("echo --field data printed %q", field)
	}
}

func TestCLI_LatchedPubReachesALateEcho(t *testing.T) {
	t.Parallel() // a domain of its own
	domainCLILatched := testenv.Domain(t)
	bin := cliBins(t)
	cliStart(t, bin, domainCLILatched, "cliserver")
	// cliserver publishes "ready" once on a transient-local topic; echo
	// adapts its durability to the publisher and still gets it.
	cliPoll(t, bin, domainCLILatched, func(s string) bool { return s == "data: ready\n---\n" },
		"topic", "echo", "/cli_test/status", "--once")
}

func TestCLI_ServiceCallAgainstAnotherProcess(t *testing.T) {
	t.Parallel() // a domain of its own
	domainCLIService := testenv.Domain(t)
	bin := cliBins(t)
	cliStart(t, bin, domainCLIService, "cliserver")
	// service call waits for the server on its own.
	out, errs, code := cliRun(t, bin, domainCLIService, "service", "call", "/cli_test/set_bool", "std_srvs/srv/SetBool", "{data: true}")
	if code != 0 {
		t.Fatalf("service call exit %d: %s", code, errs)
	}
	out = strings.TrimPrefix(out, "waiting for service to become available...\n")
	want := "requester: making request: std_srvs.srv.SetBool_Request(data=True)\n\n" +
		"response:\nstd_srvs.srv.SetBool_Response(success=True, message='got true')\n\n"
	if out != want {
		t.Errorf("service call printed\n%s\nwant\n%s", out, want)
	}
	types := cliPoll(t, bin, domainCLIService, func(s string) bool { return s != "" }, "service", "type", "/cli_test/set_bool")
	if types != "std_srvs/srv/SetBool\n" {
		t.Errorf("service type printed %q", types)
	}
}

func TestCLI_GraphVerbsSeeAnotherProcess(t *testing.T) {
	t.Parallel() // a domain of its own
	domainCLIGraph := testenv.Domain(t)
	bin := cliBins(t)
	cliStart(t, bin, domainCLIGraph, "cliserver")
	nodes := cliPoll(t, bin, domainCLIGraph, func(s string) bool { return strings.Contains(s, "/cli_test/cli_peer\n") },
		"node", "list")
	for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
		if strings.Contains(line, "/_") {
			t.Errorf("node list shows a hidden node without -a: %q", line)
		}
	}
	srvs := cliPoll(t, bin, domainCLIGraph, func(s string) bool { return strings.Contains(s, "/cli_test/set_bool") },
		"service", "list", "-t")
	if !strings.Contains(srvs, "/cli_test/set_bool [std_srvs/srv/SetBool]\n") {
		t.Errorf("service list -t:\n%s", srvs)
	}
	topics := cliPoll(t, bin, domainCLIGraph, func(s string) bool { return strings.Contains(s, "/cli_test/status") },
		"topic", "list", "-t")
	if !strings.Contains(topics, "/cli_test/status [std_msgs/msg/String]\n") {
		t.Errorf("topic list -t:\n%s", topics)
	}
	info := cliPoll(t, bin, domainCLIGraph, func(s string) bool { return strings.Contains(s, "/cli_test/set_bool") },
		"node", "info", "/cli_test/cli_peer")
	for _, want := range []string{
		"/cli_test/cli_peer\n  Subscribers:\n",
		"  Publishers:\n", "    /cli_test/status: std_msgs/msg/String\n",
		"  Service Servers:\n", "    /cli_test/set_bool: std_srvs/srv/SetBool\n",
		"  Action Servers:\n    /cli_test/navigate_to_pose: nav2_msgs/action/NavigateToPose\n  Action Clients:\n\n",
		// The node's counters, from its /diagnostics report.
		"  Counters:\n    malformed_samples: 0\n    oversized_samples: 0\n", "    commands_rejected: 0\n",
	} {
		if !strings.Contains(info, want) {
			t.Errorf("node info lacks %q:\n%s", want, info)
		}
	}
	verbose := cliPoll(t, bin, domainCLIGraph, func(s string) bool { return strings.Contains(s, "Node name: cli_peer") },
		"topic", "info", "/cli_test/status", "-v")
	for _, want := range []string{"Endpoint type: PUBLISHER\n", "  Durability: TRANSIENT_LOCAL\n", "  Reliability: RELIABLE\n",
		"Node namespace: /cli_test\n"} {
		if !strings.Contains(verbose, want) {
			t.Errorf("topic info -v lacks %q:\n%s", want, verbose)
		}
	}
	if _, errs, code := cliRun(t, bin, domainCLIGraph, "node", "info", "/no/such_node"); code == 0 ||
		!strings.Contains(errs, "unable to find node '/no/such_node'") {
		t.Errorf("node info of a missing node: exit %d, %s", code, errs)
	}
}

func TestCLI_BadInputExitsNonZeroWithAMessage(t *testing.T) {
	t.Parallel() // a domain of its own
	domainCLINoDDS := testenv.Domain(t)
	bin := cliBins(t)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"topic", "pub", "/x", "std_msgs/msg/String", "{data: [1, 2]}", "--once"}, 1,
			`fsmnodes: failed to populate field: field "data" of std_msgs/msg/String: expected a string value, got a sequence`},
		{[]string{"topic", "pub", "/x", "geometry_msgs/msg/Twist", "{linear: {x: 1, w: 2}}"}, 1,
			`unknown field "w" in geometry_msgs/msg/Vector3 (its fields are x, y, z)`},
		{[]string{"topic", "pub", "/x", "std_msgs/msg/UInt8", "{data: 300}"}, 1,
			`field "data" of std_msgs/msg/UInt8: value 300 is out of range for uint8 [0, 255]`},
		{[]string{"topic", "pub", "/x", "std_msgs/msg/String", "{data: 'x'"}, 1, "invalid YAML"},
		{[]string{"topic", "pub", "/x", "std_msgs/msg/NoSuchType", "{}"}, 1,
			`the passed message type "std_msgs/msg/NoSuchType" is invalid or unknown`},
		{[]string{"topic", "echo", "/x", "nope/msg/Nope", "--once"}, 1, `the passed message type "nope/msg/Nope" is invalid`},
		{[]string{"service", "call", "/s", "std_srvs/srv/Nope", "{}"}, 1, `the passed service type "std_srvs/srv/Nope" is invalid`},
		{[]string{"service", "call", "/s", "std_srvs/srv/SetBool", "{data: maybe}"}, 1,
			`field "data" of std_srvs/srv/SetBool_Request: expected a bool (true or false), got str "maybe"`},
		{[]string{"interface", "show", "nope/msg/Nope"}, 1, `unknown message type "nope/msg/Nope"`},
		{[]string{"topic", "pub", "/x"}, 2, "usage: fsmnodes topic pub TOPIC TYPE [VALUES]"},
		{[]string{"topic", "pub", "/x", "std_msgs/msg/Empty", "--rate", "0"}, 2, `--rate: "0" is not a positive number`},
		// issue 25: a period that rounds to 0 made a ticker panic
		{[]string{"topic", "pub", "/x", "std_msgs/msg/Empty", "--rate", "1e308"}, 2, `--rate: 1e+308 Hz is a period of 1e-308 s, which rounds to 0 ns`},
		{[]string{"service", "call", "/s", "std_srvs/srv/Trigger", "{}", "-r", "1e10"}, 2, `--rate: 1e+10 Hz is a period of 1e-10 s, which rounds to 0 ns`},
		{[]string{"topic", "frobnicate"}, 2, `topic: unknown verb "frobnicate"`},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"topic", "list", "--bogus"}, 2, `unknown option "--bogus"`},
		{[]string{"launch", "/no/such.launch.xml"}, 1, "launch file: open /no/such.launch.xml: no such file or directory"},
		{[]string{"param", "get", "/n"}, 2, "usage: fsmnodes param get NODE NAME"},
	}
	for _, c := range cases {
		out, errs, code := cliRun(t, bin, domainCLINoDDS, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("fsmnodes %s: exit %d, stderr %q, stdout %q\nwant exit %d and %q", strings.Join(c.args, " "), code, errs, out, c.code, c.want)
		}
	}
}

func TestCLI_InterfaceShowNeedsNoDDS(t *testing.T) {
	t.Parallel() // a domain of its own
	domainCLINoDDS := testenv.Domain(t)
	bin := cliBins(t)
	out, errs, code := cliRun(t, bin, domainCLINoDDS, "interface", "show", "geometry_msgs/msg/TwistStamped")
	want := "std_msgs/Header header\n\tbuiltin_interfaces/Time stamp\n\t\tint32 sec\n\t\tuint32 nanosec\n\tstring frame_id\n" +
		"Twist twist\n\tVector3 linear\n\t\tfloat64 x\n\t\tfloat64 y\n\t\tfloat64 z\n\tVector3 angular\n\t\tfloat64 x\n\t\tfloat64 y\n\t\tfloat64 z\n"
	if code != 0 || cliStripComments(out) != want {
		t.Errorf("interface show: exit %d %s\n%s\nwant (comments aside)\n%s", code, errs, out, want)
	}
}

// cliStripComments drops the top-level comment and blank lines, which depend on
// the wording of the .msg files.
func cliStripComments(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "#") || l == "" {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n"
}

func TestCLI_ParamVerbsAgainstAnotherProcess(t *testing.T) {
	t.Parallel() // a domain of its own
	domainCLIParam := testenv.Domain(t)
	bin := cliBins(t)
	cliStart(t, bin, domainCLIParam, "cliserver")
	node := "/cli_test/cli_peer"
	list := cliPoll(t, bin, domainCLIParam, func(s string) bool { return strings.Contains(s, "  rate\n") },
		"param", "list", node)
	if !strings.Contains(list, "  use_sim_time\n") {
		t.Errorf("param list:\n%s", list)
	}
	if out, errs, code := cliRun(t, bin, domainCLIParam, "param", "get", node, "rate"); code != 0 || out != "Integer value is: 10\n" {
		t.Errorf("param get: exit %d %q %s", code, out, errs)
	}
	if out, errs, code := cliRun(t, bin, domainCLIParam, "param", "set", node, "rate", "42"); code != 0 || out != "Set parameter successful\n" {
		t.Errorf("param set: exit %d %q %s", code, out, errs)
	}
	if out, errs, code := cliRun(t, bin, domainCLIParam, "param", "get", node, "rate", "--hide-type"); code != 0 || out != "42\n" {
		t.Errorf("param get after set: exit %d %q %s", code, out, errs)
	}
	// Out of the declared range: rejected with the node's reason.
	_, errs, code := cliRun(t, bin, domainCLIParam, "param", "set", node, "rate", "500")
	if code != 1 || !strings.HasPrefix(errs, "Setting parameter failed: ") || !strings.Contains(errs, "500") {
		t.Errorf("rejected param set: exit %d, stderr %q", code, errs)
	}
	desc, errs, code := cliRun(t, bin, domainCLIParam, "param", "describe", node, "rate")
	want := "Parameter name: rate\n  Type: integer\n  Description: test rate\n  Constraints:\n    Min value: 1\n    Max value: 100\n"
	if code != 0 || desc != want {
		t.Errorf("param describe: exit %d %s\n%s\nwant\n%s", code, errs, desc, want)
	}
	dump, errs, code := cliRun(t, bin, domainCLIParam, "param", "dump", node)
	if code != 0 || !strings.HasPrefix(dump, "/cli_test/cli_peer:\n  ros__parameters:\n") || !strings.Contains(dump, "    rate: 42\n") {
		t.Errorf("param dump: exit %d %s\n%s", code, errs, dump)
	}
	file := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(file, []byte("/**:\n  ros__parameters:\n    rate: 7\ncli_peer:\n  ros__parameters:\n    use_sim_time: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	load, errs, code := cliRun(t, bin, domainCLIParam, "param", "load", node, file)
	if code != 0 || load != "Set parameter rate successful\nSet parameter use_sim_time successful\n" {
		t.Errorf("param load: exit %d %s\n%s", code, errs, load)
	}
	if out, errs, code := cliRun(t, bin, domainCLIParam, "param", "get", node, "rate"); code != 0 || out != "Integer value is: 7\n" {
		t.Errorf("param get after load: exit %d %q %s", code, out, errs)
	}
	if _, errs, code := cliRun(t, bin, domainCLIParam, "param", "get", "/no_such_node", "rate"); code != 1 ||
		!strings.Contains(errs, "node not found: /no_such_node") {
		t.Errorf("param get on a missing node: exit %d %s", code, errs)
	}
}

func TestCLI_ActionSendGoalWithFeedbackAndRejection(t *testing.T) {
	t.Parallel() // a domain of its own
	domainCLIAction := testenv.Domain(t)
	bin := cliBins(t)
	cliStart(t, bin, domainCLIAction, "cliserver")
	const action, typ = "/cli_test/navigate_to_pose", "nav2_msgs/action/NavigateToPose"
	acts := cliPoll(t, bin, domainCLIAction, func(s string) bool { return strings.Contains(s, action) }, "action", "list", "-t")
	if !strings.Contains(acts, action+" ["+typ+"]\n") {
		t.Errorf("action list -t:\n%s", acts)
	}
	info := cliPoll(t, bin, domainCLIAction, func(s string) bool { return strings.Contains(s, "Action servers: 1") }, "action", "info", action)
	if info != "Action: "+action+"\nAction clients: 0\nAction servers: 1\n    /cli_test/cli_peer\n" {
		t.Errorf("action info:\n%s", info)
	}
	out, errs, code := cliRun(t, bin, domainCLIAction, "action", "send_goal", action, typ,
		"{pose: {header: {frame_id: map}, pose: {position: {x: 2.5}}}}", "--feedback")
	if code != 0 {
		t.Fatalf("send_goal exit %d: %s", code, errs)
	}
	for _, want := range []string{"Sending goal:\n     pose:\n  header:\n", "Goal accepted with ID: ",
		"Feedback:\n    current_pose:\n", "distance_remaining: 2.5\n",
		"Result:\n    error_code: 0\nerror_msg: reached map\n\nGoal finished with status: SUCCEEDED\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("send_goal output lacks %q:\n%s", want, out)
		}
	}
	out, errs, code = cliRun(t, bin, domainCLIAction, "action", "send_goal", action, typ, "{pose: {pose: {position: {x: -1}}}}")
	if code != 0 || !strings.HasSuffix(out, "Goal was rejected.\n") {
		t.Errorf("rejected goal: exit %d %s\n%s", code, errs, out)
	}
	// The server logged the rejection; /rosout carries it (transient
	// local, so a late echo still sees it).
	rosout := cliStart(t, bin, domainCLIAction, "fsmnodes", "topic", "echo", "/rosout")
	deadline := time.Now().Add(cliWait)
	for {
		out, _ := rosout.output()
		if strings.Contains(out, "name: cli_test.cli_peer\n") && strings.Contains(out, "rejected: negative x") {
			if !strings.Contains(out, "level: 20\n") {
				t.Errorf("rosout record without INFO level:\n%s", out)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic echo /rosout never showed the rejection:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, errs, code = cliRun(t, bin, domainCLIAction, "action", "send_goal", action, typ, "{pose: {pose: {position: {q: 1}}}}")
	if code != 1 || !strings.Contains(errs, `unknown field "q" in geometry_msgs/msg/Point`) {
		t.Errorf("bad goal: exit %d %s", code, errs)
	}
}

// cliWaitOutput waits until a running process's stdout satisfies ok.
func cliWaitOutput(t *testing.T, p *cliProc, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(cliWait)
	for {
		out, errs := p.output()
		if ok(out) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never happened; stdout:\n%s\nstderr:\n%s", what, out, errs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestCLI_PubTimesAndHz(t *testing.T) {
	t.Parallel() // a domain of its own
	domainCLIRate := testenv.Domain(t)
	bin := cliBins(t)
	echo := cliStart(t, bin, domainCLIRate, "fsmnodes", "topic", "echo", "/cli_counted", "std_msgs/msg/Int64")
	out, errs, code := cliRun(t, bin, domainCLIRate, "topic", "pub", "/cli_counted", "std_msgs/msg/Int64", "{data: 5}",
		"--times", "3", "-r", "20")
	if code != 0 || strings.Count(out, "publishing #") != 3 {
		t.Fatalf("pub --times 3: exit %d %s\n%s", code, errs, out)
	}
	cliWaitOutput(t, echo, "three echoed messages", func(s string) bool { return strings.Count(s, "data: 5\n---\n") == 3 })

	cliStart(t, bin, domainCLIRate, "fsmnodes", "topic", "pub", "/cli_rate", "std_msgs/msg/Empty", "-r", "20")
	hz := cliStart(t, bin, domainCLIRate, "fsmnodes", "topic", "hz", "/cli_rate", "std_msgs/msg/Empty")
	got := cliWaitOutput(t, hz, "a rate report", func(s string) bool { return strings.Contains(s, "window: ") })
	if !strings.Contains(got, "average rate: ") || !strings.Contains(got, "\tmin: ") {
		t.Errorf("topic hz printed:\n%s", got)
	}
}

// TestCLI_ActionSendGoalWaitsForTheServersTopics checks that send_goal waits
// for the whole action server as ros2 action send_goal does
// (rcl_action_server_is_available): a peer that offers the send_goal and
// get_result services but publishes no feedback and status topics yet gets
// no goal; once it publishes both, the goal is sent. Sending earlier loses
// the first feedback when the server's feedback writer has not matched the
// CLI's reader yet.
func TestCLI_ActionSendGoalWaitsForTheServersTopics(t *testing.T) {
	t.Parallel() // a domain of its own
	domain := testenv.Domain(t)
	bin := cliBins(t)
	const action, typ = "/half_server/navigate_to_pose", "nav2_msgs/action/NavigateToPose"
	c := newContext(t, domain, nil)
	n := newNode(t, c, "half_server")
	var goals atomic.Int32
	if _, err := ros.NewService(n, action+"/_action/send_goal", nav2_msgs_action.NavigateToPose_SendGoal,
		func(context.Context, *nav2_msgs_action.NavigateToPose_SendGoal_Request) (*nav2_msgs_action.NavigateToPose_SendGoal_Response, error) {
			goals.Add(1)
			return &nav2_msgs_action.NavigateToPose_SendGoal_Response{Accepted: false}, nil
		}); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewService(n, action+"/_action/get_result", nav2_msgs_action.NavigateToPose_GetResult,
		func(context.Context, *nav2_msgs_action.NavigateToPose_GetResult_Request) (*nav2_msgs_action.NavigateToPose_GetResult_Response, error) {
			return &nav2_msgs_action.NavigateToPose_GetResult_Response{}, nil
		}); err != nil {
		t.Fatal(err)
	}
	// Without the topics: the CLI waits until its --timeout and sends nothing.
	out, errs, code := cliRun(t, bin, domain, "action", "send_goal", action, typ, "{}", "--timeout", "3")
	if code == 0 || !strings.Contains(errs, "did not become available within the timeout") {
		t.Errorf("send_goal without feedback and status publishers: exit %d\n%s\n%s", code, out, errs)
	}
	if k := goals.Load(); k != 0 {
		t.Fatalf("the CLI sent %d goals to a server without feedback and status publishers", k)
	}
	// With them the goal goes out (and is rejected by this peer).
	if _, err := ros.NewPublisher[action_msgs_msg.GoalStatusArray](n, action+"/_action/status", ros.QoSLatched); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewPublisher[nav2_msgs_action.NavigateToPose_FeedbackMessage](n, action+"/_action/feedback", ros.QoSDefault); err != nil {
		t.Fatal(err)
	}
	out, errs, code = cliRun(t, bin, domain, "action", "send_goal", action, typ, "{}", "--timeout", "60")
	if code != 0 || !strings.HasSuffix(out, "Goal was rejected.\n") || goals.Load() != 1 {
		t.Errorf("send_goal to the whole server: exit %d, %d goals received\n%s\n%s", code, goals.Load(), out, errs)
	}
}
