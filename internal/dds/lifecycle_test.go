package dds

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

func TestMalformedPayloadDeliveredAsBytes(t *testing.T) {
	domain := testenv.Domain(t)
	a := newTestParticipant(t, domain)
	b := newTestParticipant(t, domain)
	ta, _ := a.Topic("rt/junk", "std_msgs::msg::dds_::String_")
	tb, _ := b.Topic("rt/junk", "std_msgs::msg::dds_::String_")
	c := newCollector()
	if _, err := b.NewReader(tb, QoS{History: KeepAll}, c.handle); err != nil {
		t.Fatal(err)
	}
	w, _ := a.NewWriter(ta, QoS{History: KeepAll})
	testenv.WaitFor(t, 10*time.Second, "match", func() bool { m, _ := w.MatchedReaders(); return len(m) == 1 })
	// Not CDR at all: unknown encapsulation, a string length far beyond
	// the payload.
	junk := [][]byte{
		{0xde, 0xad, 0xbe, 0xef},
		{0x00, 0x01, 0x00, 0x00, 0xff, 0xff, 0xff, 0x7f, 'x'},
		bytes.Repeat([]byte{0xff}, 33),
	}
	for _, j := range junk {
		// Our Write refuses the bad headers (see
		// TestWriteRefusesBadEncapsulation); a foreign writer may not.
		if err := w.write(j); err != nil {
			t.Fatal(err)
		}
	}
	testenv.WaitFor(t, 10*time.Second, "junk", func() bool { return c.count() == len(junk) })
	for i, j := range junk {
		if got := c.get(i); !bytes.Equal(got[:len(j)], j) {
			t.Errorf("junk %d: got %x, want %x", i, got, j)
		}
	}
}

