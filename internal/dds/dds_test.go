package dds

import (
	"bytes"
	"testing"
	"time"
)

func TestPubSub_TwoParticipantsOneProcess(t *testing.T) {
	const domain = 50
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
	w, err := a.NewWriter(ta, q)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "match", 10*time.Second, func() bool {
		m, err := w.MatchedReaders()
		return err == nil && len(m) == 1
	})
	sizes := []int{10, 64 << 10, 1 << 20}
	for i, n := range sizes {
		if err := w.Write(payload(n, byte(i))); err != nil {
			t.Fatalf("Write(%d bytes): %v", n, err)
		}
	}
	waitFor(t, "3 samples", 20*time.Second, func() bool { return c.count() >= len(sizes) })
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
	_ = r
}
