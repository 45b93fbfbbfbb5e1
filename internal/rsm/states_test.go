package rsm

import (
	"context"
	"strings"
	"testing"
)

// stateCase builds one state of the table with whatever the store must
// hold for it.
type stateCase struct {
	name  string // expected Name() once current
	setup func(h *harness) State
}

func stateCases() []stateCase {
	return []stateCase{
		{"Boot", func(*harness) State { return NewBoot() }},
		{"Emergency Stop", func(*harness) State { return NewEmergencyStop() }},
		{"Idle", func(*harness) State { return NewIdle() }},
		{"Teleoperation", func(*harness) State { return NewTeleoperation() }},
		{"W: Waypoint Following", func(h *harness) State {
			h.addWaypoints(wp(1, 0, ""))
			return NewWaypointFollowing()
		}},
		{"E: Calculate Goal", func(*harness) State { return NewCalculateGoal() }},
		{"E: Navigation", func(h *harness) State {
			h.setGoal(NavigationExploration, -1, "")
			return NewNavigation()
		}},
		{"W: Navigation", func(h *harness) State {
			h.addWaypoints(wp(1, 0, ""))
			h.setGoal(NavigationWaypointFollowing, 0, "")
			return NewNavigation()
		}},
		{"G: Navigation", func(h *harness) State {
			h.setGoal(NavigationSimpleGoal, -1, "")
			return NewNavigation()
		}},
		{"Navigation", func(*harness) State { return NewNavigation() }},
		{"E: Mapping Dummy", func(*harness) State { return NewMappingDummy() }},
		{"W: Reversing", func(*harness) State { return NewReversingRoutine() }},
	}
}

type hookWant struct {
	success bool
	message string
	pending string // name of the requested next state, "" = none
}

// TestStates_CommandHooks checks every state × every start/stop hook:
// reply and requested transition (docs/rsm.md#core-states,
// docs/rsm.md#plugin-states).
func TestStates_CommandHooks(t *testing.T) {
	want := hookWants()
	hooks := []struct {
		name string
		call func(s State, ctx context.Context) Reply
	}{
		{"ExplorationStart", func(s State, c context.Context) Reply { return s.OnExplorationStart(c) }},
		{"ExplorationStop", func(s State, c context.Context) Reply { return s.OnExplorationStop(c) }},
		{"WaypointFollowingStart", func(s State, c context.Context) Reply { return s.OnWaypointFollowingStart(c) }},
		{"WaypointFollowingStop", func(s State, c context.Context) Reply { return s.OnWaypointFollowingStop(c) }},
	}
	for _, sc := range stateCases() {
		w, found := want[sc.name]
		if !found {
			t.Fatalf("no expectations for %q", sc.name)
		}
		for i, hk := range hooks {
			t.Run(sc.name+"/"+hk.name, func(t *testing.T) {
				h := newHarness(t)
				s := sc.setup(h)
				h.makeCurrent(s)
				if s.Name() != sc.name {
					t.Fatalf("name = %q, want %q", s.Name(), sc.name)
				}
				if p := h.pendingName(); p != "" {
					t.Fatalf("pending after entry = %q, want none", p)
				}
				r := hk.call(s, h.ctx)
				if r.Success != w[i].success || r.Message != w[i].message {
					t.Errorf("reply = {%v %q}, want {%v %q}", r.Success, r.Message, w[i].success, w[i].message)
				}
				if p := h.pendingName(); p != w[i].pending {
					t.Errorf("pending = %q, want %q", p, w[i].pending)
				}
			})
		}
	}
}

// TestStates_Interrupts checks every state × every interrupt: the
// requested transition.
func TestStates_Interrupts(t *testing.T) {
	want := interruptWants()
	const nv = "Navigation"
	interrupts := []Interrupt{InterruptEnd, EmergencyStopInterrupt, TeleoperationInterrupt,
		SimpleGoalInterrupt, SimpleGoalStopInterrupt}
	for _, sc := range stateCases() {
		w, found := want[sc.name]
		if !found {
			t.Fatalf("no expectations for %q", sc.name)
		}
		for i, in := range interrupts {
			t.Run(sc.name+"/"+in.String(), func(t *testing.T) {
				h := newHarness(t)
				s := sc.setup(h)
				h.makeCurrent(s)
				s.OnInterrupt(h.ctx, in)
				if p := h.pendingName(); p != w[i] {
					t.Errorf("pending = %q, want %q", p, w[i])
				}
				if w[i] == "" {
					return
				}
				// The interrupt's target wins over the state's own work.
				h.tick(1)
				// A fresh Navigation renames itself after the stored goal's
				// mode on entry, so only the suffix is fixed.
				if h.current() != w[i] && !(w[i] == nv && strings.HasSuffix(h.current(), nv)) {
					t.Errorf("after tick current = %q, want %q", h.current(), w[i])
				}
			})
		}
	}
}

