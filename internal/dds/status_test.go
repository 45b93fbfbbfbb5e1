package dds

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// statusLog records the statuses a reader or writer reports.
type statusLog struct {
	mu  sync.Mutex
	got []Status
}

func (l *statusLog) add(s Status) {
	l.mu.Lock()
	l.got = append(l.got, s)
	l.mu.Unlock()
}

// find returns the last status satisfying ok.
func (l *statusLog) find(ok func(Status) bool) (Status, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.got) - 1; i >= 0; i-- {
		if ok(l.got[i]) {
			return l.got[i], true
		}
	}
	return Status{}, false
}

func (l *statusLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("%+v", l.got)
}

// waitStatus waits for a status satisfying ok and returns it.
func waitStatus(t *testing.T, l *statusLog, what string, ok func(Status) bool) Status {
	t.Helper()
	var s Status
	testenv.WaitFor(t, 20*time.Second, what, func() bool {
		var found bool
		s, found = l.find(ok)
		return found
	})
	return s
}

// A reader and a writer of two participants whose QoS cannot match both
// report it, naming the policy; they do not match.
func TestStatusIncompatibleQoS(t *testing.T) {
	domain := testenv.Domain(t)
	a, b := newTestParticipant(t, domain), newTestParticipant(t, domain)
	for _, tc := range []struct {
		name   string
		rq, wq QoS
		policy Policy
	}{
		{"reliable reader, best-effort writer", QoS{Reliability: Reliable}, QoS{Reliability: BestEffort}, PolicyReliability},
		{"transient-local reader, volatile writer", QoS{Durability: TransientLocal}, QoS{Durability: Volatile}, PolicyDurability},
		{"reader deadline shorter than the writer's", QoS{Deadline: 100 * time.Millisecond}, QoS{Deadline: time.Second}, PolicyDeadline},
		{"manual reader, automatic writer", QoS{Liveliness: ManualByTopic}, QoS{Liveliness: Automatic}, PolicyLiveliness},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("rt/incompatible_%d", tc.policy)
			ta, err := a.Topic(name, "test::Incompatible_")
			if err != nil {
				t.Fatal(err)
			}
			tb, err := b.Topic(name, "test::Incompatible_")
			if err != nil {
				t.Fatal(err)
			}
			var rl, wl statusLog
			r, err := a.NewReader(ta, tc.rq, func([]Sample) {})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if err := r.WatchStatus(rl.add); err != nil {
				t.Fatal(err)
			}
			w, err := b.NewWriter(tb, tc.wq)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := w.WatchStatus(wl.add); err != nil {
				t.Fatal(err)
			}
			isIncompatible := func(s Status) bool { return s.Kind == IncompatibleQoS }
			rs := waitStatus(t, &rl, "the reader's incompatible-QoS status", isIncompatible)
			ws := waitStatus(t, &wl, "the writer's incompatible-QoS status", isIncompatible)
			for who, s := range map[string]Status{"reader": rs, "writer": ws} {
				if s.LastPolicy != tc.policy || s.TotalCount < 1 || s.TotalCountChange < 1 {
					t.Errorf("%s: %+v, want policy %v and a count", who, s, tc.policy)
				}
			}
			if mw, err := r.MatchedWriters(); err != nil || len(mw) != 0 {
				t.Errorf("reader matched %d writers (%v), want none", len(mw), err)
			}
		})
	}
}

// Statuses that change before WatchStatus are handed over when it is
// called; a second WatchStatus and one after Close are refused.
func TestStatusBeforeWatch(t *testing.T) {
	domain := testenv.Domain(t)
	p := newTestParticipant(t, domain)
	tp, err := p.Topic(topicName(t), "test::Early_")
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.NewWriter(tp, QoS{Reliability: BestEffort})
	if err != nil {
		t.Fatal(err)
	}
	// Matching (and its incompatibility) is decided while the reader is
	// created, before WatchStatus can be called.
	r, err := p.NewReader(tp, QoS{Reliability: Reliable}, func([]Sample) {})
	if err != nil {
		t.Fatal(err)
	}
	var rl, wl statusLog
	if err := r.WatchStatus(rl.add); err != nil {
		t.Fatal(err)
	}
	if err := w.WatchStatus(wl.add); err != nil {
		t.Fatal(err)
	}
	for who, l := range map[string]*statusLog{"reader": &rl, "writer": &wl} {
		s := waitStatus(t, l, who+"'s earlier incompatible-QoS status", func(s Status) bool { return s.Kind == IncompatibleQoS })
		if s.LastPolicy != PolicyReliability || s.TotalCountChange != 1 {
			t.Errorf("%s: %+v", who, s)
		}
	}
	if err := r.WatchStatus(rl.add); err == nil {
		t.Error("second Reader.WatchStatus accepted")
	}
	if err := w.WatchStatus(nil); err == nil {
		t.Error("Writer.WatchStatus(nil) accepted")
	}
	r.Close()
	w.Close()
	if err := r.WatchStatus(rl.add); !errors.Is(err, ErrClosed) {
		t.Errorf("Reader.WatchStatus after Close = %v", err)
	}
	if err := w.WatchStatus(wl.add); !errors.Is(err, ErrClosed) {
		t.Errorf("Writer.WatchStatus after Close = %v", err)
	}
	if err := w.AssertLiveliness(); !errors.Is(err, ErrClosed) {
		t.Errorf("AssertLiveliness after Close = %v", err)
	}
}

