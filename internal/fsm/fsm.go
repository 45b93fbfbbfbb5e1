// Package fsm is the one introspection contract of every state machine of
// fsmnodes (RSM's states, the mux's operation modes, the hexapod motion FSM,
// ve_body, cs and the lifecycle machine): a Graph (states, transitions with
// the names of their guards, the initial state, a dwell bound per state)
// built by each behaviour package from the tables its code runs, and a
// Tracker that follows a running machine, numbers its transitions, counts
// each edge taken, the transitions that are not in the graph and the stays
// beyond a state's bound.
//
// The package is plain Go; internal/fsm/fsmnode publishes graphs and
// transitions as fsm_msgs on ~/fsm/graph and ~/fsm/transition, and the
// counters on /diagnostics (docs/fsm.md).
package fsm

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// State is a state of a machine.
type State struct {
	Name string
	// MaxDwell is the longest expected stay in the state; a longer one is
	// a dwell overrun. Zero means unbounded.
	MaxDwell time.Duration
}

// Edge is a transition of the graph: From → To when Guard holds. Guard is
// the name of the condition or event, as the machine's table names it.
type Edge struct {
	From, To, Guard string
}

// Graph is the specification of one machine.
type Graph struct {
	// Machine names the machine within its node ("motion", "ve_body",
	// "cs", "rsm", "operation_mode", "lifecycle").
	Machine string
	Initial string
	States  []State
	Edges   []Edge
}

// Validate checks that the graph is usable: a machine name, distinct
// non-empty state names, an initial state and edge ends that are states,
// non-negative bounds and no edge listed twice.
func (g Graph) Validate() error {
	if g.Machine == "" {
		return errors.New("fsm graph: machine name is empty")
	}
	seen := map[string]bool{}
	for _, s := range g.States {
		switch {
		case s.Name == "":
			return fmt.Errorf("fsm graph %s: a state has no name", g.Machine)
		case seen[s.Name]:
			return fmt.Errorf("fsm graph %s: state %q listed twice", g.Machine, s.Name)
		case s.MaxDwell < 0:
			return fmt.Errorf("fsm graph %s: state %q has a negative dwell bound %v", g.Machine, s.Name, s.MaxDwell)
		}
		seen[s.Name] = true
	}
	if !seen[g.Initial] {
		return fmt.Errorf("fsm graph %s: initial state %q is not a state", g.Machine, g.Initial)
	}
	edges := map[Edge]bool{}
	for _, e := range g.Edges {
		if !seen[e.From] || !seen[e.To] {
			return fmt.Errorf("fsm graph %s: edge %s → %s (%s) leaves the states", g.Machine, e.From, e.To, e.Guard)
		}
		if edges[e] {
			return fmt.Errorf("fsm graph %s: edge %s → %s (%s) listed twice", g.Machine, e.From, e.To, e.Guard)
		}
		edges[e] = true
	}
	return nil
}

// HasEdge reports whether the graph has a transition from → to (under any
// guard).
func (g Graph) HasEdge(from, to string) bool {
	for _, e := range g.Edges {
		if e.From == from && e.To == to {
			return true
		}
	}
	return false
}

// State returns the state named name.
func (g Graph) State(name string) (State, bool) {
	for _, s := range g.States {
		if s.Name == name {
			return s, true
		}
	}
	return State{}, false
}

// Dot renders the graph in Graphviz's dot language: one node per state
// (the initial one doubled), one edge per transition labelled with its
// guard.
func (g Graph) Dot() string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotID(g.Machine))
	b.WriteString("  rankdir=LR;\n  node [shape=box, style=rounded];\n")
	b.WriteString("  \"__start\" [shape=point, label=\"\"];\n")
	for _, s := range g.States {
		attrs := ""
		if s.Name == g.Initial {
			attrs = ", peripheries=2"
		}
		label := s.Name
		if s.MaxDwell > 0 {
			label += "\n≤ " + s.MaxDwell.String()
		}
		fmt.Fprintf(&b, "  %s [label=%s%s];\n", dotID(s.Name), dotID(label), attrs)
	}
	fmt.Fprintf(&b, "  \"__start\" -> %s;\n", dotID(g.Initial))
	for _, e := range g.Edges {
		fmt.Fprintf(&b, "  %s -> %s [label=%s];\n", dotID(e.From), dotID(e.To), dotID(e.Guard))
	}
	b.WriteString("}\n")
	return b.String()
}

