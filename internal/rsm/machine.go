package rsm

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// PluginKind selects a plugin in StateInterface.Plugin (the plugin types of
// the original's StateInterface.h).
type PluginKind int

// Plugin kinds with the numbers of the original.
const (
	AnyPlugin           PluginKind = 0 // plugin given by name only
	CalculateGoalPlugin PluginKind = 1 // parameter calculate_goal_plugin
	NavigationPlugin    PluginKind = 2 // parameter navigation_plugin
	MappingPlugin       PluginKind = 3 // parameter mapping_plugin
	RoutinePlugin       PluginKind = 4 // "rsm::<name>RoutineState"
)

// Config is the configuration of the state machine (private parameters of
// rsmNode). The zero value is completed by DefaultConfig's values.
type Config struct {
	// (optional) calculate_goal_plugin; default "rsm::CalculateGoalState".
	CalculateGoalPlugin string
	// (optional) navigation_plugin; default "rsm::NavigationState".
	NavigationPlugin string
	// (optional) mapping_plugin; default "rsm::MappingDummyState".
	MappingPlugin string
	// (optional) RoutinePlugins maps a waypoint routine's name to the
	// plugin that runs it (parameter routine_plugins), e.g. "Stairs" →
	// "action:/my_robot/stairs"; a routine not listed runs
	// "rsm::<Name>RoutineState".
	RoutinePlugins map[string]string
	// (optional) time Calculate Goal waits for frontier data; default 5 s.
	CalculateGoalTimeout time.Duration
	// Navigation configures the Navigation plugin.
	Navigation NavigationConfig
}

// NavigationConfig holds the Navigation plugin's parameters (private
// parameters of rsmNode, as in the newer melodic-devel branch).
type NavigationConfig struct {
	// (optional) action name for forward driving; default "navigate_to_pose".
	Action string
	// (optional) action name for reverse driving; default
	// "navigate_to_pose_reverse".
	ReverseAction string
	// NavigationTuning may change while the machine runs
	// (StateInterface.SetNavigationTuning).
	NavigationTuning
}

// NavigationTuning holds the Navigation plugin's stuck detection and
// server wait, the part of NavigationConfig that may change while the
// state machine runs (live parameters of rsmNode); the Navigation state
// reads it at every tick.
type NavigationTuning struct {
	// (optional) pose_tolerance: movement (m, and rad of yaw) below which
	// the robot counts as standing still; default 0.1.
	PoseTolerance float64
	// (optional) idle_timer_duration: standing still this long while
	// navigating autonomously means stuck; default 10 s, forced to at
	// least UnstuckTimer + 1 s.
	IdleTimer time.Duration
	// (optional) unstuck_timer_duration: how long the opposite direction is
	// tried to get unstuck; default 5 s.
	UnstuckTimer time.Duration
	// idle_timer_behavior: when still stuck after the unstuck attempt,
	// true aborts to Idle, false fails the goal (default false).
	AbortWhenStuck bool
	// (optional) action_server_timeout: how long the state waits for the
	// action server it needs (forward or reverse) before it gives up with
	// the reason and goes to Idle; default DefaultServerTimeout, negative
	// waits for ever (the original's behaviour). Plugin states served by a
	// RunState action server (RemoteState) wait as long for theirs.
	ServerTimeout time.Duration
}

// SetNavigationTuning changes the Navigation plugin's tuning (checked and
// completed as by Config.Validate; invalid values are refused with the
// reason and change nothing). A running Navigation state uses it from its
// next tick. Call it on the goroutine that ticks the machine.
func (si *StateInterface) SetNavigationTuning(t NavigationTuning) error {
	c := si.cfg
	c.Navigation.NavigationTuning = t
	if err := c.Validate(); err != nil {
		return err
	}
	si.cfg = c
	return nil
}

// DefaultServerTimeout is the default of NavigationConfig.ServerTimeout.
const DefaultServerTimeout = 20 * time.Second

