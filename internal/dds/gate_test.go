package dds

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// runGateReader is the helper of TestGateReaders: a transient-local reader
// of rt/gate that prints "got <last byte>" for every sample, until stdin
// closes.
func runGateReader(domain uint32) error {
	p, err := NewParticipant(domain, loopbackConfig, nil)
	if err != nil {
		return err
	}
	defer p.Close()
	t, err := p.Topic("rt/gate", "test::Gate_")
	if err != nil {
		return err
	}
	if _, err := p.NewReader(t, latchedQoS, func(batch []Sample) {
		for _, s := range batch {
			fmt.Printf("got %d\n", s.Data[4]^28) // payload(n, seed)[4] == 28^seed
		}
	}); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// With the reader gate armed, the discovery handler sees a new remote
// reader before Cyclone matches it with our writer: a sample written by
// the handler replaces the transient-local history before the reader is
// sent it, so the reader never gets the old sample. Each of several
// readers (a process each) gets only the sample written for it.
func TestGateReaders(t *testing.T) {
	domain := testenv.Domain(t)
	p := newTestParticipant(t, domain)
	tp, err := p.Topic("rt/gate", "test::Gate_")
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.NewWriter(tp, latchedQoS)
	if err != nil {
		t.Fatal(err)
	}
	var next atomic.Int32 // the byte the handler writes for the next reader
	next.Store(1)
	var matchedEarly atomic.Int32
	if err := p.WatchDiscovery(func(ev DiscoveryEvent) {
		if ev.Kind != KindReader || ev.Local || !ev.Alive || ev.TopicName != "rt/gate" {
			return
		}
		if m, err := w.MatchedReaders(); err == nil {
			for _, r := range m {
				if r.Key == ev.Key {
					matchedEarly.Add(1)
				}
			}
		}
		// A loaded machine: the receive goroutine comes late. Without the
		// gate Cyclone has sent the reader the old sample by then.
		time.Sleep(20 * time.Millisecond)
		if err := w.Write(payload(100, byte(next.Load()))); err != nil {
			t.Error(err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := p.GateReaders("rt/gate", true); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(payload(100, 0)); err != nil { // the old sample
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		next.Store(int32(i))
		first := firstLine(t, "gatereader:"+fmt.Sprint(domain))
		if want := fmt.Sprintf("got %d", i); first != want {
			t.Errorf("reader %d: first sample %q, want %q (the one written when it was discovered)", i, first, want)
		}
	}
	if n := matchedEarly.Load(); n != 0 {
		t.Errorf("%d readers were matched before the handler saw them", n)
	}
	if n := p.GateTimeouts(); n != 0 {
		t.Errorf("%d gated announcements timed out", n)
	}
	if err := p.GateReaders("rt/gate", false); err != nil {
		t.Fatal(err)
	}
}

// firstLine starts the test binary in role and returns its first output
// line (the helper runs until the test ends).
func firstLine(t *testing.T, role string) string {
	t.Helper()
	out := startRole(t, role)
	line := make(chan string, 1)
	go func() {
		l, _ := out.ReadString('\n')
		line <- strings.TrimSpace(l)
	}()
	select {
	case l := <-line:
		return l
	case <-time.After(30 * time.Second):
		t.Fatalf("helper %s printed nothing within 30 s", role)
		return ""
	}
}
