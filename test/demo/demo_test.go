// Package demo runs the whole demo as a user would: `fsmnodes launch
// launch/demo.launch.xml`, then drives it over DDS from this test process,
// as the README tells users to with the CLI: e-stop on and off, teleop
// that moves the simulated robot, three waypoints visited in order,
// exploration of the default world to the end, the hexapod standing up and
// walking, and Velma following a joint trajectory in jnt_imp.
package demo

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	control_msgs_action "github.com/fsmnodes/fsmnodes/msgs/control_msgs/action"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	rcl_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/msg"
	rcl_interfaces_srv "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/srv"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
	trajectory_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/trajectory_msgs/msg"
	velma_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/velma_msgs/msg"
)

// TestMain keeps the log files of the launched nodes out of ~/.ros/log.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func TestDemo(t *testing.T) {
	domain := testenv.Domain(t)
	if testing.Short() {
		t.Skip("the demo end-to-end test takes minutes")
	}
	// The demo as `make run` starts it: Velma's four processes, whose 2 ms
	// loops want the machine to themselves (two heavy slots).
	testenv.HeavyN(t, 2)
	testenv.LaunchDemo(t, domain, append([]string{"foxglove_port:=0"}, testenv.DemoFourProcessArgs()...)...)
	d := newDemo(t, domain)
	t.Run("boot to Idle", d.bootToIdle)
	t.Run("e-stop", d.eStop)
	t.Run("teleop drives the robot", d.teleop)
	t.Run("waypoints visited in order", d.waypointsInOrder)
	t.Run("exploration completes", d.exploration)
	t.Run("hexapod stands up and walks", d.hexapodWalks)
	t.Run("velma follows a joint trajectory in jnt_imp", d.velmaTrajectory)
}

// demo is the test's side of the launched demo: its node, the observers
// every step reads, and the service calls they make.
type demo struct {
	ctx    context.Context // bounds every wait for a service or a server
	n      *ros.Node
	state  testenv.Latest[std_msgs_msg.String] // /diffbot/rsm/stateInfo
	odom   testenv.Latest[nav_msgs_msg.Odometry]
	cmdOut testenv.Latest[geometry_msgs_msg.Twist] // the mux's output
	mode   *ros.Client[rsm_msgs_srv.SetOperationMode_Request, rsm_msgs_srv.SetOperationMode_Response]
}