// DefaultConfig returns the original's defaults.
func DefaultConfig() Config {
	return Config{
		CalculateGoalPlugin:  CalculateGoalStateName,
		NavigationPlugin:     NavigationStateName,
		MappingPlugin:        MappingDummyStateName,
		CalculateGoalTimeout: 5 * time.Second,
		Navigation: NavigationConfig{
			Action:        "navigate_to_pose",
			ReverseAction: "navigate_to_pose_reverse",
			NavigationTuning: NavigationTuning{
				PoseTolerance: 0.1,
				IdleTimer:     10 * time.Second,
				UnstuckTimer:  5 * time.Second,
				ServerTimeout: DefaultServerTimeout,
			},
		},
	}
}

// Validate completes unset fields with defaults and rejects bad values,
// naming the field.
func (c *Config) Validate() error {
	d := DefaultConfig()
	if c.CalculateGoalPlugin == "" {
		c.CalculateGoalPlugin = d.CalculateGoalPlugin
	}
	if c.NavigationPlugin == "" {
		c.NavigationPlugin = d.NavigationPlugin
	}
	if c.MappingPlugin == "" {
		c.MappingPlugin = d.MappingPlugin
	}
	if c.CalculateGoalTimeout == 0 {
		c.CalculateGoalTimeout = d.CalculateGoalTimeout
	}
	n := &c.Navigation
	if n.Action == "" {
		n.Action = d.Navigation.Action
	}
	if n.ReverseAction == "" {
		n.ReverseAction = d.Navigation.ReverseAction
	}
	if n.PoseTolerance == 0 {
		n.PoseTolerance = d.Navigation.PoseTolerance
	}
	if n.IdleTimer == 0 {
		n.IdleTimer = d.Navigation.IdleTimer
	}
	if n.UnstuckTimer == 0 {
		n.UnstuckTimer = d.Navigation.UnstuckTimer
	}
	if n.ServerTimeout == 0 {
		n.ServerTimeout = d.Navigation.ServerTimeout
	}
	for routine, plugin := range c.RoutinePlugins {
		if err := checkPluginName(plugin); routine == "" || err != nil {
			return fmt.Errorf("routine_plugins %q=%q: want <routine>=<plugin> with a plugin name or %s<action> (%v)",
				routine, plugin, ActionPluginPrefix, err)
		}
	}
	for _, p := range []struct{ param, name string }{
		{"calculate_goal_plugin", c.CalculateGoalPlugin},
		{"navigation_plugin", c.NavigationPlugin},
		{"mapping_plugin", c.MappingPlugin},
	} {
		if err := checkPluginName(p.name); err != nil {
			return fmt.Errorf("%s %q: %w", p.param, p.name, err)
		}
	}
	switch {
	case c.CalculateGoalTimeout < 0:
		return fmt.Errorf("calculate goal timeout %v: must be positive", c.CalculateGoalTimeout)
	case !geom.Finite(n.PoseTolerance) || n.PoseTolerance < 0:
		return fmt.Errorf("pose_tolerance %v: must be a finite number ≥ 0", n.PoseTolerance)
	case n.IdleTimer < 0:
		return fmt.Errorf("idle_timer_duration %v: must be positive", n.IdleTimer)
	case n.UnstuckTimer < 0:
		return fmt.Errorf("unstuck_timer_duration %v: must be positive", n.UnstuckTimer)
	}
	if min := n.UnstuckTimer + time.Second; n.IdleTimer < min {
		n.IdleTimer = min
	}
	return nil
}

// Deps are the state machine's connections to the outside world.
type Deps struct {
	// Store is the service provider (required).
	Store DataStore
	// Boot is /rsm/bootUpFinished (required).
	Boot BootService
	// Nav is the Nav2 action client (required by the Navigation plugin).
	Nav Navigator
	// Clock gives the time (required).
	Clock Clock
	// (optional) Log; default discards.
	Log Logger
	// (optional) Runner sends the RunState goals of plugins named
	// "action:<action>"; without it such plugins fall back to Idle.
	Runner StateRunner
	// (optional) Registry of plugin states; default DefaultRegistry().
	Registry *Registry
	// (optional) OnStateChange is called with the new state's name after
	// every transition (the node publishes it on /rsm/stateInfo).
	OnStateChange func(name string)
	// (optional) OnTransition is called after OnStateChange with the name
	// shown before ("" at the first), the new name and the cause: the
	// interrupt (Interrupt.String) or command hook ("startExploration",
	// "stopExploration", "startWaypointFollowing", "stopWaypointFollowing")
	// during which the transition was requested, CauseRenamed, or "" when
	// the state's own OnActive or a listener requested it.
	OnTransition func(from, to, cause string)
}

