package rsmnode

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	tf2_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/tf2_msgs/msg"
)

// TestFakeTF_DoesNotOutliveItsPublisher_Process (issue 25, finding 6): a
// fake map → odom (+5 m) on /tf left getRobotPose 5 m off for at least 30 s
// after the fake stopped, because it replaced the static map → odom for
// good. service_provider hears the static map → odom, odometry (odom →
// base_link) on /tf, then the fake for a second: getRobotPose follows the
// fake while it is sent and comes back to the true pose once it has
// expired (tf2's 10 s cache time after its last message).
func TestFakeTF_DoesNotOutliveItsPublisher_Process(t *testing.T) {
	domain := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	t.Parallel() // a domain of its own
	start(t, domain, "service_provider", "--ros-args", "-p", "waypoints_file:=''")
	n, nodeCtx := rostest.Node(t, domain, "fake_tf_test")
	ctx, cancel := context.WithTimeout(nodeCtx, 4*waitLimit)
	t.Cleanup(cancel)

	static, err := ros.NewPublisher[tf2_msgs_msg.TFMessage](n, "/tf_static", ros.QoSLatched)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := ros.NewPublisher[tf2_msgs_msg.TFMessage](n, "/tf", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	ts := func(parent, child string, x float64) geometry_msgs_msg.TransformStamped {
		var m geometry_msgs_msg.TransformStamped
		m.Header.FrameId, m.ChildFrameId = parent, child
		m.Transform.Translation.X, m.Transform.Rotation.W = x, 1
		return m
	}
	if err := static.Publish(&tf2_msgs_msg.TFMessage{Transforms: []geometry_msgs_msg.TransformStamped{ts("map", "odom", 0)}}); err != nil {
		t.Fatal(err)
	}
	// Odometry at 10 Hz for the whole test: the robot is at x = 1.
	var fake atomic.Bool
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			m := tf2_msgs_msg.TFMessage{Transforms: []geometry_msgs_msg.TransformStamped{ts("odom", "base_link", 1)}}
			if fake.Load() {
				m.Transforms = append(m.Transforms, ts("map", "odom", 5))
			}
			_ = dyn.Publish(&m)
		}
	}()
	pose, _ := ros.NewClient(n, "/rsm/getRobotPose", rsm_msgs_srv.GetRobotPose)
	waitServices(t, ctx, pose)
	x := func() float64 {
		r, err := pose.Call(ctx, &rsm_msgs_srv.GetRobotPose_Request{})
		if err != nil || r.Pose.Orientation.W == 0 { // no pose yet
			return math.NaN()
		}
		return r.Pose.Position.X
	}
	testenv.WaitFor(t, waitLimit, "the true pose x = 1", func() bool { return math.Abs(x()-1) < 1e-6 })
	fake.Store(true)
	testenv.WaitFor(t, waitLimit, "the fake pose x = 6 while the fake is sent", func() bool { return math.Abs(x()-6) < 1e-6 })
	time.Sleep(time.Second)
	fake.Store(false)
	stopped := time.Now()
	testenv.WaitFor(t, 3*waitLimit, "the true pose x = 1 again after the fake stopped", func() bool { return math.Abs(x()-1) < 1e-6 })
	t.Logf("the fake map → odom stopped affecting getRobotPose %.1f s after its last message", time.Since(stopped).Seconds())
}