// A writer that stops writing misses its offered deadline, and its reader
// its requested one, again and again.
func TestStatusDeadlineMissed(t *testing.T) {
	domain := testenv.Domain(t)
	a, b := newTestParticipant(t, domain), newTestParticipant(t, domain)
	q := QoS{Reliability: Reliable, Deadline: 50 * time.Millisecond}
	ta, err := a.Topic(topicName(t), "test::Deadline_")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := b.Topic(topicName(t), "test::Deadline_")
	if err != nil {
		t.Fatal(err)
	}
	var rl, wl statusLog
	got := newCollector()
	r, err := a.NewReader(ta, q, got.handle)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WatchStatus(rl.add); err != nil {
		t.Fatal(err)
	}
	w, err := b.NewWriter(tb, q)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WatchStatus(wl.add); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 20*time.Second, "the match", func() bool {
		mw, _ := r.MatchedWriters()
		return len(mw) == 1
	})
	if err := w.Write(payload(16, 1)); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 20*time.Second, "the sample", func() bool { return got.count() == 1 })
	missed := func(s Status) bool { return s.Kind == DeadlineMissed && s.TotalCount >= 3 }
	rs := waitStatus(t, &rl, "three requested deadlines missed", missed)
	ws := waitStatus(t, &wl, "three offered deadlines missed", missed)
	if rs.TotalCountChange < 1 || ws.TotalCountChange < 1 {
		t.Errorf("changes: reader %+v, writer %+v", rs, ws)
	}
}

// A manual-by-topic writer is alive while it asserts its liveliness and
// loses it when it stops: the writer reports LivelinessLost, the reader
// LivelinessChanged (alive, then not alive).
func TestStatusManualLiveliness(t *testing.T) {
	domain := testenv.Domain(t)
	a, b := newTestParticipant(t, domain), newTestParticipant(t, domain)
	q := QoS{Reliability: Reliable, Liveliness: ManualByTopic, LeaseDuration: 200 * time.Millisecond}
	ta, err := a.Topic(topicName(t), "test::Alive_")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := b.Topic(topicName(t), "test::Alive_")
	if err != nil {
		t.Fatal(err)
	}
	var rl, wl statusLog
	r, err := a.NewReader(ta, q, func([]Sample) {})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WatchStatus(rl.add); err != nil {
		t.Fatal(err)
	}
	w, err := b.NewWriter(tb, q)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WatchStatus(wl.add); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 20*time.Second, "the match", func() bool {
		mw, _ := r.MatchedWriters()
		return len(mw) == 1
	})
	if err := w.AssertLiveliness(); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, &rl, "the writer alive", func(s Status) bool {
		return s.Kind == LivelinessChanged && s.AliveCount == 1
	})
	// No more assertions: the lease runs out.
	ls := waitStatus(t, &wl, "the writer's liveliness lost", func(s Status) bool { return s.Kind == LivelinessLost })
	if ls.TotalCount < 1 || ls.TotalCountChange < 1 {
		t.Errorf("writer: %+v", ls)
	}
	cs := waitStatus(t, &rl, "the reader seeing it lost", func(s Status) bool {
		return s.Kind == LivelinessChanged && s.AliveCount == 0 && s.NotAliveCount == 1
	})
	if cs.NotAliveCountChange < 1 {
		t.Errorf("reader: %+v (all: %v)", cs, &rl)
	}
	// Asserting again brings it back.
	if err := w.AssertLiveliness(); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, &rl, "the writer alive again", func(s Status) bool {
		return s.Kind == LivelinessChanged && s.AliveCount == 1 && s.NotAliveCount == 0
	})
}
