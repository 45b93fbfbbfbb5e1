// Package lifecycle makes ROS 2 managed (lifecycle) nodes of the client
// library's nodes, as rclcpp_lifecycle does: the state machine of
// rcl_lifecycle (unconfigured, inactive, active, finalized and the
// transition states between them), the services ~/change_state,
// ~/get_state, ~/get_available_states, ~/get_available_transitions and
// ~/get_transition_graph, the topic ~/transition_event, and managed
// publishers that publish only while the node is active. `ros2 lifecycle`,
// launch_ros's LifecycleNode and Nav2's lifecycle manager drive such a node.
//
// A node main uses Run instead of ros.Run; setup registers the transition
// callbacks. The node configures and activates itself at start unless its
// read-only parameter autostart is false, which leaves it unconfigured for
// a lifecycle manager:
//
//	err := lifecycle.Run(ctx, args, "driver", func(ctx context.Context, ln *lifecycle.Node) error {
//		ln.OnConfigure(func(lifecycle.State) lifecycle.Result { ...open the port...; return lifecycle.Success })
//		ln.OnActivate(...)
//		return nil
//	})
//
// Callbacks run on the node's callback goroutine (from ~/change_state), or
// on the goroutine of setup for the autostart, or on Run's goroutine after
// the node is closed for the final shutdown — never two at a time.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	lifecycle_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/lifecycle_msgs/msg"
	lifecycle_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/lifecycle_msgs/srv"
)

// ParamAutostart is the read-only parameter every managed node declares:
// true (the default) configures and activates the node at start.
const ParamAutostart = "autostart"

// QoSTransitionEvent is the QoS of ~/transition_event: rcl's default
// publisher options (keep last 10, reliable, volatile).
var QoSTransitionEvent = ros.QoSDefault

// Node is a managed node: a ros.Node with the lifecycle state machine and
// its services. Create it with New (or let Run do it).
type Node struct {
	n      *ros.Node
	m      *Machine
	events *ros.Publisher[lifecycle_msgs_msg.TransitionEvent]
	auto   bool
	state  atomic.Uint32 // current StateID, for Active and State without the machine's lock

	mu        sync.Mutex
	cbs       map[StateID]func(previous State) Result
	entities  []managed
	observers []func(Transition)
}

// OnTransition registers f to be called with every transition the machine
// takes, after the state changed (for introspection: internal/fsm/fsmnode
// publishes them on ~/fsm/transition). f runs on the goroutine of the
// change and must not block or change the state.
func (l *Node) OnTransition(f func(Transition)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.observers = append(l.observers, f)
}

// managed is what follows the node's activation (publishers).
type managed interface {
	setActive(bool)
}

// New makes n a managed node in the unconfigured state: it declares the
// autostart parameter and creates the lifecycle services and
// ~/transition_event. Register the callbacks, then call Start (Run does
// both).
func New(n *ros.Node) (*Node, error) {
	auto, err := ros.DeclareParam(n, ParamAutostart, true, param.ReadOnly(
		"configure and activate the node at start; false leaves it unconfigured for a lifecycle manager (ros2 lifecycle set, Nav2's lifecycle_manager)",
		"the node starts once"))
	if err != nil {
		return nil, err
	}
	l := &Node{n: n, m: NewMachine(), auto: auto, cbs: map[StateID]func(State) Result{}}
	l.state.Store(uint32(StateUnconfigured))
	if l.events, err = ros.NewPublisher[lifecycle_msgs_msg.TransitionEvent](n, "~/transition_event", QoSTransitionEvent); err != nil {
		return nil, err
	}
	if err := l.services(); err != nil {
		return nil, err
	}
	return l, nil
}

// Node returns the underlying node (for topics, services, parameters).
func (l *Node) Node() *ros.Node { return l.n }

// Autostart returns the value of the autostart parameter.
func (l *Node) Autostart() bool { return l.auto }

// State returns the current state (a transition state while a callback
// runs).
func (l *Node) State() State { return stateOf(StateID(l.state.Load())) }

// Active reports whether the node is in the active state (or activating:
// the activate callback may already publish). Use it to gate what the node
// drives: an inactive node drives nothing.
func (l *Node) Active() bool {
	s := StateID(l.state.Load())
	return s == StateActive || s == StateActivating
}

// Available returns the transitions from the current state.
func (l *Node) Available() []Transition { return l.m.Available() }

func (l *Node) register(s StateID, f func(previous State) Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cbs[s] = f
}

// OnConfigure registers the configure callback (open and allocate:
// ports, buffers, the model). An unregistered callback succeeds.
func (l *Node) OnConfigure(f func(previous State) Result) { l.register(StateConfiguring, f) }

// OnCleanup registers the cleanup callback (release what configure took).
func (l *Node) OnCleanup(f func(previous State) Result) { l.register(StateCleaningUp, f) }

