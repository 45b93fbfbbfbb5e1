package velma

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Clock is the time source of a Loop. RealClock uses the wall clock; tests
// use a fake that advances only when the loop sleeps.
type Clock interface {
	Now() time.Time
	// SleepUntil blocks until t or until ctx is done.
	SleepUntil(ctx context.Context, t time.Time) error
}

// preciseSleep is the longest wait RealClock does with nanosleep.
const preciseSleep = 10 * time.Millisecond

// RealClock is the monotonic wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// SleepUntil sleeps until t (returns at once if t has passed). Waits of at
// most preciseSleep block the calling thread in nanosleep, which wakes far
// more punctually than a runtime timer (whose wake-ups are coarser); longer
// waits use a timer and honour ctx.
func (RealClock) SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	if d <= preciseSleep {
		if err := ctx.Err(); err != nil {
			return err
		}
		preciseWait(d)
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// LoopStats summarises a loop's measured periods.
type LoopStats struct {
	Iterations uint64
	Overruns   uint64 // iterations whose step ended after the next deadline
	P50, P99   time.Duration
	P999       time.Duration
	Max        time.Duration
	MaxStep    time.Duration // longest step duration
}

// String formats the stats.
func (s LoopStats) String() string {
	return fmt.Sprintf("iterations=%d overruns=%d period p50=%v p99=%v p99.9=%v max=%v step max=%v",
		s.Iterations, s.Overruns, s.P50, s.P99, s.P999, s.Max, s.MaxStep)
}

// Loop calls a step function at a fixed period and measures the period
// between successive step starts. When a step overruns its deadline the
// next one starts at once and the schedule restarts from there (no burst of
// catch-up iterations).
type Loop struct {
	period  time.Duration
	clock   Clock
	samples []time.Duration // ring of the last measured periods
	sorted  []time.Duration // scratch of Stats (no allocation per call)
	next    int
	full    bool
	stats   LoopStats
}

// NewLoop returns a loop with the given period, keeping the last window
// periods for percentiles (e.g. 5000 for 10 s at 500 Hz).
func NewLoop(period time.Duration, clock Clock, window int) (*Loop, error) {
	if period <= 0 {
		return nil, fmt.Errorf("loop: period %v, want > 0", period)
	}
	if window <= 0 {
		return nil, fmt.Errorf("loop: window %d, want > 0", window)
	}
	if clock == nil {
		clock = RealClock{}
	}
	return &Loop{period: period, clock: clock, samples: make([]time.Duration, window), sorted: make([]time.Duration, window)}, nil
}

// Run calls step every period until ctx is done or step returns false.
// It returns ctx.Err() when cancelled, nil when step stopped it.
func (l *Loop) Run(ctx context.Context, step func(now time.Time) bool) error {
	deadline := l.clock.Now()
	var prev time.Time
	for {
		if err := l.clock.SleepUntil(ctx, deadline); err != nil {
			return err
		}
		start := l.clock.Now()
		if !prev.IsZero() {
			l.record(start.Sub(prev))
		}
		prev = start
		cont := step(start)
		end := l.clock.Now()
		l.stats.Iterations++
		if d := end.Sub(start); d > l.stats.MaxStep {
			l.stats.MaxStep = d
		}
		deadline = deadline.Add(l.period)
		if end.After(deadline) {
			l.stats.Overruns++
			deadline = end
		}
		if !cont {
			return nil
		}
	}
}

func (l *Loop) record(d time.Duration) {
	l.samples[l.next] = d
	l.next++
	if l.next == len(l.samples) {
		l.next, l.full = 0, true
	}
	if d > l.stats.Max {
		l.stats.Max = d
	}
}

// Counts returns the iteration and overrun counters (cheap; loop goroutine
// or after Run returned).
func (l *Loop) Counts() (iterations, overruns uint64) {
	return l.stats.Iterations, l.stats.Overruns
}

// Stats returns the statistics so far; percentiles cover the window. Call
// it from the loop goroutine (inside step) or after Run returned. It
// allocates nothing (but sorts the window: call it seldom).
func (l *Loop) Stats() LoopStats {
	s := l.stats
	n := l.next
	if l.full {
		n = len(l.samples)
	}
	if n > 0 {
		w := l.sorted[:n]
		copy(w, l.samples[:n])
		slices.Sort(w)
		s.P50 = w[n/2]
		s.P99 = w[min(n-1, n*99/100)]
		s.P999 = w[min(n-1, n*999/1000)]
	}
	return s
}
