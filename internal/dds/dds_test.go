package dds

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

func TestPubSub_TwoParticipantsOneProcess(t *testing.T) {
	domain := testenv.Domain(t)
	a := newTestParticipant(t, domain)
	b := newTestParticipant(t, domain)
	ta, err := a.Topic("rt/chatter", "std_msgs::msg::dds_::String_")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := b.Topic("rt/chatter", "std_msgs::msg::dds_::String_")
	if err != nil {
		t.Fatal(err)
	}
	q := QoS{Reliability: Reliable, History: KeepAll}
	c := newCollector()
	r, err := b.NewReader(tb, q, c.handle)
	if err != nil {
		t.Fatal(err)
	}
	w := newMatchedWriter(t, a, ta, q)
	sizes := []int{10, 64 << 10, 1 << 20}
	for i, n := range sizes {
		if err := w.Write(payload(n, byte(i))); err != nil {
			t.Fatalf("Write(%d bytes): %v", n, err)
		}
	}
	testenv.WaitFor(t, 20*time.Second, "3 samples", func() bool { return c.count() >= len(sizes) })
	for i, n := range sizes {
		got := c.get(i)
		want := payload(n, byte(i))
		if len(got) < n || len(got) > (n+3)&^3 || !bytes.Equal(got[:n], want) {
			t.Errorf("sample %d: got %d bytes, want %d (equal prefix %v)", i, len(got), n, len(got) >= n && bytes.Equal(got[:n], want))
		}
		if c.info[i].PublicationHandle == 0 || c.info[i].SourceTimestamp == 0 {
			t.Errorf("sample %d: missing info %+v", i, c.info[i])
		}
	}
	// GUIDs: participant entity id 00 00 01 c1; endpoints share its prefix.
	if g := a.GUID(); g[12] != 0 || g[13] != 0 || g[14] != 1 || g[15] != 0xc1 {
		t.Errorf("participant GUID %v has no participant entity id", g)
	}
	if w.GUID().Prefix() != a.GUID().Prefix() || r.GUID().Prefix() != b.GUID().Prefix() || a.GUID() == b.GUID() {
		t.Errorf("GUID prefixes: writer %v of %v, reader %v of %v", w.GUID(), a.GUID(), r.GUID(), b.GUID())
	}
	// Keyless topic kind: RTPS entity kinds "writer no key" (0x03) and
	// "reader no key" (0x04), as rmw_cyclonedds' endpoints.
	if wk, rk := w.GUID()[15], r.GUID()[15]; wk != 0x03 || rk != 0x04 {
		t.Errorf("entity kinds writer %#x reader %#x, want 0x03 and 0x04 (no key)", wk, rk)
	}
	if w.Handle() == 0 || r.Handle() == 0 || w.Handle() == r.Handle() {
		t.Errorf("handles: writer %d reader %d", w.Handle(), r.Handle())
	}
	// The reader reports the writer's handle as the publication handle.
	mw, err := r.MatchedWriters()
	if err != nil || len(mw) != 1 || mw[0].Key != w.GUID() {
		t.Fatalf("MatchedWriters = %+v, %v", mw, err)
	}
	if c.info[0].PublicationHandle != mw[0].Handle {
		t.Errorf("publication handle %d, matched writer handle %d", c.info[0].PublicationHandle, mw[0].Handle)
	}
	if ep, ok, err := r.MatchedWriter(c.info[0].PublicationHandle); err != nil || !ok || ep.Key != w.GUID() {
		t.Errorf("MatchedWriter(publication handle) = %+v, %v, %v", ep, ok, err)
	}
	if _, ok, err := r.MatchedWriter(12345); err != nil || ok {
		t.Errorf("MatchedWriter(unknown) = %v, %v", ok, err)
	}
}

