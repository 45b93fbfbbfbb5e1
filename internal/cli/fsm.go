package cli

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/fsm"
	"github.com/fsmnodes/fsmnodes/internal/fsm/fsmnode"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	fsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/fsm_msgs/msg"
)

// fsmVerbs read the FSM introspection of the nodes (~/fsm/graph,
// ~/fsm/transition; docs/fsm.md).
func fsmVerbs() map[string]verb {
	return map[string]verb{
		"fsm list": {
			usage: "fsm list [--spin-time S]",
			help:  "List the nodes that publish state machines (~/fsm/graph), each machine with its current state.",
			run:   (*App).fsmList,
		},
		"fsm show": {
			usage: "fsm show NODE [MACHINE] [--spin-time S]",
			help: "Print a node's state machines: initial and current state, the states with their dwell\n" +
				"bounds, the transitions with their guards, and the counters of the last transition.",
			run: (*App).fsmShow,
		},
		"fsm watch": {
			usage: "fsm watch NODE [MACHINE] [--count N] [--no-history] [--spin-time S]",
			help: "Print each transition of a node's machines as it happens, one line each: stamp, machine,\n" +
				"from -> to, cause, time spent in the old state and the counters. The history the node keeps\n" +
				"comes first unless --no-history; --count stops after N lines. Ctrl-C ends it.",
			run: (*App).fsmWatch,
		},
		"fsm dot": {
			usage: "fsm dot NODE [MACHINE] [--spin-time S]",
			help:  "Print a node's state machines in Graphviz's dot language (fsmnodes fsm dot NODE | dot -Tsvg > fsm.svg).",
			run:   (*App).fsmDot,
		},
	}
}

// fsmGraphType is the type of ~/fsm/graph.
const fsmGraphType = "fsm_msgs/msg/Graph"

// fsmNodes returns the sorted names of the nodes that publish ~/fsm/graph.
func fsmNodes(rc *ros.Context) []string {
	var out []string
	for _, nt := range rc.TopicNamesAndTypes() {
		if node, ok := strings.CutSuffix(nt.Name, "/fsm/graph"); ok && contains(nt.Types, fsmGraphType) {
			if node == "" {
				node = "/"
			}
			out = append(out, node)
		}
	}
	sort.Strings(out)
	return out
}

// fsmReader follows one node's ~/fsm/graph and ~/fsm/transition.
type fsmReader struct {
	mu     sync.Mutex
	graphs []fsm.Graph
	err    error
	got    chan struct{} // closed at the first graph
	trans  chan *fsm_msgs_msg.Transition
	last   map[string]*fsm_msgs_msg.Transition // per machine
}

// readFSM subscribes to node's topics: the graph, the status (every
// machine's newest transition) and the transitions, of which those the node
// keeps arrive first (transient local).
func readFSM(s *session, node string) (*fsmReader, error) {
	r := &fsmReader{got: make(chan struct{}), trans: make(chan *fsm_msgs_msg.Transition, 4096),
		last: map[string]*fsm_msgs_msg.Transition{}}
	base := strings.TrimSuffix(node, "/")
	var once sync.Once
	if _, err := ros.NewSubscription(s.node, base+"/fsm/graph", fsmnode.QoSGraph, func(m *fsm_msgs_msg.Graph) {
		gs, err := fsmnode.GraphsOf(m)
		r.mu.Lock()
		r.graphs, r.err = gs, err
		r.mu.Unlock()
		once.Do(func() { close(r.got) })
	}); err != nil {
		return nil, err
	}
	if _, err := ros.NewSubscription(s.node, base+"/fsm/status", fsmnode.QoSStatus, func(m *fsm_msgs_msg.Status) {
		r.mu.Lock()
		defer r.mu.Unlock()
		for i := range m.Machines {
			r.newer(&m.Machines[i])
		}
	}); err != nil {
		return nil, err
	}
	if _, err := ros.NewSubscription(s.node, base+"/fsm/transition", fsmnode.QoSTransition, func(m *fsm_msgs_msg.Transition) {
		r.mu.Lock()
		r.newer(m)
		r.mu.Unlock()
		select {
		case r.trans <- m:
		default:
		}
	}); err != nil {
		return nil, err
	}
	return r, nil
}

