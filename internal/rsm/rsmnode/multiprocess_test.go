package rsmnode

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	action_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/action_msgs/msg"
	action_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/action_msgs/srv"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
	tf2_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/tf2_msgs/msg"
)

// waitLimit bounds every wait; reaching it is a failure.
const waitLimit = 30 * time.Second

// TestMain lets the test binary stand in for the RSM executables: started
// with RSM_TEST_EXEC=<executable> it runs that node (so the multi-process
// test needs no build of its own). The process tests mostly wait (on sim
// time at 0.2×, idle timers, dwell times): four run at a time.
func TestMain(m *testing.M) {
	if name := os.Getenv("RSM_TEST_EXEC"); name != "" {
		runs := map[string]func(context.Context, []string) error{
			"robot_control_mux": RunMux, "state_interface": RunStateInterface,
			"service_provider": RunServiceProvider, "rsm_boot": RunBoot, "cmd_vel_reverse": RunCmdVelReverse,
			"survey_plugin": runSurveyPlugin,
		}
		run, ok := runs[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown RSM_TEST_EXEC %q\n", name)
			os.Exit(2)
		}
		if err := run(context.Background(), os.Args[1:]); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testenv.DefaultParallel(4)
	os.Exit(testenv.Main(m))
}

// start runs an RSM executable (the test binary standing in for it) until
// the end of the test (testenv.Start: SIGINT, and a failure if it does not
// stop).
func start(t *testing.T, domain uint32, exe string, args ...string) *testenv.Process {
	t.Helper()
	return testenv.Start(t, exe, append(testenv.Env(domain), "RSM_TEST_EXEC="+exe), os.Args[0], args...)
}

// publishRobotAtOrigin latches map → base_link as the identity on
// /tf_static: the robot pose the RSM nodes look up.
func publishRobotAtOrigin(t *testing.T, n *ros.Node) {
	t.Helper()
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
}

// waitServices waits, waitLimit at most, for the service of every client.
func waitServices(t *testing.T, ctx context.Context, clients ...interface{ WaitForService(context.Context) error }) {
	t.Helper()
	for _, c := range clients {
		cctx, cc := context.WithTimeout(ctx, waitLimit)
		err := c.WaitForService(cctx)
		cc()
		if err != nil {
			t.Fatalf("wait for service: %v", err)
		}
	}
}

// stateInfo returns a function that asks /rsm/stateInfo for the current
// state.
func stateInfo(t *testing.T, ctx context.Context, n *ros.Node) func() string {
	t.Helper()
	c, err := ros.NewClient(n, "/rsm/stateInfo", std_srvs_srv.Trigger)
	if err != nil {
		t.Fatal(err)
	}
	waitServices(t, ctx, c)
	return func() string {
		t.Helper()
		cctx, cc := context.WithTimeout(ctx, 10*time.Second)
		defer cc()
		r, err := c.Call(cctx, &std_srvs_srv.Trigger_Request{})
		if err != nil {
			t.Fatalf("stateInfo: %v", err)
		}
		return r.Message
	}
}

// fakeNav2 is a NavigateToPose action server on the plain action services:
// every goal is finished at once, failed if fail(goal) says so.
type fakeNav2 struct {
	mu      sync.Mutex
	goals   []geometry_msgs_msg.Pose
	results map[[16]byte]int8
	fail    func(p geometry_msgs_msg.Pose) bool
}

func (f *fakeNav2) serve(t *testing.T, n *ros.Node, action string) {
	t.Helper()
	status, err := ros.NewPublisher[action_msgs_msg.GoalStatusArray](n, action+"/_action/status", ros.QoSLatched)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = ros.NewService(n, action+"/_action/send_goal", nav2_msgs_action.NavigateToPose_SendGoal,
		func(_ context.Context, r *nav2_msgs_action.NavigateToPose_SendGoal_Request) (*nav2_msgs_action.NavigateToPose_SendGoal_Response, error) {
			f.mu.Lock()
			f.goals = append(f.goals, r.Goal.Pose.Pose)
			st := action_msgs_msg.GoalStatus_STATUS_SUCCEEDED
			if f.fail != nil && f.fail(r.Goal.Pose.Pose) {
				st = action_msgs_msg.GoalStatus_STATUS_ABORTED
			}
			f.results[r.GoalId.Uuid] = st
			f.mu.Unlock()
			_ = status.Publish(&action_msgs_msg.GoalStatusArray{StatusList: []action_msgs_msg.GoalStatus{
				{GoalInfo: action_msgs_msg.GoalInfo{GoalId: r.GoalId}, Status: st}}})
			return &nav2_msgs_action.NavigateToPose_SendGoal_Response{Accepted: true}, nil
		})
	must(err)
	_, err = ros.NewService(n, action+"/_action/get_result", nav2_msgs_action.NavigateToPose_GetResult,
		func(_ context.Context, r *nav2_msgs_action.NavigateToPose_GetResult_Request) (*nav2_msgs_action.NavigateToPose_GetResult_Response, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			return &nav2_msgs_action.NavigateToPose_GetResult_Response{Status: f.results[r.GoalId.Uuid]}, nil
		})
	must(err)
	_, err = ros.NewService(n, action+"/_action/cancel_goal", action_msgs_srv.CancelGoal,
		func(context.Context, *action_msgs_srv.CancelGoal_Request) (*action_msgs_srv.CancelGoal_Response, error) {
			return &action_msgs_srv.CancelGoal_Response{}, nil
		})
	must(err)
}

func (f *fakeNav2) xs() []float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]float64, len(f.goals))
	for i, g := range f.goals {
		out[i] = g.Position.X
	}
	return out
}