// StateInterface owns the current state and performs transitions: at most
// one per Tick, after the current state's OnActive. It turns operation
// modes and simple goals into interrupts
// (docs/rsm.md#operation-mode-and-interrupts).
//
// All methods must be called from one goroutine (the node's callback
// goroutine); states call back into it synchronously.
type StateInterface struct {
	cfg  Config
	deps Deps
	log  Logger

	current, pending State
	shown            string // the name last passed to OnStateChange
	cause            string // the entry point running now (Deps.OnTransition)
	pendingCause     string // cause of the pending transition
	onInterrupt      bool
	opMode           OperationMode
	opModeKnown      bool
}

// NewStateInterface checks cfg and deps and returns a state machine with no
// state; call Start to enter Boot.
func NewStateInterface(cfg Config, deps Deps) (*StateInterface, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("rsm config: %w", err)
	}
	switch {
	case deps.Store == nil:
		return nil, errors.New("rsm deps: Store is required")
	case deps.Boot == nil:
		return nil, errors.New("rsm deps: Boot is required")
	case deps.Clock == nil:
		return nil, errors.New("rsm deps: Clock is required")
	}
	if deps.Log == nil {
		deps.Log = nopLogger{}
	}
	if deps.Registry == nil {
		deps.Registry = DefaultRegistry()
	}
	return &StateInterface{cfg: cfg, deps: deps, log: deps.Log}, nil
}

// Start hands the Boot state to Transition; it becomes current on the next
// Tick.
func (si *StateInterface) Start() { si.Transition(NewBoot()) }

// Config returns the validated configuration.
func (si *StateInterface) Config() Config { return si.cfg }

// Store returns the data store.
func (si *StateInterface) Store() DataStore { return si.deps.Store }

// Boot returns the boot service.
func (si *StateInterface) Boot() BootService { return si.deps.Boot }

// Navigator returns the Nav2 action client (may be nil).
func (si *StateInterface) Navigator() Navigator { return si.deps.Nav }

// Now returns the clock's time.
func (si *StateInterface) Now() time.Time { return si.deps.Clock.Now() }

// Log returns the logger.
func (si *StateInterface) Log() Logger { return si.log }

// Current returns the current state (nil before the first Tick).
func (si *StateInterface) Current() State { return si.current }

// Pending returns the state that becomes current at the end of this tick,
// or nil.
func (si *StateInterface) Pending() State { return si.pending }

// StateName answers /rsm/stateInfo (the service): the current state's name,
// "" before the first tick.
func (si *StateInterface) StateName() string {
	if si.current == nil {
		return ""
	}
	return si.current.Name()
}

// OperationMode returns the last operation mode received, and whether one
// was received at all.
func (si *StateInterface) OperationMode() (OperationMode, bool) { return si.opMode, si.opModeKnown }

// Transition makes next the pending state (transitionToVolatileState). It
// is ignored if next is the current state; a nil state or one that already
// belongs to a state machine is rejected with an error log. A later call in
// the same tick replaces the pending state.
func (si *StateInterface) Transition(next State) {
	if next == nil {
		si.log.Errorf("rsm: transition to a nil state rejected")
		return
	}
	if next == si.current {
		return
	}
	b := next.base()
	if b.si != nil {
		si.log.Errorf("rsm: transition to %q rejected: the state instance is already in use", next.Name())
		return
	}
	b.si = si
	si.pending, si.pendingCause = next, si.cause
	next.OnSetup()
}

