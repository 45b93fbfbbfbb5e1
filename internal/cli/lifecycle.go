package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	lifecycle_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/lifecycle_msgs/msg"
	lifecycle_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/lifecycle_msgs/srv"
)

// lifecycleVerbs mirror ros2lifecycle: nodes, list, get and set, with its
// arguments and output.
func lifecycleVerbs() map[string]verb {
	return map[string]verb{
		"lifecycle nodes": {
			usage: "lifecycle nodes [-a|--all] [-c|--count-nodes]",
			help:  "List the managed (lifecycle) nodes: those serving <node>/get_state of type lifecycle_msgs/srv/GetState.",
			run:   (*App).lifecycleNodes,
		},
		"lifecycle get": {
			usage: "lifecycle get [NODE] [--include-hidden-nodes]",
			help:  "Print the lifecycle state of a managed node ('active [3]'), or of every managed node ('/node: active [3]').",
			run:   (*App).lifecycleGet,
		},
		"lifecycle list": {
			usage: "lifecycle list NODE [-a|--all] [--include-hidden-nodes]",
			help:  "List the transitions available from the node's current state (-a: every transition of its state machine).",
			run:   (*App).lifecycleList,
		},
		"lifecycle set": {
			usage: "lifecycle set NODE TRANSITION [--include-hidden-nodes]",
			help: "Trigger a transition, by label (configure, activate, deactivate, cleanup, shutdown) or id.\n" +
				"Prints 'Transitioning successful', or 'Transitioning failed' on stderr when the node's\n" +
				"callback did not succeed (exit status 0, as ros2 lifecycle set).",
			run: (*App).lifecycleSet,
		},
	}
}

// lifecycleWait bounds the wait for a node's lifecycle services.
const lifecycleWait = 5 * time.Second

