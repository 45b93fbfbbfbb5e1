package simtest

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// robotsLaunch writes a launch file that runs the built-in simulation
// (launch/rsm_sim.launch.xml, which includes rsm.launch.xml with its
// defaults) once per namespace, as docs/rsm.md#one-rsm-per-robot tells
// users to, and returns its path.
func robotsLaunch(t *testing.T, namespaces ...string) string {
	t.Helper()
	body := "<launch>\n"
	for _, ns := range namespaces {
		body += fmt.Sprintf(`  <group>
    <push_ros_namespace namespace=%q/>
    <include file="$(find-pkg-share fsmnodes)/launch/rsm_sim.launch.xml"/>
  </group>
`, ns)
	}
	body += "</launch>\n"
	file := filepath.Join(t.TempDir(), "robots.launch.xml")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// launchWithHome is testenv.Launch with ROS_HOME set to home, where the
// launch files keep the waypoints.
func launchWithHome(t *testing.T, domain uint32, home, file string, args ...string) *testenv.Process {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := testenv.ExecutableDir(t, "cmd/fsmnodes", "nodes/...")
	env := append(testenv.Env(domain), "ROS_HOME="+home)
	argv := append([]string{"launch", file, "--bin-dir", bin, "--share-dir", root}, args...)
	return testenv.Start(t, "launch "+filepath.Base(file), env, filepath.Join(bin, "fsmnodes"), argv...)
}

// robot is the test's view of one namespaced RSM robot.
type robot struct {
	t   *testing.T
	ctx context.Context
	ns  string

	odom testenv.Latest[nav_msgs_msg.Odometry]

	mu         sync.Mutex
	teleopSeen int     // TELEOPERATION operation modes seen
	maxCmd     float64 // largest |linear.x| on cmd_vel
	recordCmds bool    // keep every cmd_vel in cmdLog
	cmdLog     []geometry_msgs_msg.Twist

	stateCli   *ros.Client[std_srvs_srv.Trigger_Request, std_srvs_srv.Trigger_Response]
	addCli     *ros.Client[rsm_msgs_srv.AddWaypoint_Request, rsm_msgs_srv.AddWaypoint_Response]
	getCli     *ros.Client[rsm_msgs_srv.GetWaypoints_Request, rsm_msgs_srv.GetWaypoints_Response]
	modeCli    *ros.Client[rsm_msgs_srv.SetOperationMode_Request, rsm_msgs_srv.SetOperationMode_Response]
	setReverse *ros.Client[std_srvs_srv.SetBool_Request, std_srvs_srv.SetBool_Response]
	getReverse *ros.Client[std_srvs_srv.Trigger_Request, std_srvs_srv.Trigger_Response]
	teleop     *ros.Publisher[geometry_msgs_msg.Twist]
	simpleGoal *ros.Publisher[geometry_msgs_msg.PoseStamped]
}

// newRobot subscribes to the robot's odometry, operation mode and cmd_vel
// and creates its clients.
func newRobot(t *testing.T, ctx context.Context, n *ros.Node, ns string) *robot {
	t.Helper()
	r := &robot{ns: ns, ctx: ctx, t: t}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ros.NewSubscription(n, ns+"/odom", ros.QoSDefault, func(m *nav_msgs_msg.Odometry) { r.odom.Set(m, "") }))
	must(ros.NewSubscription(n, ns+"/rsm/operationMode", ros.QoSDefault, func(m *rsm_msgs_msg.OperationMode) {
		if m.Mode == rsm_msgs_msg.OperationMode_TELEOPERATION {
			r.mu.Lock()
			r.teleopSeen++
			r.mu.Unlock()
		}
	}))
	must(ros.NewSubscription(n, ns+"/cmd_vel", ros.QoSDefault, func(m *geometry_msgs_msg.Twist) {
		r.mu.Lock()
		r.maxCmd = math.Max(r.maxCmd, math.Abs(m.Linear.X))
		if r.recordCmds {
			r.cmdLog = append(r.cmdLog, *m)
		}
		r.mu.Unlock()
	}))
	var err error
	if r.stateCli, err = ros.NewClient(n, ns+"/rsm/stateInfo", std_srvs_srv.Trigger); err != nil {
		t.Fatal(err)
	}
	if r.addCli, err = ros.NewClient(n, ns+"/rsm/addWaypoint", rsm_msgs_srv.AddWaypoint); err != nil {
		t.Fatal(err)
	}
	if r.getCli, err = ros.NewClient(n, ns+"/rsm/getWaypoints", rsm_msgs_srv.GetWaypoints); err != nil {
		t.Fatal(err)
	}
	if r.modeCli, err = ros.NewClient(n, ns+"/rsm/setOperationMode", rsm_msgs_srv.SetOperationMode); err != nil {
		t.Fatal(err)
	}
	if r.setReverse, err = ros.NewClient(n, ns+"/rsm/setReverseMode", std_srvs_srv.SetBool); err != nil {
		t.Fatal(err)
	}
	if r.getReverse, err = ros.NewClient(n, ns+"/rsm/getReverseMode", std_srvs_srv.Trigger); err != nil {
		t.Fatal(err)
	}
	if r.teleop, err = ros.NewPublisher[geometry_msgs_msg.Twist](n, ns+"/teleoperation/cmd_vel", ros.QoSDefault); err != nil {
		t.Fatal(err)
	}
	if r.simpleGoal, err = ros.NewPublisher[geometry_msgs_msg.PoseStamped](n, ns+"/rsm/simpleGoal", ros.QoSDefault); err != nil {
		t.Fatal(err)
	}
	return r
}

