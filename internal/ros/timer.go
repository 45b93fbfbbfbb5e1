package ros

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
)

// Timer calls a function periodically on the node's callback goroutine.
// Ticks are scheduled at start + k·period (wall clock); when the node is
// busy, missed ticks are skipped rather than queued, so at most one call is
// pending at a time.
type Timer struct {
	n      *Node
	period time.Duration
	cb     func()

	mu      sync.Mutex
	t       *time.Timer
	next    time.Time
	pending bool
	stopped bool
}

// NewTimer creates a timer that calls cb every period (> 0) on the node's
// callback goroutine, the first time one period from now.
func (n *Node) NewTimer(period time.Duration, cb func()) (*Timer, error) {
	if period <= 0 {
		return nil, fmt.Errorf("ros: NewTimer: period %v must be positive", period)
	}
	if cb == nil {
		return nil, errors.New("ros: NewTimer: nil callback")
	}
	t := &Timer{n: n, period: period, cb: cb}
	t.mu.Lock()
	t.next = time.Now().Add(period)
	t.t = time.AfterFunc(period, t.fire)
	t.mu.Unlock()
	if err := n.addEntity(t); err != nil {
		return nil, err
	}
	return t, nil
}

// fire runs on the Go timer goroutine: post a call unless one is pending,
// and arm the next tick.
func (t *Timer) fire() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	if !t.pending {
		if t.n.Post(t.run) == nil {
			t.pending = true
		}
	}
	now := time.Now()
	t.next = t.next.Add(t.period)
	if t.next.Before(now) {
		// Skip missed ticks, keep the phase.
		missed := now.Sub(t.next)/t.period + 1
		t.next = t.next.Add(missed * t.period)
	}
	t.t.Reset(t.next.Sub(now))
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

// Reset restarts the timer: the next call is one period from now.
func (t *Timer) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	t.next = time.Now().Add(t.period)
	t.t.Reset(t.period)
}

func (t *Timer) gids() (readers, writers []dds.GUID) { return nil, nil }

func (t *Timer) close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	t.t.Stop()
	return nil
}

// Close stops the timer; no call starts after Close returns (unless Close
// is called while that call is already running).
func (t *Timer) Close() error {
	err := t.close()
	t.n.removeEntity(t)
	return err
}
