package rsm

import "context"

// State is one state of the Robot Statemachine (BaseState of the original).
//
// The StateInterface calls the methods on its single goroutine, in this
// order: OnSetup once when the state is handed to Transition, OnEntry once
// before the first OnActive, OnActive on every tick while the state is
// current, OnExit once before the state is replaced. The command hooks and
// OnInterrupt may be called at any time while the state is current.
//
// Every state embeds *Base (which also supplies no-op OnSetup, OnEntry and
// OnExit). The command hooks and OnInterrupt have no defaults on purpose: a
// state that misspells one does not compile. (FIX: the original Boot state
// misnamed its waypoint handler and silently fell back to an empty base
// method that returned an uninitialised success flag.)
type State interface {
	// Name is shown on /rsm/stateInfo. Exploration states start with "E:",
	// waypoint following states with "W:", simple-goal states with "G:".
	Name() string
	// OnSetup runs right after the state was handed to Transition.
	OnSetup()
	// OnEntry runs before the first OnActive.
	OnEntry(ctx context.Context)
	// OnActive runs on every tick while the state is current.
	OnActive(ctx context.Context)
	// OnExit runs before the state is replaced.
	OnExit(ctx context.Context)
	// OnExplorationStart answers /rsm/startStopExploration with data=true.
	OnExplorationStart(ctx context.Context) Reply
	// OnExplorationStop answers /rsm/startStopExploration with data=false.
	OnExplorationStop(ctx context.Context) Reply
	// OnWaypointFollowingStart answers /rsm/startStopWaypointFollowing
	// with data=true.
	OnWaypointFollowingStart(ctx context.Context) Reply
	// OnWaypointFollowingStop answers /rsm/startStopWaypointFollowing
	// with data=false.
	OnWaypointFollowingStop(ctx context.Context) Reply
	// OnInterrupt handles an interrupt (e-stop, teleoperation, simple goal).
	OnInterrupt(ctx context.Context, i Interrupt)

	base() *Base
}

// Base is embedded by every state. It holds the name, the owning
// StateInterface and the "an interrupt occurred" flag of the original.
type Base struct {
	si          *StateInterface
	name        string
	interrupted bool
	byInterrupt bool // an interrupt of the previous state chose this one
}

// NewBase returns a Base that shows name; plugin states of other packages
// embed it (rsm.NewBase("E: My State")).
func NewBase(name string) Base { return Base{name: name} }

func (b *Base) base() *Base { return b }

// Name returns the state's current name.
func (b *Base) Name() string { return b.name }

// SetName changes the name shown on /rsm/stateInfo; call it from OnSetup
// or OnEntry.
func (b *Base) SetName(name string) { b.name = name }

// SI returns the StateInterface that owns the state (nil before
// Transition).
func (b *Base) SI() *StateInterface { return b.si }

// Interrupted reports whether an interrupt already chose the next state.
func (b *Base) Interrupted() bool { return b.interrupted }

// EnteredByInterrupt reports whether an interrupt of the previous state
// chose this state (a simple goal started the navigation plugin), rather
// than the previous state's own transition.
func (b *Base) EnteredByInterrupt() bool { return b.byInterrupt }

// OnSetup does nothing.
func (b *Base) OnSetup() {}

// OnEntry does nothing.
func (b *Base) OnEntry(context.Context) {}

// OnExit does nothing.
func (b *Base) OnExit(context.Context) {}

// Next requests the state's normal transition to s. It is ignored once an
// interrupt has chosen the next state, so the interrupt's target wins (the
// original's `if (!_interrupt_occured)` guard, made structural).
func (b *Base) Next(s State) {
	if b.interrupted || b.si == nil {
		return
	}
	b.si.Transition(s)
}

// InterruptTo requests a transition caused by an interrupt; later normal
// transitions of this state are ignored.
func (b *Base) InterruptTo(s State) {
	if b.si == nil {
		return
	}
	b.interrupted = true
	if s != nil && s.base().si == nil {
		s.base().byInterrupt = true
	}
	b.si.Transition(s)
}

// CommonInterrupt applies the interrupt pattern shared by most states:
// e-stop → Emergency Stop, teleoperation → Teleoperation, simple goal →
// navigation plugin. It reports whether it handled i; plugin states call
// it from OnInterrupt.
func (b *Base) CommonInterrupt(i Interrupt) bool { return b.commonInterrupt(i) }

// NextPlugin requests the normal transition to a plugin state (see
// StateInterface.Plugin), creating it only if the transition can still
// happen.
func (b *Base) NextPlugin(kind PluginKind, name string) { b.nextPlugin(kind, name) }

// commonInterrupt applies the pattern shared by most states: e-stop →
// Emergency Stop, teleoperation → Teleoperation, simple goal → navigation
// plugin. It reports whether it handled i.
func (b *Base) commonInterrupt(i Interrupt) bool {
	switch i {
	case EmergencyStopInterrupt:
		b.InterruptTo(NewEmergencyStop())
	case TeleoperationInterrupt:
		b.InterruptTo(NewTeleoperation())
	case SimpleGoalInterrupt:
		b.InterruptTo(b.si.Plugin(NavigationPlugin, ""))
	default:
		return false
	}
	return true
}

// Leaving reports whether a transition away from the current state is
// already pending in this tick; states skip their normal work then.
func (b *Base) Leaving() bool { return b.si != nil && b.si.pending != nil }

// nextPlugin requests the normal transition to a plugin state, creating it
// only if the transition can still happen.
func (b *Base) nextPlugin(kind PluginKind, name string) {
	if b.interrupted || b.si == nil {
		return
	}
	b.si.Transition(b.si.Plugin(kind, name))
}
