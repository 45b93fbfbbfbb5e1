package simnode

import (
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	tf2_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/tf2_msgs/msg"
)

// TestOdomToTF_Process: odom_to_tf, a real process, turns each odometry
// message into its transform on /tf (frames, stamp and pose as sent, the
// odometry remapped as a launch file does), and relays nothing of an
// odometry with a NaN position, a zero quaternion or no child frame: those
// are counted as odometry_rejected on /diagnostics and logged.
func TestOdomToTF_Process(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	domain := testenv.Domain(t)
	bin := testenv.Executable(t, "nodes/odom_to_tf")
	p := testenv.Start(t, "odom_to_tf", testenv.Env(domain), bin, "--ros-args", "-r", "odom:=/ground_truth/odom")

	n, _ := rostest.Node(t, domain, "odom_to_tf_test")
	var mu sync.Mutex
	var tfs []tf2_msgs_msg.TFMessage
	if _, err := ros.NewSubscription(n, "/tf", ros.QoSDefault.KeepLast(100), func(m *tf2_msgs_msg.TFMessage) {
		mu.Lock()
		tfs = append(tfs, *m)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	diag := rostest.WatchCounters(t, n, "/"+OdomTFNodeName)
	odom, err := ros.NewPublisher[nav_msgs_msg.Odometry](n, "/ground_truth/odom", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "odom_to_tf to match the odometry publisher", func() bool {
		c, err := odom.SubscriptionCount()
		return err == nil && c > 0
	})

	mk := func(sec int32, x float64) *nav_msgs_msg.Odometry {
		o := &nav_msgs_msg.Odometry{ChildFrameId: "base_footprint"}
		o.Header.FrameId, o.Header.Stamp.Sec = "odom", sec
		o.Pose.Pose.Position.X, o.Pose.Pose.Position.Y = x, -0.5
		o.Pose.Pose.Orientation.Z, o.Pose.Pose.Orientation.W = math.Sin(0.3), math.Cos(0.3)
		return o
	}
	bad := []*nav_msgs_msg.Odometry{mk(2, math.NaN()), mk(3, 1), mk(4, 1)}
	bad[1].Pose.Pose.Orientation.Z, bad[1].Pose.Pose.Orientation.W = 0, 0
	bad[2].ChildFrameId = ""
	for _, o := range append(bad, mk(7, 1.25)) {
		if err := odom.Publish(o); err != nil {
			t.Fatal(err)
		}
	}
	testenv.WaitFor(t, 30*time.Second, "the transform of the good odometry on /tf", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(tfs) > 0
	})
	testenv.WaitFor(t, 30*time.Second, "three odometry messages counted as odometry_rejected", func() bool {
		return diag.Get(CounterOdomRejected) == 3
	})
	mu.Lock()
	defer mu.Unlock()
	if len(tfs) != 1 || len(tfs[0].Transforms) != 1 {
		t.Fatalf("/tf carried %d messages (%+v), want one with one transform", len(tfs), tfs)
	}
	tr := tfs[0].Transforms[0]
	r := tr.Transform
	if tr.Header.FrameId != "odom" || tr.ChildFrameId != "base_footprint" || tr.Header.Stamp.Sec != 7 ||
		r.Translation.X != 1.25 || r.Translation.Y != -0.5 || r.Rotation.Z != math.Sin(0.3) || r.Rotation.W != math.Cos(0.3) {
		t.Errorf("transform %+v, want odom -> base_footprint at (1.25, -0.5), yaw 0.6, stamp 7 s", tr)
	}
	if out := p.Output(); !strings.Contains(out, "odometry not relayed") {
		t.Errorf("the rejection is not logged: %s", out)
	}
}
