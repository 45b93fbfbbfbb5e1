package launch

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fakeBin makes a directory with empty executables of the given names.
func fakeBin(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// env is a fake environment for Options.LookupEnv.
func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestLoad_EveryTag(t *testing.T) {
	bin := fakeBin(t, "talker", "listener")
	share, _ := filepath.Abs("testdata/share")
	d, err := Load("testdata/share/launch/all.launch.xml", Options{
		BinDir:    bin,
		LookupEnv: env("PATH", os.Getenv("PATH")),
	})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	type want struct {
		label string
		argv  []string
		env   []string
		unset []string
	}
	P := func(name string) string { return filepath.Join(tmp, name) }
	sh, err := findInPath("sh", &scope{l: &loader{}, file: "x"})
	if err != nil {
		t.Fatal(err)
	}
	wants := []want{
		{"talker-1", []string{bin + "/talker", "--count", "3", "two words", "--ros-args", "-r", "__node:=talker", "-r", "__ns:=/demo",
			"--params-file", share + "/params/talker.yaml", "--params-file", P("launch_params_talker-1_1.yaml"),
			"-r", "chatter:=chat", "--log-level", "debug"},
			[]string{"FROM_SET_ENV=1", "NODE_ENV=/nowhere"}, nil},
		{"listener-2", []string{bin + "/listener", "--ros-args", "-r", "__node:=listener", "-r", "__ns:=/r1",
			"--params-file", P("launch_params_listener-2_0.yaml"), "-r", "/tf:=tf"},
			[]string{"FROM_SET_ENV=1"}, nil},
		{"deep-3", []string{bin + "/listener", "--ros-args", "-r", "__ns:=/r1/inner", "-r", "/tf:=tf"},
			[]string{"FROM_SET_ENV=1"}, nil},
		{"listener-4", []string{bin + "/listener", "--ros-args", "-r", "__node:=absolute", "-r", "__ns:=/abs", "-r", "/tf:=tf"},
			[]string{"FROM_SET_ENV=1"}, nil},
		{"listener-5", []string{bin + "/listener", "--ros-args", "-r", "__node:=kept", "-r", "__ns:=/r1"},
			[]string{"FROM_SET_ENV=1"}, nil},
		{"talker-6", []string{bin + "/talker", "--ros-args", "-r", "__node:=child_sim", "-r", "__ns:=/"},
			[]string{"FROM_SET_ENV=1"}, nil},
		{"hello-7", []string{sh, "-c", "echo hi"}, []string{"FROM_SET_ENV=1", "EXEC_ENV=x"}, nil},
	}
	if len(d.Processes) != len(wants) {
		for _, p := range d.Processes {
			t.Logf("got %s", p.Label)
		}
		t.Fatalf("got %d processes, want %d", len(d.Processes), len(wants))
	}
	for i, w := range wants {
		p := d.Processes[i]
		argv, err := p.Command(tmp)
		if err != nil {
			t.Fatal(err)
		}
		if p.Label != w.label || !reflect.DeepEqual(argv, w.argv) {
			t.Errorf("process %d: %s %q\nwant %s %q", i, p.Label, argv, w.label, w.argv)
		}
		if !reflect.DeepEqual(p.Env, w.env) || !reflect.DeepEqual(p.Unset, w.unset) {
			t.Errorf("%s: env %q unset %q, want %q %q", p.Label, p.Env, p.Unset, w.env, w.unset)
		}
	}
	talker := d.Processes[0]
	if talker.Output != "screen" || !talker.Respawn || talker.RespawnDelay != 500*time.Millisecond ||
		talker.SigtermTimeout != 2*time.Second || talker.SigkillTimeout != time.Second || talker.Line != 13 {
		t.Errorf("talker attributes: %+v", talker)
	}
	if d.Processes[5].Output != "log" || d.Processes[6].Output != "both" {
		t.Errorf("outputs: %s %s", d.Processes[5].Output, d.Processes[6].Output)
	}
	got, err := os.ReadFile(P("launch_params_talker-1_1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	wantYAML := `/demo/talker:
  ros__parameters:
    rate: 10
    scale: 1.0
    enabled: true
    label: "hello r1"
    ids: [1, 2, 3]
    code: "007"
    gains.p: 0.5
    gains.i: 0
`
	if string(got) != wantYAML {
		t.Errorf("inline params file:\n%s\nwant\n%s", got, wantYAML)
	}
	if got, _ := os.ReadFile(P("launch_params_listener-2_0.yaml")); !strings.HasPrefix(string(got), "/r1/listener:\n") {
		t.Errorf("listener params keyed wrongly:\n%s", got)
	}
	if !reflect.DeepEqual(d.Logs, []string{"starting r1 in sim mode"}) {
		t.Errorf("logs = %q", d.Logs)
	}
	var names []string
	for _, a := range d.Args {
		names = append(names, a.Name+"="+a.Value)
	}
	if strings.Join(names, " ") != "robot=r1 mode=sim use_extra=false who=sim extra=sim-extra" {
		t.Errorf("declared args: %v", names)
	}
}

func TestLoad_CommandLineArgsOverrideDefaults(t *testing.T) {
	bin := fakeBin(t, "talker", "listener")
	args, err := ParseArgs([]string{"robot:=r2", "use_extra:=true", "mode:=real"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := Load("testdata/share/launch/all.launch.xml", Options{BinDir: bin, Args: args,
		LookupEnv: env("PATH", os.Getenv("PATH"), "TEST_LAUNCH_HOME", "/home/x")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range d.Processes {
		got = append(got, p.Label+":"+p.FQN())
	}
	// deep and kept are dropped (use_extra), skipped is started; its FQN is
	// unknown because it has no namespace.
	want := "talker-1:/demo/talker listener-2:/r2/listener listener-3:/abs/absolute listener-4: talker-5:/child_real hello-6:"
	if joined := strings.Join(got, " "); joined != want {
		t.Errorf("processes:\n%s\nwant\n%s", joined, want)
	}
	if d.Processes[0].Env[1] != "NODE_ENV=/home/x" {
		t.Errorf("env substitution: %q", d.Processes[0].Env)
	}
}

func TestParseArgs_Bad(t *testing.T) {
	if _, err := ParseArgs([]string{"robot=r2"}); err == nil || err.Error() != `launch argument "robot=r2" must have the form name:=value` {
		t.Errorf("err = %v", err)
	}
}

func TestLoad_ShareDirFromEnvAndDiscovery(t *testing.T) {
	bin := fakeBin(t, "talker", "listener")
	d, err := Load("testdata/share/launch/all.launch.xml", Options{
		LookupEnv: env("PATH", os.Getenv("PATH"), EnvBin, bin)})
	if err != nil {
		t.Fatal(err)
	}
	share, _ := filepath.Abs("testdata/share")
	if f := d.Processes[0].Params[0].File; f != share+"/params/talker.yaml" {
		t.Errorf("discovered share: %s", f)
	}
	// An installed layout: <prefix>/share/fsmnodes and <prefix>/lib/fsmnodes.
	prefix := t.TempDir()
	for _, dir := range []string{"share/fsmnodes/launch", "share/fsmnodes/params", "lib/fsmnodes"} {
		if err := os.MkdirAll(filepath.Join(prefix, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(prefix, "lib/fsmnodes/talker"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(prefix, "share/fsmnodes/launch/x.launch.xml"),
		[]byte(`<launch><node pkg="fsmnodes" exec="talker"/><let name="p" value="$(find-pkg-prefix fsmnodes)"/><log message="$(var p)"/></launch>`), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err = Load(filepath.Join(prefix, "share/fsmnodes/launch/x.launch.xml"), Options{LookupEnv: env()})
	if err != nil {
		t.Fatal(err)
	}
	if d.Processes[0].Path != filepath.Join(prefix, "lib/fsmnodes/talker") || d.Logs[0] != prefix {
		t.Errorf("installed layout: path %s prefix %s", d.Processes[0].Path, d.Logs[0])
	}
}

func TestLoad_BadFiles(t *testing.T) {
	bin := fakeBin(t, "talker")
	cases := []struct {
		name, xml, want string
	}{
		{"unknown tag", "<launch>\n  <nodes pkg=\"fsmnodes\"/>\n</launch>",
			"bad.launch.xml:2: unknown tag <nodes> (supported: arg, let, node, executable, group, push_ros_namespace, include, set_env, unset_env, set_remap, log)"},
		{"lifecycle node", "<launch>\n  <lifecycle_node pkg=\"fsmnodes\" exec=\"talker\" name=\"t\" namespace=\"\" autostart=\"true\"/>\n</launch>",
			"bad.launch.xml:2: unknown tag <lifecycle_node>: ROS 2 Humble and Jazzy launch files have no lifecycle nodes in XML; use <node> (a managed node configures and activates itself unless its parameter autostart is false)"},
		{"unknown attribute", "<launch>\n\n  <node pkg=\"fsmnodes\" exec=\"talker\" nmae=\"x\"/>\n</launch>",
			`bad.launch.xml:3: unknown attribute "nmae" on <node> (allowed: pkg, exec, name, namespace, output, respawn, respawn_delay, respawn_max_retries, args, ros_args, launch-prefix, exec_name, cwd, on_exit, sigterm_timeout, sigkill_timeout, if, unless)`},
		{"unknown child", "<launch><node pkg=\"fsmnodes\" exec=\"talker\">\n<parm name=\"a\" value=\"1\"/></node></launch>",
			"bad.launch.xml:2: unknown tag <parm> inside <node> (allowed: param, remap, env)"},
		{"root", "<launc/>", "bad.launch.xml:1: root element must be <launch>, got <launc>"},
		{"missing exec", "<launch><node pkg=\"fsmnodes\"/></launch>", `bad.launch.xml:1: <node> needs the attribute "exec"`},
		{"missing arg", "<launch>\n<arg name=\"robot\"/></launch>", `bad.launch.xml:2: launch argument "robot" has no default and was not given (pass robot:=value)`},
		{"bad choice", "<launch><arg name=\"m\" default=\"x\"><choice value=\"a\"/><choice value=\"b\"/></arg></launch>",
			`bad.launch.xml:1: launch argument "m" is "x"; valid choices are a, b`},
		{"undefined var", "<launch><let name=\"a\" value=\"$(var nope)\"/></launch>",
			`bad.launch.xml:1: launch configuration "nope" does not exist (declare it with <arg> or <let>, or give a default: $(var nope default))`},
		{"var with three words", "<launch><let name=\"a\" value=\"$(var a b c)\"/></launch>",
			`bad.launch.xml:1: $(var) takes 1 to 2 arguments, got 3`},
		{"unknown subst", "<launch><let name=\"a\" value=\"$(eval 1+1)\"/></launch>",
			"bad.launch.xml:1: unknown substitution $(eval) (supported: var, env, optenv, find-pkg-share, find-pkg-prefix, exec-in-pkg, dirname, filename, command, not, and, or, equals, not-equals)"},
		{"command fails", "<launch><let name=\"a\" value=\"$(command 'cat /nonexistent/x.urdf')\"/></launch>",
			"bad.launch.xml:1: $(command cat /nonexistent/x.urdf): exit status 1: cat: /nonexistent/x.urdf: No such file or directory"},
		{"command not found", "<launch><let name=\"a\" value=\"$(command no-such-cmd-xyz)\"/></launch>",
			`bad.launch.xml:1: $(command no-such-cmd-xyz): "no-such-cmd-xyz" not found in PATH`},
		{"command stderr", "<launch><let name=\"a\" value=\"$(command 'sh -c &quot;echo oops >&amp;2&quot;')\"/></launch>",
			"the command wrote to standard error (pass on_stderr warn, ignore or capture to accept it): oops"},
		{"command on_stderr", "<launch><let name=\"a\" value=\"$(command 'true' maybe)\"/></launch>",
			`on_stderr "maybe" is not one of fail, warn, ignore, capture`},
		{"command quote", "<launch><let name=\"a\" value=\"$(command 'echo &quot;x')\"/></launch>", `unterminated " quote`},
		{"unterminated", "<launch><let name=\"a\" value=\"$(var x\"/></launch>", `bad.launch.xml:1: unterminated substitution in "$(var x"`},
		{"env unset", "<launch><let name=\"a\" value=\"$(env NOPE_NOT_SET)\"/></launch>",
			`bad.launch.xml:1: environment variable "NOPE_NOT_SET" is not set and $(env) has no default`},
		{"bad if", "<launch><let name=\"a\" value=\"1\" if=\"maybe\"/></launch>",
			`bad.launch.xml:1: if: "maybe" is not a boolean (want true, false, 1 or 0)`},
		{"bad output", "<launch><node pkg=\"fsmnodes\" exec=\"talker\" output=\"tty\"/></launch>",
			`bad.launch.xml:1: output: "tty" is not one of screen, log, both`},
		{"bad respawn", "<launch><node pkg=\"fsmnodes\" exec=\"talker\" respawn=\"yes\"/></launch>",
			`bad.launch.xml:1: respawn: "yes" is not a boolean (want true, false, 1 or 0)`},
		{"bad delay", "<launch><node pkg=\"fsmnodes\" exec=\"talker\" respawn_delay=\"-1\"/></launch>",
			`bad.launch.xml:1: respawn_delay: "-1" is not a duration in seconds (0 to 1e6)`},
		{"no executable", "<launch><node pkg=\"fsmnodes\" exec=\"nothere\"/></launch>",
			`bad.launch.xml:1: executable "nothere" of package "fsmnodes" not found (looked in ` + bin},
		{"param file missing", "<launch><node pkg=\"fsmnodes\" exec=\"talker\"><param from=\"none.yaml\"/></node></launch>",
			"bad.launch.xml:1: param file: stat "},
		{"param no value", "<launch><node pkg=\"fsmnodes\" exec=\"talker\"><param name=\"a\"/></node></launch>",
			`bad.launch.xml:1: <param name="a"> needs value, from, or nested <param> elements`},
		{"text", "<launch>hello</launch>", `bad.launch.xml:1: unexpected text "hello" inside <launch>`},
		{"xml syntax", "<launch><node></launch>", "bad.launch.xml: invalid XML: XML syntax error on line 1: element <node> closed by </launch>"},
		{"include missing", "<launch><include file=\"nope.launch.xml\"/></launch>", "bad.launch.xml:1: include: stat "},
		{"include child", "<launch><include file=\"bad.launch.xml\"><let name=\"a\" value=\"b\"/></include></launch>",
			"bad.launch.xml:1: unknown tag <let> inside <include> (only <arg name value/>)"},
		{"include loop", "<launch><include file=\"bad.launch.xml\"/></launch>", "includes nested more than 32 deep"},
		{"keep forwarding", "<launch><group><keep name=\"a\"/></group></launch>",
			`bad.launch.xml:1: <keep> only makes sense in a group with forwarding="false"`},
		{"on_exit", "<launch><node pkg=\"fsmnodes\" exec=\"talker\" on_exit=\"restart\"/></launch>",
			`bad.launch.xml:1: on_exit: only "shutdown" is supported, got "restart"`},
		{"param type", "<launch><node pkg=\"fsmnodes\" exec=\"talker\"><param name=\"a\" value=\"1\" type=\"yaml\"/></node></launch>",
			`bad.launch.xml:1: param "a": type "yaml" is not supported (use str, or leave it out)`},
		{"subst args", "<launch><let name=\"a\" value=\"$(var)\"/></launch>", "bad.launch.xml:1: $(var) takes 1 to 2 arguments, got 0"},
		{"executable not found", "<launch><executable cmd=\"no-such-cmd-xyz\"/></launch>",
			`bad.launch.xml:1: command "no-such-cmd-xyz" not found in PATH`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			f := filepath.Join(dir, "bad.launch.xml")
			if err := os.WriteFile(f, []byte(c.xml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(f, Options{BinDir: bin, ShareDir: dir, LookupEnv: env("PATH", os.Getenv("PATH"))})
			if err == nil {
				t.Fatalf("Load succeeded, want error %q", c.want)
			}
			msg := strings.ReplaceAll(err.Error(), dir+"/", "")
			if !strings.HasPrefix(msg, c.want) && !strings.Contains(msg, c.want) {
				t.Errorf("error:\n%s\nwant:\n%s", msg, c.want)
			}
		})
	}
}

func TestTypedValue(t *testing.T) {
	cases := []struct {
		in, typ string
		want    any
	}{
		{"10", "", int64(10)}, {"1.0", "", 1.0}, {"true", "", true}, {"hello world", "", "hello world"},
		{"[1.5, 2]", "", []any{1.5, int64(2)}}, {"007", "str", "007"}, {"", "", ""}, {"'quoted'", "", "quoted"},
		{"a: b", "", "a: b"},
	}
	for _, c := range cases {
		got, err := typedValue(c.in, c.typ)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("typedValue(%q, %q) = %#v, %v; want %#v", c.in, c.typ, got, err, c.want)
		}
	}
}

func TestYAMLScalar(t *testing.T) {
	cases := map[string]any{"1.0": 1.0, "1.0e+20": 1e20, "2.5e-07": 2.5e-7, "-3": int64(-3), `"a\"b"`: "a\"b",
		"[true, false]": []any{true, false}, ".nan": nanValue()}
	for want, v := range cases {
		if got := yamlScalar(v); got != want {
			t.Errorf("yamlScalar(%v) = %s, want %s", v, got, want)
		}
	}
}

func nanValue() float64 { var z float64; return z / z }

func TestProcessEnviron(t *testing.T) {
	p := &Process{Env: []string{"A=1", "B=2", "A=3"}, Unset: []string{"C"}}
	got := p.Environ([]string{"A=0", "C=x", "D=y"})
	want := []string{"D=y", "A=3", "B=2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Environ = %q, want %q", got, want)
	}
}

func TestFindExecutable(t *testing.T) {
	bin := fakeBin(t, "talker")
	p, err := FindExecutable("fsmnodes", "talker", Options{LookupEnv: env(EnvBin, bin)})
	if err != nil || p != filepath.Join(bin, "talker") {
		t.Errorf("FindExecutable = %q, %v", p, err)
	}
	if _, err := FindExecutable("fsmnodes", "nope", Options{BinDir: bin, LookupEnv: env()}); err == nil ||
		!strings.Contains(err.Error(), `executable "nope" of package "fsmnodes" not found`) {
		t.Errorf("missing executable: %v", err)
	}
	if _, err := FindExecutable("other_pkg", "x", Options{LookupEnv: env()}); err == nil {
		t.Error("executable of an unknown package found")
	}
}

func TestCommand_LabelWithSlashMakesAFileName(t *testing.T) {
	p := &Process{Kind: KindNode, Label: "a/b c-1", Path: "/bin/x", Params: []ParamSource{{Inline: []ParamValue{{Name: "p", Value: int64(1)}}}}}
	dir := t.TempDir()
	argv, err := p.Command(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "launch_params_a_b_c-1_0.yaml"); argv[len(argv)-1] != want {
		t.Errorf("argv = %q, want the file %s", argv, want)
	}
}

func TestLoad_IncludeIsNotAScope(t *testing.T) {
	bin := fakeBin(t, "talker")
	dir := t.TempDir()
	write := func(name, body string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	write("inner.launch.xml", `<launch><arg name="who"/><let name="leaked" value="from-$(var who)"/>
<push_ros_namespace namespace="inner"/></launch>`)
	top := write("top.launch.xml", `<launch>
<include file="inner.launch.xml"><arg name="who" value="top"/></include>
<node pkg="fsmnodes" exec="talker" name="t_$(var leaked)"/>
<group><include file="inner.launch.xml"><arg name="who" value="grouped"/></include></group>
<node pkg="fsmnodes" exec="talker" name="u_$(var leaked)"/>
</launch>`)
	d, err := Load(top, Options{BinDir: bin, ShareDir: dir, LookupEnv: env()})
	if err != nil {
		t.Fatal(err)
	}
	// As with ros2 launch: the first include's let and namespace leak; the
	// grouped include's do not.
	got := d.Processes[0].FQN() + " " + d.Processes[1].FQN()
	if got != "/inner/t_from-top /inner/u_from-top" {
		t.Errorf("got %s", got)
	}
	bad := write("bad.launch.xml", `<launch><let name="who" value="x"/>
<include file="inner.launch.xml"/></launch>`)
	_, err = Load(bad, Options{BinDir: bin, ShareDir: dir, LookupEnv: env()})
	if err == nil || !strings.Contains(err.Error(), `inner.launch.xml:1: included launch file needs the argument "who": pass it with <arg name="who" value=.../> in the <include>`) {
		t.Errorf("missing include argument: %v", err)
	}
}

func TestFindLaunchFile(t *testing.T) {
	share, _ := filepath.Abs("testdata/share")
	f, err := FindLaunchFile("fsmnodes", "child.launch.xml", Options{ShareDir: share, LookupEnv: env()})
	if err != nil || f != filepath.Join(share, "launch", "child.launch.xml") {
		t.Errorf("FindLaunchFile = %q, %v", f, err)
	}
	// Found anywhere below the share directory, as ros2 launch searches it.
	f, err = FindLaunchFile("fsmnodes", "talker.yaml", Options{ShareDir: share, LookupEnv: env()})
	if err != nil || f != filepath.Join(share, "params", "talker.yaml") {
		t.Errorf("FindLaunchFile (recursive) = %q, %v", f, err)
	}
	if _, err := FindLaunchFile("fsmnodes", "nope.launch.xml", Options{ShareDir: share, LookupEnv: env()}); err == nil ||
		!strings.Contains(err.Error(), `file "nope.launch.xml" was not found in the share directory of package "fsmnodes"`) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := FindLaunchFile("no_such_pkg", "x.launch.xml", Options{LookupEnv: env()}); err == nil ||
		err.Error() != `package "no_such_pkg" not found in AMENT_PREFIX_PATH` {
		t.Errorf("missing package: %v", err)
	}
}

func TestLoad_ParamFileWithSubstitutions(t *testing.T) {
	bin := fakeBin(t, "talker")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte("/**:\n  ros__parameters:\n    frame: $(var frame)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "t.launch.xml")
	if err := os.WriteFile(file, []byte(`<launch><arg name="frame" default="base_link"/>
<node pkg="fsmnodes" exec="talker"><param from="$(dirname)/p.yaml" allow_substs="true"/><param from="p.yaml"/></node></launch>`), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Load(file, Options{BinDir: bin, ShareDir: dir, LookupEnv: env()})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	argv, err := d.Processes[0].Command(tmp)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{bin + "/talker", "--ros-args", "--params-file", filepath.Join(tmp, "launch_params_talker-1_0.yaml"),
		"--params-file", filepath.Join(dir, "p.yaml")}
	if !reflect.DeepEqual(argv, want) {
		t.Errorf("argv = %q\nwant %q", argv, want)
	}
	got, _ := os.ReadFile(filepath.Join(tmp, "launch_params_talker-1_0.yaml"))
	if string(got) != "/**:\n  ros__parameters:\n    frame: base_link\n" {
		t.Errorf("substituted file:\n%s", got)
	}
}

// $(command ...) reads a URDF into a parameter as ros2 launch does; quoting
// follows the shell; on_stderr decides what output on standard error means.
func TestLoad_CommandSubstitution(t *testing.T) {
	bin := fakeBin(t, "talker")
	dir := t.TempDir()
	urdf := "<?xml version=\"1.0\"?>\n<robot name=\"r\">\n  <link name=\"base\"/>\n</robot>\n"
	if err := os.WriteFile(filepath.Join(dir, "my robot.urdf"), []byte(urdf), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "t.launch.xml")
	if err := os.WriteFile(file, []byte(`<launch>
  <set_env name="GREETING" value="hi there"/>
  <let name="plain" value="$(command 'echo one   two')"/>
  <let name="quoted" value="$(command 'printf %s &quot;a  b&quot; c\ d')"/>
  <let name="env" value="$(command 'sh -c &quot;printf %s \&quot;$GREETING\&quot;&quot;')"/>
  <let name="warned" value="$(command 'sh -c &quot;echo out; echo err >&amp;2&quot;' warn)"/>
  <let name="ignored" value="$(command 'sh -c &quot;echo out; echo err >&amp;2&quot;' ignore)"/>
  <let name="captured" value="$(command 'sh -c &quot;echo out; echo err >&amp;2&quot;' capture)"/>
  <node pkg="fsmnodes" exec="talker">
    <param name="robot_description" value="$(command 'cat &quot;$(dirname)/my robot.urdf&quot;')"/>
    <param name="plain" value="$(var plain)" type="str"/>
    <param name="quoted" value="$(var quoted)"/>
    <param name="env" value="$(var env)"/>
    <param name="warned" value="$(var warned)" type="str"/>
    <param name="ignored" value="$(var ignored)" type="str"/>
    <param name="captured" value="$(var captured)" type="str"/>
  </node>
</launch>`), 0o644); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	d, err := Load(file, Options{BinDir: bin, ShareDir: dir, LookupEnv: env("PATH", os.Getenv("PATH")),
		Warn: func(m string) { warnings = append(warnings, m) }})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, ps := range d.Processes[0].Params {
		for _, v := range ps.Inline {
			got[v.Name] = v.Value
		}
	}
	want := map[string]any{
		// YAML typing folds the lines of a multi-line string, as in ros2 launch
		"robot_description": `<?xml version="1.0"?> <robot name="r"> <link name="base"/> </robot>`,
		"plain":             "one two\n",
		"quoted":            "a  bc d",
		"env":               "hi there",
		"warned":            "out\n",
		"ignored":           "out\n",
		"captured":          "out\nerr\n",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parameters:\n%q\nwant\n%q", got, want)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "wrote to standard error: err") {
		t.Errorf("warnings %q", warnings)
	}
}

func TestShellWords(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  string
	}{
		{"cat a.urdf", []string{"cat", "a.urdf"}, ""},
		{"  a\t b\n", []string{"a", "b"}, ""},
		{`a 'b c' "d e"`, []string{"a", "b c", "d e"}, ""},
		{`a'b'"c"d`, []string{"abcd"}, ""},
		{`"a \" \\ \$ \x"`, []string{`a " \ $ \x`}, ""},
		{`a\ b \'c`, []string{"a b", "'c"}, ""},
		{`''`, []string{""}, ""},
		{"", nil, ""},
		{`'a`, nil, "unterminated ' quote"},
		{`"a`, nil, `unterminated " quote`},
		{`a\`, nil, "trailing backslash"},
	}
	for _, c := range cases {
		got, err := shellWords(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %q %v, want %q", c.in, got, err, c.want)
		}
	}
}

// $(var name default) gives the default when name is not set, and
// ros_namespace is the pushed namespace, as in launch_ros: absolute, nested
// pushes joined, unset at the root and after the group that pushed it.
func TestLoad_VarDefaultAndRosNamespace(t *testing.T) {
	bin := fakeBin(t, "talker")
	dir := t.TempDir()
	top := filepath.Join(dir, "top.launch.xml")
	if err := os.WriteFile(top, []byte(`<launch>
<let name="set" value="yes"/>
<node pkg="fsmnodes" exec="talker" name="root" args="$(var ros_namespace none) $(var set no) $(var unset fallback)"/>
<group>
  <push_ros_namespace namespace="robot1"/>
  <node pkg="fsmnodes" exec="talker" name="one" args="$(var ros_namespace none)"/>
  <group>
    <push_ros_namespace namespace="arm"/>
    <node pkg="fsmnodes" exec="talker" name="arm" args="$(var ros_namespace none)"/>
  </group>
</group>
<group>
  <push_ros_namespace namespace="/robot2/"/>
  <node pkg="fsmnodes" exec="talker" name="two" args="file$(var ros_namespace '')/w.yaml"/>
</group>
<node pkg="fsmnodes" exec="talker" name="after" args="file$(var ros_namespace '')/w.yaml"/>
</launch>`), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Load(top, Options{BinDir: bin, ShareDir: dir, LookupEnv: env()})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"root":  "none yes fallback",
		"one":   "/robot1",
		"arm":   "/robot1/arm",
		"two":   "file/robot2/w.yaml",
		"after": "file/w.yaml",
	}
	for _, p := range d.Processes {
		got := strings.Join(p.Args, " ")
		if w, ok := want[p.Name]; !ok || got != w {
			t.Errorf("%s: args %q, want %q", p.Name, got, w)
		}
		delete(want, p.Name)
	}
	if len(want) > 0 {
		t.Errorf("missing nodes: %v", want)
	}
}
