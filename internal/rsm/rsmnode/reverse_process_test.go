package rsmnode

import (
	"context"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// TestReverseDriving_Process runs the RSM nodes and cmd_vel_reverse as
// processes: setReverseMode reaches cmd_vel_reverse's
// setNavigationToReverse; the reverse stack's commands on
// /autonomy/cmd_vel_reverse reach the robot's /cmd_vel through the mux with
// the linear part negated (NaN as a stop); and with no reverse navigation
// action server, W: Navigation gives up after action_server_timeout and
// goes to Idle without marking the waypoint unreachable.
func TestReverseDriving_Process(t *testing.T) {
	domain := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	t.Parallel() // a domain of its own
	start(t, domain, "service_provider", "--ros-args", "-p", "robot_frame:=/base_link")
	start(t, domain, "robot_control_mux", "--ros-args", "-p", "initial_operation_mode:=1")
	start(t, domain, "state_interface", "--ros-args", "-p", "action_server_timeout:=2.0")
	start(t, domain, "rsm_boot", "--ros-args", "-p", "wait_time:=0.1")
	start(t, domain, "cmd_vel_reverse", "--ros-args", "-p", "autonomy_cmd_vel_topic:=/autonomy/cmd_vel")

	n, ctx := rostest.Node(t, domain, "rsm_reverse_test")
	// Only the forward action server: the reverse one is missing.
	nav := &fakeNav2{results: map[[16]byte]int8{}}
	nav.serve(t, n, "/navigate_to_pose")
	states := &recorder[string]{}
	autonomy := &recorder[geometry_msgs_msg.Twist]{}
	cmdVel := &recorder[geometry_msgs_msg.Twist]{}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ros.NewSubscription(n, "/rsm/stateInfo", ros.QoSDefault, func(m *std_msgs_msg.String) { states.add(m.Data) }))
	must(ros.NewSubscription(n, "/autonomy/cmd_vel", ros.QoSDefault, func(m *geometry_msgs_msg.Twist) { autonomy.add(*m) }))
	must(ros.NewSubscription(n, "/cmd_vel", ros.QoSDefault, func(m *geometry_msgs_msg.Twist) { cmdVel.add(*m) }))
	reversePub, err := ros.NewPublisher[geometry_msgs_msg.Twist](n, "/autonomy/cmd_vel_reverse", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	publishRobotAtOrigin(t, n)
	setReverse, _ := ros.NewClient(n, "/rsm/setReverseMode", std_srvs_srv.SetBool)
	addWp, _ := ros.NewClient(n, "/rsm/addWaypoint", rsm_msgs_srv.AddWaypoint)
	getWps, _ := ros.NewClient(n, "/rsm/getWaypoints", rsm_msgs_srv.GetWaypoints)
	startWp, _ := ros.NewClient(n, "/rsm/startStopWaypointFollowing", std_srvs_srv.SetBool)
	waitServices(t, ctx, setReverse, addWp, getWps, startWp)
	current := stateInfo(t, ctx, n)
	callCtx := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 10*time.Second) }
	testenv.WaitFor(t, waitLimit, "Idle after boot", func() bool { return current() == "Idle" })

	// The reverse stack's commands: linear negated, angular kept, up to
	// the robot's cmd_vel (the mux is AUTONOMOUS).
	sent := geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 0.3}, Angular: geometry_msgs_msg.Vector3{Z: 0.2}}
	want := geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: -0.3}, Angular: geometry_msgs_msg.Vector3{Z: 0.2}}
	has := func(r *recorder[geometry_msgs_msg.Twist], w geometry_msgs_msg.Twist) bool {
		for _, m := range r.get() {
			if m == w {
				return true
			}
		}
		return false
	}
	testenv.WaitFor(t, waitLimit, "the flipped command on /autonomy/cmd_vel and /cmd_vel", func() bool {
		_ = reversePub.Publish(&sent)
		time.Sleep(20 * time.Millisecond)
		return has(autonomy, want) && has(cmdVel, want)
	})
	for _, m := range autonomy.get() {
		if m.Linear.X > 0 {
			t.Fatalf("an unflipped command reached /autonomy/cmd_vel: %+v", m)
		}
	}
	// NaN from the reverse stack: a stop, never the NaN.
	autonomy.clear()
	bad := geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: math.NaN()}}
	testenv.WaitFor(t, waitLimit, "a stop for the NaN command", func() bool {
		_ = reversePub.Publish(&bad)
		time.Sleep(20 * time.Millisecond)
		return has(autonomy, geometry_msgs_msg.Twist{})
	})
	for _, m := range append(autonomy.get(), cmdVel.get()...) {
		if math.IsNaN(m.Linear.X) {
			t.Fatal("a NaN command was relayed")
		}
	}

	// setReverseMode → setNavigationToReverse served by cmd_vel_reverse.
	cctx, cc := callCtx()
	r, err := setReverse.Call(cctx, &std_srvs_srv.SetBool_Request{Data: true})
	cc()
	if err != nil || !r.Success || r.Message != "Mode set" {
		t.Fatalf("setReverseMode(true) = %+v, %v; want success \"Mode set\"", r, err)
	}

	// No reverse action server: W: Navigation gives up after 2 s.
	cctx, cc = callCtx()
	ar, err := addWp.Call(cctx, &rsm_msgs_srv.AddWaypoint_Request{Position: -1,
		Waypoint: rsm_msgs_msg.Waypoint{Pose: geometry_msgs_msg.Pose{Position: geometry_msgs_msg.Point{X: 1}, Orientation: geometry_msgs_msg.Quaternion{W: 1}}}})
	cc()
	if err != nil || !ar.Success {
		t.Fatalf("addWaypoint: %+v %v", ar, err)
	}
	states.clear()
	cctx, cc = callCtx()
	sr, err := startWp.Call(cctx, &std_srvs_srv.SetBool_Request{Data: true})
	cc()
	if err != nil || !sr.Success {
		t.Fatalf("startStopWaypointFollowing: %+v %v", sr, err)
	}
	testenv.WaitFor(t, waitLimit, "Idle after the reverse server wait", func() bool {
		s := states.get()
		return len(s) > 0 && s[len(s)-1] == "Idle"
	})
	if s := states.get(); !reflect.DeepEqual(s, []string{"W: Waypoint Following", "W: Navigation", "Idle"}) {
		t.Errorf("stateInfo = %q", s)
	}
	if g := nav.xs(); len(g) != 0 {
		t.Errorf("goals on the forward server: %v, want none (reverse mode is on)", g)
	}
	cctx, cc = callCtx()
	wr, err := getWps.Call(cctx, &rsm_msgs_srv.GetWaypoints_Request{})
	cc()
	if err != nil || len(wr.WaypointArray.Waypoints) != 1 || wr.WaypointArray.Waypoints[0].Unreachable {
		t.Errorf("waypoints after giving up: %+v %v; want one, not unreachable", wr, err)
	}
}