// newDemo starts the test's own node in domain with the observers.
func newDemo(t *testing.T, domain uint32) *demo {
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	go func() { _ = rc.Spin(context.Background()) }()
	d := &demo{}
	if d.n, err = rc.NewNode("demo_test", ""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	d.ctx = ctx
	must := mustFor(t)
	must(ros.NewSubscription(d.n, "/diffbot/rsm/stateInfo", ros.QoSDefault, func(m *std_msgs_msg.String) { d.state.Set(m, m.Data) }))
	must(ros.NewSubscription(d.n, "/diffbot/odom", ros.QoSDefault, func(m *nav_msgs_msg.Odometry) { d.odom.Set(m, "") }))
	must(ros.NewSubscription(d.n, "/diffbot/cmd_vel", ros.QoSDefault, func(m *geometry_msgs_msg.Twist) { d.cmdOut.Set(m, "") }))
	if d.mode, err = ros.NewClient(d.n, "/diffbot/rsm/setOperationMode", rsm_msgs_srv.SetOperationMode); err != nil {
		t.Fatal(err)
	}
	return d
}

// mustFor returns a check that fails t on the error of a call whose
// result is not kept (a subscription living as long as the node).
func mustFor(t *testing.T) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

func (d *demo) trigger(t *testing.T, name string) *std_srvs_srv.Trigger_Response {
	t.Helper()
	return rostest.Call(t, d.ctx, d.n, name, std_srvs_srv.Trigger, &std_srvs_srv.Trigger_Request{})
}

func (d *demo) setBool(t *testing.T, name string, v bool) *std_srvs_srv.SetBool_Response {
	t.Helper()
	return rostest.Call(t, d.ctx, d.n, name, std_srvs_srv.SetBool, &std_srvs_srv.SetBool_Request{Data: v})
}

// setMode sets RSM's operation mode (and e-stop) through the mux.
func (d *demo) setMode(t *testing.T, estop bool, mode uint8) {
	t.Helper()
	if err := d.mode.WaitForService(d.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.mode.Call(d.ctx, &rsm_msgs_srv.SetOperationMode_Request{
		OperationMode: rsm_msgs_msg.OperationMode{EmergencyStop: estop, Mode: mode}}); err != nil {
		t.Fatal(err)
	}
}

// currentState asks RSM for its state (the stateInfo service).
func (d *demo) currentState(t *testing.T) string {
	return d.trigger(t, "/diffbot/rsm/stateInfo").Message
}

// bootToIdle: RSM boots to Idle and the simulator sends odometry.
func (d *demo) bootToIdle(t *testing.T) {
	testenv.WaitFor(t, 60*time.Second, "RSM in Idle", func() bool { return d.currentState(t) == "Idle" })
	testenv.WaitFor(t, 30*time.Second, "odometry from the simulator", func() bool { return d.odom.Get() != nil })
}

// eStop: the e-stop holds the robot (no exploration, zero output) until released.
func (d *demo) eStop(t *testing.T) {
	d.setMode(t, true, rsm_msgs_msg.OperationMode_STOPPED)
	testenv.WaitFor(t, 10*time.Second, "Emergency Stop state", func() bool { return d.currentState(t) == "Emergency Stop" })
	if r := d.setBool(t, "/diffbot/rsm/startStopExploration", true); r.Success {
		t.Errorf("exploration started during e-stop: %+v", r)
	}
	testenv.WaitFor(t, 5*time.Second, "zero output during e-stop", func() bool {
		c := d.cmdOut.Get()
		return c != nil && c.Linear.X == 0 && c.Angular.Z == 0
	})
	d.setMode(t, false, rsm_msgs_msg.OperationMode_STOPPED)
	testenv.WaitFor(t, 10*time.Second, "Idle after e-stop release", func() bool { return d.currentState(t) == "Idle" })
}

// teleop: teleoperation drives the robot, and silence returns RSM to Idle.
func (d *demo) teleop(t *testing.T) {
	pub, err := ros.NewPublisher[geometry_msgs_msg.Twist](d.n, "/diffbot/teleoperation/cmd_vel", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	x0 := d.odom.Get().Pose.Pose.Position.X
	mark := d.state.Mark()
	for i := 0; i < 30; i++ {
		_ = pub.Publish(&geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 0.3}})
		time.Sleep(100 * time.Millisecond) // a teleop's 10 Hz for 3 s: the drive being measured
	}
	// RSM went to Teleoperation on them, as stateInfo says. A state asked
	// for once after the last command found Idle on a loaded machine (load
	// 45-96, beside test/fault): a stall longer than the mux's 0.5 s
	// teleoperation_idle_timer ends the teleoperation before it is asked.
	testenv.WaitFor(t, 5*time.Second, "Teleoperation on stateInfo during the teleoperation commands", func() bool {
		return slices.Contains(d.state.Since(mark), "Teleoperation")
	})
	if dx := d.odom.Get().Pose.Pose.Position.X - x0; dx < 0.3 {
		t.Errorf("robot moved %.2f m in 3 s at 0.3 m/s", dx)
	}
	testenv.WaitFor(t, 10*time.Second, "Idle after teleop silence", func() bool { return d.currentState(t) == "Idle" })
}

// waypointsInOrder: three waypoints are visited in order, and the state sequence is the original's.
func (d *demo) waypointsInOrder(t *testing.T) {
	d.setMode(t, false, rsm_msgs_msg.OperationMode_AUTONOMOUS)
	add, err := ros.NewClient(d.n, "/diffbot/rsm/addWaypoint", rsm_msgs_srv.AddWaypoint)
	if err != nil {
		t.Fatal(err)
	}
	if err := add.WaitForService(d.ctx); err != nil {
		t.Fatal(err)
	}
	wps := [][2]float64{{2, 0.5}, {4, 1.5}, {5.5, 4.5}}
	for _, w := range wps {
		req := &rsm_msgs_srv.AddWaypoint_Request{Position: -1}
		req.Waypoint.Pose.Position = geometry_msgs_msg.Point{X: w[0], Y: w[1]}
		req.Waypoint.Pose.Orientation.W = 1
		if resp, err := add.Call(d.ctx, req); err != nil || !resp.Success {
			t.Fatalf("addWaypoint %v: %+v %v", w, resp, err)
		}
	}
	// Record the order in which the robot reaches each waypoint.
	var mu sync.Mutex
	var order []int
	sub, err := ros.NewSubscription(d.n, "/diffbot/odom", ros.QoSDefault, func(m *nav_msgs_msg.Odometry) {
		p := m.Pose.Pose.Position
		for i, w := range wps {
			if math.Hypot(p.X-w[0], p.Y-w[1]) < 0.3 {
				mu.Lock()
				if len(order) == 0 || order[len(order)-1] != i {
					order = append(order, i)
				}
				mu.Unlock()
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	mark := d.state.Mark()
	if r := d.setBool(t, "/diffbot/rsm/startStopWaypointFollowing", true); !r.Success {
		t.Fatalf("start waypoint following: %+v", r)
	}
	testenv.WaitFor(t, 3*time.Minute, "waypoint following to end in Idle", func() bool {
		h := d.state.Since(mark)
		return len(h) > 1 && h[len(h)-1] == "Idle"
	})
	mu.Lock()
	got := fmt.Sprint(order)
	mu.Unlock()
	if got != "[0 1 2]" {
		t.Errorf("waypoints reached in order %s, want [0 1 2]", got)
	}
	h := d.state.Since(mark)
	want := "W: Waypoint Following,W: Navigation,W: Waypoint Following,W: Navigation,W: Waypoint Following,W: Navigation,W: Waypoint Following,Idle"
	if strings.Join(h, ",") != want {
		t.Errorf("stateInfo sequence %q, want %q", h, want)
	}
	resp := rostest.Call(t, d.ctx, d.n, "/diffbot/rsm/getWaypoints", rsm_msgs_srv.GetWaypoints, &rsm_msgs_srv.GetWaypoints_Request{})
	for i, w := range resp.WaypointArray.Waypoints {
		if !w.Visited || w.Unreachable {
			t.Errorf("waypoint %d: visited=%v unreachable=%v", i, w.Visited, w.Unreachable)
		}
	}
}

// exploration: exploration of the default world ends with no frontier left, at twice the default speeds set live.
func (d *demo) exploration(t *testing.T) {
	var goals testenv.Latest[geometry_msgs_msg.PoseArray]
	sub, err := ros.NewSubscription(d.n, "/diffbot/rsm/explorationGoals", ros.QoSDefault, func(m *geometry_msgs_msg.PoseArray) { goals.Set(m, "") })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	// Twice the default speeds, through the live velocity limits of the
	// robot, the mux and then the navigator (as `fsmnodes param set`
	// would): the exploration takes about half as long.
	for _, p := range []struct {
		node     string
		lin, ang float64
	}{{"/diffbot/diff_drive_sim", 1.0, 3.0}, {"/diffbot/robotControlMuxNode", 1.0, 3.0}, {"/diffbot/navigator", 0.8, 2.4}} {
		setDoubles(t, d.ctx, d.n, p.node, map[string]float64{"max_linear_velocity": p.lin, "max_angular_velocity": p.ang})
	}
	mark := d.state.Mark()
	if r := d.setBool(t, "/diffbot/rsm/startStopExploration", true); !r.Success {
		t.Fatalf("start exploration: %+v", r)
	}
	testenv.WaitFor(t, 5*time.Minute, "exploration to end in Idle", func() bool {
		h := d.state.Since(mark)
		return len(h) > 1 && h[len(h)-1] == "Idle"
	})
	h := d.state.Since(mark)
	navs := 0
	for _, s := range h {
		if strings.HasSuffix(s, "Navigation") {
			navs++
		}
	}
	if navs < 2 {
		t.Errorf("exploration visited %d goals: %q", navs, h)
	}
	testenv.WaitFor(t, 10*time.Second, "no frontiers left", func() bool {
		g := goals.Get()
		return g != nil && len(g.Poses) == 0
	})
}

// hexapodWalks: the hexapod starts, stands up and walks on cmd_vel.
func (d *demo) hexapodWalks(t *testing.T) {
	must := mustFor(t)
	var hexState testenv.Latest[std_msgs_msg.String]
	var joints testenv.Latest[sensor_msgs_msg.JointState]
	must(ros.NewSubscription(d.n, "/hexapod/hexapod_controller/state", ros.QoSLatched, func(m *std_msgs_msg.String) { hexState.Set(m, m.Data) }))
	must(ros.NewSubscription(d.n, "/hexapod/joint_states", ros.QoSDefault, func(m *sensor_msgs_msg.JointState) { joints.Set(m, "") }))
	testenv.WaitFor(t, 20*time.Second, "hexapod joint_states", func() bool { return joints.Get() != nil })
	before := append([]float64(nil), joints.Get().Position...)
	if r := d.trigger(t, "/hexapod/hexapod_controller/start_stop"); !r.Success {
		t.Fatalf("start_stop: %+v", r)
	}
	testenv.WaitFor(t, 10*time.Second, "Sitting", func() bool { s := hexState.Get(); return s != nil && s.Data == "Sitting" })
	if r := d.trigger(t, "/hexapod/hexapod_controller/stand_up"); !r.Success {
		t.Fatalf("stand_up: %+v", r)
	}
	pub, err := ros.NewPublisher[geometry_msgs_msg.Twist](d.n, "/hexapod/cmd_vel", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	testenv.WaitFor(t, 30*time.Second, "Walking", func() bool {
		_ = pub.Publish(&geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 0.05}})
		s := hexState.Get()
		return s != nil && s.Data == "Walking"
	})
	after := joints.Get().Position
	moved := 0.0
	for i := range before {
		if i < len(after) {
			moved = math.Max(moved, math.Abs(after[i]-before[i]))
		}
	}
	if moved < 0.01 {
		t.Errorf("joint_states barely changed (max %.4f rad)", moved)
	}
	t.Logf("hexapod states: %q", hexState.Since(0))
}

// velmaTrajectory: Velma enables and homes its motors and follows a joint trajectory in jnt_imp.
func (d *demo) velmaTrajectory(t *testing.T) {
	must := mustFor(t)
	var cs testenv.Latest[std_msgs_msg.String]
	var joints testenv.Latest[sensor_msgs_msg.JointState]
	must(ros.NewSubscription(d.n, "/velma/velma_core/cs/state", ros.QoSLatched, func(m *std_msgs_msg.String) { cs.Set(m, m.Data) }))
	must(ros.NewSubscription(d.n, "/velma/joint_states", ros.QoSDefault, func(m *sensor_msgs_msg.JointState) {
		if len(m.Name) > 0 && m.Name[0] == "torso_0_joint" {
			joints.Set(m, "")
		}
	}))
	var status testenv.Latest[velma_msgs_msg.Status]
	must(ros.NewSubscription(d.n, "/velma/velma_core/status", ros.QoSDefault, func(m *velma_msgs_msg.Status) { status.Set(m, "") }))
	testenv.WaitFor(t, 30*time.Second, "cs in safe", func() bool { s := cs.Get(); return s != nil && s.Data == "safe" })
	// Homing is refused until the enable has reached the effectors through
	// cs and ve_body (other processes, a few iterations later): each call is
	// repeated until it succeeds.
	for _, s := range []string{"motors/enable", "motors/hp/home", "motors/ht/home"} {
		var last *std_srvs_srv.Trigger_Response
		testenv.WaitFor(t, 30*time.Second, "Velma's "+s, func() bool {
			last = d.trigger(t, "/velma/velma_core/"+s)
			return last.Success
		})
		t.Logf("%s: %s", s, last.Message)
	}
	testenv.WaitFor(t, 60*time.Second, "Velma's motors ready (enabled and homed)", func() bool {
		s := status.Get()
		return s != nil && s.MotorsReady
	})
	testenv.WaitFor(t, 10*time.Second, "Velma joint_states", func() bool { return joints.Get() != nil })
	js := joints.Get()
	body := []string{"torso_0_joint",
		"right_arm_0_joint", "right_arm_1_joint", "right_arm_2_joint", "right_arm_3_joint", "right_arm_4_joint", "right_arm_5_joint", "right_arm_6_joint",
		"left_arm_0_joint", "left_arm_1_joint", "left_arm_2_joint", "left_arm_3_joint", "left_arm_4_joint", "left_arm_5_joint", "left_arm_6_joint"}
	pos := map[string]float64{}
	for i, name := range js.Name {
		if i < len(js.Position) {
			pos[name] = js.Position[i]
		}
	}
	target := make([]float64, len(body))
	for i, name := range body {
		target[i] = pos[name]
	}
	target[2] += 0.2 // right_arm_1_joint
	goal := &control_msgs_action.FollowJointTrajectory_Goal{}
	goal.Trajectory.JointNames = body
	goal.Trajectory.Points = append(goal.Trajectory.Points, struct2point(target, 3))
	cli, err := ros.NewActionClient(d.n, "/velma/velma_core/spline_trajectory_action_joint", control_msgs_action.FollowJointTrajectory)
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.WaitForServer(d.ctx); err != nil {
		t.Fatal(err)
	}
	mark := cs.Mark()
	res, st, err := cli.Execute(d.ctx, goal, nil)
	if err != nil || st != action.StatusSucceeded {
		t.Fatalf("trajectory: status %v err %v result %+v", st, err, res)
	}
	if h := cs.Since(mark); !contains(h, "jnt_imp") {
		t.Errorf("cs states during the trajectory %q lack jnt_imp", h)
	}
}

func struct2point(pos []float64, secs int32) trajectory_msgs_msg.JointTrajectoryPoint {
	return trajectory_msgs_msg.JointTrajectoryPoint{Positions: pos, TimeFromStart: builtin_interfaces_msg.Duration{Sec: secs}}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// setDoubles sets double parameters of node through its set_parameters
// service and fails the test unless every one is accepted.
func setDoubles(t *testing.T, ctx context.Context, n *ros.Node, node string, values map[string]float64) {
	t.Helper()
	c, err := ros.NewClient(n, node+"/set_parameters", rcl_interfaces_srv.SetParameters)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WaitForService(ctx); err != nil {
		t.Fatalf("%s/set_parameters: %v", node, err)
	}
	req := &rcl_interfaces_srv.SetParameters_Request{}
	for name, v := range values {
		req.Parameters = append(req.Parameters, rcl_interfaces_msg.Parameter{Name: name,
			Value: rcl_interfaces_msg.ParameterValue{Type: rcl_interfaces_msg.ParameterType_PARAMETER_DOUBLE, DoubleValue: v}})
	}
	resp, err := c.Call(ctx, req)
	if err != nil {
		t.Fatalf("%s/set_parameters: %v", node, err)
	}
	if len(resp.Results) != len(req.Parameters) {
		t.Fatalf("%s: %d results for %d parameters", node, len(resp.Results), len(req.Parameters))
	}
	for i, r := range resp.Results {
		if !r.Successful {
			t.Fatalf("%s: setting %s refused: %s", node, req.Parameters[i].Name, r.Reason)
		}
	}
}
