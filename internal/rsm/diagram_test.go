package rsm

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/transitions.mmd")

// edge is one transition of the state machine.
type edge struct{ from, trigger, to string }

// activeEdge is a transition a state takes by itself (OnEntry/OnActive),
// with the set-up that makes it happen.
type activeEdge struct {
	edge
	setup func(h *harness) State
	act   func(h *harness)
}

func activeEdges() []activeEdge {
	nav := func(mode NavigationMode, routine string, result NavState) func(h *harness) State {
		return func(h *harness) State {
			h.addWaypoints(wp(1, 0, routine))
			h.setGoal(mode, 0, routine)
			h.nav.auto = func(string, Pose) NavState { return result }
			n := NewNavigation()
			n.unstuckTried = result == NavFailed // skip the unstuck attempt
			return n
		}
	}
	frontiers := func(h *harness) {
		_ = h.si.OnExplorationGoals([]Pose{at(1, 0)})
		_ = h.si.OnFailedGoals(nil)
	}
	// An exploration goal in the Interrupt mode, driven to for 12 ticks
	// (moving or not), then declared obsolete.
	interruptNav := func(h *harness) State {
		h.store.SetExplorationMode(true)
		h.setGoal(NavigationExploration, -1, "")
		return NewNavigation()
	}
	obsolete := func(moved bool) func(h *harness) {
		return func(h *harness) {
			_ = h.si.OnOperationMode(h.ctx, OperationMode{Mode: ModeAutonomous})
			for i := 0; i < 12; i++ {
				if moved {
					h.pose.pose.Position.X += 0.1
				}
				h.step()
			}
			h.si.OnGoalObsolete(h.ctx, true)
		}
	}
	return []activeEdge{
		{edge{"Boot", "bootUpFinished", "Idle"}, func(h *harness) State { h.boot.reply = ok("Finished"); return NewBoot() }, nil},
		{edge{"W: Waypoint Following", "next waypoint", "Navigation"}, func(h *harness) State {
			h.addWaypoints(wp(1, 0, ""))
			return NewWaypointFollowing()
		}, nil},
		{edge{"W: Waypoint Following", "no waypoint left (SINGLE)", "Idle"}, func(h *harness) State {
			h.addWaypoints(Waypoint{Pose: at(1, 0), Visited: true})
			return NewWaypointFollowing()
		}, nil},
		{edge{"E: Calculate Goal", "goal found", "Navigation"}, func(*harness) State { return NewCalculateGoal() }, frontiers},
		{edge{"E: Calculate Goal", "no reachable goal", "Idle"}, func(*harness) State { return NewCalculateGoal() }, func(h *harness) {
			_ = h.si.OnExplorationGoals(nil)
			_ = h.si.OnFailedGoals(nil)
		}},
		{edge{"E: Navigation", "reached", "E: Mapping Dummy"}, nav(NavigationExploration, "", NavSucceeded), nil},
		{edge{"E: Navigation", "failed", "E: Calculate Goal"}, nav(NavigationExploration, "", NavFailed), nil},
		{edge{"W: Navigation", "reached", "W: Waypoint Following"}, nav(NavigationWaypointFollowing, "", NavSucceeded), nil},
		{edge{"W: Navigation", "reached, routine Reversing", "W: Reversing"}, nav(NavigationWaypointFollowing, "Reversing", NavSucceeded), nil},
		{edge{"W: Navigation", "failed", "W: Waypoint Following"}, nav(NavigationWaypointFollowing, "", NavFailed), nil},
		{edge{"G: Navigation", "reached or failed", "Idle"}, nav(NavigationSimpleGoal, "", NavSucceeded), nil},
		{edge{"E: Navigation", "goalObsolete (Interrupt mode), not moved", "E: Calculate Goal"}, interruptNav, obsolete(false)},
		{edge{"E: Navigation", "goalObsolete (Interrupt mode), moved", "E: Mapping Dummy"}, interruptNav, obsolete(true)},
		{edge{"E: Mapping Dummy", "mapped", "E: Calculate Goal"}, func(*harness) State { return NewMappingDummy() }, nil},
		{edge{"W: Reversing", "reverse mode toggled", "W: Waypoint Following"}, func(*harness) State { return NewReversingRoutine() }, nil},
	}
}

func TestStates_ActiveTransitions(t *testing.T) {
	for _, ae := range activeEdges() {
		t.Run(ae.from+"/"+ae.trigger, func(t *testing.T) {
			h := newHarness(t)
			s := ae.setup(h)
			h.makeCurrent(s)
			if ae.act != nil {
				ae.act(h)
			}
			for i := 0; i < 5 && h.si.Pending() == nil; i++ {
				s.OnActive(h.ctx)
			}
			if p := h.pendingName(); p != ae.to {
				t.Errorf("pending = %q, want %q", p, ae.to)
			}
		})
	}
}

// transitionEdges returns every edge the tables of this package check:
// command hooks, interrupts and the states' own transitions.
func transitionEdges() []edge {
	var out []edge
	hookNames := []string{"startExploration", "stopExploration", "startWaypointFollowing", "stopWaypointFollowing"}
	for from, ws := range hookWants() {
		for i, w := range ws {
			if w.pending != "" {
				out = append(out, edge{from, hookNames[i], w.pending})
			}
		}
	}
	ins := []Interrupt{InterruptEnd, EmergencyStopInterrupt, TeleoperationInterrupt, SimpleGoalInterrupt, SimpleGoalStopInterrupt}
	for from, ws := range interruptWants() {
		for i, to := range ws {
			if to != "" {
				out = append(out, edge{from, ins[i].String(), to})
			}
		}
	}
	for _, ae := range activeEdges() {
		out = append(out, ae.edge)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.from != b.from {
			return a.from < b.from
		}
		if a.to != b.to {
			return a.to < b.to
		}
		return a.trigger < b.trigger
	})
	return out
}

// mermaid renders edges as a Mermaid state diagram; edges between the same
// two states share one arrow with the triggers joined.
func mermaid(edges []edge) string {
	ids := map[string]string{}
	id := func(name string) string {
		if v, ok := ids[name]; ok {
			return v
		}
		v := strings.NewReplacer(":", "", " ", "").Replace(name)
		ids[name] = v
		return v
	}
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n    [*] --> Boot\n")
	type pair struct{ from, to string }
	var order []pair
	labels := map[pair][]string{}
	for _, e := range edges {
		p := pair{e.from, e.to}
		if _, seen := labels[p]; !seen {
			order = append(order, p)
		}
		labels[p] = append(labels[p], e.trigger)
	}
	var names []string
	for _, e := range edges {
		for _, n := range []string{e.from, e.to} {
			if _, ok := ids[n]; !ok {
				id(n)
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if ids[n] != n {
			fmt.Fprintf(&b, "    state \"%s\" as %s\n", n, ids[n])
		}
	}
	for _, p := range order {
		fmt.Fprintf(&b, "    %s --> %s: %s\n", id(p.from), id(p.to), strings.Join(labels[p], ", "))
	}
	return b.String()
}

// TestTransitions_MermaidGolden pins the diagram of docs/rsm.md; run with
// -update to rewrite it after a deliberate change.
func TestTransitions_MermaidGolden(t *testing.T) {
	got := mermaid(transitionEdges())
	path := filepath.Join("testdata", "transitions.mmd")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("diagram differs from %s (run with -update after a deliberate change):\n%s", path, got)
	}
}
