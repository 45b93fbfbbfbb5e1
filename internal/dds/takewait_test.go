package dds

import (
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/goid"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// takeWaitPair is a reader on b whose handler records the goroutine it ran
// on, and a matched reliable writer on a.
type takeWaitPair struct {
	r    *Reader
	w    *Writer
	c    *collector
	gids chan uint64
}

func newTakeWaitPair(t *testing.T) *takeWaitPair {
	t.Helper()
	domain := testenv.Domain(t)
	a := newTestParticipant(t, domain)
	b := newTestParticipant(t, domain)
	ta, err := a.Topic(topicName(t), "std_msgs::msg::dds_::String_")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := b.Topic(topicName(t), "std_msgs::msg::dds_::String_")
	if err != nil {
		t.Fatal(err)
	}
	q := QoS{Reliability: Reliable, History: KeepAll}
	tw := &takeWaitPair{c: newCollector(), gids: make(chan uint64, 100)}
	if tw.r, err = b.NewReader(tb, q, func(batch []Sample) {
		tw.c.handle(batch)
		tw.gids <- goid.Current()
	}); err != nil {
		t.Fatal(err)
	}
	tw.w = newMatchedWriter(t, a, ta, q)
	return tw
}

// TestTakeWait: a sample written while a goroutine waits in TakeWait is
// handed to the handler on that goroutine, not the receive goroutine; a
// wait with nothing coming returns 0 after its time; samples that come
// while nobody waits go to the receive goroutine; samples larger than the
// wait's buffer and lent ones come through it too.
func TestTakeWait(t *testing.T) {
	tw := newTakeWaitPair(t)
	r := tw.r

	start := time.Now()
	if k := r.TakeWait(20 * time.Millisecond); k != 0 {
		t.Fatalf("TakeWait with nothing written = %d, want 0", k)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("TakeWait(20ms) with nothing written returned after %v", d)
	}

	for i, n := range []int{16, directRecvBuf + 100, lendMin} {
		got := make(chan int, 1)
		me := make(chan uint64, 1)
		go func() {
			me <- goid.Current()
			k := 0
			for deadline := time.Now().Add(20 * time.Second); k == 0 && time.Now().Before(deadline); {
				k = r.TakeWait(time.Second)
			}
			got <- k
		}()
		waiter := <-me
		time.Sleep(50 * time.Millisecond) // the goroutine waits in C
		if err := tw.w.Write(payload(n, byte(i))); err != nil {
			t.Fatal(err)
		}
		if k := <-got; k != 1 {
			t.Fatalf("%d bytes: TakeWait handed over %d samples, want 1", n, k)
		}
		if g := <-tw.gids; g != waiter {
			t.Errorf("%d bytes: the handler ran on goroutine %d, not on the one in TakeWait (%d)", n, g, waiter)
		}
		if !tw.c.has(payload(n, byte(i))) {
			t.Errorf("%d bytes: the sample handed over differs from the one written", n)
		}
	}

	// Nobody waits: the receive goroutine delivers.
	if err := tw.w.Write(payload(32, 9)); err != nil {
		t.Fatal(err)
	}
	select {
	case g := <-tw.gids:
		if g != r.p.ReceiveGoroutine() {
			t.Errorf("with no TakeWait the handler ran on goroutine %d, not the receive goroutine %d", g, r.p.ReceiveGoroutine())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a sample written with no TakeWait was not delivered")
	}
}

// TestWakeTakeWait: WakeTakeWait ends a wait in progress, or, called before
// one, the next; a second TakeWait at the same time returns 0 at once; Close
// waits for a TakeWait in progress, and TakeWait on a closed reader returns
// 0.
func TestWakeTakeWait(t *testing.T) {
	tw := newTakeWaitPair(t)
	r := tw.r

	done := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		r.TakeWait(30 * time.Second)
		done <- time.Since(start)
	}()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	if k := r.TakeWait(10 * time.Second); k != 0 || time.Since(start) > time.Second {
		t.Errorf("a second TakeWait beside one in progress = %d after %v, want 0 at once", k, time.Since(start))
	}
	r.WakeTakeWait()
	select {
	case d := <-done:
		if d > 10*time.Second {
			t.Errorf("WakeTakeWait ended a 30 s wait only after %v", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("WakeTakeWait did not end the wait in progress")
	}

	r.WakeTakeWait() // nobody waits: the next wait ends at once
	start = time.Now()
	if k := r.TakeWait(10 * time.Second); k != 0 || time.Since(start) > time.Second {
		t.Errorf("TakeWait after WakeTakeWait = %d after %v, want 0 at once", k, time.Since(start))
	}

	go func() { done <- 0; r.TakeWait(300 * time.Millisecond) }()
	<-done
	time.Sleep(20 * time.Millisecond)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if k := r.TakeWait(time.Second); k != 0 {
		t.Errorf("TakeWait on a closed reader = %d", k)
	}
	r.WakeTakeWait() // no queue any more: nothing happens
}