// newer keeps m as its machine's newest transition unless a later one is
// known (the status and the history arrive in any order).
func (r *fsmReader) newer(m *fsm_msgs_msg.Transition) {
	if old := r.last[m.Machine]; old == nil || m.Sequence >= old.Sequence {
		r.last[m.Machine] = m
	}
}

// waitGraph waits (bounded) for the graph, then quiet for the history.
func (r *fsmReader) waitGraph(ctx context.Context, node string, max time.Duration) ([]fsm.Graph, error) {
	select {
	case <-r.got:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(max):
		return nil, fmt.Errorf("no state machines from %s (no %s/fsm/graph within %v)", node, strings.TrimSuffix(node, "/"), max)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return nil, fmt.Errorf("%s/fsm/graph: %w", node, r.err)
	}
	return r.graphs, nil
}

// settleHistory waits until no transition arrived for a moment (bounded),
// so that the node's kept history is in.
func (r *fsmReader) settleHistory(ctx context.Context) {
	const quiet, max = 300 * time.Millisecond, 2 * time.Second
	end := time.After(max)
	for {
		r.mu.Lock()
		n := len(r.trans)
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-end:
			return
		case <-time.After(quiet):
		}
		if len(r.trans) == n {
			return
		}
	}
}

// current returns the machine's current state: the newest transition's
// target, else the initial state.
func (r *fsmReader) current(g fsm.Graph) (string, *fsm_msgs_msg.Transition) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m := r.last[g.Machine]; m != nil {
		return m.ToState, m
	}
	return g.Initial, nil
}

// fsmSession parses NODE [MACHINE] and reads that node's machines.
func (a *App) fsmSession(ctx context.Context, args []string, spec flagSpec, usage string) (*session, *parsed, *fsmReader, []fsm.Graph, error) {
	spec[spinTimeFlag] = true
	p, err := parseFlags(args, spec)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if len(p.pos) < 1 || len(p.pos) > 2 {
		return nil, nil, nil, nil, usagef("usage: fsmnodes %s", usage)
	}
	st, err := spinTime(p)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	s, err := a.open(ctx, "fsm")
	if err != nil {
		return nil, nil, nil, nil, err
	}
	node := absNode(p.pos[0])
	r, err := readFSM(s, node)
	if err != nil {
		s.close()
		return nil, nil, nil, nil, err
	}
	gs, err := r.waitGraph(ctx, node, st+3*time.Second)
	if err != nil {
		s.close()
		return nil, nil, nil, nil, err
	}
	if len(p.pos) == 2 {
		var only []fsm.Graph
		var names []string
		for _, g := range gs {
			names = append(names, g.Machine)
			if g.Machine == p.pos[1] {
				only = append(only, g)
			}
		}
		if len(only) == 0 {
			s.close()
			return nil, nil, nil, nil, fmt.Errorf("%s has no machine %q (it has: %s)", node, p.pos[1], strings.Join(names, ", "))
		}
		gs = only
	}
	return s, p, r, gs, nil
}

func (a *App) fsmList(ctx context.Context, args []string) error {
	p, err := parseFlags(args, flagSpec{spinTimeFlag: true})
	if err != nil {
		return err
	}
	if len(p.pos) != 0 {
		return usagef("usage: fsmnodes fsm list [--spin-time S]")
	}
	st, err := spinTime(p)
	if err != nil {
		return err
	}
	s, err := a.open(ctx, "fsm")
	if err != nil {
		return err
	}
	defer s.close()
	s.settle(ctx, st)
	for _, node := range fsmNodes(s.rc) {
		r, err := readFSM(s, node)
		if err != nil {
			return err
		}
		gs, err := r.waitGraph(ctx, node, st+3*time.Second)
		if err != nil {
			fmt.Fprintln(a.Stderr, err)
			continue
		}
		r.settleHistory(ctx)
		parts := make([]string, len(gs))
		for i, g := range gs {
			cur, _ := r.current(g)
			parts[i] = g.Machine + ": " + cur
		}
		fmt.Fprintf(a.Stdout, "%s  %s\n", node, strings.Join(parts, ", "))
	}
	return ctx.Err()
}

