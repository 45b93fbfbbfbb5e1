// Package simtest starts the built-in simulator and joystick nodes as real processes
// and drives them over DDS: the navigator moves the simulated robot to a
// goal, refuses and aborts goals it cannot reach, and the frontier detector
// publishes exploration goals and tracks failed ones; a FIFO standing in
// for a joystick drives joy_teleop and the hexapod launched from its
// launch file.
package simtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	visualization_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/visualization_msgs/msg"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// start runs a node executable in domain until the test ends.
func start(t *testing.T, domain uint32, exe string, rosArgs ...string) {
	t.Helper()
	args := append([]string{"--ros-args"}, rosArgs...)
	cmd := exec.Command(testenv.Executable(t, "nodes/"+exe), args...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("ROS_DOMAIN_ID=%d", domain))
	logFile, err := os.Create(filepath.Join(t.TempDir(), exe+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("%s output:\n%s", exe, b)
		}
	})
}

func newNode(t *testing.T, domain uint32, name string) *ros.Node {
	t.Helper()
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	go func() { _ = rc.Spin(context.Background()) }()
	n, err := rc.NewNode(name, "")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

type odomWatch struct {
	mu   sync.Mutex
	last *nav_msgs_msg.Odometry
}

func (o *odomWatch) pos() (float64, float64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.last == nil {
		return 0, 0, false
	}
	return o.last.Pose.Pose.Position.X, o.last.Pose.Pose.Position.Y, true
}

func TestNavigatorDrivesSimulatedRobot(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	start(t, domain, "diff_drive_sim")
	// No control mux here: the navigator drives the robot directly.
	start(t, domain, "simple_navigator", "-p", "cmd_vel_topic:=/cmd_vel")
	n := newNode(t, domain, "sim_test")

	var plansMu sync.Mutex
	var plans []*nav_msgs_msg.Path
	if _, err := ros.NewSubscription(n, "/plan", ros.QoSLatched.KeepLast(10), func(m *nav_msgs_msg.Path) {
		plansMu.Lock()
		plans = append(plans, m)
		plansMu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	var odom odomWatch
	if _, err := ros.NewSubscription(n, "/odom", ros.QoSDefault, func(m *nav_msgs_msg.Odometry) {
		odom.mu.Lock()
		odom.last = m
		odom.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	cli, err := ros.NewActionClient(n, "navigate_to_pose", nav2_msgs_action.NavigateToPose)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := cli.WaitForServer(ctx); err != nil {
		t.Fatalf("navigator never came up: %v", err)
	}

	goal := func(x, y float64, frame string) *nav2_msgs_action.NavigateToPose_Goal {
		g := &nav2_msgs_action.NavigateToPose_Goal{}
		g.Pose.Header.FrameId = frame
		g.Pose.Pose.Position = geometry_msgs_msg.Point{X: x, Y: y}
		g.Pose.Pose.Orientation.W = 1
		return g
	}

	// A reachable goal through the first doorway.
	var feedback atomic.Int32 // feedback may still be delivered after the result
	_, st, err := cli.Execute(ctx, goal(4, 1.5, "map"), func(*nav2_msgs_action.NavigateToPose_Feedback) { feedback.Add(1) })
	if err != nil || st != action.StatusSucceeded {
		t.Fatalf("goal (4, 1.5): status %v, err %v", st, err)
	}
	if feedback.Load() == 0 {
		t.Error("no feedback during navigation")
	}
	// The plan went out on /plan (nav_msgs/Path in map, from the robot to
	// the goal), and an empty path when the goal ended.
	testenv.WaitFor(t, 10*time.Second, "the plan and the empty path after it", func() bool {
		plansMu.Lock()
		defer plansMu.Unlock()
		return len(plans) >= 2 && len(plans[len(plans)-1].Poses) == 0
	})
	plansMu.Lock()
	plan := plans[0]
	plansMu.Unlock()
	if plan.Header.FrameId != "map" || len(plan.Poses) < 2 {
		t.Fatalf("plan in frame %q with %d poses", plan.Header.FrameId, len(plan.Poses))
	}
	p0, pn := plan.Poses[0].Pose.Position, plan.Poses[len(plan.Poses)-1].Pose.Position
	if math.Hypot(p0.X, p0.Y) > 0.3 || math.Hypot(pn.X-4, pn.Y-1.5) > 0.2 {
		t.Fatalf("plan from (%.2f, %.2f) to (%.2f, %.2f), want from the start (0, 0) to the goal (4, 1.5)", p0.X, p0.Y, pn.X, pn.Y)
	}
	for i := 1; i < len(plan.Poses); i++ {
		a, b := plan.Poses[i-1].Pose.Position, plan.Poses[i].Pose.Position
		if d := math.Hypot(b.X-a.X, b.Y-a.Y); d > 0.5 {
			t.Fatalf("plan poses %d and %d are %.2f m apart", i-1, i, d)
		}
	}
	// The odometry must have followed: the robot is within tolerance.
	deadline := time.Now().Add(5 * time.Second)
	for {
		x, y, ok := odom.pos()
		if ok && math.Hypot(x-4, y-1.5) < 0.3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("odom at (%v, %v) after success, want near (4, 1.5)", x, y)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A goal inside a pillar is aborted with a reason.
	_, st, err = cli.Execute(ctx, goal(4.8, 2.8, "map"), nil)
	if st != action.StatusAborted {
		t.Fatalf("goal in a pillar: status %v, err %v; want aborted", st, err)
	}
	// Goals the navigator cannot interpret are rejected outright.
	for _, g := range []*nav2_msgs_action.NavigateToPose_Goal{goal(math.NaN(), 0, "map"), goal(1, 1, "base_link")} {
		if _, _, err := cli.Execute(ctx, g, nil); !errors.Is(err, ros.ErrGoalRejected) {
			t.Fatalf("goal %+v: err %v, want rejection", g.Pose, err)
		}
	}
}

func TestFrontierDetector(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	start(t, domain, "diff_drive_sim")
	start(t, domain, "frontier_detector")
	n := newNode(t, domain, "frontier_test")

	goals := make(chan *geometry_msgs_msg.PoseArray, 10)
	failed := make(chan *geometry_msgs_msg.PoseArray, 10)
	for topic, ch := range map[string]chan *geometry_msgs_msg.PoseArray{"/rsm/explorationGoals": goals, "/rsm/failedGoals": failed} {
		ch := ch
		if _, err := ros.NewSubscription(n, topic, ros.QoSDefault, func(m *geometry_msgs_msg.PoseArray) {
			select {
			case ch <- m:
			default:
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	var markersMu sync.Mutex
	var markers *visualization_msgs_msg.MarkerArray
	if _, err := ros.NewSubscription(n, "/explore/frontiers", ros.QoSLatched, func(m *visualization_msgs_msg.MarkerArray) {
		markersMu.Lock()
		markers = m
		markersMu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	latestMarkers := func() *visualization_msgs_msg.MarkerArray {
		markersMu.Lock()
		defer markersMu.Unlock()
		return markers
	}
	statusPub, err := ros.NewPublisher[rsm_msgs_msg.GoalStatus](n, "/rsm/explorationGoalStatus", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	var first *geometry_msgs_msg.PoseArray
	timeout := time.After(60 * time.Second)
	for first == nil {
		select {
		case m := <-goals:
			if len(m.Poses) > 0 {
				first = m
			}
		case <-timeout:
			t.Fatal("no exploration goals from the frontier detector")
		}
	}
	if first.Header.FrameId != "map" {
		t.Errorf("goals in frame %q, want map", first.Header.FrameId)
	}
	// The markers on explore/frontiers: DELETEALL, then per frontier its
	// cells (POINTS) and its goal (SPHERE) at the published goal.
	testenv.WaitFor(t, 30*time.Second, "frontier markers", func() bool {
		m := latestMarkers()
		return m != nil && len(m.Markers) > 1
	})
	m := latestMarkers()
	if m.Markers[0].Action != visualization_msgs_msg.Marker_DELETEALL {
		t.Fatalf("first frontier marker action %d, want DELETEALL", m.Markers[0].Action)
	}
	goalSpheres := map[[2]float64]bool{}
	for _, mk := range m.Markers[1:] {
		switch mk.Ns {
		case "frontiers":
			if mk.Type != visualization_msgs_msg.Marker_POINTS || len(mk.Points) < 5 || mk.Header.FrameId != "map" {
				t.Errorf("frontier cells marker: type %d, %d points, frame %q", mk.Type, len(mk.Points), mk.Header.FrameId)
			}
		case "frontier_goals":
			if mk.Type != visualization_msgs_msg.Marker_SPHERE {
				t.Errorf("frontier goal marker type %d", mk.Type)
			}
			goalSpheres[[2]float64{mk.Pose.Position.X, mk.Pose.Position.Y}] = true
		}
	}
	if len(goalSpheres) == 0 {
		t.Fatalf("no frontier goal spheres in %d markers", len(m.Markers))
	}
	bad := first.Poses[0]
	// Report it failed until the failed list carries it.
	for done := false; !done; {
		if err := statusPub.Publish(&rsm_msgs_msg.GoalStatus{Goal: bad, GoalStatus: rsm_msgs_msg.GoalStatus_FAILED}); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-failed:
			done = len(m.Poses) == 1 && m.Poses[0].Position == bad.Position
		case <-time.After(500 * time.Millisecond):
		case <-timeout:
			t.Fatal("failed goal never appeared on /rsm/failedGoals")
		}
	}
	// ... and the failed goal is drawn as a red sphere.
	testenv.WaitFor(t, 30*time.Second, "the failed goal's marker", func() bool {
		for _, mk := range latestMarkers().Markers {
			if mk.Ns == "failed_goals" && mk.Type == visualization_msgs_msg.Marker_SPHERE &&
				mk.Pose.Position.X == bad.Position.X && mk.Pose.Position.Y == bad.Position.Y && mk.Color.R > 0.5 && mk.Color.G < 0.5 {
				return true
			}
		}
		return false
	})
}
