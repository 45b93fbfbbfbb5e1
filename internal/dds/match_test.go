package dds

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// WatchMatches is called once a match with another process's endpoint is
// in place (the matched lists show it when the handler runs) and when a
// match is lost.
func TestWatchMatches(t *testing.T) {
	domain := testenv.Domain(t)
	p := newTestParticipant(t, domain)
	tping, err := p.Topic("rt/ping", "test::Ping_")
	if err != nil {
		t.Fatal(err)
	}
	tpong, err := p.Topic("rt/pong", "test::Pong_")
	if err != nil {
		t.Fatal(err)
	}
	q := QoS{Reliability: Reliable, History: KeepAll}
	w, err := p.NewWriter(tping, q)
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.NewReader(tpong, q, func([]Sample) {})
	if err != nil {
		t.Fatal(err)
	}

	// What the handler saw, call by call: matched readers of w, matched
	// writers of r.
	type seen struct{ readers, writers int }
	var mu sync.Mutex
	var calls []seen
	if err := p.WatchMatches(nil); err == nil {
		t.Error("WatchMatches(nil) accepted")
	}
	if err := p.WatchMatches(func() {
		mr, _ := w.MatchedReaders()
		mw, _ := r.MatchedWriters()
		mu.Lock()
		calls = append(calls, seen{len(mr), len(mw)})
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if err := p.WatchMatches(func() {}); err == nil {
		t.Error("second WatchMatches accepted")
	}
	saw := func(want seen) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, c := range calls {
				if c == want {
					return true
				}
			}
			return false
		}
	}

	startChild(t, domain) // reads rt/ping, writes rt/pong
	testenv.WaitFor(t, 20*time.Second, "a call seeing both matches with the child", saw(seen{1, 1}))

	// A second reader of rt/ping (another participant) comes and goes.
	b := newTestParticipant(t, domain)
	tb, err := b.Topic("rt/ping", "test::Ping_")
	if err != nil {
		t.Fatal(err)
	}
	rb, err := b.NewReader(tb, q, func([]Sample) {})
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 20*time.Second, "a call seeing the second reader", saw(seen{2, 1}))
	mu.Lock()
	calls = nil
	mu.Unlock()
	if err := rb.Close(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 20*time.Second, "a call after the second reader left", saw(seen{1, 1}))

	c, err := NewParticipant(domain, loopbackConfig, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.WatchMatches(func() {}); !errors.Is(err, ErrClosed) {
		t.Errorf("WatchMatches after Close = %v, want ErrClosed", err)
	}
}
