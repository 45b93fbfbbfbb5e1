package dds

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

func TestTransientLocal_LateJoinerGetsLastSample(t *testing.T) {
	domain := testenv.Domain(t)
	a := newTestParticipant(t, domain)
	b := newTestParticipant(t, domain)
	q := QoS{Reliability: Reliable, Durability: TransientLocal, History: KeepLast, Depth: 1}
	ta, _ := a.Topic("rt/latched", "test::Latched_")
	w, err := a.NewWriter(ta, q)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := w.Write(payload(16, byte(i))); err != nil {
			t.Fatal(err)
		}
	}
	tb, _ := b.Topic("rt/latched", "test::Latched_")
	c := newCollector()
	if _, err := b.NewReader(tb, q, c.handle); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "historical sample", func() bool { return c.count() >= 1 })
	if got := c.get(0); !bytes.Equal(got[:16], payload(16, 4)) {
		t.Errorf("late joiner got %x, want the last sample %x", got, payload(16, 4))
	}
	if n := c.count(); n != 1 {
		t.Errorf("late joiner got %d samples, want 1 (depth 1)", n)
	}
}

func TestTransientLocal_LateJoinerAcrossProcesses(t *testing.T) {
	domain := testenv.Domain(t)
	startRole(t, "latched:"+strconv.Itoa(int(domain))) // has written samples 0..4 when it returns
	p := newTestParticipant(t, domain)
	tp, _ := p.Topic("rt/latched", "test::Latched_")
	c := newCollector()
	if _, err := p.NewReader(tp, latchedQoS, c.handle); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 20*time.Second, "historical sample", func() bool { return c.count() >= 1 })
	time.Sleep(100 * time.Millisecond) // anything else would arrive with it
	if n := c.count(); n != 1 || !c.has(payload(3000, 4)) {
		t.Errorf("late joiner got %d samples (last sample among them: %v), want only the last", n, c.has(payload(3000, 4)))
	}
}

func TestQoS_ReliabilityCompatibility(t *testing.T) {
	domain := testenv.Domain(t)
	a := newTestParticipant(t, domain)
	b := newTestParticipant(t, domain)
	cases := []struct {
		name      string
		wr, rd    QoS
		wantMatch bool
	}{
		{"reliable writer, best-effort reader", QoS{Reliability: Reliable}, QoS{Reliability: BestEffort}, true},
		{"best-effort writer, reliable reader", QoS{Reliability: BestEffort}, QoS{Reliability: Reliable}, false},
		{"best-effort both", QoS{Reliability: BestEffort}, QoS{Reliability: BestEffort}, true},
		{"volatile writer, transient-local reader", QoS{}, QoS{Durability: TransientLocal}, false},
		{"transient-local writer, volatile reader", QoS{Durability: TransientLocal}, QoS{}, true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "rt/compat" + string(rune('a'+i))
			ta, _ := a.Topic(name, "test::C_")
			tb, _ := b.Topic(name, "test::C_")
			// A reference reader that matches every writer tells us when
			// discovery of the writer is complete.
			w, err := a.NewWriter(ta, tc.wr)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			ref, err := b.NewReader(tb, QoS{Reliability: BestEffort}, func([]Sample) {})
			if err != nil {
				t.Fatal(err)
			}
			defer ref.Close()
			c := newCollector()
			r, err := b.NewReader(tb, tc.rd, c.handle)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			testenv.WaitFor(t, 10*time.Second, "reference match", func() bool {
				m, _ := ref.MatchedWriters()
				return len(m) == 1
			})
			if tc.wantMatch {
				testenv.WaitFor(t, 10*time.Second, "match", func() bool {
					m, _ := r.MatchedWriters()
					return len(m) == 1
				})
				testenv.WaitFor(t, 10*time.Second, "delivery", func() bool {
					_ = w.Write(payload(8, 1))
					return c.count() > 0
				})
				return
			}
			// Both readers were created after the writer on the same
			// participant; once the reference matched, the other one has
			// been evaluated too.
			if m, _ := r.MatchedWriters(); len(m) != 0 {
				t.Errorf("incompatible reader matched %d writers", len(m))
			}
		})
	}
}

func TestQoS_Invalid(t *testing.T) {
	p := newTestParticipant(t, testenv.Domain(t))
	tp, _ := p.Topic("rt/bad", "test::Bad_")
	bad := []QoS{
		{Depth: -1},
		{Deadline: -time.Second},
		{Lifespan: -1},
		{LeaseDuration: -1},
		{Reliability: 7},
		{Durability: 9},
		{History: 3},
		{Liveliness: 4},
	}
	for _, q := range bad {
		if _, err := p.NewWriter(tp, q); err == nil || !strings.Contains(err.Error(), "invalid QoS") {
			t.Errorf("NewWriter(%+v) = %v, want invalid QoS", q, err)
		}
		if _, err := p.NewReader(tp, q, func([]Sample) {}); err == nil {
			t.Errorf("NewReader(%+v) succeeded", q)
		}
	}
}

