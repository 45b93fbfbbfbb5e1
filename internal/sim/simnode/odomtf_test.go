package simnode

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
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

	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "test: "}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	n, err := rc.NewNode("odom_to_tf_test", "")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var tfs []tf2_msgs_msg.TFMessage
	rejected := uint64(0)
	if _, err := ros.NewSubscription(n, "/tf", ros.QoSDefault.KeepLast(100), func(m *tf2_msgs_msg.TFMessage) {
		mu.Lock()
		tfs = append(tfs, *m)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewSubscription(n, ros.DiagnosticsTopic, ros.QoSDiagnosticsReader, func(m *diagnostic_msgs_msg.DiagnosticArray) {
		for _, st := range m.Status {
			if st.Name != ros.DiagnosticsStatusName("/"+OdomTFNodeName) {
				continue
			}
			for _, kv := range st.Values {
				if kv.Key == CounterOdomRejected {
					v, _ := strconv.ParseUint(kv.Value, 10, 64)
					mu.Lock()
					rejected = v
					mu.Unlock()
				}
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	odom, err := ros.NewPublisher[nav_msgs_msg.Odometry](n, "/ground_truth/odom", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = rc.Spin(ctx) }()
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
		mu.Lock()
		defer mu.Unlock()
		return rejected == 3
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
