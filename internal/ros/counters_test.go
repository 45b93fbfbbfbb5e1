package ros

import (
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

func TestCounterSet(t *testing.T) {
	var s counterSet
	a := s.get("zeta")
	if s.get("zeta") != a {
		t.Fatal("same name gave two counters")
	}
	a.Add(2)
	s.get(CounterCommandsRejected).Inc()
	s.get("alpha").Inc()
	got := s.snapshot()
	var names []string
	for _, v := range got {
		names = append(names, v.Name)
	}
	want := append(standardCounters[:], "alpha", "zeta")
	if len(names) != len(want) {
		t.Fatalf("snapshot names %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("snapshot names %v, want %v", names, want)
		}
	}
	if got[len(got)-1].Value != 2 || got[5].Value != 1 || got[0].Value != 0 {
		t.Errorf("values %+v", got)
	}
	var nilCounter *Counter
	nilCounter.Inc() // must not panic
	if nilCounter.Load() != 0 || nilCounter.Name() != "" {
		t.Error("nil counter not empty")
	}
}

func TestThrottle(t *testing.T) {
	var th throttle
	t0 := time.Unix(1000, 0)
	if ok, s := th.allow(t0); !ok || s != 0 {
		t.Fatalf("first: %v %d", ok, s)
	}
	for i := 1; i <= 5; i++ {
		if ok, _ := th.allow(t0.Add(time.Duration(i) * 100 * time.Millisecond)); ok {
			t.Fatalf("line %d let through within the interval", i)
		}
	}
	if ok, s := th.allow(t0.Add(logThrottle)); !ok || s != 5 {
		t.Errorf("after the interval: %v, suppressed %d (want true, 5)", ok, s)
	}
}

// Counters reach /diagnostics: a DiagnosticArray from every non-hidden node
// about once a second, with each counter as a key/value, WARN while
// counters grow. Library counters (a malformed sample) and node-code
// counters (commands_rejected, a custom one) show up.
func TestCountersOnDiagnostics(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	c1 := newTestContext(t, domain)
	c2 := newTestContext(t, domain)
	n := mustNode(t, c1, "faulty", "/robot")
	hidden := mustNode(t, c1, "_hidden", "/robot")
	sub, err := NewSubscription(n, "text", QoSDefault, func(*std_msgs_msg.String) {})
	if err != nil {
		t.Fatal(err)
	}
	n.Counter(CounterCommandsRejected).Add(3)
	n.Counter("estop_requests").Inc()

	var mu sync.Mutex
	var last *diagnostic_msgs_msg.DiagnosticStatus
	var all []diagnostic_msgs_msg.DiagnosticStatus
	mon := mustNode(t, c2, "monitor", "/")
	if _, err := NewSubscription(mon, DiagnosticsTopic, QoSDiagnosticsReader, func(m *diagnostic_msgs_msg.DiagnosticArray) {
		for i := range m.Status {
			if m.Status[i].Name == DiagnosticsStatusName("/robot/faulty") {
				mu.Lock()
				last = &m.Status[i]
				all = append(all, m.Status[i])
				mu.Unlock()
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	value := func(key string) string {
		mu.Lock()
		defer mu.Unlock()
		if last == nil {
			return ""
		}
		for _, kv := range last.Values {
			if kv.Key == key {
				return kv.Value
			}
		}
		return ""
	}
	testenv.WaitFor(t, failAfter, "counters on /diagnostics", func() bool {
		return value(CounterCommandsRejected) == "3" && value("estop_requests") == "1"
	})
	mu.Lock()
	if len(last.Values) != len(standardCounters)+1 {
		t.Errorf("values %+v", last.Values)
	}
	mu.Unlock()
	// Nothing new: the next report is OK.
	testenv.WaitFor(t, failAfter, "an OK report", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return last.Level == diagnostic_msgs_msg.DiagnosticStatus_OK
	})

	// A malformed sample is counted by the library.
	tp, err := c2.Participant().Topic("rt/robot/text", std_msgs_msg.String_TypeInfo.DDSName)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c2.Participant().NewWriter(tp, dds.QoS{History: dds.KeepLast, Depth: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	waitGraph(t, c1, "raw writer match", func() bool { k, _ := sub.PublisherCount(); return k == 1 })
	if err := w.Write([]byte{0, 1, 0, 0, 0xff, 0xff, 0, 0, 'x'}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, failAfter, "malformed_samples=1 on /diagnostics", func() bool {
		return value(CounterMalformedSamples) == "1"
	})
	// The report that carried the increase is a WARN naming it.
	mu.Lock()
	warned := false
	for _, st := range all {
		warned = warned || st.Level == diagnostic_msgs_msg.DiagnosticStatus_WARN && st.Message == "malformed_samples +1"
	}
	if !warned {
		t.Errorf("no WARN report naming malformed_samples +1 among %+v", all)
	}
	mu.Unlock()
	if got := n.Counter(CounterMalformedSamples).Load(); got != 1 {
		t.Errorf("node counter malformed_samples = %d", got)
	}

	// Hidden nodes publish nothing.
	pubs, err := c1.PublisherNamesAndTypesByNode(hidden.Name(), hidden.Namespace())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pubs {
		if p.Name == DiagnosticsTopic {
			t.Error("hidden node publishes /diagnostics")
		}
	}
}
