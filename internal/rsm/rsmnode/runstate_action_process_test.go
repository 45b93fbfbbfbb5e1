package rsmnode

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rsm_msgs_action "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/action"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
	tf2_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/tf2_msgs/msg"
)

// TestExamplePlugin_Process drives the example plugin node end to end:
// state_interface (calculate_goal_plugin action:goal_list), the service
// provider, rsm_boot and the example_rsm_plugin executable run as
// processes, a fake Nav2 serves navigate_to_pose.
//
//   - startStopExploration starts "E: Goal List 1/2" (the plugin's
//     feedback on /rsm/stateInfo); stopping it cancels the goal, and the
//     list keeps its place.
//   - The plugin node killed while it shows its name: its server leaves
//     the graph and the state goes to Idle.
//   - A new plugin node: exploration visits the two goals of its goals
//     parameter through Navigation and Mapping Dummy, and ends in Idle
//     when the plugin says all goals are visited.
//   - With the plugin node stopped, exploration waits
//     action_server_timeout for its server and goes to Idle.
func TestExamplePlugin_Process(t *testing.T) {
	domain := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	t.Parallel() // a domain of its own
	start(t, domain, "service_provider", "--ros-args", "-p", "robot_frame:=/base_link")
	start(t, domain, "state_interface", "--ros-args",
		"-p", "calculate_goal_plugin:=action:goal_list", "-p", "action_server_timeout:=2.0")
	start(t, domain, "rsm_boot", "--ros-args", "-p", "wait_time:=0.1")
	pluginExe := testenv.Executable(t, "nodes/example_rsm_plugin")
	// startPlugin starts the plugin node with a 1 s DDS lease, so that a
	// killed one leaves the graph within a second.
	startPlugin := func() *testenv.Process {
		return testenv.Start(t, "example_rsm_plugin", append(testenv.Env(domain),
			"CYCLONEDDS_URI=<CycloneDDS><Domain><Discovery><LeaseDuration>1s</LeaseDuration></Discovery></Domain></CycloneDDS>"),
			pluginExe, "--ros-args", "-p", "goals:=[2.0, 0.0, 2.0, 2.0]", "-p", "dwell:=1.5")
	}
	exited := func(p *testenv.Process) func() bool { return func() bool { done, _ := p.Exited(); return done } }
	plugin := startPlugin()

	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "test: "}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	n, err := rc.NewNode("rsm_plugin_test", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	nav := &fakeNav2{results: map[[16]byte]int8{}}
	nav.serve(t, n, "/navigate_to_pose")
	states := &recorder[string]{}
	if _, err := ros.NewSubscription(n, "/rsm/stateInfo", ros.QoSDefault, func(m *std_msgs_msg.String) { states.add(m.Data) }); err != nil {
		t.Fatal(err)
	}
	tfStatic, err := ros.NewPublisher[tf2_msgs_msg.TFMessage](n, "/tf_static", ros.QoSLatched)
	if err != nil {
		t.Fatal(err)
	}
	tfm := tf2_msgs_msg.TFMessage{Transforms: []geometry_msgs_msg.TransformStamped{{ChildFrameId: "base_link"}}}
	tfm.Transforms[0].Header.FrameId = "map"
	tfm.Transforms[0].Transform.Rotation.W = 1
	if err := tfStatic.Publish(&tfm); err != nil {
		t.Fatal(err)
	}
	explore, _ := ros.NewClient(n, "/rsm/startStopExploration", std_srvs_srv.SetBool)
	stateSrv, _ := ros.NewClient(n, "/rsm/stateInfo", std_srvs_srv.Trigger)
	// The plugin asks service_provider for its goal: a start before that
	// node is up sends the state machine back to Idle at once.
	navGoal, _ := ros.NewClient(n, "/rsm/getNavigationGoal", rsm_msgs_srv.GetNavigationGoal)
	pluginCli, err := ros.NewActionClient(
		n, "/goal_list", rsm_msgs_action.RunState)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = rc.Spin(ctx) }()
	for _, c := range []interface{ WaitForService(context.Context) error }{explore, stateSrv, navGoal} {
		cctx, cc := context.WithTimeout(ctx, waitLimit)
		if err := c.WaitForService(cctx); err != nil {
			cc()
			t.Fatalf("wait for service: %v", err)
		}
		cc()
	}
	wctx, wc := context.WithTimeout(ctx, waitLimit)
	if err := pluginCli.WaitForServer(wctx); err != nil {
		wc()
		t.Fatalf("the example plugin's RunState server /goal_list: %v", err)
	}
	wc()
	current := func() string {
		cctx, cc := context.WithTimeout(ctx, 10*time.Second)
		defer cc()
		r, err := stateSrv.Call(cctx, &std_srvs_srv.Trigger_Request{})
		if err != nil {
			t.Fatalf("stateInfo: %v", err)
		}
		return r.Message
	}
	setExploration := func(on bool) *std_srvs_srv.SetBool_Response {
		cctx, cc := context.WithTimeout(ctx, 10*time.Second)
		defer cc()
		r, err := explore.Call(cctx, &std_srvs_srv.SetBool_Request{Data: on})
		if err != nil {
			t.Fatalf("startStopExploration(%v): %v", on, err)
		}
		return r
	}
	testenv.WaitFor(t, waitLimit, "Idle after boot", func() bool { return current() == "Idle" })

	// Started, shown by the plugin, stopped: the goal is canceled before
	// the plugin stored a goal, so nothing is driven.
	states.clear()
	if r := setExploration(true); !r.Success || r.Message != "Exploration started" {
		t.Fatalf("start exploration: %+v", r)
	}
	testenv.WaitFor(t, waitLimit, `"E: Goal List 1/2" from the plugin's feedback`, func() bool {
		return current() == "E: Goal List 1/2"
	})
	if r := setExploration(false); !r.Success || r.Message != "Exploration stopped" {
		t.Fatalf("stop exploration: %+v", r)
	}
	testenv.WaitFor(t, waitLimit, "Idle after the stop", func() bool { return current() == "Idle" })
	time.Sleep(2 * time.Second) // longer than the dwell: a goal not canceled would now be stored and driven
	if xs := nav.xs(); len(xs) != 0 || current() != "Idle" {
		t.Fatalf("after the stop: navigation goals %v, state %q", xs, current())
	}

	// The plugin node is killed while it shows its name: its server
	// leaves the graph (1 s lease), the state gives up and goes to Idle;
	// nothing is driven.
	states.clear()
	if r := setExploration(true); !r.Success {
		t.Fatalf("start exploration: %+v", r)
	}
	testenv.WaitFor(t, waitLimit, `"E: Goal List 1/2" again`, func() bool { return current() == "E: Goal List 1/2" })
	if err := syscall.Kill(plugin.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, waitLimit, "the killed plugin gone", exited(plugin))
	// The current state and the stateInfo list come by different paths:
	// wait for both to show Idle.
	testenv.WaitFor(t, waitLimit, "Idle after the plugin died", func() bool {
		got := states.get()
		return current() == "Idle" && len(got) > 0 && got[len(got)-1] == "Idle"
	})
	if got, want := states.get(), []string{"E: goal_list", "E: Goal List 1/2", "Idle"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("stateInfo %q, want %q", got, want)
	}
	if xs := nav.xs(); len(xs) != 0 {
		t.Fatalf("after the lost plugin: navigation goals %v", xs)
	}

	// A new plugin node: exploration runs its list to the end.
	plugin = startPlugin()
	wctx, wc = context.WithTimeout(ctx, waitLimit)
	if err := pluginCli.WaitForServer(wctx); err != nil {
		wc()
		t.Fatalf("the restarted plugin's server: %v", err)
	}
	wc()
	states.clear()
	if r := setExploration(true); !r.Success {
		t.Fatalf("start exploration: %+v", r)
	}
	want := []string{"E: goal_list", "E: Goal List 1/2", "E: Navigation", "E: Mapping Dummy",
		"E: goal_list", "E: Goal List 2/2", "E: Navigation", "E: Mapping Dummy", "E: goal_list", "Idle"}
	testenv.WaitFor(t, waitLimit, "the two goals visited, then Idle", func() bool {
		return slices.Contains(states.get(), "Idle")
	})
	if got := states.get(); !reflect.DeepEqual(got, want) {
		t.Fatalf("stateInfo %q\nwant      %q", got, want)
	}
	nav.mu.Lock()
	goals := fmt.Sprint(nav.goals)
	var xy [][2]float64
	for _, g := range nav.goals {
		xy = append(xy, [2]float64{g.Position.X, g.Position.Y})
	}
	nav.mu.Unlock()
	if !reflect.DeepEqual(xy, [][2]float64{{2, 0}, {2, 2}}) {
		t.Fatalf("navigation goals %s, want (2,0) then (2,2)", goals)
	}

	// The plugin node stops: the next exploration waits for its server,
	// then gives up.
	if err := syscall.Kill(plugin.Pid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, waitLimit, "example_rsm_plugin to stop on SIGTERM", exited(plugin))
	if _, err := plugin.Exited(); err != nil {
		t.Fatalf("example_rsm_plugin after SIGTERM: %v", err)
	}
	testenv.WaitFor(t, waitLimit, "the plugin's server gone from the graph", func() bool { return !pluginCli.ServerIsReady() })
	states.clear()
	if r := setExploration(true); !r.Success {
		t.Fatalf("start exploration: %+v", r)
	}
	testenv.WaitFor(t, waitLimit, "Idle after action_server_timeout", func() bool {
		return slices.Contains(states.get(), "Idle")
	})
	if got, want := states.get(), []string{"E: goal_list", "Idle"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("stateInfo %q, want %q", got, want)
	}
}