// dotID quotes s as a dot ID.
func dotID(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// Event is one transition of a running machine.
type Event struct {
	Machine, From, To string
	// Cause says what made the machine move: the guard or event name of
	// the edge taken, a service, an interrupt ("start" for the entry into
	// the initial state).
	Cause string
	Stamp time.Time
	// Dwell is the time spent in From.
	Dwell time.Duration
	// InGraph is false for a transition the graph does not have.
	InGraph bool
	// Seq numbers the machine's transitions (the entry into the initial
	// state is 0); EdgeCount counts the times this edge was taken, this
	// one included.
	Seq, EdgeCount uint64
	// Unknown and Overruns are the machine's counters after this event:
	// transitions not in the graph, stays beyond a state's bound.
	Unknown, Overruns uint64
}

// Status is a snapshot of a Tracker.
type Status struct {
	Current           string
	Since             time.Time
	Seq               uint64
	Unknown, Overruns uint64
}

// Tracker follows one running machine against its graph. It is safe for
// concurrent use.
type Tracker struct {
	g      Graph
	bounds map[string]time.Duration
	known  map[[2]string]bool

	mu       sync.Mutex
	cur      string
	since    time.Time
	seq      uint64
	unknown  uint64
	overruns uint64
	overrun  bool // the current stay was counted as an overrun
	edges    map[[2]string]uint64
}

// NewTracker returns a tracker in g's initial state since start.
func NewTracker(g Graph, start time.Time) (*Tracker, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	t := &Tracker{g: g, bounds: map[string]time.Duration{}, known: map[[2]string]bool{},
		cur: g.Initial, since: start, edges: map[[2]string]uint64{}}
	for _, s := range g.States {
		t.bounds[s.Name] = s.MaxDwell
	}
	for _, e := range g.Edges {
		t.known[[2]string{e.From, e.To}] = true
	}
	return t, nil
}

// Graph returns the tracked graph.
func (t *Tracker) Graph() Graph { return t.g }

// Start returns the event of the entry into the initial state (From "",
// Cause "start", Seq 0).
func (t *Tracker) Start() Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Event{Machine: t.g.Machine, To: t.g.Initial, Cause: "start", Stamp: t.since, InGraph: true}
}

// Observe records that the machine is in state to at now because of cause.
// It returns the event and true when that is a change; staying in the
// current state returns false.
func (t *Tracker) Observe(to, cause string, now time.Time) (Event, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if to == t.cur {
		return Event{}, false
	}
	key := [2]string{t.cur, to}
	in := t.known[key]
	if !in {
		t.unknown++
	}
	t.checkLocked(now)
	t.seq++
	t.edges[key]++
	ev := Event{Machine: t.g.Machine, From: t.cur, To: to, Cause: cause, Stamp: now, Dwell: now.Sub(t.since),
		InGraph: in, Seq: t.seq, EdgeCount: t.edges[key], Unknown: t.unknown, Overruns: t.overruns}
	t.cur, t.since, t.overrun = to, now, false
	return ev, true
}

// Restart records that the machine was started afresh in its initial
// state (a managed node's controller recreated on activation): an event
// from the current state to the initial one that is part of the contract
// (InGraph), whatever the graph's edges; none when the machine is in its
// initial state already.
func (t *Tracker) Restart(cause string, now time.Time) (Event, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == t.g.Initial {
		return Event{}, false
	}
	key := [2]string{t.cur, t.g.Initial}
	t.checkLocked(now)
	t.seq++
	t.edges[key]++
	ev := Event{Machine: t.g.Machine, From: t.cur, To: t.g.Initial, Cause: cause, Stamp: now, Dwell: now.Sub(t.since),
		InGraph: true, Seq: t.seq, EdgeCount: t.edges[key], Unknown: t.unknown, Overruns: t.overruns}
	t.cur, t.since, t.overrun = t.g.Initial, now, false
	return ev, true
}

// Check counts the current stay as an overrun (once per stay) when it
// lasts beyond its state's bound at now, and reports whether it does.
func (t *Tracker) Check(now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.checkLocked(now)
}

func (t *Tracker) checkLocked(now time.Time) bool {
	b := t.bounds[t.cur]
	if b <= 0 || now.Sub(t.since) <= b {
		return false
	}
	if !t.overrun {
		t.overrun = true
		t.overruns++
	}
	return true
}

// Status returns the current state and counters.
func (t *Tracker) Status() Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Status{Current: t.cur, Since: t.since, Seq: t.seq, Unknown: t.unknown, Overruns: t.overruns}
}

// EdgeCounts returns how often each transition was taken, sorted by from
// and to.
func (t *Tracker) EdgeCounts() []EdgeCount {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]EdgeCount, 0, len(t.edges))
	for k, n := range t.edges {
		out = append(out, EdgeCount{From: k[0], To: k[1], Count: n, InGraph: t.known[k]})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].To < out[j].To
	})
	return out
}

// EdgeCount is how often one transition was taken.
type EdgeCount struct {
	From, To string
	Count    uint64
	InGraph  bool
}