// callCtx bounds one service call; reaching it is a failure.
func (r *robot) callCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.ctx, 30*time.Second)
}

// state asks rsm/stateInfo for the current state.
func (r *robot) state() string {
	r.t.Helper()
	ctx, cancel := r.callCtx()
	defer cancel()
	if err := r.stateCli.WaitForService(ctx); err != nil {
		r.t.Fatalf("%s/rsm/stateInfo: %v", r.ns, err)
	}
	resp, err := r.stateCli.Call(ctx, &std_srvs_srv.Trigger_Request{})
	if err != nil {
		r.t.Fatalf("%s/rsm/stateInfo: %v", r.ns, err)
	}
	return resp.Message
}

// waypoints asks rsm/getWaypoints for the x of every waypoint.
func (r *robot) waypoints() []float64 {
	r.t.Helper()
	ctx, cancel := r.callCtx()
	defer cancel()
	if err := r.getCli.WaitForService(ctx); err != nil {
		r.t.Fatalf("%s/rsm/getWaypoints: %v", r.ns, err)
	}
	resp, err := r.getCli.Call(ctx, &rsm_msgs_srv.GetWaypoints_Request{})
	if err != nil {
		r.t.Fatalf("%s/rsm/getWaypoints: %v", r.ns, err)
	}
	var xs []float64
	for _, w := range resp.WaypointArray.Waypoints {
		xs = append(xs, w.Pose.Position.X)
	}
	return xs
}

// addWaypoint appends a waypoint at (x, y).
func (r *robot) addWaypoint(x, y float64) {
	r.t.Helper()
	ctx, cancel := r.callCtx()
	defer cancel()
	if err := r.addCli.WaitForService(ctx); err != nil {
		r.t.Fatalf("%s/rsm/addWaypoint: %v", r.ns, err)
	}
	req := &rsm_msgs_srv.AddWaypoint_Request{Position: -1}
	req.Waypoint.Pose.Position = geometry_msgs_msg.Point{X: x, Y: y}
	req.Waypoint.Pose.Orientation.W = 1
	if resp, err := r.addCli.Call(ctx, req); err != nil || !resp.Success {
		r.t.Fatalf("%s/rsm/addWaypoint (%g, %g): %+v %v", r.ns, x, y, resp, err)
	}
}

