package lifecycle

import (
	"fmt"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/fsm"
)

// StateID is a lifecycle state id (lifecycle_msgs/msg/State): a primary
// state (1–4) or a transition state (10–15).
type StateID uint8

// The states of the managed-node state machine, with the ids of
// lifecycle_msgs/msg/State.
const (
	StateUnknown         StateID = 0
	StateUnconfigured    StateID = 1
	StateInactive        StateID = 2
	StateActive          StateID = 3
	StateFinalized       StateID = 4
	StateConfiguring     StateID = 10
	StateCleaningUp      StateID = 11
	StateShuttingDown    StateID = 12
	StateActivating      StateID = 13
	StateDeactivating    StateID = 14
	StateErrorProcessing StateID = 15
)

// TransitionID is a lifecycle transition id (lifecycle_msgs/msg/Transition).
type TransitionID uint8

// The transitions of the state machine, with the ids of
// lifecycle_msgs/msg/Transition. The primary ones (1–7) are requested
// through ~/change_state; the others follow from what a transition
// callback returns.
const (
	TransitionCreate               TransitionID = 0 // not in the state machine (rcl does not register it)
	TransitionConfigure            TransitionID = 1
	TransitionCleanup              TransitionID = 2
	TransitionActivate             TransitionID = 3
	TransitionDeactivate           TransitionID = 4
	TransitionUnconfiguredShutdown TransitionID = 5
	TransitionInactiveShutdown     TransitionID = 6
	TransitionActiveShutdown       TransitionID = 7
	TransitionDestroy              TransitionID = 8 // not in the state machine (rcl does not register it)

	TransitionOnConfigureSuccess  TransitionID = 10
	TransitionOnConfigureFailure  TransitionID = 11
	TransitionOnConfigureError    TransitionID = 12
	TransitionOnCleanupSuccess    TransitionID = 20
	TransitionOnCleanupFailure    TransitionID = 21
	TransitionOnCleanupError      TransitionID = 22
	TransitionOnActivateSuccess   TransitionID = 30
	TransitionOnActivateFailure   TransitionID = 31
	TransitionOnActivateError     TransitionID = 32
	TransitionOnDeactivateSuccess TransitionID = 40
	TransitionOnDeactivateFailure TransitionID = 41
	TransitionOnDeactivateError   TransitionID = 42
	TransitionOnShutdownSuccess   TransitionID = 50
	TransitionOnShutdownFailure   TransitionID = 51
	TransitionOnShutdownError     TransitionID = 52
	TransitionOnErrorSuccess      TransitionID = 60
	TransitionOnErrorFailure      TransitionID = 61
	TransitionOnErrorError        TransitionID = 62
)

// Transition labels, as rcl_lifecycle names them. The three shutdown
// transitions share one label; the callback-result transitions share the
// labels of the three results.
const (
	LabelConfigure  = "configure"
	LabelCleanup    = "cleanup"
	LabelActivate   = "activate"
	LabelDeactivate = "deactivate"
	LabelShutdown   = "shutdown"
	LabelSuccess    = "transition_success"
	LabelFailure    = "transition_failure"
	LabelError      = "transition_error"
)

// Result is what a transition callback returns; the values are
// lifecycle_msgs/msg/Transition's TRANSITION_CALLBACK_* ids.
type Result uint8

// Transition callback results.
const (
	// Success completes the transition to its goal state.
	Success Result = 97
	// Failure returns to the state the transition started from (for
	// shutdown and on_error: finalized).
	Failure Result = 98
	// Error goes to errorprocessing, where the on_error callback decides:
	// success leads to unconfigured, anything else to finalized.
	Error Result = 99
)

// String returns the label of the transition a result takes.
func (r Result) String() string {
	switch r {
	case Success:
		return "SUCCESS"
	case Failure:
		return "FAILURE"
	case Error:
		return "ERROR"
	}
	return fmt.Sprintf("Result(%d)", uint8(r))
}

// label is the label of the callback-result transition r takes (anything
// that is neither success nor failure counts as an error, as in rclcpp).
func (r Result) label() string {
	switch r {
	case Success:
		return LabelSuccess
	case Failure:
		return LabelFailure
	}
	return LabelError
}

// State is a state of the machine: its id and label.
type State struct {
	ID    StateID
	Label string
}

func (s State) String() string { return fmt.Sprintf("%s [%d]", s.Label, s.ID) }

// Transition is an edge of the machine: id, label, start and goal.
type Transition struct {
	ID          TransitionID
	Label       string
	Start, Goal State
}

// states are the states in rcl_lifecycle's registration order, which is
// the order of ~/get_available_states.
var states = []State{
	{StateUnknown, "unknown"},
	{StateUnconfigured, "unconfigured"},
	{StateInactive, "inactive"},
	{StateActive, "active"},
	{StateFinalized, "finalized"},
	{StateConfiguring, "configuring"},
	{StateCleaningUp, "cleaningup"},
	{StateShuttingDown, "shuttingdown"},
	{StateActivating, "activating"},
	{StateDeactivating, "deactivating"},
	{StateErrorProcessing, "errorprocessing"},
}

