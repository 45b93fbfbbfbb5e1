package ros

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
)

// Timer calls a function periodically on the node's callback goroutine.
//
// A timer made by NewTimer follows the node's ROS clock (Node.Clock), as
// rclcpp's create_timer does: on the system clock normally, and on /clock
// while use_sim_time is true. A timer made by NewWallTimer follows the
// monotonic wall clock whatever use_sim_time says (rclcpp's
// create_wall_timer).
//
// Calls are due at start + k·period of the timer's clock. When the node is
// busy, missed calls are skipped rather than queued, so at most one call is
// pending at a time. On sim time:
//
//   - while /clock does not move (a paused simulation) the timer does not
//     fire;
//   - it fires once per period of sim time however fast or slow /clock runs
//     (at most once per /clock sample: a /clock step longer than the period
//     skips the calls in between);
//   - when the time jumps back past the timer's last call (a restarted
//     simulation, a bag played again), the schedule restarts: the next call
//     is one period after the new time;
//   - when use_sim_time is switched, the timer keeps the part of its period
//     it had still to wait, counted in the new time.
type Timer struct {
	clock  *Clock
	period time.Duration
	cb     func()
	post   func(func()) error
	remove func(*Timer) // nil for timers not owned by a node

	mu      sync.Mutex
	sched   schedule
	pending bool
	stopped bool

	kick   chan struct{} // capacity 1: re-read the schedule (Reset)
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	// tick, if set (Ticker), gets the due calls instead of post and cb.
	tick func(now time.Time)

	// observed, if set (tests), is called after each reading of the clock
	// with the time read and whether a call was due.
	observed func(now time.Time, due bool)
}

// NewTimer creates a timer on the node's ROS clock that calls cb every
// period (> 0) on the node's callback goroutine, the first time one period
// from now. Under use_sim_time the period is sim time (see Timer).
func (n *Node) NewTimer(period time.Duration, cb func()) (*Timer, error) {
	return n.newTimer("NewTimer", n.ext.clock, period, cb)
}

// NewWallTimer creates a timer on the wall clock (monotonic, never sim
// time) that calls cb every period (> 0) on the node's callback goroutine,
// the first time one period from now. Use it for what must keep running
// while a simulation is paused: heartbeats, watchdogs of other processes,
// polling of devices, and the simulators that publish /clock.
func (n *Node) NewWallTimer(period time.Duration, cb func()) (*Timer, error) {
	return n.newTimer("NewWallTimer", NewClock(nil), period, cb)
}

func (n *Node) newTimer(what string, clock *Clock, period time.Duration, cb func()) (*Timer, error) {
	if period <= 0 {
		return nil, fmt.Errorf("ros: %s: period %v must be positive", what, period)
	}
	if cb == nil {
		return nil, fmt.Errorf("ros: %s: nil callback", what)
	}
	t := startTimer(n.runCtx, clock, period, cb, n.Post)
	t.remove = func(t *Timer) { n.removeEntity(t) }
	if err := n.addEntity(t); err != nil {
		return nil, err
	}
	return t, nil
}

// startTimer starts a timer on clock whose calls are handed to post. Tests
// drive it with a sim-time Clock and their own post.
func startTimer(parent context.Context, clock *Clock, period time.Duration, cb func(), post func(func()) error) *Timer {
	return startTimerObserved(parent, clock, period, cb, post, nil)
}

func startTimerObserved(parent context.Context, clock *Clock, period time.Duration, cb func(), post func(func()) error, observed func(time.Time, bool)) *Timer {
	t := newTimerOn(parent, clock, period)
	t.cb, t.post, t.observed = cb, post, observed
	go t.loop(t.ctx)
	return t
}

// newTimerOn returns a Timer on clock whose schedule starts now; the
// caller sets how calls are delivered and starts loop.
func newTimerOn(parent context.Context, clock *Clock, period time.Duration) *Timer {
	t := &Timer{clock: clock, period: period, kick: make(chan struct{}, 1), done: make(chan struct{})}
	t.ctx, t.cancel = context.WithCancel(parent)
	st := clock.state()
	t.sched = schedule{period: period, source: st.source}
	t.sched.reset(st.now)
	return t
}

