package ros

import (
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