// stateOf returns the state with id (the zero State when there is none).
func stateOf(id StateID) State {
	for _, s := range states {
		if s.ID == id {
			return s
		}
	}
	return State{}
}

// edge builds a transition of the table.
func edge(id TransitionID, label string, start, goal StateID) Transition {
	return Transition{ID: id, Label: label, Start: stateOf(start), Goal: stateOf(goal)}
}

// transitions is the default state machine in rcl_lifecycle's
// registration order, which is the order of ~/get_transition_graph and,
// per start state, of ~/get_available_transitions.
var transitions = []Transition{
	edge(TransitionConfigure, LabelConfigure, StateUnconfigured, StateConfiguring),
	edge(TransitionOnConfigureSuccess, LabelSuccess, StateConfiguring, StateInactive),
	edge(TransitionOnConfigureFailure, LabelFailure, StateConfiguring, StateUnconfigured),
	edge(TransitionOnConfigureError, LabelError, StateConfiguring, StateErrorProcessing),

	edge(TransitionCleanup, LabelCleanup, StateInactive, StateCleaningUp),
	edge(TransitionOnCleanupSuccess, LabelSuccess, StateCleaningUp, StateUnconfigured),
	edge(TransitionOnCleanupFailure, LabelFailure, StateCleaningUp, StateInactive),
	edge(TransitionOnCleanupError, LabelError, StateCleaningUp, StateErrorProcessing),

	edge(TransitionActivate, LabelActivate, StateInactive, StateActivating),
	edge(TransitionOnActivateSuccess, LabelSuccess, StateActivating, StateActive),
	edge(TransitionOnActivateFailure, LabelFailure, StateActivating, StateInactive),
	edge(TransitionOnActivateError, LabelError, StateActivating, StateErrorProcessing),

	edge(TransitionDeactivate, LabelDeactivate, StateActive, StateDeactivating),
	edge(TransitionOnDeactivateSuccess, LabelSuccess, StateDeactivating, StateInactive),
	edge(TransitionOnDeactivateFailure, LabelFailure, StateDeactivating, StateActive),
	edge(TransitionOnDeactivateError, LabelError, StateDeactivating, StateErrorProcessing),

	edge(TransitionUnconfiguredShutdown, LabelShutdown, StateUnconfigured, StateShuttingDown),
	edge(TransitionInactiveShutdown, LabelShutdown, StateInactive, StateShuttingDown),
	edge(TransitionActiveShutdown, LabelShutdown, StateActive, StateShuttingDown),
	edge(TransitionOnShutdownSuccess, LabelSuccess, StateShuttingDown, StateFinalized),
	edge(TransitionOnShutdownFailure, LabelFailure, StateShuttingDown, StateFinalized),
	edge(TransitionOnShutdownError, LabelError, StateShuttingDown, StateErrorProcessing),

	edge(TransitionOnErrorSuccess, LabelSuccess, StateErrorProcessing, StateUnconfigured),
	edge(TransitionOnErrorFailure, LabelFailure, StateErrorProcessing, StateFinalized),
	edge(TransitionOnErrorError, LabelError, StateErrorProcessing, StateFinalized),
}

// States returns every state of the machine, in the order
// ~/get_available_states lists them (rcl_lifecycle's).
func States() []State { return append([]State(nil), states...) }

// Graph returns every transition of the machine, in the order
// ~/get_transition_graph lists them (rcl_lifecycle's).
func Graph() []Transition { return append([]Transition(nil), transitions...) }

// IsPrimary reports whether id is a primary state (unconfigured, inactive,
// active, finalized), the states a node rests in between transitions.
func IsPrimary(id StateID) bool { return id >= StateUnconfigured && id <= StateFinalized }

// Machine is the managed-node state machine of rcl_lifecycle's default
// table. It starts unconfigured. It is safe for concurrent use: each step
// is atomic, and a transition requested while another one runs finds the
// machine in a transition state and is refused.
type Machine struct {
	mu  sync.Mutex
	cur StateID
}

// NewMachine returns a machine in the unconfigured state.
func NewMachine() *Machine { return &Machine{cur: StateUnconfigured} }

// Current returns the current state.
func (m *Machine) Current() State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return stateOf(m.cur)
}

// Available returns the transitions from the current state, in the order
// ~/get_available_transitions lists them.
func (m *Machine) Available() []Transition {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Transition
	for _, t := range transitions {
		if t.Start.ID == m.cur {
			out = append(out, t)
		}
	}
	return out
}

// NoTransitionError is returned for a transition the current state does
// not have; the text is rcl_lifecycle's warning.
type NoTransitionError struct {
	ID    TransitionID // when Label is ""
	Label string
	State State
}

func (e *NoTransitionError) Error() string {
	if e.Label != "" {
		return fmt.Sprintf("No transition matching %s found for current state %s", e.Label, e.State.Label)
	}
	return fmt.Sprintf("No transition matching %d found for current state %s", e.ID, e.State.Label)
}