func (f *fakeNav2) reset(fail func(geometry_msgs_msg.Pose) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.goals, f.fail = nil, fail
}

// recorder keeps every message of a topic.
type recorder[T any] struct {
	mu  sync.Mutex
	all []T
}

func (r *recorder[T]) add(v T) { r.mu.Lock(); r.all = append(r.all, v); r.mu.Unlock() }
func (r *recorder[T]) get() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.all...)
}
func (r *recorder[T]) clear() { r.mu.Lock(); r.all = nil; r.mu.Unlock() }

func TestMultiProcess_RSM(t *testing.T) {
	domain := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	t.Parallel() // a domain of its own
	cli := testenv.Executable(t, "cmd/fsmnodes")
	wpFile := filepath.Join(t.TempDir(), "waypoints.yaml")
	start(t, domain, "service_provider", "--ros-args", "-p", "robot_frame:=/base_link", "-p", "waypoints_file:="+wpFile)
	start(t, domain, "robot_control_mux", "--ros-args", "-p", "teleoperation_idle_timer:=0.5")
	start(t, domain, "state_interface")

	n, ctx := rostest.Node(t, domain, "rsm_multiprocess_test")

	nav := &fakeNav2{results: map[[16]byte]int8{}}
	nav.serve(t, n, "/navigate_to_pose")
	states := &recorder[string]{}
	if _, err := ros.NewSubscription(n, "/rsm/stateInfo", ros.QoSDefault, func(m *std_msgs_msg.String) { states.add(m.Data) }); err != nil {
		t.Fatal(err)
	}
	opModes := &recorder[rsm_msgs_msg.OperationMode]{}
	if _, err := ros.NewSubscription(n, "/rsm/operationMode", ros.QoSDefault, func(m *rsm_msgs_msg.OperationMode) { opModes.add(*m) }); err != nil {
		t.Fatal(err)
	}
	cmdVel := &recorder[geometry_msgs_msg.Twist]{}
	if _, err := ros.NewSubscription(n, "/cmd_vel", ros.QoSDefault, func(m *geometry_msgs_msg.Twist) { cmdVel.add(*m) }); err != nil {
		t.Fatal(err)
	}
	teleop, err := ros.NewPublisher[geometry_msgs_msg.Twist](n, "/teleoperation/cmd_vel", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	goalsPub, err := ros.NewPublisher[geometry_msgs_msg.PoseArray](n, "/rsm/explorationGoals", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	failedPub, err := ros.NewPublisher[geometry_msgs_msg.PoseArray](n, "/rsm/failedGoals", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	publishRobotAtOrigin(t, n)
	setMode, _ := ros.NewClient(n, "/rsm/setOperationMode", rsm_msgs_srv.SetOperationMode)
	addWp, _ := ros.NewClient(n, "/rsm/addWaypoint", rsm_msgs_srv.AddWaypoint)
	getWps, _ := ros.NewClient(n, "/rsm/getWaypoints", rsm_msgs_srv.GetWaypoints)
	wpMode, _ := ros.NewClient(n, "/rsm/setWaypointFollowingMode", rsm_msgs_srv.SetWaypointFollowingMode)
	resetWps, _ := ros.NewClient(n, "/rsm/resetWaypoints", std_srvs_srv.Trigger)
	startWp, _ := ros.NewClient(n, "/rsm/startStopWaypointFollowing", std_srvs_srv.SetBool)
	startExp, _ := ros.NewClient(n, "/rsm/startStopExploration", std_srvs_srv.SetBool)

	callCtx := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 10*time.Second) }
	waitServices(t, ctx, setMode, addWp, getWps, wpMode, resetWps, startWp, startExp)
	current := stateInfo(t, ctx, n)
	last := func() string {
		s := states.get()
		if len(s) == 0 {
			return ""
		}
		return s[len(s)-1]
	}

	// Boot waits for /rsm/bootUpFinished; then Idle.
	testenv.WaitFor(t, waitLimit, "Boot", func() bool { return current() == "Boot" })
	start(t, domain, "rsm_boot", "--ros-args", "-p", "wait_time:=0.3")
	testenv.WaitFor(t, waitLimit, "Idle after boot", func() bool { return last() == "Idle" })

	// Teleoperation: a Twist switches, silence returns to STOPPED and Idle.
	states.clear()
	for i := 0; i < 5; i++ {
		_ = teleop.Publish(&geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 0.4}})
		time.Sleep(50 * time.Millisecond) // a teleop's 20 Hz
	}
	testenv.WaitFor(t, waitLimit, "teleoperation then idle", func() bool {
		return reflect.DeepEqual(states.get(), []string{"Teleoperation", "Idle"})
	})
	opModes.clear()
	testenv.WaitFor(t, waitLimit, "operation mode after teleoperation", func() bool { return len(opModes.get()) > 0 })
	if m := opModes.get()[0]; m.Mode != rsm_msgs_msg.OperationMode_STOPPED || m.EmergencyStop {
		t.Errorf("operation mode after teleoperation silence = %+v, want STOPPED", m)
	}
	sawTeleop := false
	for _, tw := range cmdVel.get() {
		if tw.Linear.X == 0.4 {
			sawTeleop = true
		}
	}
	if !sawTeleop {
		t.Error("teleoperation command never reached /cmd_vel")
	}

	// E-stop: Emergency Stop with zero output, release: Idle.
	states.clear()
	opReply := func(estop bool, mode uint8) *rsm_msgs_srv.SetOperationMode_Response {
		cctx, cc := callCtx()
		defer cc()
		r, err := setMode.Call(cctx, &rsm_msgs_srv.SetOperationMode_Request{OperationMode: rsm_msgs_msg.OperationMode{EmergencyStop: estop, Mode: mode}})
		if err != nil {
			t.Fatalf("setOperationMode: %v", err)
		}
		return r
	}
	op := func(estop bool, mode uint8) {
		if r := opReply(estop, mode); !r.Success {
			t.Fatalf("setOperationMode(%v, %d): %+v", estop, mode, r)
		}
	}
	op(true, rsm_msgs_msg.OperationMode_STOPPED)
	testenv.WaitFor(t, waitLimit, "Emergency Stop", func() bool { return last() == "Emergency Stop" })
	for i := 0; i < 5; i++ {
		_ = teleop.Publish(&geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 0.7}})
	}
	cmdVel.clear()
	testenv.WaitFor(t, waitLimit, "cmd_vel samples during e-stop", func() bool { return len(cmdVel.get()) >= 5 })
	for _, tw := range cmdVel.get() {
		if tw != (geometry_msgs_msg.Twist{}) {
			t.Fatalf("cmd_vel during e-stop = %+v, want zero", tw)
		}
	}
	// The e-stop locks the mode: AUTONOMOUS without a release is refused.
	if r := opReply(true, rsm_msgs_msg.OperationMode_AUTONOMOUS); r.Success || !strings.Contains(r.Message, "Emergency stop is on") {
		t.Errorf("AUTONOMOUS during e-stop answered %+v, want success=false with the reason", r)
	}
	op(false, rsm_msgs_msg.OperationMode_STOPPED)
	testenv.WaitFor(t, waitLimit, "Idle after e-stop release", func() bool { return last() == "Idle" })
	op(false, rsm_msgs_msg.OperationMode_AUTONOMOUS)

	// Three waypoints; each mode's visit order.
	for _, x := range []float64{1, 2, 3} {
		cctx, cc := callCtx()
		r, err := addWp.Call(cctx, &rsm_msgs_srv.AddWaypoint_Request{Position: -1,
			Waypoint: rsm_msgs_msg.Waypoint{Pose: geometry_msgs_msg.Pose{Position: geometry_msgs_msg.Point{X: x}, Orientation: geometry_msgs_msg.Quaternion{W: 1}}}})
		cc()
		if err != nil || r.Message != "Added waypoint successfully at the end" {
			t.Fatalf("addWaypoint: %v %+v", err, r)
		}
	}
	setBool := func(c *ros.Client[std_srvs_srv.SetBool_Request, std_srvs_srv.SetBool_Response], v bool) *std_srvs_srv.SetBool_Response {
		cctx, cc := callCtx()
		defer cc()
		r, err := c.Call(cctx, &std_srvs_srv.SetBool_Request{Data: v})
		if err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
		return r
	}
	follow := func(mode uint8, n int, fail func(geometry_msgs_msg.Pose) bool) []float64 {
		t.Helper()
		cctx, cc := callCtx()
		_, err1 := resetWps.Call(cctx, &std_srvs_srv.Trigger_Request{})
		_, err2 := wpMode.Call(cctx, &rsm_msgs_srv.SetWaypointFollowingMode_Request{Mode: mode})
		cc()
		if err1 != nil || err2 != nil {
			t.Fatalf("reset/mode: %v %v", err1, err2)
		}
		nav.reset(fail)
		states.clear()
		if r := setBool(startWp, true); !r.Success || r.Message != "Waypoint following started" {
			t.Fatalf("start waypoint following: %+v", r)
		}
		testenv.WaitFor(t, waitLimit, fmt.Sprintf("%d goals or Idle", n), func() bool {
			return len(nav.xs()) >= n || last() == "Idle"
		})
		if last() != "Idle" {
			if r := setBool(startWp, false); !r.Success {
				t.Logf("stop: %+v (already between states)", r)
			}
			testenv.WaitFor(t, waitLimit, "Idle after stop", func() bool { return last() == "Idle" })
		}
		return nav.xs()
	}
	if got := follow(rsm_msgs_msg.WaypointArray_SINGLE, 99, nil); !reflect.DeepEqual(got, []float64{1, 2, 3}) {
		t.Errorf("SINGLE goals = %v, want [1 2 3]", got)
	}
	wantStates := []string{"W: Waypoint Following", "W: Navigation", "W: Waypoint Following", "W: Navigation",
		"W: Waypoint Following", "W: Navigation", "W: Waypoint Following", "Idle"}
	if got := states.get(); !reflect.DeepEqual(got, wantStates) {
		t.Errorf("SINGLE stateInfo = %v\nwant %v", got, wantStates)
	}
	if got := follow(rsm_msgs_msg.WaypointArray_ROUNDTRIP, 6, nil); len(got) < 6 || !reflect.DeepEqual(got[:6], []float64{1, 2, 3, 1, 2, 3}) {
		t.Errorf("ROUNDTRIP goals = %v, want 1 2 3 1 2 3 ...", got)
	}
	if got := follow(rsm_msgs_msg.WaypointArray_PATROL, 6, nil); len(got) < 6 || !reflect.DeepEqual(got[:6], []float64{1, 2, 3, 2, 1, 2}) {
		t.Errorf("PATROL goals = %v, want 1 2 3 2 1 2 ...", got)
	}
	// A waypoint whose navigation fails becomes unreachable (after one
	// unstuck attempt, which finds no reverse action server and resends).
	got := follow(rsm_msgs_msg.WaypointArray_SINGLE, 99, func(p geometry_msgs_msg.Pose) bool { return p.Position.X == 2 })
	if !reflect.DeepEqual(got, []float64{1, 2, 2, 3}) {
		t.Errorf("goals with failing waypoint 2 = %v, want [1 2 2 3]", got)
	}
	cctx, cc := callCtx()
	wps, err := getWps.Call(cctx, &rsm_msgs_srv.GetWaypoints_Request{})
	cc()
	if err != nil {
		t.Fatal(err)
	}
	if w := wps.WaypointArray.Waypoints; len(w) != 3 || !w[0].Visited || w[1].Visited || !w[1].Unreachable || !w[2].Visited {
		t.Errorf("waypoints after failure = %+v", w)
	}

	// Exploration with frontier goals published by the test.
	nav.reset(nil)
	states.clear()
	pubCtx, stopPub := context.WithCancel(ctx)
	var pubWG sync.WaitGroup
	pubWG.Add(1)
	go func() {
		defer pubWG.Done()
		for pubCtx.Err() == nil {
			_ = goalsPub.Publish(&geometry_msgs_msg.PoseArray{Poses: []geometry_msgs_msg.Pose{
				{Position: geometry_msgs_msg.Point{X: 5}}, {Position: geometry_msgs_msg.Point{X: 0, Y: -2}}}})
			_ = failedPub.Publish(&geometry_msgs_msg.PoseArray{})
			time.Sleep(50 * time.Millisecond) // the frontier detector's rate
		}
	}()
	if r := setBool(startExp, true); !r.Success || r.Message != "Exploration started" {
		t.Fatalf("start exploration: %+v", r)
	}
	testenv.WaitFor(t, waitLimit, "two exploration goals", func() bool { return len(nav.xs()) >= 2 })
	if r := setBool(startExp, false); !r.Success || r.Message != "Exploration stopped" {
		t.Errorf("stop exploration: %+v", r)
	}
	testenv.WaitFor(t, waitLimit, "Idle after exploration", func() bool { return last() == "Idle" })
	stopPub()
	pubWG.Wait()
	nav.mu.Lock()
	first := nav.goals[0]
	nav.mu.Unlock()
	if first.Position.X != 0 || first.Position.Y != -2 {
		t.Errorf("first exploration goal = %+v, want the nearest frontier (0,-2)", first.Position)
	}
	want := []string{"E: Calculate Goal", "E: Navigation", "E: Mapping Dummy", "E: Calculate Goal", "E: Navigation"}
	if s := states.get(); len(s) < len(want) || !reflect.DeepEqual(s[:len(want)], want) {
		t.Errorf("exploration stateInfo = %v, want prefix %v", s, want)
	}

	// The CLI works like ros2's.
	cliCmd := exec.Command(cli, "service", "call", "/rsm/startStopWaypointFollowing",
		"std_srvs/srv/SetBool", "{data: true}")
	cliCmd.Env = testenv.Env(domain)
	out, err := cliCmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Waypoint following started") {
		t.Errorf("fsmnodes service call: %v\n%s", err, out)
	}
	if r := setBool(startWp, false); !r.Success {
		t.Logf("stop after CLI start: %+v", r)
	}
	testenv.WaitFor(t, waitLimit, "Idle at the end", func() bool { return current() == "Idle" })

	// Waypoints are in the file.
	data, err := os.ReadFile(wpFile)
	if err != nil || strings.Count(string(data), "position:") != 3 {
		t.Errorf("waypoints file: %v\n%s", err, data)
	}
}
