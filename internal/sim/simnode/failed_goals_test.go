package simnode

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
)

// TestFailedGoals_Bounded_Process: 30 FAILED statuses with distinct goals
// reach a frontier_detector with max_failed_goals 10: rsm/failedGoals
// carries 10 goals, the other 20 are counted as commands_rejected. Before
// the bound it republished all 30, and any number more (issue 25).
func TestFailedGoals_Bounded_Process(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	domain := testenv.Domain(t)
	bin := testenv.Executable(t, "nodes/frontier_detector")
	testenv.Start(t, "frontier_detector", testenv.Env(domain), bin, "--ros-args", "-p", "max_failed_goals:=10", "-p", "rate:=10.0")
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "test: "}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	n, err := rc.NewNode("failed_goals_test", "")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	rejected, failed := uint64(0), -1
	if _, err := ros.NewSubscription(n, ros.DiagnosticsTopic, ros.QoSDiagnosticsReader, func(m *diagnostic_msgs_msg.DiagnosticArray) {
		for _, st := range m.Status {
			if st.Name != ros.DiagnosticsStatusName("/frontier_detector") {
				continue
			}
			for _, kv := range st.Values {
				if kv.Key == ros.CounterCommandsRejected {
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
	if _, err := ros.NewSubscription(n, "/rsm/failedGoals", ros.QoSDefault, func(m *geometry_msgs_msg.PoseArray) {
		mu.Lock()
		failed = len(m.Poses)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	maps, err := ros.NewPublisher[nav_msgs_msg.OccupancyGrid](n, "/map", ros.QoSLatched)
	if err != nil {
		t.Fatal(err)
	}
	status, err := ros.NewPublisher[rsm_msgs_msg.GoalStatus](n, "/rsm/explorationGoalStatus", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = rc.Spin(ctx) }()
	testenv.WaitFor(t, 30*time.Second, "the frontier detector's subscriptions", func() bool {
		a, _ := maps.SubscriptionCount()
		b, _ := status.SubscriptionCount()
		return a > 0 && b > 0
	})
	m := &nav_msgs_msg.OccupancyGrid{Data: make([]int8, 20*20)}
	m.Header.FrameId = "map"
	m.Info.Width, m.Info.Height, m.Info.Resolution = 20, 20, 0.05
	m.Info.Origin.Orientation.W = 1
	if err := maps.Publish(m); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "rsm/failedGoals", func() bool { mu.Lock(); defer mu.Unlock(); return failed >= 0 })
	for i := range 30 {
		g := &rsm_msgs_msg.GoalStatus{GoalStatus: rsm_msgs_msg.GoalStatus_FAILED}
		g.Goal.Position.X, g.Goal.Orientation.W = float64(i), 1
		if err := status.Publish(g); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // the detector's queue keeps the last 10
	}
	testenv.WaitFor(t, 30*time.Second, "20 refusals counted", func() bool { mu.Lock(); defer mu.Unlock(); return rejected >= 20 })
	time.Sleep(300 * time.Millisecond) // three more publications at 10 Hz
	mu.Lock()
	defer mu.Unlock()
	if failed != 10 {
		t.Errorf("rsm/failedGoals carries %d goals, want max_failed_goals 10", failed)
	}
	if rejected != 20 {
		t.Errorf("commands_rejected = %d, want 20", rejected)
	}
}