// lifecycleSession opens a session, waits for discovery (--spin-time) and
// returns the managed nodes (sorted fully qualified names; hidden ones
// with hiddenFlag), as ros2lifecycle's get_node_names: nodes that serve
// <node>/get_state with lifecycle_msgs/srv/GetState. With a NODE argument
// the wait ends as soon as that node is seen.
func (a *App) lifecycleSession(ctx context.Context, args []string, spec flagSpec, minPos, maxPos int, usage string, hiddenFlag ...string) (*session, *parsed, []string, error) {
	spec[spinTimeFlag] = true
	spec["--no-daemon"] = false
	p, err := parseFlags(args, spec)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(p.pos) < minPos || len(p.pos) > maxPos {
		return nil, nil, nil, usagef("usage: fsmnodes %s", usage)
	}
	st, err := spinTime(p)
	if err != nil {
		return nil, nil, nil, err
	}
	s, err := a.open(ctx, "lifecycle")
	if err != nil {
		return nil, nil, nil, err
	}
	hidden := p.has(hiddenFlag...)
	if len(p.pos) > 0 {
		want := absNode(p.pos[0])
		_ = s.rc.WaitForGraph(withTimeout(ctx, st), func() bool {
			return contains(managedNodes(s.rc, true), want)
		})
	} else {
		s.settle(ctx, st)
	}
	if ctx.Err() != nil {
		s.close()
		return nil, nil, nil, ctx.Err()
	}
	return s, p, managedNodes(s.rc, hidden), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// managedNodes returns the sorted names of the nodes that serve
// <node>/get_state of type lifecycle_msgs/srv/GetState.
func managedNodes(rc *ros.Context, hidden bool) []string {
	services := map[string]bool{}
	for _, nt := range rc.ServiceNamesAndTypes() {
		if contains(nt.Types, "lifecycle_msgs/srv/GetState") {
			services[nt.Name] = true
		}
	}
	set := map[string]bool{}
	for _, n := range rc.NodeNames() {
		if !hidden && strings.HasPrefix(n.Name, "_") {
			continue
		}
		fqn := n.FullyQualifiedName()
		if services[strings.TrimSuffix(fqn, "/")+"/get_state"] {
			set[fqn] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// callLifecycle calls a lifecycle service of node fqn, waiting for it
// (bounded, where ros2 would wait for ever).
func callLifecycle[Req, Resp any](ctx context.Context, s *session, fqn, service string, srv rosidl.Service[Req, Resp], req *Req) (*Resp, error) {
	cli, err := ros.NewClient(s.node, strings.TrimSuffix(fqn, "/")+"/"+service, srv)
	if err != nil {
		return nil, fmt.Errorf("client for %s/%s: %w", fqn, service, err)
	}
	defer cli.Close()
	if err := cli.WaitForService(withTimeout(ctx, lifecycleWait)); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("service %s/%s not available", fqn, service)
	}
	return cli.Call(withTimeout(ctx, lifecycleWait), req)
}

// notFound is ros2lifecycle's answer for a node that is not a managed node
// of the graph: the message on stderr, exit status 1.
func (a *App) notFound() error {
	fmt.Fprintln(a.Stderr, "Node not found")
	return &reportedError{err: errors.New("node not found")}
}

func (a *App) lifecycleNodes(ctx context.Context, args []string) error {
	s, p, nodes, err := a.lifecycleSession(ctx, args, flagSpec{"-a": false, "--all": false, "-c": false, "--count-nodes": false},
		0, 0, "lifecycle nodes [-a] [-c]", "-a", "--all")
	if err != nil {
		return err
	}
	s.close()
	if p.has("-c", "--count-nodes") {
		fmt.Fprintln(a.Stdout, len(nodes))
		return nil
	}
	for _, n := range nodes {
		fmt.Fprintln(a.Stdout, n)
	}
	return nil
}

func stateString(st lifecycle_msgs_msg.State) string {
	return fmt.Sprintf("%s [%d]", st.Label, st.Id)
}

func (a *App) lifecycleGet(ctx context.Context, args []string) error {
	s, p, nodes, err := a.lifecycleSession(ctx, args, flagSpec{"--include-hidden-nodes": false},
		0, 1, "lifecycle get [NODE] [--include-hidden-nodes]", "--include-hidden-nodes")
	if err != nil {
		return err
	}
	defer s.close()
	query := nodes
	if len(p.pos) == 1 {
		fqn := absNode(p.pos[0])
		if !contains(nodes, fqn) {
			return a.notFound()
		}
		query = []string{fqn}
	}
	failed := false
	var lines []string
	for _, n := range query {
		resp, err := callLifecycle(ctx, s, n, "get_state", lifecycle_msgs_srv.GetState, &lifecycle_msgs_srv.GetState_Request{})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintf(a.Stderr, "Exception while calling service of node '%s': %v\n", n, err)
			failed = true
			continue
		}
		prefix := ""
		if len(p.pos) == 0 {
			prefix = n + ": "
		}
		lines = append(lines, prefix+stateString(resp.CurrentState))
	}
	if failed && len(p.pos) == 1 {
		return &reportedError{err: errors.New("get_state failed")}
	}
	for _, l := range lines {
		fmt.Fprintln(a.Stdout, l)
	}
	return nil
}

func (a *App) lifecycleList(ctx context.Context, args []string) error {
	s, p, nodes, err := a.lifecycleSession(ctx, args, flagSpec{"-a": false, "--all": false, "--include-hidden-nodes": false},
		1, 1, "lifecycle list NODE [-a] [--include-hidden-nodes]", "--include-hidden-nodes")
	if err != nil {
		return err
	}
	defer s.close()
	fqn := absNode(p.pos[0])
	if !contains(nodes, fqn) {
		return a.notFound()
	}
	service := "get_available_transitions"
	if p.has("-a", "--all") {
		service = "get_transition_graph"
	}
	resp, err := callLifecycle(ctx, s, fqn, service, lifecycle_msgs_srv.GetAvailableTransitions, &lifecycle_msgs_srv.GetAvailableTransitions_Request{})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprintf(a.Stderr, "Exception while calling service of node '%s': %v\n", p.pos[0], err)
		return &reportedError{err: err}
	}
	for _, t := range resp.AvailableTransitions {
		fmt.Fprintf(a.Stdout, "- %s [%d]\n\tStart: %s\n\tGoal: %s\n", t.Transition.Label, t.Transition.Id, t.StartState.Label, t.GoalState.Label)
	}
	return nil
}

func (a *App) lifecycleSet(ctx context.Context, args []string) error {
	s, p, nodes, err := a.lifecycleSession(ctx, args, flagSpec{"--include-hidden-nodes": false},
		2, 2, "lifecycle set NODE TRANSITION [--include-hidden-nodes]", "--include-hidden-nodes")
	if err != nil {
		return err
	}
	defer s.close()
	fqn := absNode(p.pos[0])
	if !contains(nodes, fqn) {
		return a.notFound()
	}
	resp, err := callLifecycle(ctx, s, fqn, "get_available_transitions", lifecycle_msgs_srv.GetAvailableTransitions, &lifecycle_msgs_srv.GetAvailableTransitions_Request{})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprintf(a.Stderr, "Exception while calling service of node '%s': %v\n", p.pos[0], err)
		return &reportedError{err: err}
	}
	want := p.pos[1]
	var chosen *lifecycle_msgs_msg.Transition
	for i := range resp.AvailableTransitions { // by label first, then by id, as ros2
		if t := &resp.AvailableTransitions[i].Transition; t.Label == want {
			chosen = t
			break
		}
	}
	if chosen == nil {
		for i := range resp.AvailableTransitions {
			if t := &resp.AvailableTransitions[i].Transition; strconv.Itoa(int(t.Id)) == want {
				chosen = t
				break
			}
		}
	}
	if chosen == nil {
		var b strings.Builder
		b.WriteString("Unknown transition requested, available ones are:")
		for _, t := range resp.AvailableTransitions {
			fmt.Fprintf(&b, "\n- %s [%d]", t.Transition.Label, t.Transition.Id)
		}
		fmt.Fprintln(a.Stderr, b.String())
		return &reportedError{err: errors.New("unknown transition")}
	}
	r, err := callLifecycle(ctx, s, fqn, "change_state", lifecycle_msgs_srv.ChangeState, &lifecycle_msgs_srv.ChangeState_Request{Transition: *chosen})
	switch {
	case err != nil:
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprintf(a.Stderr, "Exception while calling service of node '%s': %v\n", p.pos[0], err)
	case r.Success:
		fmt.Fprintln(a.Stdout, "Transitioning successful")
	default:
		fmt.Fprintln(a.Stderr, "Transitioning failed")
	}
	return nil
}
