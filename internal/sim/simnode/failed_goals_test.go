package simnode

import (
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
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
	n, _ := rostest.Node(t, domain, "failed_goals_test")
	diag := rostest.WatchCounters(t, n, "/frontier_detector")
	var mu sync.Mutex
	failed := -1
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
	testenv.WaitFor(t, 30*time.Second, "20 refusals counted", func() bool { return diag.Get(ros.CounterCommandsRejected) >= 20 })
	time.Sleep(300 * time.Millisecond) // three more publications at 10 Hz
	mu.Lock()
	defer mu.Unlock()
	if failed != 10 {
		t.Errorf("rsm/failedGoals carries %d goals, want max_failed_goals 10", failed)
	}
	if r := diag.Get(ros.CounterCommandsRejected); r != 20 {
		t.Errorf("commands_rejected = %d, want 20", r)
	}
}
