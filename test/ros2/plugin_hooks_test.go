package ros2

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	rsm_msgs_action "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/action"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// TestPythonPluginHooks runs an rclpy plugin node that serves the hook
// service beside its RunState action (testdata/survey_hook_plugin.py, with
// rsm_msgs/srv/RunStateHook as rosidl generates it): our rsmNode asks it
// about exploration stops while its goal runs; its refusal keeps the state,
// its acceptance goes to the state it names (Idle) and cancels the goal.
func TestPythonPluginHooks(t *testing.T) {
	d := newDom(t)
	env := d.ours()
	d.start("service_provider", env, ours("service_provider"))
	d.start("state_interface", env, ours("state_interface"), "--ros-args", "-p", "calculate_goal_plugin:=action:survey")
	d.start("rsm_boot", env, ours("rsm_boot"), "--ros-args", "-p", "wait_time:=0.1")
	d.start("rclpy survey_hook_plugin", d.rosEnv(), "/usr/bin/python3", filepath.Join(peer.repo, "test/ros2/testdata/survey_hook_plugin.py"))

	c := d.context()
	n, err := c.NewNode("hook_watch", "/test")
	if err != nil {
		t.Fatal(err)
	}
	plugin, err := ros.NewActionClient(n, "/survey", rsm_msgs_action.RunState)
	if err != nil {
		t.Fatal(err)
	}
	hook, _ := ros.NewClient(n, "/survey/hook", rsm_msgs_srv.RunStateHook)
	explore, _ := ros.NewClient(n, "/rsm/startStopExploration", std_srvs_srv.SetBool)
	stateSrv, _ := ros.NewClient(n, "/rsm/stateInfo", std_srvs_srv.Trigger)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := plugin.WaitForServer(ctx); err != nil {
		t.Fatalf("the rclpy plugin's RunState server: %v", err)
	}
	for _, s := range []interface{ WaitForService(context.Context) error }{hook, explore, stateSrv} {
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
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			if ctx.Err() != nil {
				t.Fatalf("waiting for %s: %v", what, ctx.Err())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// Our client against rclpy's server first: a hook it declines.
	if r, err := hook.Call(ctx, &rsm_msgs_srv.RunStateHook_Request{Hook: rsm_msgs_srv.RunStateHook_Request_INTERRUPT,
		Interrupt: rsm_msgs_srv.RunStateHook_Request_TELEOPERATION_INTERRUPT, StateName: "calculate_goal_plugin"}); err != nil || r.Handled {
		t.Fatalf("survey/hook INTERRUPT: %+v %v, want handled=false", r, err)
	}
	waitFor("Idle after boot", func() bool { return current() == "Idle" })
	if r := setExploration(true); !r.Success {
		t.Fatalf("start exploration: %+v", r)
	}
	waitFor("E: Survey", func() bool { return current() == "E: Survey" })
	if r := setExploration(false); r.Success || r.Message != "Survey: the first stop is refused (rclpy)" {
		t.Fatalf("first exploration stop: %+v, want the plugin's refusal", r)
	}
	time.Sleep(300 * time.Millisecond) // a few ticks: a transition would have happened
	if s := current(); s != "E: Survey" {
		t.Fatalf("after the refused stop: %q, want E: Survey", s)
	}
	if r := setExploration(false); !r.Success || r.Message != "Survey stopped (rclpy)" {
		t.Fatalf("second exploration stop: %+v, want the plugin's success", r)
	}
	waitFor("Idle after the accepted stop", func() bool { return current() == "Idle" })
}
