package rsmplugin_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	rsm_msgs_action "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/action"
	"github.com/fsmnodes/fsmnodes/rsmplugin"
)

// pluginEnv makes the test binary run paramPlugin (TestMain), so the
// process tests need no executable of their own.
const pluginEnv = "RSMPLUGIN_TEST_PLUGIN"

// TestMain runs the test binary as the plugin node when pluginEnv is set,
// and the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv(pluginEnv) != "" {
		if err := rsmplugin.ServeNode(context.Background(), os.Args[1:], "param_plugin", "param_plugin", newParamPlugin); err != nil {
			fmt.Fprintln(os.Stderr, "param_plugin:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testenv.Main(m))
}

// paramPlugin answers every goal with its parameters, so a test can see
// what the node read.
type paramPlugin struct {
	greeting string
	goals    []float64
	speed    func() float64
}

// newParamPlugin declares a read-only string, a read-only array with a
// check and a live double with a check.
func newParamPlugin(n *rsmplugin.Node) (rsmplugin.StateServer, error) {
	p := &paramPlugin{
		greeting: rsmplugin.Param(n, "greeting", "hello", "what the plugin says", nil),
		goals: rsmplugin.Param(n, "goals", []float64{}, "x, y pairs", func(xy []float64) error {
			if len(xy)%2 != 0 {
				return errors.New("want x, y pairs")
			}
			return nil
		}),
		speed: rsmplugin.LiveParam(n, "speed", 0.5, "m/s", func(v float64) error {
			if v <= 0 {
				return errors.New("must be above 0")
			}
			return nil
		}),
	}
	if n.Store() == nil || !strings.HasPrefix(n.Name(), "/") {
		return nil, fmt.Errorf("node %q, store %v", n.Name(), n.Store())
	}
	n.Log().Infof("param_plugin: greeting %q, %d goals, speed %g", p.greeting, len(p.goals)/2, p.speed())
	return p, nil
}

func (p *paramPlugin) RunState(_ context.Context, _ rsmplugin.RunRequest, _ func(string)) (rsmplugin.RunResult, error) {
	return rsmplugin.RunResult{NextState: rsmplugin.NextIdle, Reason: fmt.Sprintf("%s %v %g", p.greeting, p.goals, p.speed())}, nil
}

// startPlugin runs the test binary as param_plugin with args.
func startPlugin(t *testing.T, domain uint32, args ...string) *testenv.Process {
	t.Helper()
	return testenv.Start(t, "param_plugin", append(testenv.Env(domain), pluginEnv+"=1"), os.Args[0], args...)
}

// A plugin served with ServeNode reads its own parameters: from a
// --params-file and --ros-args -p at start-up, a live one changed with
// `fsmnodes param set` while it runs (a refused value keeps the old one),
// and a value its check refuses ends the node with the reason.
func TestServeNode_PluginParameters(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a plugin process")
	}
	domain := testenv.Domain(t)
	file := filepath.Join(t.TempDir(), "plugin.yaml")
	if err := os.WriteFile(file, []byte("param_plugin:\n  ros__parameters:\n    goals: [1.0, 2.0]\n    speed: 0.3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	startPlugin(t, domain, "--ros-args", "--params-file", file, "-p", "greeting:=hi")

	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "test: "}})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() { _ = rc.Spin(ctx) }()
	n, err := rc.NewNode("serve_node_test", "")
	if err != nil {
		t.Fatal(err)
	}
	cli, err := ros.NewActionClient(n, "/param_plugin", rsm_msgs_action.RunState)
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.WaitForServer(ctx); err != nil {
		t.Fatal(err)
	}
	run := func() string {
		t.Helper()
		g, err := cli.SendGoal(ctx, &rsm_msgs_action.RunState_Goal{StateName: rsmplugin.NextCalculateGoal}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, st, err := g.Result(ctx)
		if err != nil || st != action.StatusSucceeded {
			t.Fatalf("goal: %v %v", st, err)
		}
		return res.Reason
	}
	if got, want := run(), "hi [1 2] 0.3"; got != want {
		t.Errorf("parameters from the file and -p: %q, want %q", got, want)
	}
	if _, stderr, ok := testenv.CLI(t, domain, "param", "set", "/param_plugin", "speed", "0.7"); !ok {
		t.Fatalf("param set speed 0.7: %s", stderr)
	}
	if got, want := run(), "hi [1 2] 0.7"; got != want {
		t.Errorf("after param set speed 0.7: %q, want %q", got, want)
	}
	out, stderr, _ := testenv.CLI(t, domain, "param", "set", "/param_plugin", "speed", "-1.0")
	if !strings.Contains(out+stderr, "must be above 0") {
		t.Errorf("param set speed -1.0: %q %q, want the refusal with check's reason", out, stderr)
	}
	if got, want := run(), "hi [1 2] 0.7"; got != want {
		t.Errorf("after a refused set: %q, want %q", got, want)
	}
	if _, stderr, ok := testenv.CLI(t, domain, "param", "set", "/param_plugin", "greeting", "bye"); ok {
		t.Errorf("param set of the read-only greeting succeeded: %s", stderr)
	}

	bad := startPlugin(t, domain, "--ros-args", "-r", "__node:=bad_plugin", "-p", "goals:=[1.0]")
	bad.WaitOutput(t, 30*time.Second, regexp.MustCompile(`goals.*want x, y pairs`))
	testenv.WaitFor(t, 30*time.Second, "the plugin with a bad parameter to exit", func() bool {
		done, err := bad.Exited()
		return done && err != nil
	})
}