// Lookup returns the transition from the current state with id.
func (m *Machine) Lookup(id TransitionID) (Transition, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lookup(id)
}

func (m *Machine) lookup(id TransitionID) (Transition, error) {
	for _, t := range transitions {
		if t.Start.ID == m.cur && t.ID == id {
			return t, nil
		}
	}
	return Transition{}, &NoTransitionError{ID: id, State: stateOf(m.cur)}
}

// LookupLabel returns the first transition from the current state with
// label (the order of the table decides, as in rcl_lifecycle).
func (m *Machine) LookupLabel(label string) (Transition, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lookupLabel(label)
}

func (m *Machine) lookupLabel(label string) (Transition, error) {
	for _, t := range transitions {
		if t.Start.ID == m.cur && t.Label == label {
			return t, nil
		}
	}
	return Transition{}, &NoTransitionError{Label: label, State: stateOf(m.cur)}
}

// Trigger takes the transition id from the current state and returns it;
// an id the current state does not have is a *NoTransitionError and
// changes nothing.
func (m *Machine) Trigger(id TransitionID) (Transition, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, err := m.lookup(id)
	if err != nil {
		return t, err
	}
	m.cur = t.Goal.ID
	return t, nil
}

// TriggerLabel is Trigger by label.
func (m *Machine) TriggerLabel(label string) (Transition, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, err := m.lookupLabel(label)
	if err != nil {
		return t, err
	}
	m.cur = t.Goal.ID
	return t, nil
}

// Callback runs the callback of a transition state (configuring,
// cleaningup, shuttingdown, activating, deactivating, errorprocessing);
// previous is the primary state the requested transition started from.
type Callback func(state StateID, previous State) Result

// NotRequestableError is returned by Change for a transition that does
// not start in a primary state: only the primary transitions (configure,
// cleanup, activate, deactivate, shutdown) are requested; the others
// follow from the callbacks' results.
type NotRequestableError struct {
	Transition Transition
}

func (e *NotRequestableError) Error() string {
	return fmt.Sprintf("transition %s [%d] starts in %s: only the transitions from a primary state can be requested",
		e.Transition.Label, e.Transition.ID, e.Transition.Start.Label)
}

// Change runs the transition id from the current state as
// rclcpp_lifecycle's change_state does: it moves to the transition state,
// runs that state's callback (run), and takes the transition its result
// names (success, failure, error). After an error it runs the
// errorprocessing callback: success leads to unconfigured, failure or
// error to finalized. notify is called after every step with the
// transition taken (the ~/transition_event publication). The result is the
// first callback's (a value other than Success and Failure counts as
// Error); err is a *NoTransitionError when the current state
// has no transition id (nothing changes then), a *NotRequestableError for
// an id that only a callback result may take.
//
// The machine is not locked while a callback runs; a concurrent Change
// finds a transition state and is refused.
func (m *Machine) Change(id TransitionID, run Callback, notify func(Transition)) (Result, error) {
	m.mu.Lock()
	initial := stateOf(m.cur)
	t, err := m.lookup(id)
	if err == nil && !IsPrimary(t.Start.ID) {
		err = &NotRequestableError{Transition: t}
	}
	if err != nil {
		m.mu.Unlock()
		return Error, err
	}
	m.cur = t.Goal.ID
	m.mu.Unlock()
	if notify != nil {
		notify(t)
	}
	res := run(t.Goal.ID, initial)
	if res != Success && res != Failure {
		res = Error // an unknown result is an error (rclcpp would stop in errorprocessing)
	}
	t, err = m.TriggerLabel(res.label())
	if err != nil { // unreachable: every transition state has all three results
		return res, err
	}
	if notify != nil {
		notify(t)
	}
	if res == Error {
		onErr := run(StateErrorProcessing, initial)
		t, err = m.TriggerLabel(onErr.label())
		if err != nil {
			return res, err
		}
		if notify != nil {
			notify(t)
		}
	}
	return res, nil
}

// FSMMachine is the name of the lifecycle machine in the introspection
// graph.
const FSMMachine = "lifecycle"

// TransitionStateBound is the dwell bound of the transition states
// (configuring … errorprocessing) in the introspection graph: their
// callbacks should return well within it.
const TransitionStateBound = 10 * time.Second

// FSMGraph returns the lifecycle machine as an introspection graph: the
// states but unknown (which no transition enters) by label, the
// transitions of Graph with their labels as guards, and the initial state
// unconfigured; the transition states are bounded by TransitionStateBound.
func FSMGraph() fsm.Graph {
	g := fsm.Graph{Machine: FSMMachine, Initial: stateOf(StateUnconfigured).Label}
	for _, s := range states {
		if s.ID == StateUnknown {
			continue
		}
		st := fsm.State{Name: s.Label}
		if !IsPrimary(s.ID) {
			st.MaxDwell = TransitionStateBound
		}
		g.States = append(g.States, st)
	}
	for _, t := range transitions {
		g.Edges = append(g.Edges, fsm.Edge{From: t.Start.Label, To: t.Goal.Label, Guard: t.Label})
	}
	return g
}
