package dds

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// TestIdleReceiveGoroutineParksInGo: with nothing to deliver for longer
// than FSM_HUB_SPIN_NS, the receive goroutine waits in Go's network
// poller ([IO wait]), not in a C call ([syscall]) that would keep its P
// and, once sysmon took the P back, set sysmon polling (hub.c); a sample
// written then still wakes it, and so does Close (the cleanup).
func TestIdleReceiveGoroutineParksInGo(t *testing.T) {
	domain := testenv.Domain(t)
	p := newTestParticipant(t, domain)
	tp, err := p.Topic("rt/hubwait", "std_msgs::msg::dds_::String_")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan byte, 256)
	q := QoS{Reliability: Reliable, History: KeepAll}
	if _, err := p.NewReader(tp, q, func(batch []Sample) {
		for _, s := range batch {
			got <- s.Data[4] ^ byte(4*7) // the seed (see payload)
		}
	}); err != nil {
		t.Fatal(err)
	}
	w := newMatchedWriter(t, p, tp, q)
	recv := func(want byte) {
		t.Helper()
		select {
		case b := <-got:
			if b != want {
				t.Fatalf("got sample %d, want %d", b, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("sample %d not delivered", want)
		}
	}
	// A burst first, so that the hub is hot and waits in C in between.
	for i := byte(0); i < 50; i++ {
		if err := w.Write(payload(8, i)); err != nil {
			t.Fatal(err)
		}
		recv(i)
	}
	// Idle for much longer than the spin: parked. Retry for a loaded
	// machine, where the goroutine may not have run since its spin ended.
	state := ""
	for i := 0; i < 50; i++ {
		time.Sleep(20 * time.Millisecond)
		if state = receiveGoroutineState(t); state == "IO wait" {
			break
		}
	}
	if state != "IO wait" {
		t.Errorf("idle receive goroutine is in state %q, want \"IO wait\" (parked in the network poller)", state)
	}
	if err := w.Write(payload(8, 99)); err != nil {
		t.Fatal(err)
	}
	recv(99)
}

// receiveGoroutineState returns the scheduler state of the goroutine
// running Participant.run, as a goroutine dump gives it ("IO wait",
// "syscall", "runnable", ...), or "" if there is none.
func receiveGoroutineState(t *testing.T) string {
	t.Helper()
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if !bytes.Contains(g, []byte("internal/dds.(*Participant).run(")) {
			continue
		}
		head, _, _ := strings.Cut(string(g), "\n")
		// goroutine 42 [IO wait, 2 minutes]:
		_, st, ok := strings.Cut(head, "[")
		if !ok {
			return ""
		}
		st, _, _ = strings.Cut(st, "]")
		st, _, _ = strings.Cut(st, ",")
		return st
	}
	return ""
}