// loop watches the clock: on the wall clock it sleeps until the next call
// is due, on sim time it wakes at every /clock sample.
func (t *Timer) loop(ctx context.Context) {
	defer close(t.done)
	for {
		st := t.clock.state()
		t.mu.Lock()
		if t.stopped {
			t.mu.Unlock()
			return
		}
		due := t.sched.observe(st)
		if due && t.tick == nil && !t.pending && t.post(t.run) == nil {
			t.pending = true
		}
		next := t.sched.next
		t.mu.Unlock()
		if due && t.tick != nil {
			t.tick(st.now)
		}
		if t.observed != nil {
			t.observed(st.now, due)
		}
		if due {
			continue // the schedule moved on; look again
		}
		var wake <-chan time.Time
		var wt *time.Timer
		if !st.sim {
			wt = time.NewTimer(next.Sub(st.now))
			wake = wt.C
		}
		select {
		case <-ctx.Done():
		case <-st.changed:
		case <-wake:
		case <-t.kick:
		}
		if wt != nil {
			wt.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

func (t *Timer) run() {
	t.mu.Lock()
	t.pending = false
	stopped := t.stopped
	t.mu.Unlock()
	if !stopped {
		t.cb()
	}
}

// Period returns the timer period.
func (t *Timer) Period() time.Duration { return t.period }

// Reset restarts the timer: the next call is one period of the timer's
// clock from now.
func (t *Timer) Reset() {
	t.mu.Lock()
	if t.stopped {
		t.mu.Unlock()
		return
	}
	st := t.clock.state()
	t.sched.source = st.source
	t.sched.reset(st.now)
	t.mu.Unlock()
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// TimeUntilNextCall returns how much time of the timer's clock is left
// until the next call is due (0 or less when it is due now).
func (t *Timer) TimeUntilNextCall() time.Duration {
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sched.next.Sub(now)
}

func (t *Timer) gids() (readers, writers []dds.GUID) { return nil, nil }

func (t *Timer) close() error {
	t.mu.Lock()
	if t.stopped {
		t.mu.Unlock()
		return errClosedTimer
	}
	t.stopped = true
	t.mu.Unlock()
	t.cancel()
	<-t.done
	return nil
}

var errClosedTimer = errors.New("ros: timer already closed")

// Close stops the timer; no call starts after Close returns (unless Close
// is called while that call is already running).
func (t *Timer) Close() error {
	err := t.close()
	if errors.Is(err, errClosedTimer) {
		return nil
	}
	if t.remove != nil {
		t.remove(t)
	}
	return err
}

// Ticker is time.Ticker on a ROS clock, for loops that run on goroutines of
// their own (an action server's execute function, for example) rather
// than on the node's callback goroutine. It follows the same rules as a
// Timer on that clock; a tick that the receiver is not ready for is
// dropped.
type Ticker struct {
	// C delivers the clock's time of each tick.
	C <-chan time.Time
	t *Timer
}

// NewTicker returns a Ticker on c (Node.Clock() follows use_sim_time) that
// ticks every period (> 0), the first time one period from now. Stop it
// when done.
func (c *Clock) NewTicker(period time.Duration) (*Ticker, error) {
	if period <= 0 {
		return nil, fmt.Errorf("ros: NewTicker: period %v must be positive", period)
	}
	ch := make(chan time.Time, 1)
	t := newTimerOn(context.Background(), c, period)
	t.tick = func(now time.Time) {
		select {
		case ch <- now:
		default:
		}
	}
	go t.loop(t.ctx)
	return &Ticker{C: ch, t: t}, nil
}

// Reset restarts the ticker: the next tick is one period from now.
func (k *Ticker) Reset() { k.t.Reset() }

// Stop ends the ticker; C delivers no further ticks (one already in the
// channel stays there, as with time.Ticker).
func (k *Ticker) Stop() { _ = k.t.close() }

// schedule is the timing rule of a Timer, kept apart from goroutines and
// clocks so that it can be checked step by step. It follows rcl's timer:
// last is the time of the last call (or start/reset), next the time the
// next call is due.
type schedule struct {
	period     time.Duration
	last, next time.Time
	seen       time.Time // the time of the previous reading
	source     uint64    // the clock's switch count the times belong to
}

func (s *schedule) reset(now time.Time) {
	s.last = now
	s.next = now.Add(s.period)
	s.seen = now
}

// observe applies one reading of the clock and reports whether a call is
// due; if it is, the schedule moves to the next period after now (missed
// periods are skipped, the phase is kept).
func (s *schedule) observe(st clockState) bool {
	now := st.now
	moved := !now.Equal(s.seen)
	s.seen = now
	if st.source != s.source {
		// The clock switched between system and sim time: keep what was
		// left of the period, counted from the new time. Nothing can be
		// carried to or from a sim clock that has not received /clock yet
		// (then the next jump of time decides, as below).
		s.source = st.source
		if !uninitialized(st.before) && !uninitialized(now) {
			left := s.next.Sub(st.before)
			left = max(0, min(left, s.period))
			s.next = now.Add(left)
			s.last = s.next.Add(-s.period)
		}
	} else if moved && now.Before(s.last) {
		// Time jumped back past the last call: start again from now.
		s.reset(now)
		return false
	}
	if now.Before(s.next) {
		return false
	}
	s.last = now
	s.next = s.next.Add(s.period)
	if !s.next.After(now) {
		s.next = s.next.Add((now.Sub(s.next)/s.period + 1) * s.period)
	}
	return true
}