// OnActivate registers the activate callback (start driving). Managed
// publishers are active while it runs.
func (l *Node) OnActivate(f func(previous State) Result) { l.register(StateActivating, f) }

// OnDeactivate registers the deactivate callback (stop safely). Managed
// publishers are already inactive while it runs.
func (l *Node) OnDeactivate(f func(previous State) Result) { l.register(StateDeactivating, f) }

// OnShutdown registers the shutdown callback (release everything); it runs
// from whichever primary state the shutdown started (previous says which).
func (l *Node) OnShutdown(f func(previous State) Result) { l.register(StateShuttingDown, f) }

// OnError registers the error callback, run after another callback
// returned Error: Success leads to unconfigured (the node may be
// configured again), anything else to finalized. An unregistered callback
// succeeds, as rclcpp's default on_error does.
func (l *Node) OnError(f func(previous State) Result) { l.register(StateErrorProcessing, f) }

// run runs the callback of a transition state; a panic counts as Error, as
// rclcpp counts an exception.
func (l *Node) run(s StateID, previous State) (res Result) {
	l.mu.Lock()
	f := l.cbs[s]
	l.mu.Unlock()
	if f == nil {
		return Success
	}
	defer func() {
		if r := recover(); r != nil {
			l.n.Logger().Errorf("lifecycle: the %s callback panicked: %v", stateOf(s).Label, r)
			res = Error
		}
	}()
	return f(previous)
}

// step follows a transition taken: the state copy, the managed entities
// (active from the start of activating until the node leaves active) and
// the ~/transition_event publication.
func (l *Node) step(t Transition) {
	l.state.Store(uint32(t.Goal.ID))
	active := t.Goal.ID == StateActive || t.Goal.ID == StateActivating
	l.mu.Lock()
	ents := append([]managed(nil), l.entities...)
	obs := append([](func(Transition))(nil), l.observers...)
	l.mu.Unlock()
	for _, e := range ents {
		e.setActive(active)
	}
	for _, f := range obs {
		f(t)
	}
	// As rcl: the event names the start and goal states only (timestamp 0,
	// empty transition).
	ev := lifecycle_msgs_msg.TransitionEvent{
		StartState: lifecycle_msgs_msg.State{Id: uint8(t.Start.ID), Label: t.Start.Label},
		GoalState:  lifecycle_msgs_msg.State{Id: uint8(t.Goal.ID), Label: t.Goal.Label},
	}
	if err := l.events.Publish(&ev); err != nil && !errors.Is(err, ros.ErrClosed) {
		l.n.Logger().Warnf("lifecycle: publish ~/transition_event: %v", err)
	}
}

// ChangeState runs the transition id from the current state (see
// Machine.Change) and returns the result of its callback. A transition the
// current state does not have is an error and changes nothing.
//
// It may be called from any goroutine; a transition requested while
// another one runs is refused (the machine is in a transition state).
// Calling it from inside a transition callback is refused the same way.
func (l *Node) ChangeState(id TransitionID) (Result, error) {
	from := l.State()
	res, err := l.m.Change(id, l.run, l.step)
	if err != nil {
		return res, err
	}
	to := l.State()
	switch {
	case res == Success:
		l.n.Logger().Infof("lifecycle: %s -> %s", from.Label, to.Label)
	default:
		l.n.Logger().Warnf("lifecycle: transition %d from %s: callback returned %v, now %s", id, from.Label, res, to.Label)
	}
	return res, nil
}

// Trigger runs the transition labelled label from the current state
// ("configure", "activate", "deactivate", "cleanup", "shutdown").
func (l *Node) Trigger(label string) (Result, error) {
	t, err := l.m.LookupLabel(label)
	if err != nil {
		return Error, err
	}
	return l.ChangeState(t.ID)
}

// Start configures and activates the node when autostart is true; a
// callback that does not succeed is an error. Call it at the end of
// setup, after the callbacks are registered.
func (l *Node) Start() error {
	if !l.auto {
		l.n.Logger().Infof("lifecycle: autostart is false: %s waits unconfigured (ros2 lifecycle set %s configure)",
			l.n.FullyQualifiedName(), l.n.FullyQualifiedName())
		return nil
	}
	for _, label := range []string{LabelConfigure, LabelActivate} {
		res, err := l.Trigger(label)
		if err != nil {
			return fmt.Errorf("lifecycle autostart: %s: %w", label, err)
		}
		if res != Success {
			return fmt.Errorf("lifecycle autostart: %s failed (%v); the node is %s", label, res, l.State().Label)
		}
	}
	return nil
}