func TestPubSub_TwoProcesses(t *testing.T) {
	domain := testenv.Domain(t)
	p := newTestParticipant(t, domain)
	events := make(chan DiscoveryEvent, 256)
	if err := p.WatchDiscovery(func(ev DiscoveryEvent) { events <- ev }); err != nil {
		t.Fatal(err)
	}
	startChild(t, domain)
	tping, err := p.Topic("rt/ping", "test::Ping_")
	if err != nil {
		t.Fatal(err)
	}
	tpong, err := p.Topic("rt/pong", "test::Pong_")
	if err != nil {
		t.Fatal(err)
	}
	q := QoS{Reliability: Reliable, History: KeepAll}
	c := newCollector()
	r, err := p.NewReader(tpong, q, c.handle)
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.NewWriter(tping, q)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 20*time.Second, "both directions matched", func() bool {
		mr, err1 := w.MatchedReaders()
		mw, err2 := r.MatchedWriters()
		return err1 == nil && err2 == nil && len(mr) == 1 && len(mw) == 1
	})

	// Matched endpoints carry the peer's topic, type and user data.
	mr, _ := w.MatchedReaders()
	if got := mr[0]; got.TopicName != "rt/ping" || got.TypeName != "test::Ping_" || string(got.UserData) != "role=echo;" || got.ParticipantKey == p.GUID() || got.Handle == 0 {
		t.Errorf("matched reader = %+v", got)
	}
	mw, _ := r.MatchedWriters()
	if got := mw[0]; got.TopicName != "rt/pong" || string(got.UserData) != "role=echo;" || got.QoS.Reliability != Reliable || got.QoS.History != KeepAll {
		t.Errorf("matched writer = %+v", got)
	}

	// Matching is asymmetric: our side may know the child's endpoints
	// before the child knows ours, and volatile readers miss what was
	// written before they matched. Probe until an echo proves that both
	// directions are matched on both sides.
	probe := []byte{0, 1, 0, 0, 'p', 'r', 'o', 'b', 'e'}
	testenv.WaitFor(t, 20*time.Second, "a probe echo", func() bool {
		if err := w.Write(probe); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		return c.count() > 0
	})
	sizes := []int{10, 64 << 10, 1 << 20, 4, 7}
	for i, n := range sizes {
		if err := w.Write(payload(n, byte(i))); err != nil {
			t.Fatalf("Write(%d bytes): %v", n, err)
		}
	}
	// Echoes of probes may still be arriving: look the payloads up.
	for i, n := range sizes {
		want := payload(n, byte(i))
		testenv.WaitFor(t, 30*time.Second, fmt.Sprintf("echo of %d bytes", n), func() bool { return c.has(want) })
	}

	// Discovery saw the child's writer and reader with names, remote.
	var sawWriter, sawReader, sawParticipant bool
	timeout := time.After(10 * time.Second)
	for !(sawWriter && sawReader && sawParticipant) {
		select {
		case ev := <-events:
			switch {
			case ev.Kind == KindWriter && ev.Alive && !ev.Local && ev.TopicName == "rt/pong" && ev.TypeName == "test::Pong_":
				sawWriter = string(ev.UserData) == "role=echo;"
			case ev.Kind == KindReader && ev.Alive && !ev.Local && ev.TopicName == "rt/ping" && ev.TypeName == "test::Ping_":
				sawReader = true
			case ev.Kind == KindParticipant && ev.Alive && !ev.Local:
				sawParticipant = string(ev.UserData) == "enclave=/;"
			}
		case <-timeout:
			t.Fatalf("discovery: writer %v reader %v participant %v", sawWriter, sawReader, sawParticipant)
		}
	}
}

