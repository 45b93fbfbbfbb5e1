package fsmnode

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/fsm"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
	fsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/fsm_msgs/msg"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func doorGraph() fsm.Graph {
	return fsm.Graph{
		Machine: "door",
		Initial: "closed",
		States:  []fsm.State{{Name: "closed"}, {Name: "opening", MaxDwell: 500 * time.Millisecond}, {Name: "open"}},
		Edges: []fsm.Edge{
			{From: "closed", To: "opening", Guard: "open_cmd"},
			{From: "opening", To: "open", Guard: "at_end"},
			{From: "open", To: "closed", Guard: "close_cmd"},
		},
	}
}

func lampGraph() fsm.Graph {
	return fsm.Graph{Machine: "lamp", Initial: "off", States: []fsm.State{{Name: "off"}, {Name: "on"}},
		Edges: []fsm.Edge{{From: "off", To: "on", Guard: "switch"}, {From: "on", To: "off", Guard: "switch"}}}
}

func TestGraphMsg_RoundTrip(t *testing.T) {
	in := []fsm.Graph{doorGraph(), lampGraph()}
	out, err := GraphsOf(GraphMsg(in...))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Dot() != in[0].Dot() || out[1].Dot() != in[1].Dot() {
		t.Errorf("round trip changed the graphs:\n%v\n%v", out, in)
	}
	bad := GraphMsg(doorGraph())
	bad.Machines[0].InitialState = "ajar"
	if _, err := GraphsOf(bad); err == nil {
		t.Error("a graph whose initial state is not a state was accepted")
	}
}

