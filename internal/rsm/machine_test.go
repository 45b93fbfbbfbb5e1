package rsm

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// recState records the calls it receives; next (if set) is requested in
// OnActive.
type recState struct {
	Base
	calls *[]string
	next  func() State
}

func newRec(name string, calls *[]string) *recState {
	return &recState{Base: Base{name: name}, calls: calls}
}

func (s *recState) rec(c string) { *s.calls = append(*s.calls, s.name+"."+c) }

func (s *recState) OnSetup()                { s.rec("setup") }
func (s *recState) OnEntry(context.Context) { s.rec("entry") }
func (s *recState) OnExit(context.Context)  { s.rec("exit") }
func (s *recState) OnActive(ctx context.Context) {
	s.rec("active")
	if s.next != nil {
		s.Next(s.next())
	}
}
func (s *recState) OnExplorationStart(context.Context) Reply       { s.rec("es"); return ok("es") }
func (s *recState) OnExplorationStop(context.Context) Reply        { s.rec("ex"); return ok("ex") }
func (s *recState) OnWaypointFollowingStart(context.Context) Reply { s.rec("ws"); return ok("ws") }
func (s *recState) OnWaypointFollowingStop(context.Context) Reply  { s.rec("wx"); return ok("wx") }
func (s *recState) OnInterrupt(_ context.Context, i Interrupt)     { s.rec(i.String()) }

func TestStateInterface_Tick_OneTransitionPerTickInOrder(t *testing.T) {
	h := newHarness(t)
	var calls []string
	a, b := newRec("A", &calls), newRec("B", &calls)
	c := newRec("C", &calls)
	a.next = func() State { return b }
	b.next = func() State { return c }
	h.si.Transition(a)
	h.tick(1)
	h.tick(1)
	want := []string{
		"A.setup", "A.entry", "A.active", "B.setup", "A.exit", "B.entry",
		"B.active", "C.setup", "B.exit", "C.entry",
	}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls =\n%v\nwant\n%v", calls, want)
	}
	if !reflect.DeepEqual(h.states, []string{"A", "B", "C"}) {
		t.Errorf("stateInfo = %v, want [A B C]", h.states)
	}
}

func TestStateInterface_Transition_Rules(t *testing.T) {
	h := newHarness(t)
	var calls []string
	a := newRec("A", &calls)
	h.si.Transition(a)
	h.tick(1)

	h.si.Transition(a) // the current state: ignored
	if h.si.Pending() != nil {
		t.Error("transition to the current state was not ignored")
	}
	h.si.Transition(nil)
	if h.si.Pending() != nil || h.log.errorsContaining("nil state") != 1 {
		t.Errorf("nil transition: pending %v, errors %v", h.si.Pending(), h.log.errors)
	}
	b, c := newRec("B", &calls), newRec("C", &calls)
	h.si.Transition(b)
	h.si.Transition(c) // later call in the same tick replaces the pending state
	if h.si.Pending() != c {
		t.Errorf("pending = %v, want C", h.pendingName())
	}
	h.tick(1)
	h.si.Transition(b) // b belongs to this state machine already
	if h.si.Pending() != nil || h.log.errorsContaining("already in use") != 1 {
		t.Errorf("reused instance: pending %q, errors %v", h.pendingName(), h.log.errors)
	}
	if h.current() != "C" {
		t.Errorf("current = %q, want C", h.current())
	}
}

func TestStateInterface_NoState_ServicesAnswerNoActiveState(t *testing.T) {
	h := newHarness(t)
	for _, r := range []Reply{
		h.si.StartStopExploration(h.ctx, true), h.si.StartStopExploration(h.ctx, false),
		h.si.StartStopWaypointFollowing(h.ctx, true), h.si.StartStopWaypointFollowing(h.ctx, false),
	} {
		if r.Success || r.Message != "No active state" {
			t.Errorf("reply = %+v, want false \"No active state\"", r)
		}
	}
	h.si.Stop2DNavGoal(h.ctx) // must not panic without a state
	if h.si.StateName() != "" {
		t.Errorf("StateName = %q", h.si.StateName())
	}
}

