package ros

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
)

func TestHeartbeatSample(t *testing.T) {
	for _, p := range []time.Duration{HeartbeatPeriod, time.Second + 5, 59 * time.Second} {
		got, ok := decodeHeartbeat(encodeHeartbeat(p))
		if !ok || got != p {
			t.Errorf("round trip of %v: %v %v", p, got, ok)
		}
	}
	for _, b := range [][]byte{nil, {0, 1, 0, 0}, encodeHeartbeat(0), encodeHeartbeat(-time.Second), encodeHeartbeat(time.Hour),
		{0, 1, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}} {
		if p, ok := decodeHeartbeat(b); ok {
			t.Errorf("% x decoded as %v", b, p)
		}
	}
}

func TestClientWatchLost(t *testing.T) {
	t0 := time.Unix(1000, 0)
	fast := beat{at: t0, period: HeartbeatPeriod}
	slow := beat{at: t0, period: time.Second}
	for _, c := range []struct {
		name    string
		seen    bool
		b       beat
		heard   bool
		now     time.Time
		wasLost bool
	}{
		{"never heard: not watched", false, beat{}, false, t0.Add(time.Hour), false},
		{"fresh", false, fast, true, t0.Add(500 * time.Millisecond), false},
		{"at the timeout", false, fast, true, t0.Add(time.Second), false},
		{"past the timeout", false, fast, true, t0.Add(1001 * time.Millisecond), true},
		{"a slow sender gets three periods", false, slow, true, t0.Add(2 * time.Second), false},
		{"a slow sender past three periods", false, slow, true, t0.Add(3001 * time.Millisecond), true},
		{"heard once, then forgotten", true, beat{}, false, t0, true},
	} {
		w := clientWatch{timeout: time.Second, seen: c.seen}
		if _, lost := w.lost(c.b, c.heard, c.now); lost != c.wasLost {
			t.Errorf("%s: lost = %v, want %v", c.name, lost, c.wasLost)
		}
	}
}

// TestActionServerAbortsGoalOfFrozenClient: the fsmnodes CLI sends a goal
// and is frozen (SIGSTOP) with Cyclone's default 10 s lease; the server,
// with ClientTimeout, aborts the goal with ErrClientLost while the frozen
// client is still in the graph (its lease has not expired). Before the
// heartbeats, nothing watched a goal's client but the graph, so the goal
// ran on until the lease expired.
func TestActionServerAbortsGoalOfFrozenClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the fsmnodes CLI")
	}
	domain := testenv.Domain(t)
	c := newTestContext(t, domain)
	n := mustNode(t, c, "hb_server", "")
	started := make(chan action.GoalID, 1)
	ended := make(chan error, 1)
	listenersAtAbort := make(chan int, 1)
	_, err := NewActionServer(n, "navigate_to_pose", nav2_msgs_action.NavigateToPose,
		func(ctx context.Context, g *ServerGoal[navGoal, navFeedback]) (*navResult, error) {
			started <- g.ID()
			<-ctx.Done()
			l, _ := n.ActionListeners("navigate_to_pose")
			listenersAtAbort <- l
			ended <- context.Cause(ctx)
			return nil, ctx.Err()
		}, ActionServerOptions[navGoal]{ClientTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	env := append(testenv.Env(domain), "ROS_DISTRO=jazzy",
		// The user's lease wins over the CLI's 2 s: Cyclone's default.
		"CYCLONEDDS_URI=<CycloneDDS><Domain><Discovery><LeaseDuration>10s</LeaseDuration></Discovery></Domain></CycloneDDS>")
	p := testenv.Start(t, "fsmnodes action send_goal", env, testenv.Executable(t, "cmd/fsmnodes"),
		"action", "send_goal", "/navigate_to_pose", "nav2_msgs/action/NavigateToPose", "{pose: {pose: {position: {x: 1.0}}}}")
	select {
	case <-started:
	case <-time.After(failAfter):
		t.Fatalf("no goal from the CLI; it printed:\n%s", p.Output())
	}
	// Its heartbeats are heard by now (the goal came after its client was
	// made); freeze it.
	testenv.WaitFor(t, failAfter, "a heartbeat from the CLI", func() bool {
		c.hb.mu.Lock()
		defer c.hb.mu.Unlock()
		return len(c.hb.beats) > 0
	})
	stoppedAt := time.Now()
	if err := syscall.Kill(p.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(p.Pid(), syscall.SIGCONT)
	var cause error
	select {
	case cause = <-ended:
	case <-time.After(failAfter):
		t.Fatal("the goal of the frozen client still runs")
	}
	t.Logf("goal aborted %v after the client froze", time.Since(stoppedAt).Round(time.Millisecond))
	if !errors.Is(cause, ErrClientLost) {
		t.Errorf("the goal ended with cause %v, want ErrClientLost", cause)
	}
	if l := <-listenersAtAbort; l == 0 {
		t.Errorf("the frozen client had left the graph when the goal was aborted: the lease, not the heartbeat, ended it")
	}
	if v := n.Counter(CounterGoalsClientLost).Load(); v != 1 {
		t.Errorf("%s = %d, want 1", CounterGoalsClientLost, v)
	}
}
