// Package fsmnode publishes a node's state machines (internal/fsm) on ROS:
// the graphs, latched, on ~/fsm/graph, each change of state on
// ~/fsm/transition, every machine's newest one, latched, on ~/fsm/status
// (fsm_msgs), and the monitor's counters — transitions not
// in the graph, stays beyond a state's bound — on /diagnostics as node
// counters (docs/fsm.md).
package fsmnode

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/fsm"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/lifecycle"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	fsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/fsm_msgs/msg"
)

// Topics, relative to the node.
const (
	GraphTopic      = "~/fsm/graph"
	TransitionTopic = "~/fsm/transition"
	StatusTopic     = "~/fsm/status"
)

// QoSStatus is the QoS of ~/fsm/status: reliable, transient local, keep
// last 1: a late reader gets every machine's current state, which the
// transition history may no longer hold when another machine of the node
// changes often.
var QoSStatus = ros.QoSLatched

// QoSGraph is the QoS of ~/fsm/graph: reliable, transient local, keep last
// 1: a reader joining late gets the graph at once.
var QoSGraph = ros.QoSLatched

// TransitionHistory is how many transitions ~/fsm/transition keeps for
// readers that join late (transient local).
const TransitionHistory = 100

// QoSTransition is the QoS of ~/fsm/transition: reliable, transient local,
// keep last TransitionHistory, so that a late reader (fsmnodes fsm watch,
// the dashboard) gets the recent history and every machine's current state.
var QoSTransition = ros.QoSLatched.KeepLast(TransitionHistory)

// RepeatGap is how long an edge taken again is only counted, not
// published: ve_body flips between two states every iteration (1000 times
// a second) and would flood the topic. The sequence numbers show the gap,
// and the latest transition of a machine is published at the latest
// RepeatGap after it.
const RepeatGap = time.Second

// Queue is how many transitions wait for the publishing goroutine; when it
// is full, further ones are not published (Observe never blocks, so a
// real-time loop may call it); the newest is, within a second.
const Queue = 1024

// Counter names on /diagnostics, per machine: fsm_<machine>_unknown_transitions
// and fsm_<machine>_dwell_overruns.
func unknownCounter(machine string) string { return "fsm_" + machine + "_unknown_transitions" }
func overrunCounter(machine string) string { return "fsm_" + machine + "_dwell_overruns" }

// Publisher publishes the state machines of one node.
type Publisher struct {
	n        *ros.Node
	graph    *ros.Publisher[fsm_msgs_msg.Graph]
	pub      *ros.Publisher[fsm_msgs_msg.Transition]
	status   *ros.Publisher[fsm_msgs_msg.Status]
	machines []*Machine
	byName   map[string]*Machine
	ch       chan fsm.Event
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
}

// Machine is one machine of a Publisher; Observe reports its state.
type Machine struct {
	p       *Publisher
	tr      *fsm.Tracker
	unknown *ros.Counter
	overrun *ros.Counter
	guards  map[[2]string]string

	mu        sync.Mutex
	warned    map[[2]string]bool // unknown transitions already logged
	counted   uint64             // overruns already added to the counter
	latest    fsm.Event          // the newest transition
	hasLatest bool
}

// New creates the publishers of n for the graphs (each validated; machine
// names must differ), publishes the graphs and each machine's entry into
// its initial state, and starts the goroutine that publishes transitions
// and checks dwell bounds once a second. Close stops it; it also stops when
// n's context shuts down.
func New(n *ros.Node, graphs ...fsm.Graph) (*Publisher, error) {
	if len(graphs) == 0 {
		return nil, errors.New("fsm introspection: no graph")
	}
	p := &Publisher{n: n, byName: map[string]*Machine{}, ch: make(chan fsm.Event, Queue),
		stop: make(chan struct{}), done: make(chan struct{})}
	now := n.Clock().Now()
	for _, g := range graphs {
		tr, err := fsm.NewTracker(g, now)
		if err != nil {
			return nil, fmt.Errorf("fsm introspection: %w", err)
		}
		if p.byName[g.Machine] != nil {
			return nil, fmt.Errorf("fsm introspection: machine %q given twice", g.Machine)
		}
		m := &Machine{p: p, tr: tr, unknown: n.Counter(unknownCounter(g.Machine)),
			overrun: n.Counter(overrunCounter(g.Machine)), guards: guardsOf(g), warned: map[[2]string]bool{}}
		p.machines = append(p.machines, m)
		p.byName[g.Machine] = m
	}
	var err error
	if p.graph, err = ros.NewPublisher[fsm_msgs_msg.Graph](n, GraphTopic, QoSGraph); err != nil {
		return nil, fmt.Errorf("fsm introspection: %w", err)
	}
	if p.pub, err = ros.NewPublisher[fsm_msgs_msg.Transition](n, TransitionTopic, QoSTransition); err != nil {
		return nil, fmt.Errorf("fsm introspection: %w", err)
	}
	if p.status, err = ros.NewPublisher[fsm_msgs_msg.Status](n, StatusTopic, QoSStatus); err != nil {
		return nil, fmt.Errorf("fsm introspection: %w", err)
	}
	msg := GraphMsg(graphs...)
	msg.Stamp = builtin_interfaces_msg.TimeOf(now)
	if err := p.graph.Publish(msg); err != nil {
		return nil, fmt.Errorf("fsm introspection: publish %s: %w", GraphTopic, err)
	}
	st := &fsm_msgs_msg.Status{Stamp: msg.Stamp}
	for _, m := range p.machines {
		tm := TransitionMsg(m.tr.Start(), 0)
		if err := p.pub.Publish(tm); err != nil {
			return nil, fmt.Errorf("fsm introspection: publish %s: %w", TransitionTopic, err)
		}
		st.Machines = append(st.Machines, *tm)
	}
	if err := p.status.Publish(st); err != nil {
		return nil, fmt.Errorf("fsm introspection: publish %s: %w", StatusTopic, err)
	}
	go p.run(st)
	return p, nil
}