// Finish runs the shutdown transition from the current primary state
// (unconfigured, inactive or active), so that what the node holds is
// released when the process ends; a finalized node is left alone. Run
// calls it once the node is closed.
func (l *Node) Finish() error {
	if s := l.State().ID; s == StateFinalized || !IsPrimary(s) {
		return nil
	}
	res, err := l.Trigger(LabelShutdown)
	if err != nil {
		return err
	}
	if res != Success {
		return fmt.Errorf("lifecycle: shutdown callback returned %v", res)
	}
	return nil
}

// Run is ros.Run for a managed node: it creates the node, makes it managed
// (New), calls setup to create its entities and register the callbacks,
// then Start (autostart). When the node ends, after it is closed, it runs
// the shutdown transition (Finish), so the shutdown callback releases the
// hardware.
func Run(ctx context.Context, args []string, name string, setup func(ctx context.Context, l *Node) error) error {
	return ros.Run(ctx, args, name, func(ctx context.Context, n *ros.Node) error {
		l, err := New(n)
		if err != nil {
			return err
		}
		n.Context().OnShutdown(l.Finish)
		if err := setup(ctx, l); err != nil {
			return err
		}
		return l.Start()
	})
}

// services creates the five lifecycle services.
func (l *Node) services() error {
	if _, err := ros.NewService(l.n, "~/change_state", lifecycle_msgs_srv.ChangeState,
		func(_ context.Context, req *lifecycle_msgs_srv.ChangeState_Request) (*lifecycle_msgs_srv.ChangeState_Response, error) {
			return &lifecycle_msgs_srv.ChangeState_Response{Success: l.changeStateRequest(req.Transition)}, nil
		}); err != nil {
		return err
	}
	if _, err := ros.NewService(l.n, "~/get_state", lifecycle_msgs_srv.GetState,
		func(context.Context, *lifecycle_msgs_srv.GetState_Request) (*lifecycle_msgs_srv.GetState_Response, error) {
			return &lifecycle_msgs_srv.GetState_Response{CurrentState: stateMsg(l.m.Current())}, nil
		}); err != nil {
		return err
	}
	if _, err := ros.NewService(l.n, "~/get_available_states", lifecycle_msgs_srv.GetAvailableStates,
		func(context.Context, *lifecycle_msgs_srv.GetAvailableStates_Request) (*lifecycle_msgs_srv.GetAvailableStates_Response, error) {
			resp := &lifecycle_msgs_srv.GetAvailableStates_Response{}
			for _, s := range states {
				resp.AvailableStates = append(resp.AvailableStates, stateMsg(s))
			}
			return resp, nil
		}); err != nil {
		return err
	}
	if _, err := ros.NewService(l.n, "~/get_available_transitions", lifecycle_msgs_srv.GetAvailableTransitions,
		func(context.Context, *lifecycle_msgs_srv.GetAvailableTransitions_Request) (*lifecycle_msgs_srv.GetAvailableTransitions_Response, error) {
			return &lifecycle_msgs_srv.GetAvailableTransitions_Response{AvailableTransitions: descriptions(l.m.Available())}, nil
		}); err != nil {
		return err
	}
	_, err := ros.NewService(l.n, "~/get_transition_graph", lifecycle_msgs_srv.GetAvailableTransitions,
		func(context.Context, *lifecycle_msgs_srv.GetAvailableTransitions_Request) (*lifecycle_msgs_srv.GetAvailableTransitions_Response, error) {
			return &lifecycle_msgs_srv.GetAvailableTransitions_Response{AvailableTransitions: descriptions(transitions)}, nil
		})
	return err
}

// changeStateRequest answers ~/change_state as rclcpp does: a non-empty
// label takes precedence over the id (ros2 service call leaves the id 0)
// and must name a transition of the current state; success is true only
// when the transition's callback returned Success.
func (l *Node) changeStateRequest(t lifecycle_msgs_msg.Transition) bool {
	id := TransitionID(t.Id)
	if t.Label != "" {
		tr, err := l.m.LookupLabel(t.Label)
		if err != nil {
			l.n.Logger().Warnf("lifecycle: %v", err)
			return false
		}
		id = tr.ID
	}
	res, err := l.ChangeState(id)
	if err != nil {
		l.n.Logger().Errorf("lifecycle: unable to start transition %d from current state %s: %v", id, l.State().Label, err)
		return false
	}
	return res == Success
}

func stateMsg(s State) lifecycle_msgs_msg.State {
	return lifecycle_msgs_msg.State{Id: uint8(s.ID), Label: s.Label}
}

func descriptions(ts []Transition) []lifecycle_msgs_msg.TransitionDescription {
	out := make([]lifecycle_msgs_msg.TransitionDescription, 0, len(ts))
	for _, t := range ts {
		out = append(out, lifecycle_msgs_msg.TransitionDescription{
			Transition: lifecycle_msgs_msg.Transition{Id: uint8(t.ID), Label: t.Label},
			StartState: stateMsg(t.Start),
			GoalState:  stateMsg(t.Goal),
		})
	}
	return out
}
