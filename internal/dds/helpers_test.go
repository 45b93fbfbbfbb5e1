package dds

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// loopbackConfig keeps test traffic on 127.0.0.1 with unicast discovery
// only, so tests never hear other processes' domains.
const loopbackConfig = `<CycloneDDS><Domain id="any"><General>` +
	`<Interfaces><NetworkInterface name="lo" multicast="false"/></Interfaces>` +
	`<AllowMulticast>false</AllowMulticast></General>` +
	`<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>20</MaxAutoParticipantIndex>` +
	`<Peers><Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>`

// newTestParticipant creates a participant on the loopback config and
// closes it at the end of the test.
func newTestParticipant(t testing.TB, domain uint32) *Participant {
	t.Helper()
	p, err := NewParticipant(domain, loopbackConfig, []byte("enclave=/;"))
	if err != nil {
		t.Fatalf("NewParticipant(%d): %v", domain, err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

// collector gathers copies of received payloads.
type collector struct {
	mu   sync.Mutex
	got  [][]byte
	info []Sample
	cond *sync.Cond
}

func newCollector() *collector {
	c := &collector{}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func (c *collector) handle(batch []Sample) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range batch {
		c.got = append(c.got, append([]byte(nil), s.Data...))
		c.info = append(c.info, Sample{SourceTimestamp: s.SourceTimestamp, PublicationHandle: s.PublicationHandle})
	}
	c.cond.Broadcast()
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got)
}

// has reports whether a received sample equals want, allowing for the
// up to 3 padding bytes Cyclone may add.
func (c *collector) has(want []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.got {
		if len(g) >= len(want) && len(g) <= (len(want)+3)&^3 && bytes.Equal(g[:len(want)], want) {
			return true
		}
	}
	return false
}

func (c *collector) get(i int) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.got[i]
}

// payload returns a CDR-looking sample of n bytes (n >= 4) with a
// recognisable pattern.
func payload(n int, seed byte) []byte {
	b := make([]byte, n)
	b[0], b[1] = 0x00, 0x01
	for i := 4; i < n; i++ {
		b[i] = byte(i*7) ^ seed
	}
	return b
}

func topicName(t testing.TB) string { return fmt.Sprintf("rt/test_%s", t.Name()) }

// newMatchedWriter creates a writer on t with q and waits until it has
// matched one reader.
func newMatchedWriter(tb testing.TB, p *Participant, t *Topic, q QoS) *Writer {
	tb.Helper()
	w, err := p.NewWriter(t, q)
	if err != nil {
		tb.Fatal(err)
	}
	testenv.WaitFor(tb, 10*time.Second, "match", func() bool {
		m, err := w.MatchedReaders()
		return err == nil && len(m) == 1
	})
	return w
}
