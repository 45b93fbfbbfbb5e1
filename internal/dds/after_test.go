package dds

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/goid"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// TestRunAfterDelivery: a handler's function runs once the handler has
// returned, on the receive goroutine; a second request in one delivery and
// one from outside a handler are refused; a function that blocks is handed
// off, so later samples are still delivered, and the participant closes
// while it still blocks.
func TestRunAfterDelivery(t *testing.T) {
	domain := testenv.Domain(t)
	threads := watchThreads(t)
	p := newTestParticipant(t, domain)
	tp, err := p.Topic("rt/after", "std_msgs::msg::dds_::String_")
	if err != nil {
		t.Fatal(err)
	}
	if p.RunAfterDelivery(func() {}) {
		t.Error("RunAfterDelivery outside a handler accepted")
	}
	if n := watchThreads(t); n != threads {
		t.Errorf("%d watchdog threads before any after function, want %d: the watchdog starts on the first RunAfterDelivery", n, threads)
	}
	type event struct {
		sample      byte
		inHandler   bool
		receiveGoro bool
	}
	events := make(chan event, 64)
	release := make(chan struct{})
	var handlerRunning atomic.Bool
	var secondRefused atomic.Bool
	q := QoS{Reliability: Reliable, History: KeepAll}
	_, err = p.NewReader(tp, q, func(batch []Sample) {
		handlerRunning.Store(true)
		defer handlerRunning.Store(false)
		for _, s := range batch {
			b := s.Data[4] ^ byte(4*7) // the seed (see payload)
			ok := p.RunAfterDelivery(func() {
				events <- event{sample: b, inHandler: handlerRunning.Load(), receiveGoro: goid.Current() == p.ReceiveGoroutine()}
				if b == 1 {
					<-release // stalls: receiving must go on without it
				}
			})
			if !ok {
				secondRefused.Store(true)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	w := newMatchedWriter(t, p, tp, q)
	next := func(what string) event {
		t.Helper()
		select {
		case e := <-events:
			return e
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no after function ran", what)
			return event{}
		}
	}
	if err := w.Write(payload(8, 0)); err != nil {
		t.Fatal(err)
	}
	if e := next("sample 0"); e.sample != 0 || e.inHandler || !e.receiveGoro {
		t.Errorf("sample 0: %+v, want it after the handler on the receive goroutine", e)
	}
	if n := watchThreads(t); n != threads+1 {
		t.Errorf("%d watchdog threads after the first after function, want %d", n, threads+1)
	}
	if err := w.Write(payload(8, 1)); err != nil {
		t.Fatal(err)
	}
	if e := next("sample 1"); e.sample != 1 {
		t.Fatalf("got %+v, want sample 1", e)
	}
	// Sample 1's function blocks; sample 2 must still arrive, on the
	// goroutine that took over.
	if err := w.Write(payload(8, 2)); err != nil {
		t.Fatal(err)
	}
	if e := next("sample 2 while sample 1 blocks"); e.sample != 2 || !e.receiveGoro {
		t.Errorf("sample 2: %+v, want it on the new receive goroutine", e)
	}
	// At least the blocked one: on a loaded machine a function that is
	// descheduled across a whole watchdog tick is handed off too.
	if n := p.HandOffs(); n < 1 {
		t.Errorf("HandOffs = %d, want at least 1", n)
	}
	close(release)
	// A batch of several samples asks twice in one delivery: only the
	// first is accepted. Samples written in one go may still arrive in
	// separate batches, so this only checks that a refusal is possible
	// when a batch has two.
	for i := 0; i < 50 && !secondRefused.Load(); i++ {
		for j := 0; j < 8; j++ {
			if err := w.Write(payload(8, 3)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !secondRefused.Load() {
		t.Error("no second RunAfterDelivery in one delivery was refused")
	}
}

// TestCloseWhileAfterFunctionBlocks: Close returns while a handed-off
// function still blocks, and the function may finish after it.
func TestCloseWhileAfterFunctionBlocks(t *testing.T) {
	domain := testenv.Domain(t)
	p, err := NewParticipant(domain, loopbackConfig, []byte("enclave=/;"))
	if err != nil {
		t.Fatal(err)
	}
	tp, err := p.Topic("rt/after_close", "std_msgs::msg::dds_::String_")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	release := make(chan struct{})
	finished := make(chan struct{})
	q := QoS{Reliability: Reliable, History: KeepAll}
	if _, err := p.NewReader(tp, q, func(batch []Sample) {
		p.RunAfterDelivery(func() {
			close(started)
			<-release
			close(finished)
		})
	}); err != nil {
		t.Fatal(err)
	}
	w := newMatchedWriter(t, p, tp, q)
	if err := w.Write(payload(8, 0)); err != nil {
		t.Fatal(err)
	}
	<-started
	testenv.WaitFor(t, 10*time.Second, "hand-off", func() bool { return p.HandOffs() >= 1 })
	closed := make(chan error)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for a handed-off function")
	}
	close(release)
	<-finished
}

// watchThreads counts the process's threads named fsm_watch (watch.c).
func watchThreads(t *testing.T) int {
	t.Helper()
	comms, err := filepath.Glob("/proc/self/task/*/comm")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range comms {
		if b, err := os.ReadFile(c); err == nil && strings.TrimSpace(string(b)) == "fsm_watch" {
			n++
		}
	}
	return n
}
