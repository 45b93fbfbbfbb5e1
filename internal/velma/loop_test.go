package velma

import (
	"context"
	"errors"
	"testing"
	"time"
)

// fakeClock advances only when the loop sleeps or a step takes time.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	if t.After(c.now) {
		c.now = t
	}
	return ctx.Err()
}

func TestLoop_Run_MeasuresPeriodAndOverruns(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1000, 0)}
	l, err := NewLoop(2*time.Millisecond, clk, 100)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = l.Run(context.Background(), func(time.Time) bool {
		n++
		d := 500 * time.Microsecond
		if n == 10 || n == 20 {
			d = 5 * time.Millisecond // overrun: the step takes 2.5 periods
		}
		clk.now = clk.now.Add(d)
		return n < 50
	})
	if err != nil {
		t.Fatal(err)
	}
	s := l.Stats()
	if s.Iterations != 50 || s.Overruns != 2 {
		t.Fatalf("stats %v, want 50 iterations, 2 overruns", s)
	}
	if s.P50 != 2*time.Millisecond || s.Max != 5*time.Millisecond || s.MaxStep != 5*time.Millisecond {
		t.Fatalf("stats %v, want p50 2ms, max 5ms", s)
	}
}

func TestLoop_Run_CancelReturnsContextError(t *testing.T) {
	clk := &fakeClock{now: time.Unix(0, 0)}
	l, _ := NewLoop(time.Millisecond, clk, 10)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := l.Run(ctx, func(time.Time) bool {
		if n++; n == 3 {
			cancel()
		}
		return true
	})
	if !errors.Is(err, context.Canceled) || n != 3 {
		t.Fatalf("Run = %v after %d steps", err, n)
	}
}

func TestNewLoop_BadArguments(t *testing.T) {
	if _, err := NewLoop(0, nil, 10); err == nil {
		t.Fatal("period 0 accepted")
	}
	if _, err := NewLoop(time.Millisecond, nil, 0); err == nil {
		t.Fatal("window 0 accepted")
	}
}
