package dds

import (
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// blockedReader is a reader whose handler blocks on its first batch until
// release is closed, recording the sequence numbers (bytes 4..8) of every
// sample it gets.
type blockedReader struct {
	r       *Reader
	entered chan struct{}
	release chan struct{}

	mu   sync.Mutex
	seqs []uint32
}

func newBlockedReader(t *testing.T, p *Participant, tp *Topic, q QoS) *blockedReader {
	t.Helper()
	b := &blockedReader{entered: make(chan struct{}), release: make(chan struct{})}
	first := true
	r, err := p.NewReader(tp, q, func(batch []Sample) {
		b.mu.Lock()
		for _, s := range batch {
			b.seqs = append(b.seqs, binary.LittleEndian.Uint32(s.Data[4:]))
		}
		b.mu.Unlock()
		if first {
			first = false
			close(b.entered)
			<-b.release
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	b.r = r
	return b
}

func (b *blockedReader) received() []uint32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]uint32(nil), b.seqs...)
}

// seqSample returns a sample of n bytes (n >= 8) carrying seq.
func seqSample(n int, seq uint32) []byte {
	s := make([]byte, n)
	s[1] = 0x01
	binary.LittleEndian.PutUint32(s[4:], seq)
	return s
}

// fillWhileBlocked writes sample 1, waits until the handler blocks on it,
// writes samples 2..total (delivered locally, i.e. synchronously, into
// the reader's queue), then releases the handler and waits until the
// newest sample arrived.
func fillWhileBlocked(t *testing.T, b *blockedReader, w *Writer, size int, total uint32) []uint32 {
	t.Helper()
	if err := w.Write(seqSample(size, 1)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("handler not called")
	}
	for seq := uint32(2); seq <= total; seq++ {
		if err := w.Write(seqSample(size, seq)); err != nil {
			t.Fatal(err)
		}
	}
	close(b.release)
	testenv.WaitFor(t, 10*time.Second, "newest sample", func() bool {
		got := b.received()
		return len(got) > 0 && got[len(got)-1] == total
	})
	return b.received()
}

// checkNewest checks that got is sample 1 followed by a run of consecutive
// sequence numbers ending at total, of length between lo and hi, and
// that the reader counted every missing sample as dropped.
func checkNewest(t *testing.T, b *blockedReader, got []uint32, total uint32, lo, hi int) {
	t.Helper()
	if len(got) < 1 || got[0] != 1 {
		t.Fatalf("first sample: got %v", got)
	}
	rest := got[1:]
	if len(rest) < lo || len(rest) > hi {
		t.Fatalf("kept %d samples after the first, want %d..%d", len(rest), lo, hi)
	}
	for i, s := range rest {
		if want := total - uint32(len(rest)-1-i); s != want {
			t.Fatalf("sample %d after the first: seq %d, want %d (not the newest, or out of order)", i, s, want)
		}
	}
	if d, want := b.r.Dropped(), uint64(total)-uint64(len(got)); d != want {
		t.Errorf("Dropped() = %d, want %d", d, want)
	}
}

func TestQueue_KeepLastBoundDropsOldest(t *testing.T) {
	p := newTestParticipant(t, testenv.Domain(t))
	tp, err := p.Topic(topicName(t), "test::Seq_")
	if err != nil {
		t.Fatal(err)
	}
	const depth = 2
	q := QoS{History: KeepLast, Depth: depth}
	b := newBlockedReader(t, p, tp, q)
	w, err := p.NewWriter(tp, QoS{History: KeepAll})
	if err != nil {
		t.Fatal(err)
	}
	const total = 3 * depth * queueFactor
	got := fillWhileBlocked(t, b, w, 16, total)
	checkNewest(t, b, got, total, depth*queueFactor, depth*queueFactor)
	before := b.r.Dropped()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if after := b.r.Dropped(); after != before {
		t.Errorf("Dropped() after participant Close = %d, want %d", after, before)
	}
}

func TestQueue_KeepLastByteBound(t *testing.T) {
	p := newTestParticipant(t, testenv.Domain(t))
	tp, err := p.Topic(topicName(t), "test::Seq_")
	if err != nil {
		t.Fatal(err)
	}
	const depth = 3
	b := newBlockedReader(t, p, tp, QoS{History: KeepLast, Depth: depth})
	w, err := p.NewWriter(tp, QoS{History: KeepAll})
	if err != nil {
		t.Fatal(err)
	}
	// 1 MiB samples: the byte bound (queueBytes beyond depth) keeps far
	// fewer than depth*queueFactor, but never fewer than depth.
	const size = 1 << 20
	got := fillWhileBlocked(t, b, w, size, 20)
	checkNewest(t, b, got, 20, depth, queueBytes/size)
}

func TestQueue_KeepAllKeepsEverything(t *testing.T) {
	p := newTestParticipant(t, testenv.Domain(t))
	tp, err := p.Topic(topicName(t), "test::Seq_")
	if err != nil {
		t.Fatal(err)
	}
	b := newBlockedReader(t, p, tp, QoS{History: KeepAll})
	w, err := p.NewWriter(tp, QoS{History: KeepAll})
	if err != nil {
		t.Fatal(err)
	}
	const total = 3000
	got := fillWhileBlocked(t, b, w, 16, total)
	checkNewest(t, b, got, total, total-1, total-1)
}

// TestQueue_CloseWithQueuedSamples closes readers and participants while
// samples wait in their queues (the queues are freed with the samples in
// them; -race and valgrind check the rest).
func TestQueue_CloseWithQueuedSamples(t *testing.T) {
	domain := testenv.Domain(t)
	for i := 0; i < 3; i++ {
		p, err := NewParticipant(domain, loopbackConfig, nil)
		if err != nil {
			t.Fatal(err)
		}
		tp, _ := p.Topic(topicName(t), "test::Seq_")
		b1 := newBlockedReader(t, p, tp, QoS{History: KeepAll})
		b2 := newBlockedReader(t, p, tp, QoS{History: KeepLast, Depth: 5})
		w, _ := p.NewWriter(tp, QoS{History: KeepAll})
		if err := w.Write(seqSample(64, 1)); err != nil {
			t.Fatal(err)
		}
		select { // b1 or b2 runs first; the other one waits behind it
		case <-b1.entered:
		case <-b2.entered:
		}
		for seq := uint32(2); seq < 200; seq++ {
			if err := w.Write(seqSample(64, seq)); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan error, 1)
		go func() { done <- b2.r.Close() }()
		time.Sleep(10 * time.Millisecond) // let Close wait for the handler
		close(b1.release)
		close(b2.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			// Close the participant with samples still queued.
			for seq := uint32(200); seq < 400; seq++ {
				_ = w.Write(seqSample(64, seq))
			}
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := b1.r.MatchedWriters(); err != ErrClosed {
			t.Fatalf("reader after participant Close: %v, want ErrClosed", err)
		}
	}
}

// A reader with MaxSampleSize gets a size-only marker (Oversize set, no
// Data) in place of each larger sample, in order, and counts it; samples
// up to the limit arrive as usual.
func TestQueue_OversizedSamplesBecomeMarkers(t *testing.T) {
	p := newTestParticipant(t, testenv.Domain(t))
	tp, err := p.Topic(topicName(t), "test::Seq_")
	if err != nil {
		t.Fatal(err)
	}
	const limit = 1000
	type got struct {
		seq      uint32
		n        int
		oversize uint32
	}
	var mu sync.Mutex
	var rec []got
	r, err := p.NewReader(tp, QoS{History: KeepAll, MaxSampleSize: limit}, func(batch []Sample) {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range batch {
			g := got{n: len(s.Data), oversize: s.Oversize}
			if s.Data != nil {
				g.seq = binary.LittleEndian.Uint32(s.Data[4:])
			}
			rec = append(rec, g)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.NewWriter(tp, QoS{History: KeepAll})
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{100, 8 << 20, limit, limit + 4, 64}
	for i, n := range sizes {
		if err := w.Write(seqSample(n, uint32(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	testenv.WaitFor(t, 10*time.Second, "all five samples or markers", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(rec) == len(sizes)
	})
	want := []got{{1, 100, 0}, {0, 0, 8 << 20}, {3, limit, 0}, {0, 0, limit + 4}, {5, 64, 0}}
	for i := range want {
		if rec[i] != want[i] {
			t.Errorf("sample %d: got %+v, want %+v", i, rec[i], want[i])
		}
	}
	if r.Oversized() != 2 || r.Dropped() != 0 {
		t.Errorf("Oversized %d, Dropped %d; want 2, 0", r.Oversized(), r.Dropped())
	}
}
