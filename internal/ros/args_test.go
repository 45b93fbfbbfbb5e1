package ros

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	args := []string{
		"--verbose", "input.txt",
		"--ros-args",
		"-r", "__node:=n2", "--remap", "chatter:=chat",
		"-p", "rate:=10", "--param", "talker:name:='hi there'",
		"--params-file", "/tmp/a.yaml", "-p", "late:=1",
		"--log-level", "DEBUG", "--log-level", "demo.talker:=warn", "--log-level", "demo.talker:=error",
		"--disable-rosout-logs", "--enable-stdout-logs",
		"-e", "/secure",
		"--", "after", "--ros-args", "--params-file", "/tmp/b.yaml", "--",
		"last",
	}
	a, err := ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"--verbose", "input.txt", "after", "last"}; !reflect.DeepEqual(a.User, want) {
		t.Errorf("User = %q, want %q", a.User, want)
	}
	if len(a.Remaps) != 2 || a.Remaps[0].Kind != RemapNodeName || a.Remaps[1].Match != "chatter" {
		t.Errorf("Remaps = %+v", a.Remaps)
	}
	wantParams := []ParamOverride{{Name: "rate", Value: "10"}, {Node: "talker", Name: "name", Value: "'hi there'"}, {Name: "late", Value: "1", FilesBefore: 1}}
	if !reflect.DeepEqual(a.Params, wantParams) {
		t.Errorf("Params = %+v, want %+v", a.Params, wantParams)
	}
	if want := []string{"/tmp/a.yaml", "/tmp/b.yaml"}; !reflect.DeepEqual(a.ParamsFiles, want) {
		t.Errorf("ParamsFiles = %q, want %q", a.ParamsFiles, want)
	}
	if a.LogLevel != LogDebug || a.LoggerLevels["demo.talker"] != LogError {
		t.Errorf("log levels = %v %v", a.LogLevel, a.LoggerLevels)
	}
	if a.LevelFor("demo.talker") != LogError || a.LevelFor("other") != LogDebug {
		t.Errorf("LevelFor wrong: %v %v", a.LevelFor("demo.talker"), a.LevelFor("other"))
	}
	if a.RosoutLogs == nil || *a.RosoutLogs || a.StdoutLogs == nil || !*a.StdoutLogs || a.ExternalLibLogs != nil {
		t.Errorf("toggles = %v %v %v", a.RosoutLogs, a.StdoutLogs, a.ExternalLibLogs)
	}
	if a.Enclave != "/secure" {
		t.Errorf("Enclave = %q", a.Enclave)
	}
	if got := a.ParamsFor("listener"); len(got) != 2 || got[0].Name != "rate" || got[1].Name != "late" {
		t.Errorf("ParamsFor(listener) = %+v", got)
	}
	if got := a.ParamsFor("talker"); len(got) != 3 {
		t.Errorf("ParamsFor(talker) = %+v", got)
	}
}

func TestParseArgsEmptyAndPlain(t *testing.T) {
	a, err := ParseArgs([]string{"x", "--ros-args", "--", "y"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.User, []string{"x", "y"}) || len(a.Remaps) != 0 {
		t.Errorf("got %+v", a)
	}
	a, err = ParseArgs(nil)
	if err != nil || len(a.User) != 0 || a.LevelFor("x") != LogInfo {
		t.Errorf("nil args: %+v, %v", a, err)
	}
	// Remap-looking arguments outside --ros-args are user arguments.
	a, err = ParseArgs([]string{"__node:=x", "-r"})
	if err != nil || len(a.User) != 2 || len(a.Remaps) != 0 {
		t.Errorf("outside --ros-args: %+v, %v", a, err)
	}
}

func TestParseArgsErrors(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--ros-args", "--bogus"}, `"--bogus": unknown ROS argument`},
		{[]string{"--ros-args", "chatter:=x"}, "unknown ROS argument"},
		{[]string{"--ros-args", "-r"}, "missing value"},
		{[]string{"--ros-args", "-r", "--"}, "missing value"},
		{[]string{"--ros-args", "-r", "nosep"}, "missing ':='"},
		{[]string{"--ros-args", "-p", "novalue"}, "name:=value"},
		{[]string{"--ros-args", "-p", ":=1"}, "empty parameter name"},
		{[]string{"--ros-args", "-p", "x:="}, "empty parameter value"},
		{[]string{"--ros-args", "-p", "bad-node:x:=1"}, "node prefix"},
		{[]string{"--ros-args", "--log-level", "loud"}, "unknown log level"},
		{[]string{"--ros-args", "--log-level", "a:=loud"}, "unknown log level"},
		{[]string{"--ros-args", "--log-level", ":=info"}, "empty logger name"},
		{[]string{"--ros-args", "--params-file"}, "missing value"},
		{[]string{"--ros-args", "-e", "relative"}, "enclave"},
	}
	for _, tt := range tests {
		_, err := ParseArgs(tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("ParseArgs(%q) error = %v, want it to contain %q", tt.args, err, tt.wantErr)
		}
	}
}

func TestParseLogLevel(t *testing.T) {
	for s, want := range map[string]LogLevel{"debug": LogDebug, "INFO": LogInfo, "Warn": LogWarn, "error": LogError, "FATAL": LogFatal, "unset": LogUnset} {
		got, err := ParseLogLevel(s)
		if err != nil || got != want {
			t.Errorf("ParseLogLevel(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
}

// TestArgs_ParamSourcesInCommandLineOrder: files and -p rules reach the
// parameter overrides in command-line order, as rcl merges them: a -p rule
// before a file naming the node loses to it, one after wins.
func TestArgs_ParamSourcesInCommandLineOrder(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(file, []byte("talker:\n  ros__parameters:\n    rate: 1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--ros-args", "-p", "rate:=9.0", "--params-file", file}, "1.0"},
		{[]string{"--ros-args", "--params-file", file, "-p", "rate:=9.0"}, "9.0"},
		{[]string{"--ros-args", "--params-file", file, "--ros-args", "-p", "talker:rate:=3.0"}, "3.0"},
	} {
		a, err := ParseArgs(c.args)
		if err != nil {
			t.Fatal(err)
		}
		ov, err := a.overrides()
		if err != nil {
			t.Fatal(err)
		}
		if got := ov.For("/talker")["rate"].String(); got != c.want {
			t.Errorf("%q: rate = %s, want %s", c.args, got, c.want)
		}
	}
}
