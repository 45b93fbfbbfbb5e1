package ros

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

func timerPending(tm *Timer) bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.pending
}

// A busy node does not accumulate timer calls: while the callback goroutine
// is blocked for many periods, exactly one call is queued.
func TestTimerSkipsMissedTicks(t *testing.T) {
	domainLog := testenv.Domain(t)
	c := newTestContext(t, domainLog)
	n := mustNode(t, c, "ticker", "")
	var calls atomic.Int32
	tm, err := n.NewTimer(2*time.Millisecond, func() { calls.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	blocked := make(chan struct{})
	if err := n.Post(func() { close(blocked); <-release }); err != nil {
		t.Fatal(err)
	}
	<-blocked
	before := calls.Load()
	deadline := time.Now().Add(failAfter)
	for !timerPending(tm) {
		if time.Now().After(deadline) {
			t.Fatal("timer never fired while the node was blocked")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // ten more periods are missed
	marker := make(chan int32, 1)
	if err := n.Post(func() { marker <- calls.Load() }); err != nil {
		t.Fatal(err)
	}
	close(release)
	if got := <-marker - before; got != 1 {
		t.Errorf("%d timer calls ran after the blocked period, want exactly 1", got)
	}
	if tm.Period() != 2*time.Millisecond {
		t.Errorf("Period = %v", tm.Period())
	}
	// After Close no call starts.
	if err := tm.Close(); err != nil {
		t.Fatal(err)
	}
	after := make(chan int32, 1)
	n.Post(func() { after <- calls.Load() })
	stopped := <-after
	time.Sleep(10 * time.Millisecond)
	n.Post(func() { after <- calls.Load() })
	if again := <-after; again != stopped {
		t.Errorf("timer ran %d times after Close", again-stopped)
	}
}

// sec is a sim time in seconds.
func sec(s float64) time.Time { return time.Unix(0, 0).Add(time.Duration(s * float64(time.Second))) }

// The schedule's rule, step by step: what is due for each reading of the
// clock (rcl's timer: due at last start + k·period, missed periods skipped,
// a jump back past the last call restarts, a clock switch keeps the rest).
func TestSchedule_Observe(t *testing.T) {
	type step struct {
		now    float64
		source uint64  // the clock's switch count
		before float64 // the time before the last switch
		due    bool
	}
	cases := []struct {
		name  string
		start float64
		steps []step
		next  float64 // the due time after the last step
	}{
		{"not before the period", 100, []step{{now: 100}, {now: 100.5}, {now: 100.999}}, 101},
		{"at the period", 100, []step{{now: 101, due: true}, {now: 101}}, 102},
		{"paused time never fires", 100, []step{{now: 100.9}, {now: 100.9}, {now: 100.9}}, 101},
		{"fast time fires once per period", 100, []step{
			{now: 100.5}, {now: 101, due: true}, {now: 101.5}, {now: 102, due: true}, {now: 102.5}, {now: 103, due: true},
		}, 104},
		{"a long step skips missed periods, keeps the phase", 100, []step{{now: 103.5, due: true}, {now: 103.9}}, 104},
		{"jump back past the last call restarts", 100, []step{
			{now: 101, due: true}, {now: 101.5}, {now: 10}, {now: 10.9}, {now: 11, due: true},
		}, 12},
		{"jump back within the period keeps the schedule", 100, []step{
			{now: 101, due: true}, {now: 101.8}, {now: 101.2}, {now: 101.9}, {now: 102, due: true},
		}, 103},
		{"first /clock after start on uninitialized sim time fires once", 0, []step{
			{now: 0}, {now: 0}, {now: 500, due: true}, {now: 500.5},
		}, 501},
		{"switch keeps the rest of the period", 1000, []step{
			{now: 1000.25}, {now: 50, source: 1, before: 1000.25}, {now: 50.7}, {now: 50.75, due: true},
		}, 51.75},
		{"switch to sim time without /clock keeps nothing, the first /clock restarts", 1000, []step{
			{now: 1000.25}, {now: 0, source: 1, before: 1000.25}, {now: 0}, {now: 40}, {now: 40.9}, {now: 41, due: true},
		}, 42},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := schedule{period: time.Second}
			s.reset(sec(c.start))
			for i, st := range c.steps {
				got := s.observe(clockState{now: sec(st.now), source: st.source, before: sec(st.before)})
				if got != st.due {
					t.Fatalf("step %d (now %v): due = %v, want %v", i, st.now, got, st.due)
				}
			}
			if !s.next.Equal(sec(c.next)) {
				t.Errorf("next call at %v, want %v", s.next.Sub(sec(0)).Seconds(), c.next)
			}
		})
	}
}

// simTimer runs a Timer on a sim-time Clock the test moves; set moves the
// clock and returns the calls that became due, once the timer has looked.
type simTimer struct {
	t     *testing.T
	clock *Clock
	tm    *Timer
	calls chan func()
	seen  chan [2]any
	got   []time.Time
}

func newSimTimer(t *testing.T, start time.Time, period time.Duration) *simTimer {
	st := &simTimer{t: t, clock: NewClock(nil), calls: make(chan func(), 1), seen: make(chan [2]any, 1000)}
	st.clock.SetSimTime(true)
	st.clock.SetTime(start)
	st.tm = startTimerObserved(context.Background(), st.clock, period,
		func() { st.got = append(st.got, st.clock.Now()) },
		func(f func()) error { st.calls <- f; return nil },
		func(now time.Time, due bool) { st.seen <- [2]any{now, due} })
	t.Cleanup(func() { st.tm.close() })
	return st
}

// set moves sim time to now, waits until the timer has seen it and runs the
// call it posted, if any. It returns the number of calls run.
func (st *simTimer) set(now time.Time) int {
	st.clock.SetTime(now)
	ran := 0
	deadline := time.After(failAfter)
	for {
		select {
		case f := <-st.calls:
			f()
			ran++
		case s := <-st.seen:
			if s[0].(time.Time).Equal(now) && !s[1].(bool) {
				// Settled at now; run a call posted just before.
				select {
				case f := <-st.calls:
					f()
					ran++
				default:
				}
				return ran
			}
		case <-deadline:
			st.t.Fatalf("timer never looked at sim time %v", now)
		}
	}
}

func TestTimer_SimTime_PausedDoesNotFire(t *testing.T) {
	st := newSimTimer(t, sec(100), time.Second)
	for i := 0; i < 50; i++ {
		if n := st.set(sec(100.9)); n != 0 {
			t.Fatalf("%d calls while sim time stood at 100.9 s (period 1 s from 100 s)", n)
		}
	}
	if n := st.set(sec(101)); n != 1 {
		t.Fatalf("%d calls when sim time reached 101 s, want 1", n)
	}
}

// However fast or slow /clock runs against the wall clock, the timer fires
// once per period of sim time: 10 calls per sim second at 100 ms, whether
// sim time moves in 2 ms steps (0.2× of a 10 ms wall loop) or 50 ms steps
// (5×).
func TestTimer_SimTime_FiresPerSimPeriodAtAnySpeed(t *testing.T) {
	for _, step := range []time.Duration{2 * time.Millisecond, 10 * time.Millisecond, 50 * time.Millisecond} {
		t.Run(step.String(), func(t *testing.T) {
			st := newSimTimer(t, sec(100), 100*time.Millisecond)
			calls := 0
			for now := sec(100).Add(step); !now.After(sec(103)); now = now.Add(step) {
				calls += st.set(now)
			}
			if calls != 30 {
				t.Fatalf("%d calls in 3 s of sim time at period 100 ms, want 30", calls)
			}
			for i, at := range st.got {
				if want := sec(100).Add(time.Duration(i+1) * 100 * time.Millisecond); !at.Equal(want) {
					t.Fatalf("call %d at %v, want %v", i, at, want)
				}
			}
		})
	}
}

func TestTimer_SimTime_JumpBackRestartsAndResetWorks(t *testing.T) {
	st := newSimTimer(t, sec(100), time.Second)
	if n := st.set(sec(101)); n != 1 {
		t.Fatalf("%d calls at 101 s", n)
	}
	// The simulation restarts at 10 s: nothing until 11 s (not 102 s).
	if n := st.set(sec(10)) + st.set(sec(10.999)); n != 0 {
		t.Fatalf("%d calls right after the jump back", n)
	}
	if n := st.set(sec(11)); n != 1 {
		t.Fatalf("%d calls one period after the jump back, want 1", n)
	}
	// Reset at 11.5 s: the next call is due at 12.5 s.
	st.set(sec(11.5))
	st.tm.Reset()
	if d := st.tm.TimeUntilNextCall(); d != time.Second {
		t.Fatalf("TimeUntilNextCall after Reset = %v", d)
	}
	if n := st.set(sec(12)) + st.set(sec(12.4)); n != 0 {
		t.Fatalf("%d calls before one period after Reset", n)
	}
	if n := st.set(sec(12.5)); n != 1 {
		t.Fatalf("%d calls one period after Reset, want 1", n)
	}
}

// On a node with use_sim_time and no /clock, NewTimer stands still and
// NewWallTimer runs.
func TestTimer_WallTimerIgnoresSimTime(t *testing.T) {
	c := extContext(t, testenv.Domain(t), "--ros-args", "-p", "use_sim_time:=true")
	n := extNode(t, c, "wall_and_ros")
	var ros, wall atomic.Int32
	if _, err := n.NewTimer(5*time.Millisecond, func() { ros.Add(1) }); err != nil {
		t.Fatal(err)
	}
	wt, err := n.NewWallTimer(5*time.Millisecond, func() { wall.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(failAfter)
	for wall.Load() < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("wall timer fired %d times", wall.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := ros.Load(); got != 0 {
		t.Fatalf("the ROS-clock timer fired %d times while sim time stood at 0", got)
	}
	if err := wt.Close(); err != nil {
		t.Fatal(err)
	}
	if err := wt.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := n.NewWallTimer(0, func() {}); err == nil {
		t.Fatal("period 0 accepted")
	}
	if _, err := n.NewTimer(time.Second, nil); err == nil {
		t.Fatal("nil callback accepted")
	}
}

// A Ticker on a sim-time clock ticks per period of sim time, not while the
// time stands still, and one period after a jump back.
func TestTicker_SimTime(t *testing.T) {
	c := NewClock(nil)
	c.SetSimTime(true)
	c.SetTime(sec(100))
	k, err := c.NewTicker(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	expect := func(at float64) {
		t.Helper()
		select {
		case got := <-k.C:
			if !got.Equal(sec(at)) {
				t.Fatalf("tick at %v, want %v", got.Sub(sec(0)).Seconds(), at)
			}
		case <-time.After(failAfter):
			t.Fatalf("no tick at sim time %v", at)
		}
	}
	quiet := func() {
		t.Helper()
		select {
		case got := <-k.C:
			t.Fatalf("tick at %v while sim time stood still", got.Sub(sec(0)).Seconds())
		case <-time.After(50 * time.Millisecond): // best effort: a late tick fails a later expect
		}
	}
	c.SetTime(sec(100.5))
	quiet()
	c.SetTime(sec(101))
	expect(101)
	c.SetTime(sec(101.2))
	quiet()
	c.SetTime(sec(5)) // the simulation restarts
	quiet()
	c.SetTime(sec(6))
	expect(6)
	if _, err := c.NewTicker(0); err == nil {
		t.Fatal("period 0 accepted")
	}
}