// Tick is one cycle of the state machine (awake): on the first call the
// pending state becomes current and is entered; then the current state's
// OnActive runs; then, if a transition is pending, the current state is
// exited, the pending one entered, and OnStateChange called with its name.
func (si *StateInterface) Tick(ctx context.Context) {
	si.cause = ""
	if si.current == nil {
		if si.pending == nil {
			return
		}
		si.current, si.pending = si.pending, nil
		si.current.OnEntry(ctx)
		si.announce(si.pendingCause)
	}
	si.current.OnActive(ctx)
	if si.current.Name() != si.shown { // renamed while active (a plugin's feedback)
		si.announce(CauseRenamed)
	}
	if si.pending != nil {
		si.current.OnExit(ctx)
		si.current, si.pending = si.pending, nil
		si.current.OnEntry(ctx)
		si.announce(si.pendingCause)
	}
}

func (si *StateInterface) announce(cause string) {
	from := si.shown
	si.shown = si.current.Name()
	si.log.Infof("rsm: state %q", si.shown)
	if si.deps.OnStateChange != nil {
		si.deps.OnStateChange(si.shown)
	}
	if si.deps.OnTransition != nil {
		si.deps.OnTransition(from, si.shown, cause)
	}
}

// during runs f with cause as the cause of the transitions it requests.
func (si *StateInterface) during(cause string, f func()) {
	prev := si.cause
	si.cause = cause
	defer func() { si.cause = prev }()
	f()
}

// Plugin returns a fresh plugin state (getPluginState): kinds 1-3 use the
// configured plugin names, RoutinePlugin uses the routine's entry in
// Config.RoutinePlugins or else "rsm::<name>RoutineState", AnyPlugin uses
// "rsm::<name>" (or name itself if it has a namespace). A plugin name
// "action:<action>" gives a RemoteState that runs in that RunState action
// server. An unknown plugin gives Idle and an error log that names the
// plugin.
func (si *StateInterface) Plugin(kind PluginKind, name string) State {
	s, err := si.newPlugin(kind, name)
	if err != nil {
		si.log.Errorf("rsm: cannot create plugin state, going to Idle: %v", err)
		return NewIdle()
	}
	return s
}

func (si *StateInterface) newPlugin(kind PluginKind, name string) (State, error) {
	var full, started string
	switch kind {
	case CalculateGoalPlugin:
		full, started = si.cfg.CalculateGoalPlugin, NextCalculateGoal
	case NavigationPlugin:
		full, started = si.cfg.NavigationPlugin, NextNavigation
	case MappingPlugin:
		full, started = si.cfg.MappingPlugin, NextMapping
	case RoutinePlugin:
		if name == "" {
			return nil, errors.New("routine plugin requested without a routine name")
		}
		full, started = si.cfg.RoutinePlugins[name], RoutinePrefix+name
		if full == "" {
			full = "rsm::" + name + "RoutineState"
		}
	default:
		if name == "" {
			return nil, errors.New("plugin requested without type or name")
		}
		full, started = name, name
		if !strings.Contains(name, "::") && !strings.HasPrefix(name, ActionPluginPrefix) {
			full = "rsm::" + name
		}
	}
	if action, ok := strings.CutPrefix(full, ActionPluginPrefix); ok {
		if err := checkPluginName(full); err != nil {
			return nil, fmt.Errorf("plugin %q: %w", full, err)
		}
		if si.deps.Runner == nil {
			return nil, fmt.Errorf("plugin %q: no RunState action client configured", full)
		}
		return NewRemoteState(action, started), nil
	}
	return si.deps.Registry.New(full)
}

// checkPluginName rejects an empty name and an "action:" name without an
// action or with blanks in it.
func checkPluginName(name string) error {
	if name == "" {
		return errors.New("empty plugin name")
	}
	if action, ok := strings.CutPrefix(name, ActionPluginPrefix); ok {
		if action == "" || strings.ContainsAny(action, " \t\n") {
			return fmt.Errorf("%q: want %s<action name>, e.g. %s/my_robot/stairs", name, ActionPluginPrefix, ActionPluginPrefix)
		}
	}
	return nil
}