func TestStateInterface_Services_RouteToCurrentState(t *testing.T) {
	h := newHarness(t)
	var calls []string
	h.si.Transition(newRec("A", &calls))
	h.tick(1)
	calls = nil
	h.si.StartStopExploration(h.ctx, true)
	h.si.StartStopExploration(h.ctx, false)
	h.si.StartStopWaypointFollowing(h.ctx, true)
	h.si.StartStopWaypointFollowing(h.ctx, false)
	h.si.Stop2DNavGoal(h.ctx)
	want := []string{"A.es", "A.ex", "A.ws", "A.wx", "A.SIMPLE_GOAL_STOP_INTERRUPT"}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls = %v, want %v", calls, want)
	}
}

// TestStateInterface_OperationMode_InterruptMapping follows
// docs/rsm.md#operation-mode-and-interrupts.
func TestStateInterface_OperationMode_InterruptMapping(t *testing.T) {
	estop := OperationMode{EmergencyStop: true}
	teleop := OperationMode{Mode: ModeTeleoperation}
	auto := OperationMode{Mode: ModeAutonomous}
	stopped := OperationMode{Mode: ModeStopped}
	tests := []struct {
		name string
		msgs []OperationMode
		want []string
	}{
		{"stopped only: nothing", []OperationMode{stopped, stopped, auto}, nil},
		{"e-stop repeats, then END once", []OperationMode{estop, estop, stopped, stopped},
			[]string{"EMERGENCY_STOP_INTERRUPT", "EMERGENCY_STOP_INTERRUPT", "INTERRUPT_END"}},
		{"teleop repeats, then END once", []OperationMode{teleop, teleop, auto, auto},
			[]string{"TELEOPERATION_INTERRUPT", "TELEOPERATION_INTERRUPT", "INTERRUPT_END"}},
		{"e-stop wins over teleop mode", []OperationMode{{EmergencyStop: true, Mode: ModeTeleoperation}},
			[]string{"EMERGENCY_STOP_INTERRUPT"}},
		{"e-stop then teleop then stopped", []OperationMode{estop, teleop, stopped},
			[]string{"EMERGENCY_STOP_INTERRUPT", "TELEOPERATION_INTERRUPT", "INTERRUPT_END"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			var calls []string
			h.si.Transition(newRec("A", &calls))
			h.tick(1)
			calls = nil
			for _, m := range tt.msgs {
				if err := h.si.OnOperationMode(h.ctx, m); err != nil {
					t.Fatalf("OnOperationMode(%+v): %v", m, err)
				}
			}
			var got []string
			for _, c := range calls {
				got = append(got, strings.TrimPrefix(c, "A."))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("interrupts = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStateInterface_OperationMode_UnknownModeRejected(t *testing.T) {
	h := newHarness(t)
	var calls []string
	h.si.Transition(newRec("A", &calls))
	h.tick(1)
	calls = nil
	if err := h.si.OnOperationMode(h.ctx, OperationMode{Mode: 7}); err == nil {
		t.Error("mode 7 accepted")
	}
	if len(calls) != 0 {
		t.Errorf("calls = %v, want none", calls)
	}
	if _, known := h.si.OperationMode(); known {
		t.Error("rejected mode was stored")
	}
}

func TestStateInterface_SimpleGoal_InterruptThenGoalThenEndOnNextMode(t *testing.T) {
	h := newHarness(t)
	var calls []string
	h.si.Transition(newRec("A", &calls))
	h.tick(1)
	calls = nil
	if err := h.si.OnSimpleGoal(h.ctx, at(5, 6)); err != nil {
		t.Fatal(err)
	}
	g, _ := h.store.GetNavigationGoal(h.ctx)
	if g.Mode != NavigationSimpleGoal || g.Goal.Position != (geom.Vec3{X: 5, Y: 6, Z: 0}) {
		t.Errorf("stored goal = %+v", g)
	}
	_ = h.si.OnOperationMode(h.ctx, OperationMode{Mode: ModeAutonomous})
	_ = h.si.OnOperationMode(h.ctx, OperationMode{Mode: ModeAutonomous})
	want := []string{"A.SIMPLE_GOAL_INTERRUPT", "A.INTERRUPT_END"}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls = %v, want %v", calls, want)
	}
}

func TestStateInterface_SimpleGoal_NaNRejected(t *testing.T) {
	h := newHarness(t)
	var calls []string
	h.si.Transition(newRec("A", &calls))
	h.tick(1)
	calls = nil
	bad := at(1, 1)
	bad.Orientation.W = nan()
	if err := h.si.OnSimpleGoal(h.ctx, bad); err == nil {
		t.Fatal("NaN goal accepted")
	}
	if len(calls) != 0 {
		t.Errorf("calls = %v, want none", calls)
	}
	if g, _ := h.store.GetNavigationGoal(h.ctx); g.Mode != NavigationNone {
		t.Errorf("goal stored: %+v", g)
	}
}

func TestStateInterface_Plugin_Lookup(t *testing.T) {
	cfg := Config{MappingPlugin: "rsm::KinectMappingState"}
	h := newHarnessCfg(t, cfg)
	tests := []struct {
		kind      PluginKind
		name      string
		want      string
		errSubstr string
	}{
		{CalculateGoalPlugin, "", "E: Calculate Goal", ""},
		{NavigationPlugin, "", "Navigation", ""},
		{MappingPlugin, "", "Idle", "rsm::KinectMappingState"},
		{RoutinePlugin, "Reversing", "W: Reversing", ""},
		{RoutinePlugin, "Dance", "Idle", "rsm::DanceRoutineState"},
		{RoutinePlugin, "", "Idle", "without a routine name"},
		{AnyPlugin, "MappingDummyState", "E: Mapping Dummy", ""},
		{AnyPlugin, "rsm::NavigationState", "Navigation", ""},
		{AnyPlugin, "", "Idle", "without type or name"},
		{AnyPlugin, "other::Thing", "Idle", "other::Thing"},
	}
	for _, tt := range tests {
		before := len(h.log.errors)
		s := h.si.Plugin(tt.kind, tt.name)
		if s.Name() != tt.want {
			t.Errorf("Plugin(%d, %q) = %q, want %q", tt.kind, tt.name, s.Name(), tt.want)
		}
		if tt.errSubstr == "" {
			if len(h.log.errors) != before {
				t.Errorf("Plugin(%d, %q): unexpected error %v", tt.kind, tt.name, h.log.errors[before:])
			}
			continue
		}
		if len(h.log.errors) != before+1 || !strings.Contains(h.log.errors[before], tt.errSubstr) {
			t.Errorf("Plugin(%d, %q): errors %v, want one naming %q", tt.kind, tt.name, h.log.errors[before:], tt.errSubstr)
		}
	}
}

func TestRegistry_Register_DuplicateAndEmptyRejected(t *testing.T) {
	r := DefaultRegistry()
	if err := r.Register(NavigationStateName, func() State { return NewIdle() }); err == nil {
		t.Error("duplicate accepted")
	}
	if err := r.Register("", func() State { return NewIdle() }); err == nil {
		t.Error("empty name accepted")
	}
	if err := r.Register("my::Thing", nil); err == nil {
		t.Error("nil factory accepted")
	}
	if err := r.Register("my::Thing", func() State { return NewIdle() }); err != nil {
		t.Errorf("Register: %v", err)
	}
	want := []string{"my::Thing", CalculateGoalStateName, MappingDummyStateName, NavigationStateName, ReversingRoutineStateName}
	if got := r.Names(); !reflect.DeepEqual(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
}

func TestConfig_Validate(t *testing.T) {
	c := Config{Navigation: NavigationConfig{NavigationTuning: NavigationTuning{IdleTimer: 2 * time.Second, UnstuckTimer: 5 * time.Second}}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Navigation.IdleTimer != 6*time.Second {
		t.Errorf("idle timer = %v, want forced to unstuck+1s = 6s", c.Navigation.IdleTimer)
	}
	if c.NavigationPlugin != NavigationStateName || c.Navigation.Action != "navigate_to_pose" {
		t.Errorf("defaults not applied: %+v", c)
	}
	bad := Config{Navigation: NavigationConfig{NavigationTuning: NavigationTuning{PoseTolerance: nan()}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "pose_tolerance") {
		t.Errorf("NaN pose_tolerance: err = %v", err)
	}
	if _, err := NewStateInterface(Config{}, Deps{}); err == nil {
		t.Error("missing deps accepted")
	}
}

func TestStateInterface_CheckPlugins(t *testing.T) {
	if err := newHarness(t).si.CheckPlugins(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	h := newHarnessCfg(t, Config{NavigationPlugin: "rsm::MoveBaseState", MappingPlugin: "rsm::KinectMappingState"})
	err := h.si.CheckPlugins()
	if err == nil || !strings.Contains(err.Error(), "navigation_plugin") || !strings.Contains(err.Error(), "rsm::KinectMappingState") ||
		strings.Contains(err.Error(), "calculate_goal_plugin") {
		t.Errorf("err = %v", err)
	}
}