// pos is the robot's odometry position; ok is false before the first.
func (r *robot) pos() (x, y float64, ok bool) {
	o := r.odom.Get()
	if o == nil {
		return 0, 0, false
	}
	return o.Pose.Pose.Position.X, o.Pose.Pose.Position.Y, true
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Two robots, each the built-in simulation included in a namespace of its
// own (docs/rsm.md#one-rsm-per-robot), are independent: teleoperating one
// drives only that one (the other's mux never leaves STOPPED and commands
// nothing), and the waypoints added to one are not the other's, also after
// both are restarted, each read back from its own file under $ROS_HOME.
func TestTwoRobots_OneRSMPerNamespace(t *testing.T) {
	if testing.Short() {
		t.Skip("launches the simulation twice")
	}
	t.Parallel()
	domain := testenv.Domain(t)
	home := t.TempDir()
	file := robotsLaunch(t, "robot1", "robot2")
	launch := launchWithHome(t, domain, home, file)
	n := newNode(t, domain, "robots_test")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r1, r2 := newRobot(t, ctx, n, "/robot1"), newRobot(t, ctx, n, "/robot2")
	for _, r := range []*robot{r1, r2} {
		testenv.WaitFor(t, 90*time.Second, r.ns+" in Idle", func() bool { return r.state() == "Idle" })
		testenv.WaitFor(t, 30*time.Second, r.ns+"/odom", func() bool { _, _, ok := r.pos(); return ok })
	}

	// Teleoperation of robot1 moves robot1 only.
	x1, y1, _ := r1.pos()
	x2, y2, _ := r2.pos()
	testenv.WaitFor(t, 60*time.Second, "robot1 to move 0.3 m under teleoperation", func() bool {
		_ = r1.teleop.Publish(&geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 0.3}})
		time.Sleep(100 * time.Millisecond) // a teleop's 10 Hz
		x, y, _ := r1.pos()
		return math.Hypot(x-x1, y-y1) > 0.3
	})
	if s := r1.state(); s != "Teleoperation" {
		t.Errorf("robot1 state %q while teleoperated, want Teleoperation", s)
	}
	if x, y, _ := r2.pos(); math.Hypot(x-x2, y-y2) > 0.01 {
		t.Errorf("robot2 moved from (%.3f, %.3f) to (%.3f, %.3f) while robot1 was teleoperated", x2, y2, x, y)
	}
	r2.mu.Lock()
	teleop2, cmd2 := r2.teleopSeen, r2.maxCmd
	r2.mu.Unlock()
	if teleop2 > 0 || cmd2 != 0 {
		t.Errorf("robot2: %v TELEOPERATION operation modes, largest cmd_vel %.2f m/s; want none and 0", teleop2, cmd2)
	}
	if s := r2.state(); s != "Idle" {
		t.Errorf("robot2 state %q while robot1 was teleoperated, want Idle", s)
	}

	// Waypoints are per robot, in memory and in their files.
	r1.addWaypoint(1, 0)
	r1.addWaypoint(2, 0)
	r2.addWaypoint(-1, 0)
	check := func(when string) {
		t.Helper()
		if got := r1.waypoints(); !sameFloats(got, []float64{1, 2}) {
			t.Errorf("%s: robot1 waypoints at x = %v, want [1 2]", when, got)
		}
		if got := r2.waypoints(); !sameFloats(got, []float64{-1}) {
			t.Errorf("%s: robot2 waypoints at x = %v, want [-1]", when, got)
		}
	}
	check("after adding")
	for ns, want := range map[string]int{"robot1": 2, "robot2": 1} {
		path := filepath.Join(home, "fsmnodes", ns, "waypoints.yaml")
		if arr, err := rsm.LoadWaypoints(path); err != nil || len(arr.Waypoints) != want {
			t.Errorf("%s: %v, %d waypoints; want %d", path, err, len(arr.Waypoints), want)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "fsmnodes", "waypoints.yaml")); !os.IsNotExist(err) {
		t.Errorf("a shared $ROS_HOME/fsmnodes/waypoints.yaml: %v; want none", err)
	}

	// After a restart each robot reads its own file back.
	for _, problem := range launch.Stop() {
		t.Error(problem)
	}
	launchWithHome(t, domain, home, file)
	check("after a restart")
}

