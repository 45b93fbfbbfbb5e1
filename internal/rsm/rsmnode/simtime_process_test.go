package rsmnode

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rosgraph_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rosgraph_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// simClock publishes /clock running factor times as fast as the wall
// clock, from sim time 1000 s, every 5 ms of wall time.
type simClock struct {
	factor float64
	now    atomic.Int64 // the last published sim time, ns
}

func (c *simClock) run(ctx context.Context, t *testing.T, n *ros.Node) {
	pub, err := ros.NewPublisher[rosgraph_msgs_msg.Clock](n, "/clock", ros.QoSClock)
	if err != nil {
		t.Fatal(err)
	}
	start, wall0 := time.Unix(1000, 0), time.Now()
	c.now.Store(start.UnixNano())
	tick := time.NewTicker(5 * time.Millisecond)
	go func() {
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			now := start.Add(time.Duration(float64(time.Since(wall0)) * c.factor))
			if err := pub.Publish(&rosgraph_msgs_msg.Clock{Clock: builtin_interfaces_msg.TimeOf(now)}); err != nil {
				return
			}
			c.now.Store(now.UnixNano())
		}
	}()
}

// Now is the sim time last published.
func (c *simClock) Now() time.Time { return time.Unix(0, c.now.Load()) }

// stamped is a value seen by the test with the sim time it was seen at.
type stamped[T any] struct {
	at time.Time
	v  T
}

type stampedLog[T any] struct {
	mu  sync.Mutex
	all []stamped[T]
}

func (l *stampedLog[T]) add(at time.Time, v T) {
	l.mu.Lock()
	l.all = append(l.all, stamped[T]{at, v})
	l.mu.Unlock()
}

func (l *stampedLog[T]) get() []stamped[T] {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]stamped[T](nil), l.all...)
}

// perSimSecond counts the entries seen in the sim-time window [from, to).
func perSimSecond[T any](all []stamped[T], from, to time.Time) float64 {
	n := 0
	for _, s := range all {
		if !s.at.Before(from) && s.at.Before(to) {
			n++
		}
	}
	return float64(n) / to.Sub(from).Seconds()
}

// RSM under use_sim_time follows a simulated /clock running at 5× and at
// 0.2× real time: the state machine's update rate (Boot calls
// rsm/bootUpFinished once per tick), the mux's output rate and its
// teleoperation idle timeout are all sim-time quantities. Wall-clock timers
// would be 5× too slow or too fast per sim second; the margins (±50 %) are
// wide enough for a loaded machine and far from that.
func TestProcess_RSMFollowsSimTime(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	t.Parallel() // a domain of its own
	for _, factor := range []float64{5, 0.2} {
		t.Run(fmt.Sprintf("%gx", factor), func(t *testing.T) {
			t.Parallel() // each factor on a domain of its own
			testRSMSimTime(t, factor)
		})
	}
}

func testRSMSimTime(t *testing.T, factor float64) {
	const (
		hz   = 5.0             // update_frequency of both nodes, per sim second
		idle = 2 * time.Second // teleoperation_idle_timer, sim time
	)
	domain := testenv.Domain(t)
	n, ctx := rostest.Node(t, domain, "rsm_simtime_test")
	clock := &simClock{factor: factor}
	clock.run(ctx, t, n)

	boots := &stampedLog[struct{}]{}
	if _, err := ros.NewService(n, "/rsm/bootUpFinished", std_srvs_srv.SetBool, func(context.Context, *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
		boots.add(clock.Now(), struct{}{})
		return &std_srvs_srv.SetBool_Response{Success: false, Message: "Still booting ..."}, nil
	}); err != nil {
		t.Fatal(err)
	}
	modes := &stampedLog[uint8]{}
	if _, err := ros.NewSubscription(n, "/rsm/operationMode", ros.QoSDefault, func(m *rsm_msgs_msg.OperationMode) {
		modes.add(clock.Now(), m.Mode)
	}); err != nil {
		t.Fatal(err)
	}
	tele, err := ros.NewPublisher[geometry_msgs_msg.Twist](n, "/teleoperation/cmd_vel", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}

	simArgs := []string{"--ros-args", "-p", "use_sim_time:=true", "-p", fmt.Sprintf("update_frequency:=%.1f", hz)}
	start(t, domain, "robot_control_mux", append(simArgs, "-p", fmt.Sprintf("teleoperation_idle_timer:=%.1f", idle.Seconds()))...)
	start(t, domain, "state_interface", simArgs...)

	// Wait until both nodes tick, then measure their rates over 2 s of sim
	// time. The teleoperation idle check below runs meanwhile: the mux
	// publishes once per cycle whatever its mode.
	waitSim := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(waitLimit + time.Duration(float64(10*time.Second)/factor))
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s (sim time %v)", what, clock.Now().Sub(time.Unix(1000, 0)))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitSim("the first Boot call and mux output", func() bool { return len(boots.get()) > 0 && len(modes.get()) > 0 })
	from := clock.Now().Add(500 * time.Millisecond)
	to := from.Add(2 * time.Second)

	// Teleoperation: send until the mux is in TELEOPERATION, then stop;
	// the mux falls back to STOPPED after idle of sim time.
	var lastSent time.Time
	teleAt := 0 // index of the TELEOPERATION sample that ended the wait
	waitSim("TELEOPERATION", func() bool {
		ms := modes.get()
		if len(ms) > 0 && ms[len(ms)-1].v == rsm_msgs_msg.OperationMode_TELEOPERATION {
			teleAt = len(ms) - 1
			return true
		}
		lastSent = clock.Now()
		if err := tele.Publish(&geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 0.1}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		return false
	})
	// STOPPED after that TELEOPERATION sample: a STOPPED the mux sent
	// before it had the command may arrive after lastSent on a busy
	// machine (a run took it for the idle timer's, 0.06 s after the
	// command).
	var stopped time.Time
	waitSim("STOPPED after the idle timer", func() bool {
		for _, m := range modes.get()[teleAt+1:] {
			if m.v == rsm_msgs_msg.OperationMode_STOPPED {
				stopped = m.at
				return true
			}
		}
		return false
	})
	took := stopped.Sub(lastSent)
	t.Logf("teleoperation idle: STOPPED %.2f s of sim time after the last command at %g× (teleoperation_idle_timer %v)", took.Seconds(), factor, idle)
	if took < idle/2 || took > idle*2 {
		t.Errorf("STOPPED %v of sim time after the last teleoperation command, want about %v (a wall-clock timer gives %v)",
			took, idle, time.Duration(float64(idle)*factor))
	}

	// Samples are stamped with the sim time they arrive at: once it has
	// passed to, the window is complete.
	waitSim("2 s of sim time", func() bool { return !clock.Now().Before(to) })
	for _, r := range []struct {
		what string
		rate float64
	}{
		{"state machine ticks (rsm/bootUpFinished calls)", perSimSecond(boots.get(), from, to)},
		{"mux outputs (rsm/operationMode)", perSimSecond(modes.get(), from, to)},
	} {
		t.Logf("%s: %.1f per sim second at %g× (update_frequency %g)", r.what, r.rate, factor, hz)
		if r.rate < hz/2 || r.rate > hz*1.5 {
			t.Errorf("%s: %.1f per sim second, want about %g (a wall-clock timer gives %g)", r.what, r.rate, hz, hz/factor)
		}
	}
}