// Over DDS: a late reader gets the graph and the history; changes are
// published with their causes and counters, an edge not in the graph is
// counted on /diagnostics, a stay beyond a bound too, and a flood of one
// edge is held and counted rather than published one by one.
func TestPublisher_OverDDS(t *testing.T) {
	domain := testenv.Domain(t)
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "fsm: "}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	n, err := rc.NewNode("door_node", "/t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(n); err == nil {
		t.Error("New without graphs succeeded")
	}
	if _, err := New(n, doorGraph(), doorGraph()); err == nil {
		t.Error("New with a machine given twice succeeded")
	}
	p, err := New(n, doorGraph(), lampGraph())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = rc.Spin(ctx) }()

	door := p.Machine("door")
	door.Observe("opening", "open_cmd")
	door.Observe("open", "")           // cause from the graph
	door.Observe("opening", "x")       // not in the graph
	time.Sleep(700 * time.Millisecond) // beyond opening's 500 ms bound
	door.Observe("open", "at_end")

	// A late reader in another context.
	rc2, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "reader: "}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc2.Close() })
	r, err := rc2.NewNode("reader", "")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var graphs []*fsm_msgs_msg.Graph
	var trans []*fsm_msgs_msg.Transition
	var diag *diagnostic_msgs_msg.DiagnosticStatus
	var status *fsm_msgs_msg.Status
	if _, err := ros.NewSubscription(r, "/t/door_node/fsm/status", QoSStatus, func(m *fsm_msgs_msg.Status) {
		mu.Lock()
		defer mu.Unlock()
		status = m
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewSubscription(r, "/t/door_node/fsm/graph", QoSGraph, func(m *fsm_msgs_msg.Graph) {
		mu.Lock()
		defer mu.Unlock()
		graphs = append(graphs, m)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewSubscription(r, "/t/door_node/fsm/transition", QoSTransition, func(m *fsm_msgs_msg.Transition) {
		mu.Lock()
		defer mu.Unlock()
		trans = append(trans, m)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewSubscription(r, ros.DiagnosticsTopic, ros.QoSDiagnosticsReader, func(m *diagnostic_msgs_msg.DiagnosticArray) {
		mu.Lock()
		defer mu.Unlock()
		for i := range m.Status {
			if m.Status[i].Name == ros.DiagnosticsStatusName("/t/door_node") {
				diag = &m.Status[i]
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	go func() { _ = rc2.Spin(ctx) }()

	value := func(st *diagnostic_msgs_msg.DiagnosticStatus, key string) string {
		for _, kv := range st.Values {
			if kv.Key == key {
				return kv.Value
			}
		}
		return ""
	}
	testenv.WaitFor(t, 30*time.Second, "graph, 6 transitions and the counters", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(graphs) == 1 && len(trans) >= 6 && diag != nil &&
			value(diag, "fsm_door_unknown_transitions") == "1" && value(diag, "fsm_door_dwell_overruns") == "1"
	})
	mu.Lock()
	gs, err := GraphsOf(graphs[0])
	if err != nil || len(gs) != 2 || gs[0].Dot() != doorGraph().Dot() {
		t.Errorf("graph %+v (%v)", graphs[0], err)
	}
	type row struct {
		machine, from, to, cause string
		in                       bool
		seq, unknown, overruns   uint64
	}
	want := []row{
		{"door", "", "closed", "start", true, 0, 0, 0},
		{"lamp", "", "off", "start", true, 0, 0, 0},
		{"door", "closed", "opening", "open_cmd", true, 1, 0, 0},
		{"door", "opening", "open", "at_end", true, 2, 0, 0},
		{"door", "open", "opening", "x", false, 3, 1, 0},
		{"door", "opening", "open", "at_end", true, 4, 1, 1},
	}
	for i, w := range want {
		m := trans[i]
		got := row{m.Machine, m.FromState, m.ToState, m.Cause, m.InGraph, m.Sequence, m.UnknownTransitions, m.DwellOverruns}
		if got != w {
			t.Errorf("transition %d = %+v, want %+v", i, got, w)
		}
	}
	if d := trans[5].Dwell; d < 0.5 {
		t.Errorf("dwell in opening %v s, want ≥ 0.7", d)
	}
	if trans[5].EdgeCount != 2 {
		t.Errorf("opening → open taken %d times, want 2", trans[5].EdgeCount)
	}
	mu.Unlock()

	// A flood: the lamp switches 2000 times at once. The first of each edge
	// is published, the last state follows within about a second, and the
	// rest are only counted.
	lamp := p.Machine("lamp")
	for i := 0; i < 1000; i++ {
		lamp.Observe("on", "")
		lamp.Observe("off", "")
	}
	lamp.Observe("on", "")
	testenv.WaitFor(t, 30*time.Second, "the lamp's last transition", func() bool {
		mu.Lock()
		defer mu.Unlock()
		l := trans[len(trans)-1]
		return l.Machine == "lamp" && l.Sequence == 2001 && l.ToState == "on" &&
			status != nil && len(status.Machines) == 2 && status.Machines[1].Sequence == 2001
	})
	mu.Lock()
	defer mu.Unlock()
	lampMsgs := 0
	for _, m := range trans[6:] {
		if m.Machine == "lamp" {
			lampMsgs++
		}
	}
	last := trans[len(trans)-1]
	if lampMsgs > 10 || last.Suppressed+uint64(lampMsgs) != 2001 {
		t.Errorf("flood: %d lamp messages published, %d suppressed; want a handful and 2001 in all", lampMsgs, last.Suppressed)
	}
	if st := lamp.Status(); st.Current != "on" || st.Seq != 2001 || st.Unknown != 0 {
		t.Errorf("lamp status %+v", st)
	}
	// ~/fsm/status holds each machine's newest transition, in graph order.
	if status == nil || len(status.Machines) != 2 || status.Machines[0].Machine != "door" || status.Machines[0].Sequence != 4 ||
		status.Machines[1].Machine != "lamp" || status.Machines[1].Sequence != 2001 || status.Machines[1].ToState != "on" {
		t.Errorf("~/fsm/status: %+v", status)
	}
}

// Observe is called from real-time loops (Velma's ve_body and cs, 500 Hz,
// a change twice an iteration): a steady flip between two states allocates
// nothing in the caller (the repeats are counted and queued, not published).
func TestObserve_FlipAllocatesNothing(t *testing.T) {
	domain := testenv.Domain(t)
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "fsm: "}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	n, err := rc.NewNode("lamp_node", "/t")
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(n, lampGraph())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	m := p.Machine("lamp")
	flip := func() { m.Observe("on", ""); m.Observe("off", "") }
	for range 100 {
		flip()
	}
	if a := testing.AllocsPerRun(1000, flip); a != 0 {
		t.Errorf("%v allocations per flip", a)
	}
	// 100 flips, AllocsPerRun's warm-up and 1000 runs: every change counted
	if st := m.Status(); st.Current != "off" || st.Seq != 2*(100+1+1000) {
		t.Errorf("status %+v, want off after %d transitions", st, 2*(100+1+1000))
	}
}
