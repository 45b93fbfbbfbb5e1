package ros2

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	rsm_msgs_action "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/action"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// pythonPluginFromDocs returns the rclpy plugin of docs/rsm.md (the code
// block after the marker), so that the tutorial's code is what runs.
func pythonPluginFromDocs(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(peer.repo, "docs", "rsm.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- goal_list_plugin.py -->\n```python\n")
	code, _, closed := strings.Cut(rest, "\n```\n")
	if !ok || !closed {
		t.Fatal("docs/rsm.md: no ```python block after <!-- goal_list_plugin.py -->")
	}
	return code + "\n"
}

// TestPythonPlugin runs the rclpy calculate-goal plugin of the tutorial
// (docs/rsm.md#writing-a-plugin) as the plugin of our rsmNode: exploration
// shows its feedback name on /rsm/stateInfo, the goal it stores through
// our service provider is the one Navigation drives to, and an exploration
// stop while it shows its name cancels its goal (rclpy accepts the cancel,
// the list keeps its place and no goal is stored).
func TestPythonPlugin(t *testing.T) {
	d := newDom(t)
	script := filepath.Join(d.dir, "goal_list_plugin.py")
	if err := os.WriteFile(script, []byte(pythonPluginFromDocs(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	env := d.ours()
	d.start("service_provider", env, ours("service_provider"))
	d.start("state_interface", env, ours("state_interface"), "--ros-args",
		"-p", "calculate_goal_plugin:=action:goal_list", "-p", "action_server_timeout:=3.0")
	d.start("rsm_boot", env, ours("rsm_boot"), "--ros-args", "-p", "wait_time:=0.1")
	d.start("rclpy goal_list_plugin", d.rosEnv(), "/usr/bin/python3", script, "--ros-args",
		"-p", "goals:=[2.0, 0.0, 2.0, 2.0]", "-p", "dwell:=1.5")

	c := d.context()
	n, err := c.NewNode("plugin_watch", "/test")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var states []string
	if _, err := ros.NewSubscription(n, "/rsm/stateInfo", ros.QoSDefault, func(m *std_msgs_msg.String) {
		mu.Lock()
		states = append(states, m.Data)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	seen := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), states...)
	}
	plugin, err := ros.NewActionClient(n, "/goal_list", rsm_msgs_action.RunState)
	if err != nil {
		t.Fatal(err)
	}
	explore, _ := ros.NewClient(n, "/rsm/startStopExploration", std_srvs_srv.SetBool)
	stateSrv, _ := ros.NewClient(n, "/rsm/stateInfo", std_srvs_srv.Trigger)
	getGoal, _ := ros.NewClient(n, "/rsm/getNavigationGoal", rsm_msgs_srv.GetNavigationGoal)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := plugin.WaitForServer(ctx); err != nil {
		t.Fatalf("the rclpy plugin's RunState server: %v", err)
	}
	for _, s := range []interface{ WaitForService(context.Context) error }{explore, stateSrv, getGoal} {
		if err := s.WaitForService(ctx); err != nil {
			t.Fatal(err)
		}
	}
	current := func() string {
		r, err := stateSrv.Call(ctx, &std_srvs_srv.Trigger_Request{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Message
	}
	setExploration := func(on bool) *std_srvs_srv.SetBool_Response {
		r, err := explore.Call(ctx, &std_srvs_srv.SetBool_Request{Data: on})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	goal := func() *rsm_msgs_srv.GetNavigationGoal_Response {
		r, err := getGoal.Call(ctx, &rsm_msgs_srv.GetNavigationGoal_Request{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			if ctx.Err() != nil {
				t.Fatalf("waiting for %s: %v (states %q)", what, ctx.Err(), seen())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("Idle after boot", func() bool { return current() == "Idle" })

	// The first goal: shown, stored, driven to (no Nav2 here, so
	// Navigation gives up after action_server_timeout).
	mu.Lock()
	states = nil
	mu.Unlock()
	if r := setExploration(true); !r.Success {
		t.Fatalf("start exploration: %+v", r)
	}
	waitFor("E: Navigation", func() bool { return slices.Contains(seen(), "E: Navigation") })
	if got, want := seen()[:3], []string{"E: goal_list", "E: Goal List 1/2", "E: Navigation"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("stateInfo %q, want %q", got, want)
	}
	g := goal()
	if g.NavigationMode != 0 || g.Goal.Position.X != 2 || g.Goal.Position.Y != 0 {
		t.Fatalf("navigation goal after the plugin: %+v", g)
	}
	waitFor("Idle once Navigation gives up", func() bool { return current() == "Idle" })

	// The second goal, stopped while shown: canceled, nothing stored.
	if r := setExploration(true); !r.Success {
		t.Fatalf("start exploration: %+v", r)
	}
	waitFor("E: Goal List 2/2", func() bool { return current() == "E: Goal List 2/2" })
	if r := setExploration(false); !r.Success || r.Message != "Exploration stopped" {
		t.Fatalf("stop exploration: %+v", r)
	}
	waitFor("Idle after the stop", func() bool { return current() == "Idle" })
	time.Sleep(2 * time.Second) // past the dwell: a goal that was not canceled would store (2,2) now
	if g := goal(); g.Goal.Position.Y != 0 {
		t.Fatalf("the canceled plugin stored a goal: %+v", g)
	}
}