// guardsOf maps each (from, to) of g to its guards, joined with " | ".
func guardsOf(g fsm.Graph) map[[2]string]string {
	out := map[[2]string]string{}
	for _, e := range g.Edges {
		k := [2]string{e.From, e.To}
		if out[k] != "" {
			out[k] += " | "
		}
		out[k] += e.Guard
	}
	return out
}

// Machine returns the machine named name (nil when there is none).
func (p *Publisher) Machine(name string) *Machine { return p.byName[name] }

// Close stops the publishing goroutine (what is queued is dropped). The
// topics close with the node.
func (p *Publisher) Close() {
	p.once.Do(func() { close(p.stop) })
	<-p.done
}

// Observe reports that the machine is in state to because of cause, at the
// node clock's now. A change is counted and queued for publication; an
// empty cause is filled with the guards of the edge in the graph. It never
// blocks and is safe for concurrent use.
func (m *Machine) Observe(to, cause string) {
	m.ObserveAt(to, cause, m.p.n.Clock().Now())
}

// Restart reports that the machine was started afresh in its initial
// state (fsm.Tracker.Restart), e.g. a controller recreated when its managed
// node is activated again.
func (m *Machine) Restart(cause string) {
	if ev, changed := m.tr.Restart(cause, m.p.n.Clock().Now()); changed {
		m.queue(ev)
	}
}

// ObserveAt is Observe at a given time.
func (m *Machine) ObserveAt(to, cause string, now time.Time) {
	ev, changed := m.tr.Observe(to, cause, now)
	if !changed {
		return
	}
	m.queue(ev)
}

// queue counts and queues a change.
func (m *Machine) queue(ev fsm.Event) {
	if ev.Cause == "" {
		ev.Cause = m.guards[[2]string{ev.From, ev.To}]
	}
	m.syncOverruns(ev.Overruns)
	if !ev.InGraph {
		m.unknown.Inc()
		m.mu.Lock()
		k := [2]string{ev.From, ev.To}
		first := !m.warned[k]
		m.warned[k] = true
		m.mu.Unlock()
		if first {
			m.p.n.Logger().Warnf("fsm %s: transition %q -> %q (cause %q) is not in the graph (counted as %s; logged once per pair)",
				ev.Machine, ev.From, ev.To, ev.Cause, unknownCounter(ev.Machine))
		}
	}
	m.mu.Lock()
	m.latest, m.hasLatest = ev, true
	m.mu.Unlock()
	select {
	case m.p.ch <- ev:
	default: // published by the next flush if it is still the newest
	}
}

// newest returns the machine's newest transition.
func (m *Machine) newest() (fsm.Event, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.latest, m.hasLatest
}

// Status returns the machine's current state and counters.
func (m *Machine) Status() fsm.Status { return m.tr.Status() }

// syncOverruns adds the tracker's new overruns to the node counter.
func (m *Machine) syncOverruns(total uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if total > m.counted {
		m.overrun.Add(total - m.counted)
		m.counted = total
	}
}

// check counts an overrun of the current stay, logging it once.
func (m *Machine) check(now time.Time) {
	before := m.tr.Status().Overruns
	if !m.tr.Check(now) {
		return
	}
	st := m.tr.Status()
	if st.Overruns > before {
		bound := time.Duration(0)
		if s, ok := m.tr.Graph().State(st.Current); ok {
			bound = s.MaxDwell
		}
		m.p.n.Logger().Warnf("fsm %s: in %q for %v, beyond its bound %v (counted as %s)",
			m.tr.Graph().Machine, st.Current, now.Sub(st.Since).Round(time.Millisecond), bound, overrunCounter(m.tr.Graph().Machine))
	}
	m.syncOverruns(st.Overruns)
}

