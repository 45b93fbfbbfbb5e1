package dds

import (
	"bytes"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// TestBuffersAndLentSamples writes small and large samples, the large
// ones through every path of a lent Buffer (serialized in place, outgrown
// and copied, freed unwritten) and through Write. The reader gets every
// large sample lent in place (FSM_LEND_MIN and up), each in a batch of its
// own, and the small ones copied: all arrive, in order, byte for byte.
func TestBuffersAndLentSamples(t *testing.T) {
	domain := testenv.Domain(t)
	pw := newTestParticipant(t, domain)
	pr := newTestParticipant(t, domain)
	tw, err := pw.Topic("rt/lend", "test::Lend_")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := pr.Topic("rt/lend", "test::Lend_")
	if err != nil {
		t.Fatal(err)
	}
	q := QoS{Reliability: Reliable, History: KeepAll}
	c := newCollector()
	if _, err := pr.NewReader(tr, q, func(batch []Sample) {
		for _, s := range batch {
			if len(s.Data) >= lendMin && len(batch) != 1 {
				t.Errorf("a sample of %d bytes came in a batch of %d", len(s.Data), len(batch))
			}
		}
		c.handle(batch)
	}); err != nil {
		t.Fatal(err)
	}
	w, err := pw.NewWriter(tw, q)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the reader to match", func() bool {
		m, _ := w.MatchedReaders()
		return len(m) == 1
	})

	if _, err := w.NewBuffer(3); err == nil {
		t.Error("NewBuffer(3): no error")
	}
	unused, err := w.NewBuffer(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	w.FreeBuffer(unused)

	want := [][]byte{
		payload(100, 1),
		payload(200<<10, 2),   // in place
		payload(101, 3),       // small, in place
		payload(100<<10, 4),   // outgrows its 70 KiB buffer: copied
		payload(1<<20+3, 5),   // Write; not a multiple of 4
		payload(lendMin-1, 6), // just below lending
		payload(lendMin, 7),
		payload(102, 8),
	}
	bufCap := []int{0, 200 << 10, 128, 70 << 10, 0, 0, lendMin + 4, 0}
	for i, p := range want {
		if bufCap[i] == 0 {
			if err := w.Write(p); err != nil {
				t.Fatalf("Write %d: %v", i, err)
			}
			continue
		}
		b, err := w.NewBuffer(bufCap[i])
		if err != nil {
			t.Fatal(err)
		}
		data := append(b.Data, p...)
		if err := w.WriteBuffer(b, data); err != nil {
			t.Fatalf("WriteBuffer %d: %v", i, err)
		}
	}
	// A header a peer would reject is refused, and the buffer is consumed.
	b, err := w.NewBuffer(lendMin)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteBuffer(b, append(b.Data, 9, 9, 9, 9)); err == nil {
		t.Error("WriteBuffer of a bad header: no error")
	}

	testenv.WaitFor(t, 20*time.Second, "every sample", func() bool { return c.count() >= len(want) })
	if n := c.count(); n != len(want) {
		t.Fatalf("got %d samples, want %d", n, len(want))
	}
	for i, p := range want {
		g := c.get(i)
		if len(g) < len(p) || len(g) > (len(p)+3)&^3 || !bytes.Equal(g[:len(p)], p) {
			t.Errorf("sample %d: got %d bytes, want %d (or up to 3 of padding more)", i, len(g), len(p))
		}
	}
}