func TestDiscovery_LocalAndGone(t *testing.T) {
	domain := testenv.Domain(t)
	a := newTestParticipant(t, domain+0)
	b, err := NewParticipant(domain, loopbackConfig, []byte("enclave=/b;"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var mu sync.Mutex
	var evs []DiscoveryEvent
	if err := a.WatchDiscovery(func(ev DiscoveryEvent) {
		mu.Lock()
		evs = append(evs, ev)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if err := a.WatchDiscovery(func(DiscoveryEvent) {}); err == nil {
		t.Error("second WatchDiscovery accepted")
	}
	find := func(pred func(DiscoveryEvent) bool) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range evs {
			if pred(ev) {
				return true
			}
		}
		return false
	}
	ta, _ := a.Topic("rt/disc", "test::D_")
	la, _ := a.NewWriter(ta, QoS{})
	tb, _ := b.Topic("rt/disc", "test::D_")
	rb, _ := b.NewReader(tb, QoS{}, func([]Sample) {})
	rbGUID := rb.GUID()
	testenv.WaitFor(t, 10*time.Second, "local writer event", func() bool {
		return find(func(ev DiscoveryEvent) bool {
			return ev.Kind == KindWriter && ev.Local && ev.Alive && ev.Key == la.GUID() && ev.TopicName == "rt/disc"
		})
	})
	testenv.WaitFor(t, 10*time.Second, "other participant's reader", func() bool {
		return find(func(ev DiscoveryEvent) bool {
			return ev.Kind == KindReader && !ev.Local && ev.Alive && ev.Key == rbGUID && ev.ParticipantKey == b.GUID() && ev.TypeName == "test::D_"
		})
	})
	testenv.WaitFor(t, 10*time.Second, "own participant", func() bool {
		return find(func(ev DiscoveryEvent) bool {
			return ev.Kind == KindParticipant && ev.Local && ev.Key == a.GUID() && string(ev.UserData) == "enclave=/;"
		})
	})
	if err := rb.Close(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "reader gone", func() bool {
		return find(func(ev DiscoveryEvent) bool { return ev.Kind == KindReader && !ev.Alive && ev.Key == rbGUID })
	})
	bGUID := b.GUID()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "participant gone", func() bool {
		return find(func(ev DiscoveryEvent) bool { return ev.Kind == KindParticipant && !ev.Alive && ev.Key == bGUID })
	})
}

func TestCloseWhileReceiving(t *testing.T) {
	domain := testenv.Domain(t)
	a := newTestParticipant(t, domain)
	b, err := NewParticipant(domain, loopbackConfig, nil)
	if err != nil {
		t.Fatal(err)
	}
	ta, _ := a.Topic("rt/flood", "test::F_")
	tb, _ := b.Topic("rt/flood", "test::F_")
	var got atomic.Int64
	var afterClose atomic.Bool
	var closedReader atomic.Bool
	r, err := b.NewReader(tb, QoS{Reliability: BestEffort}, func(batch []Sample) {
		if closedReader.Load() {
			afterClose.Store(true)
		}
		got.Add(int64(len(batch)))
	})
	if err != nil {
		t.Fatal(err)
	}
	// A second reader closes itself from inside its handler.
	var selfClosed atomic.Int64
	var self *Reader
	var selfMu sync.Mutex
	selfMu.Lock()
	self, err = b.NewReader(tb, QoS{Reliability: BestEffort}, func(batch []Sample) {
		selfMu.Lock()
		defer selfMu.Unlock()
		if selfClosed.Add(1) == 1 {
			if err := self.Close(); err != nil {
				t.Errorf("Close from handler: %v", err)
			}
		}
	})
	selfMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	w, _ := a.NewWriter(ta, QoS{Reliability: BestEffort})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		p := payload(512, 0)
		for {
			select {
			case <-stop:
				return
			default:
				_ = w.Write(p)
			}
		}
	}()
	testenv.WaitFor(t, 10*time.Second, "flowing", func() bool { return got.Load() > 100 })
	if err := r.Close(); err != nil {
		t.Errorf("Reader.Close: %v", err)
	}
	closedReader.Store(true)
	time.Sleep(20 * time.Millisecond) // let more samples arrive; none may be delivered
	if afterClose.Load() {
		t.Error("handler ran after Reader.Close returned")
	}
	if n := selfClosed.Load(); n != 1 {
		t.Errorf("self-closing reader delivered %d batches, want 1", n)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Participant.Close while receiving: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := b.Topic("rt/x", "x"); err != ErrClosed {
		t.Errorf("Topic after Close = %v", err)
	}
	if _, err := r.MatchedWriters(); err != ErrClosed {
		t.Errorf("MatchedWriters after Close = %v", err)
	}
	close(stop)
	<-done
}

func TestCloseFromHandler(t *testing.T) {
	domain := testenv.Domain(t)
	a := newTestParticipant(t, domain)
	b, err := NewParticipant(domain, loopbackConfig, nil)
	if err != nil {
		t.Fatal(err)
	}
	ta, _ := a.Topic("rt/closer", "test::X_")
	tb, _ := b.Topic("rt/closer", "test::X_")
	closed := make(chan error, 1)
	if _, err := b.NewReader(tb, QoS{}, func([]Sample) {
		select {
		case closed <- b.Close():
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	w, _ := a.NewWriter(ta, QoS{})
	testenv.WaitFor(t, 10*time.Second, "match", func() bool { m, _ := w.MatchedReaders(); return len(m) == 1 })
	if err := w.Write(payload(8, 0)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close from handler: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("handler did not run")
	}
	<-b.done // the receive goroutine exits after the handler returns
}

func TestNoLeaksAcrossManyParticipants(t *testing.T) {
	domain := testenv.Domain(t)
	base := runtime.NumGoroutine()
	for i := 0; i < 20; i++ {
		p, err := NewParticipant(domain, loopbackConfig, []byte("enclave=/;"))
		if err != nil {
			t.Fatal(err)
		}
		tp, _ := p.Topic("rt/leak", "test::L_")
		w, _ := p.NewWriter(tp, QoS{Durability: TransientLocal, Depth: 3})
		_ = w.Write(payload(100, 1))
		if _, err := p.NewReader(tp, QoS{}, func([]Sample) {}); err != nil {
			t.Fatal(err)
		}
		if err := p.WatchDiscovery(func(DiscoveryEvent) {}); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			_ = w.Close()
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	domains.mu.Lock()
	n := len(domains.m)
	domains.mu.Unlock()
	if n != 0 {
		t.Errorf("%d domains left after closing every participant", n)
	}
	testenv.WaitFor(t, 5*time.Second, "goroutines to exit", func() bool { return runtime.NumGoroutine() <= base })
}

func TestConcurrentWriteAndClose(t *testing.T) {
	domain := testenv.Domain(t)
	a := newTestParticipant(t, domain)
	tp, _ := a.Topic("rt/conc", "test::C_")
	c := newCollector()
	if _, err := a.NewReader(tp, QoS{History: KeepAll}, c.handle); err != nil {
		t.Fatal(err)
	}
	w, _ := a.NewWriter(tp, QoS{History: KeepAll})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if err := w.Write(payload(64, byte(i))); err != nil {
					if err != ErrClosed {
						t.Errorf("Write: %v", err)
					}
					return
				}
			}
		}()
	}
	time.Sleep(time.Millisecond)
	if err := w.Close(); err != nil {
		t.Error(err)
	}
	wg.Wait()
	if err := a.Close(); err != nil {
		t.Error(err)
	}
}