// StateByName returns a fresh state for a RunState result's next_state:
// NextIdle, NextWaypointFollowing, one of the plugin parameters
// (NextCalculateGoal, NextNavigation, NextMapping), RoutinePrefix+<name>,
// or a plugin name as Plugin(AnyPlugin, name) takes it. Anything else
// (including the interrupt-only states Emergency Stop and Teleoperation and
// unknown plugins) is an error.
func (si *StateInterface) StateByName(name string) (State, error) {
	switch name {
	case NextIdle:
		return NewIdle(), nil
	case NextWaypointFollowing:
		return NewWaypointFollowing(), nil
	case NextCalculateGoal:
		return si.newPlugin(CalculateGoalPlugin, "")
	case NextNavigation:
		return si.newPlugin(NavigationPlugin, "")
	case NextMapping:
		return si.newPlugin(MappingPlugin, "")
	case "":
		return nil, errors.New("next state: empty name")
	}
	if routine, ok := strings.CutPrefix(name, RoutinePrefix); ok {
		return si.newPlugin(RoutinePlugin, routine)
	}
	s, err := si.newPlugin(AnyPlugin, name)
	if err != nil {
		return nil, fmt.Errorf("next state %q: %w", name, err)
	}
	return s, nil
}

// CheckPlugins reports configured plugin names that are not registered
// (each would turn into Idle when used), so a node can say so at start.
// Plugins served by RunState action servers need a Runner; whether their
// server runs is only known when the state starts.
func (si *StateInterface) CheckPlugins() error {
	var errs []error
	check := func(param string, kind PluginKind, name string) {
		if _, err := si.newPlugin(kind, name); err != nil {
			errs = append(errs, fmt.Errorf("parameter %s: %w", param, err))
		}
	}
	check("calculate_goal_plugin", CalculateGoalPlugin, "")
	check("navigation_plugin", NavigationPlugin, "")
	check("mapping_plugin", MappingPlugin, "")
	routines := make([]string, 0, len(si.cfg.RoutinePlugins))
	for r := range si.cfg.RoutinePlugins {
		routines = append(routines, r)
	}
	sort.Strings(routines)
	for _, r := range routines {
		check("routine_plugins", RoutinePlugin, r)
	}
	return errors.Join(errs...)
}

// StartStopExploration answers /rsm/startStopExploration.
func (si *StateInterface) StartStopExploration(ctx context.Context, start bool) Reply {
	if si.current == nil {
		return fail("No active state")
	}
	var r Reply
	if start {
		si.during("startExploration", func() { r = si.current.OnExplorationStart(ctx) })
	} else {
		si.during("stopExploration", func() { r = si.current.OnExplorationStop(ctx) })
	}
	return r
}

// StartStopWaypointFollowing answers /rsm/startStopWaypointFollowing.
func (si *StateInterface) StartStopWaypointFollowing(ctx context.Context, start bool) Reply {
	if si.current == nil {
		return fail("No active state")
	}
	var r Reply
	if start {
		si.during("startWaypointFollowing", func() { r = si.current.OnWaypointFollowingStart(ctx) })
	} else {
		si.during("stopWaypointFollowing", func() { r = si.current.OnWaypointFollowingStop(ctx) })
	}
	return r
}

// Stop2DNavGoal answers /rsm/stop2DNavGoal: SIMPLE_GOAL_STOP_INTERRUPT to
// the current state.
func (si *StateInterface) Stop2DNavGoal(ctx context.Context) {
	si.interrupt(ctx, SimpleGoalStopInterrupt)
}

func (si *StateInterface) interrupt(ctx context.Context, i Interrupt) {
	if si.current != nil {
		si.during(i.String(), func() { si.current.OnInterrupt(ctx, i) })
	}
}

// OnOperationMode handles a message on /rsm/operationMode
// (docs/rsm.md#operation-mode-and-interrupts):
// e-stop → EMERGENCY_STOP_INTERRUPT, else TELEOPERATION → TELEOPERATION_
// INTERRUPT (both repeated on every message), else INTERRUPT_END once after
// an interrupt. An unknown mode is rejected with an error and changes
// nothing.
func (si *StateInterface) OnOperationMode(ctx context.Context, m OperationMode) error {
	if !m.Mode.Valid() {
		return fmt.Errorf("operation mode %d: unknown (want 0 STOPPED, 1 AUTONOMOUS or 2 TELEOPERATION)", m.Mode)
	}
	si.opMode, si.opModeKnown = m, true
	switch {
	case m.EmergencyStop:
		si.onInterrupt = true
		si.interrupt(ctx, EmergencyStopInterrupt)
	case m.Mode == ModeTeleoperation:
		si.onInterrupt = true
		si.interrupt(ctx, TeleoperationInterrupt)
	case si.onInterrupt:
		si.onInterrupt = false
		si.interrupt(ctx, InterruptEnd)
	}
	return nil
}