func TestQoS_RoundTripThroughDiscovery(t *testing.T) {
	domain := testenv.Domain(t)
	a := newTestParticipant(t, domain)
	b := newTestParticipant(t, domain)
	ta, _ := a.Topic("rt/qos", "test::Q_")
	tb, _ := b.Topic("rt/qos", "test::Q_")
	wq := QoS{
		Reliability: Reliable, Durability: TransientLocal, History: KeepLast, Depth: 7,
		Deadline: 2 * time.Second, Lifespan: 3 * time.Second, LeaseDuration: 4 * time.Second,
		Liveliness: Automatic, UserData: []byte("typehash=RIHS01_00;"),
	}
	w, err := a.NewWriter(ta, wq)
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.NewReader(tb, QoS{Reliability: BestEffort, History: KeepAll, IgnoreLocal: true, UserData: []byte("x=1;")}, func([]Sample) {})
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "match", func() bool {
		m, _ := r.MatchedWriters()
		return len(m) == 1
	})
	m, _ := r.MatchedWriters()
	got := m[0]
	if got.Key != w.GUID() || got.ParticipantKey != a.GUID() {
		t.Errorf("keys %v/%v, want %v/%v", got.Key, got.ParticipantKey, w.GUID(), a.GUID())
	}
	gq := got.QoS
	if gq.Reliability != Reliable || gq.Durability != TransientLocal || gq.History != KeepLast || gq.Depth != 7 ||
		gq.Deadline != 2*time.Second || gq.Lifespan != 3*time.Second || gq.LeaseDuration != 4*time.Second ||
		string(gq.UserData) != "typehash=RIHS01_00;" || string(got.UserData) != "typehash=RIHS01_00;" {
		t.Errorf("writer QoS seen by reader = %+v", gq)
	}
	mr, _ := w.MatchedReaders()
	if len(mr) != 1 || mr[0].QoS.Reliability != BestEffort || mr[0].QoS.History != KeepAll || string(mr[0].UserData) != "x=1;" {
		t.Errorf("reader seen by writer = %+v", mr)
	}
}

func TestIgnoreLocal(t *testing.T) {
	p := newTestParticipant(t, testenv.Domain(t))
	tp, _ := p.Topic("rt/local", "test::L_")
	w, _ := p.NewWriter(tp, QoS{})
	ign := newCollector()
	all := newCollector()
	if _, err := p.NewReader(tp, QoS{IgnoreLocal: true}, ign.handle); err != nil {
		t.Fatal(err)
	}
	if _, err := p.NewReader(tp, QoS{}, all.handle); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(payload(8, 0)); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "local delivery", func() bool { return all.count() == 1 })
	if n := ign.count(); n != 0 {
		t.Errorf("ignore-local reader got %d samples", n)
	}
}

func TestErrors(t *testing.T) {
	domain := testenv.Domain(t)
	p := newTestParticipant(t, domain)
	if _, err := p.Topic("", "x"); err == nil {
		t.Error("empty topic name accepted")
	}
	tp, err := p.Topic("rt/e", "test::E_")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Topic("rt/e", "test::Other_"); err == nil {
		t.Error("same topic with another type accepted")
	}
	if tp2, err := p.Topic("rt/e", "test::E_"); err != nil || tp2 != tp {
		t.Errorf("cached topic: %v %v", tp2, err)
	}
	if _, err := p.Topic("bad name with spaces?", "x"); err == nil {
		t.Error("invalid DDS topic name accepted")
	} else {
		var de *Error
		if !errors.As(err, &de) || de.Code >= 0 || de.Text == "" {
			t.Errorf("error %v is not a *Error with code text", err)
		}
	}
	w, _ := p.NewWriter(tp, QoS{})
	if err := w.Write([]byte{0, 1}); err == nil {
		t.Error("payload without header accepted")
	}
	if _, err := p.NewReader(tp, QoS{}, nil); err == nil {
		t.Error("nil handler accepted")
	}
	if err := w.WaitForAcks(10 * time.Millisecond); err != nil {
		t.Errorf("WaitForAcks with no readers: %v", err)
	}
	if _, err := NewParticipant(domain, loopbackConfig+" ", nil); err == nil {
		t.Error("second config for the same domain accepted")
	}
	other := newTestParticipant(t, testenv.Domain(t))
	if _, err := other.NewWriter(tp, QoS{}); err == nil {
		t.Error("writer on another participant's topic accepted")
	}
	if err := w.Close(); err != nil {
		t.Error(err)
	}
	if err := w.Write(payload(8, 0)); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestQoS_AllCombinationsCreate(t *testing.T) {
	p := newTestParticipant(t, testenv.Domain(t))
	tp, _ := p.Topic("rt/combos", "test::Combo_")
	for _, rel := range []Reliability{Reliable, BestEffort} {
		for _, dur := range []Durability{Volatile, TransientLocal} {
			for _, hist := range []History{KeepLast, KeepAll} {
				q := QoS{Reliability: rel, Durability: dur, History: hist, Depth: 5,
					Deadline: time.Second, Lifespan: time.Second, LeaseDuration: time.Second,
					Liveliness: ManualByTopic, UserData: []byte("k=v;"), IgnoreLocal: true}
				w, err := p.NewWriter(tp, q)
				if err != nil {
					t.Errorf("NewWriter(%v %v %v): %v", rel, dur, hist, err)
					continue
				}
				r, err := p.NewReader(tp, q, func([]Sample) {})
				if err != nil {
					t.Errorf("NewReader(%v %v %v): %v", rel, dur, hist, err)
				} else {
					_ = r.Close()
				}
				_ = w.Close()
			}
		}
	}
}