// run publishes queued transitions. An edge taken again within RepeatGap
// of its last publication is skipped, and so is what did not fit in the
// queue; once a second each machine's newest transition is published if it
// was not, so a reader always learns the current state.
func (p *Publisher) run(status *fsm_msgs_msg.Status) {
	defer close(p.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	type key struct{ machine, from, to string }
	last := map[key]time.Time{}
	published := map[string]uint64{} // per machine: transitions published
	pubSeq := map[string]uint64{}    // per machine: sequence of the last published
	publish := func(ev fsm.Event) {
		if ev.Seq <= pubSeq[ev.Machine] {
			return // older than what a flush already published
		}
		last[key{ev.Machine, ev.From, ev.To}] = time.Now()
		published[ev.Machine]++
		pubSeq[ev.Machine] = ev.Seq
		tm := TransitionMsg(ev, ev.Seq-published[ev.Machine])
		if err := p.pub.Publish(tm); err != nil && !errors.Is(err, ros.ErrClosed) {
			p.n.Logger().Warnf("fsm: publish %s: %v", TransitionTopic, err)
		}
		for i := range status.Machines {
			if status.Machines[i].Machine == ev.Machine {
				status.Machines[i] = *tm
			}
		}
		status.Stamp = tm.Stamp
		if err := p.status.Publish(status); err != nil && !errors.Is(err, ros.ErrClosed) {
			p.n.Logger().Warnf("fsm: publish %s: %v", StatusTopic, err)
		}
	}
	for {
		select {
		case <-p.stop:
			return
		case <-p.n.Context().Done():
			return
		case ev := <-p.ch:
			if t, ok := last[key{ev.Machine, ev.From, ev.To}]; ok && ev.InGraph && time.Since(t) < RepeatGap {
				continue
			}
			publish(ev)
		case <-tick.C:
			now := p.n.Clock().Now()
			for _, m := range p.machines {
				m.check(now)
				if ev, ok := m.newest(); ok {
					publish(ev)
				}
			}
		}
	}
}

// GraphMsg converts graphs to a Graph message (stamp unset).
func GraphMsg(graphs ...fsm.Graph) *fsm_msgs_msg.Graph {
	msg := &fsm_msgs_msg.Graph{}
	for _, g := range graphs {
		mm := fsm_msgs_msg.Machine{Name: g.Machine, InitialState: g.Initial}
		for _, s := range g.States {
			mm.States = append(mm.States, fsm_msgs_msg.State{Name: s.Name, MaxDwell: s.MaxDwell.Seconds()})
		}
		for _, e := range g.Edges {
			mm.Transitions = append(mm.Transitions, fsm_msgs_msg.Edge{FromState: e.From, ToState: e.To, Guard: e.Guard})
		}
		msg.Machines = append(msg.Machines, mm)
	}
	return msg
}

// GraphsOf converts a Graph message back to graphs (bounds rounded to the
// nanosecond); each is validated.
func GraphsOf(msg *fsm_msgs_msg.Graph) ([]fsm.Graph, error) {
	var out []fsm.Graph
	for _, mm := range msg.Machines {
		g := fsm.Graph{Machine: mm.Name, Initial: mm.InitialState}
		for _, s := range mm.States {
			g.States = append(g.States, fsm.State{Name: s.Name, MaxDwell: time.Duration(s.MaxDwell * float64(time.Second)).Round(time.Microsecond)})
		}
		for _, e := range mm.Transitions {
			g.Edges = append(g.Edges, fsm.Edge{From: e.FromState, To: e.ToState, Guard: e.Guard})
		}
		if err := g.Validate(); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// TransitionMsg converts an event to a Transition message.
func TransitionMsg(ev fsm.Event, suppressed uint64) *fsm_msgs_msg.Transition {
	return &fsm_msgs_msg.Transition{
		Stamp: builtin_interfaces_msg.TimeOf(ev.Stamp), Machine: ev.Machine, FromState: ev.From, ToState: ev.To,
		Cause: ev.Cause, InGraph: ev.InGraph, Dwell: ev.Dwell.Seconds(), Sequence: ev.Seq, EdgeCount: ev.EdgeCount,
		UnknownTransitions: ev.Unknown, DwellOverruns: ev.Overruns, Suppressed: suppressed,
	}
}

// NewManaged is New for a managed node: its lifecycle machine
// (lifecycle.FSMGraph) comes first, followed by graphs, and every
// transition of l is observed with its label as the cause. Call it in the
// node's setup, before l starts.
func NewManaged(l *lifecycle.Node, graphs ...fsm.Graph) (*Publisher, error) {
	p, err := New(l.Node(), append([]fsm.Graph{lifecycle.FSMGraph()}, graphs...)...)
	if err != nil {
		return nil, err
	}
	m := p.Machine(lifecycle.FSMMachine)
	l.OnTransition(func(t lifecycle.Transition) { m.Observe(t.Goal.Label, t.Label) })
	if s := l.State(); s.ID != lifecycle.StateUnconfigured {
		m.Observe(s.Label, "")
	}
	return p, nil
}
