package simtest

import (
	"context"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
)

// The robot starts where the demo's exploration once stalled for 18 s:
// 4 mm from the first doorway's north jamb, facing past it. The navigator
// must get it through the doorway in both directions of driving, and say
// on /diagnostics that it replaced commands that would have collided.
func TestNavigatorGetsAwayFromDoorwayJamb(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	start(t, domain, "diff_drive_sim", "-p", "start_x:=2.757", "-p", "start_y:=1.89", "-p", "start_yaw:=-0.34")
	start(t, domain, "simple_navigator", "-p", "cmd_vel_topic:=/cmd_vel")
	n := newNode(t, domain, "avoid_test")

	diag := rostest.WatchCounters(t, n, "/navigator")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, a := range []struct {
		name string
		x, y float64
	}{{"navigate_to_pose", 4, 1.5}, {"navigate_to_pose_reverse", 2, 2.5}} {
		cli, err := ros.NewActionClient(n, a.name, nav2_msgs_action.NavigateToPose)
		if err != nil {
			t.Fatal(err)
		}
		if err := cli.WaitForServer(ctx); err != nil {
			t.Fatalf("%s never came up: %v", a.name, err)
		}
		g := &nav2_msgs_action.NavigateToPose_Goal{}
		g.Pose.Header.FrameId = "map"
		g.Pose.Pose.Position = geometry_msgs_msg.Point{X: a.x, Y: a.y}
		g.Pose.Pose.Orientation.W = 1
		if _, st, err := cli.Execute(ctx, g, nil); err != nil || st != action.StatusSucceeded {
			t.Fatalf("%s to (%g, %g): status %v, err %v", a.name, a.x, a.y, st, err)
		}
	}
	testenv.WaitFor(t, 10*time.Second, "collision_avoidance_cycles on /diagnostics", func() bool {
		return diag.Get("collision_avoidance_cycles") > 0
	})
}