// Write accepts only the encapsulation headers a ROS 2 peer reads as
// rmw_cyclonedds_cpp writes them, so no sample of ours can make Cyclone
// receivers reject packets and print hex dumps.
func TestWriteRefusesBadEncapsulation(t *testing.T) {
	p := newTestParticipant(t, testenv.Domain(t))
	tp, err := p.Topic(topicName(t), "std_msgs::msg::dds_::String_")
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.NewWriter(tp, QoS{History: KeepAll})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte{3, 0, 0, 0, 'o', 'k', 0, 0}
	for _, c := range []struct {
		hdr []byte
		ok  bool
	}{
		{[]byte{0x00, 0x01, 0x00, 0x00}, true},  // CDR_LE, as rmw_cyclonedds_cpp
		{[]byte{0x00, 0x00, 0x00, 0x00}, true},  // CDR_BE
		{[]byte{0x00, 0x01, 0x00, 0x03}, true},  // padding count, as Cyclone's C serializer
		{[]byte{0x00, 0x02, 0x00, 0x00}, false}, // PL_CDR_BE
		{[]byte{0x00, 0x03, 0x00, 0x00}, false}, // PL_CDR_LE
		{[]byte{0x00, 0x07, 0x00, 0x00}, false}, // XCDR2 (D_CDR2_LE)
		{[]byte{0x00, 0x10, 0x00, 0x00}, false}, // unknown: hex dumps in every Cyclone receiver
		{[]byte{0x00, 0xff, 0x00, 0x00}, false},
		{[]byte{0x01, 0x01, 0x00, 0x00}, false},
		{[]byte{0xde, 0xad, 0xbe, 0xef}, false},
		{[]byte{0x00, 0x01, 0x12, 0x34}, false}, // options that are no padding count
		{[]byte{0x00, 0x01, 0x00, 0x04}, false},
		{[]byte{0x00, 0x01}, false}, // no header
	} {
		payload := c.hdr
		if len(c.hdr) == 4 {
			payload = append(append([]byte(nil), c.hdr...), body...)
		}
		err := w.Write(payload)
		if c.ok && err != nil {
			t.Errorf("header % x refused: %v", c.hdr, err)
		}
		if !c.ok && !errors.Is(err, ErrEncapsulation) {
			t.Errorf("header % x: Write = %v, want ErrEncapsulation", c.hdr, err)
		}
	}
	// A padding count beyond the body is no padding count.
	if err := w.Write([]byte{0x00, 0x01, 0x00, 0x02, 0x00}); !errors.Is(err, ErrEncapsulation) {
		t.Errorf("padding 2 with a 1-byte body: %v", err)
	}
}

// Large samples reuse the blocks of earlier ones (rawcdr.c keeps freed
// blocks of 128 KiB to 8 MiB): samples of sizes around each other, smaller
// after larger and with every padding, still arrive byte for byte, and
// any padding delivered is zero, not left over from the block's last
// sample.
func TestPubSub_LargeSamplesReuseBlocks(t *testing.T) {
	domain := testenv.Domain(t)
	a := newTestParticipant(t, domain)
	b := newTestParticipant(t, domain)
	ta, err := a.Topic(topicName(t), "std_msgs::msg::dds_::UInt8MultiArray_")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := b.Topic(topicName(t), "std_msgs::msg::dds_::UInt8MultiArray_")
	if err != nil {
		t.Fatal(err)
	}
	q := QoS{Reliability: Reliable, History: KeepAll}
	c := newCollector()
	if _, err := b.NewReader(tb, q, c.handle); err != nil {
		t.Fatal(err)
	}
	w := newMatchedWriter(t, a, ta, q)
	sizes := []int{1<<20 + 3, 1<<20 + 1, 1 << 20, 600001, 1<<20 + 2, 200 << 10, 131070, 1<<20 + 3}
	for i, n := range sizes {
		p := payload(n, byte(i))
		// The body's last bytes are non-zero, so a block's leftovers
		// would show in a later, shorter sample's padding.
		for k := max(4, n-4); k < n; k++ {
			p[k] = 0xff
		}
		if err := w.Write(p); err != nil {
			t.Fatalf("Write(%d bytes): %v", n, err)
		}
		if err := w.WaitForAcks(10 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	testenv.WaitFor(t, 30*time.Second, "every sample", func() bool { return c.count() >= len(sizes) })
	for i, n := range sizes {
		got := c.get(i)
		want := payload(n, byte(i))
		for k := max(4, n-4); k < n; k++ {
			want[k] = 0xff
		}
		if len(got) < n || len(got) > (n+3)&^3 || !bytes.Equal(got[:n], want) {
			t.Errorf("sample %d: got %d bytes, want %d (equal prefix %v)", i, len(got), n, len(got) >= n && bytes.Equal(got[:n], want))
			continue
		}
		for k := n; k < len(got); k++ {
			if got[k] != 0 {
				t.Errorf("sample %d (%d bytes): padding byte %d is %#x, want 0", i, n, k, got[k])
			}
		}
	}
}