// OnSimpleGoal handles a goal on /rsm/simpleGoal: SIMPLE_GOAL_INTERRUPT to
// the current state, then setNavigationGoal(goal, SIMPLE_GOAL). A goal with
// NaN/Inf is rejected before anything happens.
func (si *StateInterface) OnSimpleGoal(ctx context.Context, goal Pose) error {
	if err := goal.Validate(); err != nil {
		return fmt.Errorf("simple goal rejected: %w", err)
	}
	si.onInterrupt = true
	si.interrupt(ctx, SimpleGoalInterrupt)
	if _, err := si.deps.Store.SetNavigationGoal(ctx, NavigationGoal{
		Goal: goal, Mode: NavigationSimpleGoal, WaypointPosition: -1,
	}); err != nil {
		return fmt.Errorf("simple goal: set navigation goal: %w", err)
	}
	return nil
}

// ExplorationGoalsListener is implemented by states that want the poses of
// /rsm/explorationGoals.
type ExplorationGoalsListener interface{ OnExplorationGoals(goals []Pose) }

// FailedGoalsListener is implemented by states that want /rsm/failedGoals.
type FailedGoalsListener interface{ OnFailedGoals(goals []Pose) }

// GoalObsoleteListener is implemented by states that want /rsm/goalObsolete.
type GoalObsoleteListener interface {
	OnGoalObsolete(ctx context.Context, obsolete bool)
}

// ReverseModeListener is implemented by states that want /rsm/reverseMode.
type ReverseModeListener interface {
	OnReverseMode(ctx context.Context, reverse bool)
}

// listeners returns the current and the pending state, the states that
// would have a subscription in the original (subscriptions were created in
// onSetup).
func (si *StateInterface) listeners() []State {
	out := make([]State, 0, 2)
	if si.current != nil {
		out = append(out, si.current)
	}
	if si.pending != nil {
		out = append(out, si.pending)
	}
	return out
}

// OnExplorationGoals forwards /rsm/explorationGoals. Poses with NaN/Inf are
// dropped; the error says how many.
func (si *StateInterface) OnExplorationGoals(goals []Pose) error {
	clean, err := finitePoses(goals)
	for _, s := range si.listeners() {
		if l, ok := s.(ExplorationGoalsListener); ok {
			l.OnExplorationGoals(clean)
		}
	}
	return err
}

// OnFailedGoals forwards /rsm/failedGoals. Poses with NaN/Inf are dropped;
// the error says how many.
func (si *StateInterface) OnFailedGoals(goals []Pose) error {
	clean, err := finitePoses(goals)
	for _, s := range si.listeners() {
		if l, ok := s.(FailedGoalsListener); ok {
			l.OnFailedGoals(clean)
		}
	}
	return err
}

// OnGoalObsolete forwards /rsm/goalObsolete.
func (si *StateInterface) OnGoalObsolete(ctx context.Context, obsolete bool) {
	for _, s := range si.listeners() {
		if l, ok := s.(GoalObsoleteListener); ok {
			l.OnGoalObsolete(ctx, obsolete)
		}
	}
}

// OnReverseMode forwards /rsm/reverseMode.
func (si *StateInterface) OnReverseMode(ctx context.Context, reverse bool) {
	for _, s := range si.listeners() {
		if l, ok := s.(ReverseModeListener); ok {
			l.OnReverseMode(ctx, reverse)
		}
	}
}

func finitePoses(in []Pose) ([]Pose, error) {
	out := make([]Pose, 0, len(in))
	for _, p := range in {
		if p.Validate() == nil {
			out = append(out, p)
		}
	}
	if n := len(in) - len(out); n > 0 {
		return out, fmt.Errorf("%d of %d poses dropped: %w", n, len(in), ErrNotFinite)
	}
	return out, nil
}
