package fsm

import (
	"strings"
	"testing"
	"time"
)

func testGraph() Graph {
	return Graph{
		Machine: "door",
		Initial: "closed",
		States:  []State{{Name: "closed"}, {Name: "opening", MaxDwell: 2 * time.Second}, {Name: "open"}},
		Edges: []Edge{
			{"closed", "opening", "open_cmd"},
			{"opening", "open", "at_end"},
			{"open", "closed", "close_cmd"},
			{"opening", "closed", "obstacle"},
		},
	}
}

func TestValidate(t *testing.T) {
	g := testGraph()
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Graph){
		"no machine":     func(g *Graph) { g.Machine = "" },
		"bad initial":    func(g *Graph) { g.Initial = "ajar" },
		"empty state":    func(g *Graph) { g.States = append(g.States, State{}) },
		"duplicate":      func(g *Graph) { g.States = append(g.States, State{Name: "open"}) },
		"negative bound": func(g *Graph) { g.States[0].MaxDwell = -time.Second },
		"edge off graph": func(g *Graph) { g.Edges = append(g.Edges, Edge{"open", "ajar", "x"}) },
		"edge twice":     func(g *Graph) { g.Edges = append(g.Edges, g.Edges[0]) },
	} {
		g := testGraph()
		g.States = append([]State(nil), g.States...)
		mut(&g)
		if err := g.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, g)
		}
		if _, err := NewTracker(g, time.Time{}); err == nil {
			t.Errorf("%s: NewTracker accepted the graph", name)
		}
	}
}

func TestTracker_CountsEdgesUnknownAndOverruns(t *testing.T) {
	t0 := time.Unix(100, 0)
	tr, err := NewTracker(testGraph(), t0)
	if err != nil {
		t.Fatal(err)
	}
	if ev := tr.Start(); ev.To != "closed" || ev.From != "" || ev.Cause != "start" || !ev.InGraph || ev.Seq != 0 {
		t.Errorf("Start() = %+v", ev)
	}
	if _, ok := tr.Observe("closed", "noop", t0.Add(time.Second)); ok {
		t.Error("staying in closed counted as a transition")
	}
	steps := []struct {
		to, cause string
		at        time.Duration
		want      Event
	}{
		{"opening", "open_cmd", 1 * time.Second, Event{From: "closed", InGraph: true, Seq: 1, EdgeCount: 1, Dwell: time.Second}},
		{"closed", "obstacle", 2 * time.Second, Event{From: "opening", InGraph: true, Seq: 2, EdgeCount: 1, Dwell: time.Second}},
		{"opening", "open_cmd", 3 * time.Second, Event{From: "closed", InGraph: true, Seq: 3, EdgeCount: 2, Dwell: time.Second}},
		// 4 s in opening (bound 2 s): an overrun, counted as it ends.
		{"open", "at_end", 7 * time.Second, Event{From: "opening", InGraph: true, Seq: 4, EdgeCount: 1, Dwell: 4 * time.Second, Overruns: 1}},
		// open → opening is not an edge.
		{"opening", "glitch", 8 * time.Second, Event{From: "open", InGraph: false, Seq: 5, EdgeCount: 1, Dwell: time.Second, Unknown: 1, Overruns: 1}},
	}
	for _, s := range steps {
		ev, ok := tr.Observe(s.to, s.cause, t0.Add(s.at))
		if !ok {
			t.Fatalf("Observe(%s) reported no change", s.to)
		}
		w := s.want
		w.Machine, w.To, w.Cause, w.Stamp = "door", s.to, s.cause, t0.Add(s.at)
		if ev != w {
			t.Errorf("Observe(%s) = %+v\nwant %+v", s.to, ev, w)
		}
	}
	// Still in opening since 8 s: not an overrun at 9 s, one (counted once)
	// at 11 s and 12 s.
	if tr.Check(t0.Add(9 * time.Second)) {
		t.Error("Check at 1 s of a 2 s bound reported an overrun")
	}
	if !tr.Check(t0.Add(11*time.Second)) || !tr.Check(t0.Add(12*time.Second)) {
		t.Error("Check at 3 s and 4 s of a 2 s bound reported none")
	}
	st := tr.Status()
	if st.Current != "opening" || st.Seq != 5 || st.Unknown != 1 || st.Overruns != 2 || !st.Since.Equal(t0.Add(8*time.Second)) {
		t.Errorf("Status() = %+v", st)
	}
	counts := tr.EdgeCounts()
	if len(counts) != 4 || counts[0] != (EdgeCount{"closed", "opening", 2, true}) || counts[1] != (EdgeCount{"open", "opening", 1, false}) {
		t.Errorf("EdgeCounts() = %+v", counts)
	}
}

func TestDot(t *testing.T) {
	g := testGraph()
	g.Edges = append(g.Edges, Edge{"open", "closed", `say "bye"`})
	d := g.Dot()
	for _, want := range []string{
		"digraph \"door\" {",
		"\"closed\" [label=\"closed\", peripheries=2];",
		"\"opening\" [label=\"opening\\n≤ 2s\"];",
		"\"__start\" -> \"closed\";",
		"\"opening\" -> \"open\" [label=\"at_end\"];",
		"\"open\" -> \"closed\" [label=\"say \\\"bye\\\"\"];",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("Dot() lacks %s:\n%s", want, d)
		}
	}
	if !g.HasEdge("opening", "closed") || g.HasEdge("open", "opening") {
		t.Error("HasEdge wrong")
	}
}

func TestTracker_Restart(t *testing.T) {
	t0 := time.Unix(0, 0)
	tr, _ := NewTracker(testGraph(), t0)
	if _, ok := tr.Restart("activate", t0); ok {
		t.Error("restart in the initial state reported a change")
	}
	tr.Observe("opening", "open_cmd", t0.Add(time.Second))
	tr.Observe("open", "at_end", t0.Add(2*time.Second))
	ev, ok := tr.Restart("activate", t0.Add(5*time.Second))
	want := Event{Machine: "door", From: "open", To: "closed", Cause: "activate", Stamp: t0.Add(5 * time.Second),
		Dwell: 3 * time.Second, InGraph: true, Seq: 3, EdgeCount: 1}
	if !ok || ev != want {
		t.Errorf("Restart = %+v, %v\nwant %+v", ev, ok, want)
	}
	if st := tr.Status(); st.Current != "closed" || st.Unknown != 0 {
		t.Errorf("after restart %+v", st)
	}
}