func (a *App) fsmShow(ctx context.Context, args []string) error {
	s, _, r, gs, err := a.fsmSession(ctx, args, flagSpec{}, "fsm show NODE [MACHINE] [--spin-time S]")
	if err != nil {
		return err
	}
	defer s.close()
	r.settleHistory(ctx)
	for i, g := range gs {
		if i > 0 {
			fmt.Fprintln(a.Stdout)
		}
		cur, last := r.current(g)
		fmt.Fprintf(a.Stdout, "machine: %s\ninitial: %s\ncurrent: %s\n", g.Machine, g.Initial, cur)
		if last != nil {
			fmt.Fprintf(a.Stdout, "last transition: %s -> %s (%s), transitions %d, not in graph %d, dwell overruns %d, not published %d\n",
				orStart(last.FromState), last.ToState, last.Cause, last.Sequence, last.UnknownTransitions, last.DwellOverruns, last.Suppressed)
		}
		fmt.Fprintf(a.Stdout, "states (%d):\n", len(g.States))
		for _, st := range g.States {
			mark := "  "
			if st.Name == cur {
				mark = "* "
			}
			bound := ""
			if st.MaxDwell > 0 {
				bound = "  (at most " + st.MaxDwell.String() + ")"
			}
			fmt.Fprintf(a.Stdout, "  %s%s%s\n", mark, st.Name, bound)
		}
		fmt.Fprintf(a.Stdout, "transitions (%d):\n", len(g.Edges))
		for _, e := range g.Edges {
			fmt.Fprintf(a.Stdout, "    %s -> %s: %s\n", e.From, e.To, e.Guard)
		}
	}
	return nil
}

// orStart names the empty from-state of the entry at start.
func orStart(s string) string {
	if s == "" {
		return "[start]"
	}
	return s
}

// transitionLine is one line of fsm watch.
func transitionLine(m *fsm_msgs_msg.Transition) string {
	t := time.Unix(int64(m.Stamp.Sec), int64(m.Stamp.Nanosec))
	line := fmt.Sprintf("%d.%03d %s: %s -> %s (%s) after %.3fs #%d", t.Unix(), t.Nanosecond()/1e6, m.Machine,
		orStart(m.FromState), m.ToState, m.Cause, m.Dwell, m.Sequence)
	if !m.InGraph {
		line += " NOT IN GRAPH"
	}
	var counts []string
	if m.UnknownTransitions > 0 {
		counts = append(counts, fmt.Sprintf("not in graph %d", m.UnknownTransitions))
	}
	if m.DwellOverruns > 0 {
		counts = append(counts, fmt.Sprintf("dwell overruns %d", m.DwellOverruns))
	}
	if m.Suppressed > 0 {
		counts = append(counts, fmt.Sprintf("not published %d", m.Suppressed))
	}
	if len(counts) > 0 {
		line += " [" + strings.Join(counts, ", ") + "]"
	}
	return line
}

func (a *App) fsmWatch(ctx context.Context, args []string) error {
	s, p, r, gs, err := a.fsmSession(ctx, args, flagSpec{"--count": true, "--no-history": false},
		"fsm watch NODE [MACHINE] [--count N] [--no-history] [--spin-time S]")
	if err != nil {
		return err
	}
	defer s.close()
	count := 0
	if v := p.get("", "--count"); v != "" {
		if count, err = strconv.Atoi(v); err != nil || count <= 0 {
			return usagef("--count %q: want a positive number", v)
		}
	}
	machines := map[string]bool{}
	for _, g := range gs {
		machines[g.Machine] = true
	}
	if p.has("--no-history") {
		r.settleHistory(ctx)
		for len(r.trans) > 0 {
			<-r.trans
		}
	}
	printed := 0
	for {
		select {
		case <-ctx.Done():
			return nil // Ctrl-C ends a watch
		case m := <-r.trans:
			if !machines[m.Machine] {
				continue
			}
			fmt.Fprintln(a.Stdout, transitionLine(m))
			printed++
			if count > 0 && printed >= count {
				return nil
			}
		}
	}
}

func (a *App) fsmDot(ctx context.Context, args []string) error {
	s, _, _, gs, err := a.fsmSession(ctx, args, flagSpec{}, "fsm dot NODE [MACHINE] [--spin-time S]")
	if err != nil {
		return err
	}
	defer s.close()
	for _, g := range gs {
		fmt.Fprint(a.Stdout, g.Dot())
	}
	return nil
}