// Reverse driving works out of the box in the demo's configuration (the
// built-in simulation in the namespace diffbot, as launch/demo.launch.xml
// includes it): setReverseMode succeeds, because the simulated navigator
// serves rsm/setNavigationToReverse and the reverse action, and a goal
// straight ahead of the robot is then driven to with the back leading:
// every moving command on cmd_vel is backwards (linear.x < 0) and the robot
// arrives facing away from where it came from.
func TestReverseDriving_DemoConfiguration(t *testing.T) {
	if testing.Short() {
		t.Skip("launches the simulation")
	}
	t.Parallel()
	domain := testenv.Domain(t)
	launchWithHome(t, domain, t.TempDir(), robotsLaunch(t, "diffbot"))
	n := newNode(t, domain, "reverse_demo_test")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := newRobot(t, ctx, n, "/diffbot")
	testenv.WaitFor(t, 90*time.Second, "Idle", func() bool { return r.state() == "Idle" })
	testenv.WaitFor(t, 30*time.Second, "odometry", func() bool { _, _, ok := r.pos(); return ok })

	cctx, cc := r.callCtx()
	defer cc()
	if err := r.setReverse.WaitForService(cctx); err != nil {
		t.Fatal(err)
	}
	if resp, err := r.setReverse.Call(cctx, &std_srvs_srv.SetBool_Request{Data: true}); err != nil || !resp.Success || resp.Message != "Mode set" {
		t.Fatalf("setReverseMode(true) = %+v, %v; want success, \"Mode set\"", resp, err)
	}
	if resp, err := r.getReverse.Call(cctx, &std_srvs_srv.Trigger_Request{}); err != nil || !resp.Success {
		t.Fatalf("getReverseMode = %+v, %v; want success (reverse active)", resp, err)
	}
	if err := r.modeCli.WaitForService(cctx); err != nil {
		t.Fatal(err)
	}
	if resp, err := r.modeCli.Call(cctx, &rsm_msgs_srv.SetOperationMode_Request{
		OperationMode: rsm_msgs_msg.OperationMode{Mode: rsm_msgs_msg.OperationMode_AUTONOMOUS}}); err != nil || !resp.Success {
		t.Fatalf("setOperationMode AUTONOMOUS: %+v, %v", resp, err)
	}

	x0, y0, _ := r.pos()
	yaw0 := yawOf(r.odom.Get())
	goal := geometry_msgs_msg.PoseStamped{}
	goal.Header.FrameId = "map"
	goal.Pose.Position = geometry_msgs_msg.Point{X: x0 + 1.5*math.Cos(yaw0), Y: y0 + 1.5*math.Sin(yaw0)}
	goal.Pose.Orientation = geometry_msgs_msg.Quaternion{Z: math.Sin(yaw0 / 2), W: math.Cos(yaw0 / 2)}
	r.mu.Lock()
	r.recordCmds = true
	r.mu.Unlock()
	testenv.WaitFor(t, 30*time.Second, "G: Navigation", func() bool {
		if err := r.simpleGoal.Publish(&goal); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		return r.state() == "G: Navigation"
	})
	testenv.WaitFor(t, 120*time.Second, "the robot at the goal", func() bool {
		x, y, _ := r.pos()
		return math.Hypot(x-goal.Pose.Position.X, y-goal.Pose.Position.Y) < 0.3
	})
	r.mu.Lock()
	cmds := append([]geometry_msgs_msg.Twist(nil), r.cmdLog...)
	r.mu.Unlock()
	backwards, forwards := 0, 0
	for _, c := range cmds {
		switch {
		case c.Linear.X < -0.05:
			backwards++
		case c.Linear.X > 0.05:
			forwards++
		}
	}
	if backwards == 0 || forwards > 0 {
		t.Errorf("cmd_vel on the way to a goal ahead in reverse mode: %d backwards, %d forwards commands; want only backwards", backwards, forwards)
	}
	if yaw := yawOf(r.odom.Get()); math.Cos(yaw-yaw0) > -0.5 {
		t.Errorf("robot arrived with heading %.2f rad, started with %.2f: want it turned round, backing into the goal", yaw, yaw0)
	}
}

// yawOf is the heading of an odometry pose.
func yawOf(o *nav_msgs_msg.Odometry) float64 {
	q := o.Pose.Pose.Orientation
	return math.Atan2(2*(q.W*q.Z+q.X*q.Y), 1-2*(q.Y*q.Y+q.Z*q.Z))
}
