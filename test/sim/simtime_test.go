package simtest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
	rosgraph_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rosgraph_msgs/msg"
)

// simSeconds is a stamp as seconds; sim time of the built-in simulator
// starts at 0, wall time is about 1.8e9.
func simSeconds(t builtin_interfaces_msg.Time) float64 {
	return float64(t.Sec) + float64(t.Nanosec)/1e9
}

// The built-in simulator publishes /clock (publish_clock:=true) and the
// navigator and frontier detector, started with use_sim_time:=true, run on
// it: their stamps are the simulator's time and the navigator's control
// loop, driven by its node clock, brings the robot to a goal.
func TestSimTime_BuiltInSimulatorClockDrivesNavigatorAndFrontiers(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	start(t, domain, "diff_drive_sim", "-p", "publish_clock:=true")
	start(t, domain, "simple_navigator", "-p", "use_sim_time:=true", "-p", "cmd_vel_topic:=/cmd_vel")
	start(t, domain, "frontier_detector", "-p", "use_sim_time:=true")
	n := newNode(t, domain, "simtime_test")

	var clock atomic.Int64 // latest /clock, ns
	if _, err := ros.NewSubscription(n, "/clock", ros.QoSClock, func(m *rosgraph_msgs_msg.Clock) {
		clock.Store(int64(m.Clock.Sec)*int64(time.Second) + int64(m.Clock.Nanosec))
	}); err != nil {
		t.Fatal(err)
	}
	goalStamps := make(chan builtin_interfaces_msg.Time, 10)
	if _, err := ros.NewSubscription(n, "/rsm/explorationGoals", ros.QoSDefault, func(m *geometry_msgs_msg.PoseArray) {
		select {
		case goalStamps <- m.Header.Stamp:
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case st := <-goalStamps:
		now := float64(clock.Load()) / 1e9
		if s := simSeconds(st); s <= 0 || s > now+1 {
			t.Fatalf("frontier goals stamped %.3f s, want sim time (the simulator's clock is at %.3f s)", s, now)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no exploration goals from the frontier detector on sim time")
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
	g := &nav2_msgs_action.NavigateToPose_Goal{}
	g.Pose.Header.FrameId = "map"
	g.Pose.Pose.Position = geometry_msgs_msg.Point{X: 4, Y: 1.5}
	g.Pose.Pose.Orientation.W = 1
	var bad atomic.Value
	var feedback atomic.Int32
	startSim := float64(clock.Load()) / 1e9
	_, st, err := cli.Execute(ctx, g, func(fb *nav2_msgs_action.NavigateToPose_Feedback) {
		feedback.Add(1)
		now := float64(clock.Load()) / 1e9
		if s := simSeconds(fb.CurrentPose.Header.Stamp); s < startSim-1 || s > now+1 {
			bad.Store("feedback stamped at a time that is not the simulator's")
		}
		if d := simSeconds(builtin_interfaces_msg.Time(fb.NavigationTime)); d < 0 || d > now-startSim+1 {
			bad.Store("navigation_time longer than the sim time since the goal")
		}
	})
	if err != nil || st != action.StatusSucceeded {
		t.Fatalf("goal (4, 1.5) on sim time: status %v, err %v", st, err)
	}
	if feedback.Load() == 0 {
		t.Error("no feedback during navigation")
	}
	if b := bad.Load(); b != nil {
		t.Error(b)
	}
}
