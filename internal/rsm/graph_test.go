package rsm

import (
	"sort"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/fsm"
)

// observedEdges maps the edges the table tests check (transitionEdges) to
// the names a running machine shows: the navigation plugin names itself
// after its goal's mode on entry, so "→ Navigation" is "→ G: Navigation"
// for a simple goal and "→ E:/W: Navigation" from exploration and waypoint
// states; edges of the not yet entered "Navigation" never show (the
// entered navigation states have the same ones).
func observedEdges(t *testing.T) []fsm.Edge {
	var out []fsm.Edge
	for _, e := range transitionEdges() {
		if e.from == "Navigation" {
			continue
		}
		to := e.to
		if to == "Navigation" {
			switch {
			case e.trigger == SimpleGoalInterrupt.String():
				to = "G: Navigation"
			case strings.HasPrefix(e.from, "E: "):
				to = "E: Navigation"
			case strings.HasPrefix(e.from, "W: "):
				to = "W: Navigation"
			default:
				t.Fatalf("edge %v: no mode for its navigation target", e)
			}
		}
		out = append(out, fsm.Edge{From: e.from, To: to, Guard: e.trigger})
	}
	return out
}

func sortEdges(es []fsm.Edge) {
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.From != b.From {
			return a.From < b.From
		}
		if a.To != b.To {
			return a.To < b.To
		}
		return a.Guard < b.Guard
	})
}

// The published graph is the behaviour the table tests check: the same
// edges with the same triggers, no more, no fewer.
func TestGraph_IsTheTestedBehaviour(t *testing.T) {
	g := Graph(DefaultConfig())
	want := observedEdges(t)
	got := append([]fsm.Edge(nil), g.Edges...)
	sortEdges(want)
	sortEdges(got)
	var b strings.Builder
	for _, e := range want {
		b.WriteString("\t\t\t{From: " + quote(e.From) + ", To: " + quote(e.To) + ", Guard: " + quote(e.Guard) + "},\n")
	}
	if len(got) != len(want) {
		t.Fatalf("Graph() has %d edges, the tested behaviour %d:\n%s", len(got), len(want), b.String())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("edge %d: Graph() %+v, tested behaviour %+v; all:\n%s", i, got[i], want[i], b.String())
		}
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	// Every state is entered or left by some edge.
	for _, s := range g.States {
		used := false
		for _, e := range g.Edges {
			used = used || e.From == s.Name || e.To == s.Name
		}
		if !used {
			t.Errorf("state %q has no edge", s.Name)
		}
	}
}

func quote(s string) string { return `"` + s + `"` }

// OnTransition names the entry point that requested each transition, and
// every transition of a run is an edge of Graph whose guards include that
// cause.
func TestStateInterface_OnTransitionCauses(t *testing.T) {
	h := newHarness(t)
	h.si.Start()
	h.tick(1)
	h.boot.reply = ok("Finished")
	h.tick(2)
	if r := h.si.StartStopExploration(h.ctx, true); !r.Success {
		t.Fatalf("start exploration: %+v", r)
	}
	h.tick(1)
	if err := h.si.OnOperationMode(h.ctx, OperationMode{EmergencyStop: true}); err != nil {
		t.Fatal(err)
	}
	h.tick(1)
	if err := h.si.OnOperationMode(h.ctx, OperationMode{}); err != nil {
		t.Fatal(err)
	}
	h.tick(1)
	want := [][3]string{
		{"", "Boot", ""},
		{"Boot", "Idle", ""},
		{"Idle", "E: Calculate Goal", "startExploration"},
		{"E: Calculate Goal", "Emergency Stop", "EMERGENCY_STOP_INTERRUPT"},
		{"Emergency Stop", "Idle", "INTERRUPT_END"},
	}
	if len(h.changes) != len(want) {
		t.Fatalf("changes %q, want %q", h.changes, want)
	}
	g := Graph(DefaultConfig())
	for i, c := range h.changes {
		if c != want[i] {
			t.Errorf("change %d = %q, want %q", i, c, want[i])
		}
		if i == 0 {
			continue
		}
		found := false
		for _, e := range g.Edges {
			found = found || (e.From == c[0] && e.To == c[1] && (c[2] == "" || e.Guard == c[2]))
		}
		if !found {
			t.Errorf("change %q is not an edge of Graph", c)
		}
	}
}