func TestIdle_InterruptThenExplorationStart_InterruptTargetWins(t *testing.T) {
	h := newHarness(t)
	idle := NewIdle()
	h.makeCurrent(idle)
	idle.OnInterrupt(h.ctx, EmergencyStopInterrupt)
	r := idle.OnExplorationStart(h.ctx)
	if !r.Success || r.Message != "Exploration started" {
		t.Errorf("reply = %+v", r)
	}
	if p := h.pendingName(); p != "Emergency Stop" {
		t.Errorf("pending = %q, want Emergency Stop", p)
	}
}

func TestNavigation_InterruptSetsAborted_ReportedOnExit(t *testing.T) {
	h := newHarness(t)
	h.setGoal(NavigationExploration, -1, "")
	n := NewNavigation()
	h.makeCurrent(n)
	h.si.opMode, h.si.opModeKnown = OperationMode{Mode: ModeAutonomous}, true
	h.tick(1) // goal sent
	n.OnInterrupt(h.ctx, TeleoperationInterrupt)
	h.tick(1)
	if h.current() != "Teleoperation" {
		t.Fatalf("current = %q, want Teleoperation", h.current())
	}
	if !h.nav.last().cancelled {
		t.Error("running goal was not cancelled on exit")
	}
	if st := h.store.ExplorationGoalStatus().Status; st != GoalAborted {
		t.Errorf("exploration goal status = %v, want ABORTED", st)
	}
}

// hookWants is the expected reply and requested transition of every state
// × start/stop hook (docs/rsm.md#core-states, docs/rsm.md#plugin-states).
func hookWants() map[string][4]hookWant {
	const (
		eRun  = "Exploration running"
		wRun  = "Waypoint following running"
		eNot  = "Exploration not running"
		wNot  = "Waypoint following not running"
		eStop = "Exploration stopped"
		wStop = "Waypoint following stopped"
	)
	// Order: exploration start, exploration stop, waypoint start, waypoint stop.
	return map[string][4]hookWant{
		"Boot": {{false, "Still booting", ""}, {false, "Still booting", ""},
			{false, "Still booting", ""}, {false, "Still booting", ""}},
		"Emergency Stop": {{false, "Emergency Stop", ""}, {false, eNot, ""},
			{false, "Emergency Stop", ""}, {false, wNot, ""}},
		"Idle": {{true, "Exploration started", "E: Calculate Goal"}, {false, eNot, ""},
			{true, "Waypoint following started", "W: Waypoint Following"}, {false, wNot, ""}},
		"Teleoperation": {{false, "Teleoperation active", ""}, {false, eNot, ""},
			{false, "Teleoperation active", ""}, {false, wNot, ""}},
		"W: Waypoint Following": {{false, wRun, ""}, {false, wRun, ""},
			{false, wRun, ""}, {true, wStop, "Idle"}},
		"E: Calculate Goal": {{true, eRun, ""}, {true, eStop, "Idle"},
			{false, eRun, ""}, {false, eRun, ""}},
		"E: Navigation": {{false, eRun, ""}, {true, eStop, "Idle"},
			{false, eRun, ""}, {false, eRun, ""}},
		"W: Navigation": {{false, wRun, ""}, {false, wRun, ""},
			{false, wRun, ""}, {true, wStop, "Idle"}},
		"G: Navigation": {{false, "Simple Goal running", ""}, {false, "Simple Goal running", ""},
			{false, "Simple Goal running", ""}, {false, "Simple Goal running", ""}},
		"Navigation": {{false, "Nothing running", ""}, {false, "Nothing running", ""},
			{false, "Nothing running", ""}, {false, "Nothing running", ""}},
		"E: Mapping Dummy": {{false, eRun, ""}, {true, eStop, "Idle"},
			{false, eRun, ""}, {false, eRun, ""}},
		"W: Reversing": {{false, wRun, ""}, {false, wRun, ""},
			{false, wRun, ""}, {true, wStop, "Idle"}},
	}
}

// interruptWants is the requested transition of every state × interrupt
// (order END, E-STOP, TELEOPERATION, SIMPLE_GOAL, SIMPLE_GOAL_STOP).
func interruptWants() map[string][5]string {
	const (
		es = "Emergency Stop"
		to = "Teleoperation"
		nv = "Navigation"
	)
	common := [5]string{"", es, to, nv, ""}
	// Order: END, E-STOP, TELEOPERATION, SIMPLE_GOAL, SIMPLE_GOAL_STOP.
	return map[string][5]string{
		"Boot":                  {"", es, "", "", ""},
		"Emergency Stop":        {"Idle", "", "", "", ""},
		"Idle":                  common,
		"Teleoperation":         {"Idle", es, "", "", ""},
		"W: Waypoint Following": common,
		"E: Calculate Goal":     common,
		"E: Navigation":         common,
		"W: Navigation":         common,
		"G: Navigation":         {"", es, to, nv, "Idle"},
		"Navigation":            common,
		"E: Mapping Dummy":      common,
		"W: Reversing":          common,
	}
}
