package lifecycle

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// The tables below are written out from rcl_lifecycle's default state
// machine (default_state_machine.c), not derived from the package's own.

func TestStates_OrderIdsLabels(t *testing.T) {
	want := []string{"0 unknown", "1 unconfigured", "2 inactive", "3 active", "4 finalized",
		"10 configuring", "11 cleaningup", "12 shuttingdown", "13 activating", "14 deactivating", "15 errorprocessing"}
	var got []string
	for _, s := range States() {
		got = append(got, fmt.Sprintf("%d %s", s.ID, s.Label))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("states:\n got %v\nwant %v", got, want)
	}
}

// graph is rcl_lifecycle's transition table in registration order:
// id label start goal.
var graph = []string{
	"1 configure unconfigured configuring",
	"10 transition_success configuring inactive",
	"11 transition_failure configuring unconfigured",
	"12 transition_error configuring errorprocessing",
	"2 cleanup inactive cleaningup",
	"20 transition_success cleaningup unconfigured",
	"21 transition_failure cleaningup inactive",
	"22 transition_error cleaningup errorprocessing",
	"3 activate inactive activating",
	"30 transition_success activating active",
	"31 transition_failure activating inactive",
	"32 transition_error activating errorprocessing",
	"4 deactivate active deactivating",
	"40 transition_success deactivating inactive",
	"41 transition_failure deactivating active",
	"42 transition_error deactivating errorprocessing",
	"5 shutdown unconfigured shuttingdown",
	"6 shutdown inactive shuttingdown",
	"7 shutdown active shuttingdown",
	"50 transition_success shuttingdown finalized",
	"51 transition_failure shuttingdown finalized",
	"52 transition_error shuttingdown errorprocessing",
	"60 transition_success errorprocessing unconfigured",
	"61 transition_failure errorprocessing finalized",
	"62 transition_error errorprocessing finalized",
}

func describe(t Transition) string {
	return fmt.Sprintf("%d %s %s %s", t.ID, t.Label, t.Start.Label, t.Goal.Label)
}

func TestGraph_IsRclLifecyclesTable(t *testing.T) {
	var got []string
	for _, tr := range Graph() {
		got = append(got, describe(tr))
	}
	if !reflect.DeepEqual(got, graph) {
		t.Fatalf("graph:\n got %q\nwant %q", got, graph)
	}
}

// at returns a machine in state s (set directly: every state, including
// transition states and unknown, is tested).
func at(s StateID) *Machine { return &Machine{cur: s} }

// TestTrigger_EveryStateEveryTransition: from each of the eleven states,
// each transition id 0…70 is taken exactly when the table has it from
// that state, to its goal, and is refused otherwise without a change;
// Available lists the table's rows of that state in order.
func TestTrigger_EveryStateEveryTransition(t *testing.T) {
	for _, s := range States() {
		var avail []string
		for _, row := range graph {
			var id int
			var label, start, goal string
			fmt.Sscanf(row, "%d %s %s %s", &id, &label, &start, &goal)
			if start == s.Label {
				avail = append(avail, row)
			}
		}
		var got []string
		for _, tr := range at(s.ID).Available() {
			got = append(got, describe(tr))
		}
		if !reflect.DeepEqual(got, avail) {
			t.Errorf("%s: available %q, want %q", s.Label, got, avail)
		}
		for id := 0; id <= 70; id++ {
			want := ""
			for _, row := range avail {
				var rid int
				var label, start, goal string
				fmt.Sscanf(row, "%d %s %s %s", &rid, &label, &start, &goal)
				if rid == id {
					want = goal
				}
			}
			m := at(s.ID)
			tr, err := m.Trigger(TransitionID(id))
			switch {
			case want == "" && err == nil:
				t.Errorf("%s: transition %d taken (to %s), want refused", s.Label, id, tr.Goal.Label)
			case want == "" && m.Current().ID != s.ID:
				t.Errorf("%s: refused transition %d changed the state to %s", s.Label, id, m.Current().Label)
			case want == "":
				var nt *NoTransitionError
				if !errors.As(err, &nt) || nt.State.ID != s.ID {
					t.Errorf("%s: transition %d: error %v, want *NoTransitionError", s.Label, id, err)
				}
			case err != nil:
				t.Errorf("%s: transition %d refused: %v", s.Label, id, err)
			case m.Current().Label != want || tr.Goal.Label != want:
				t.Errorf("%s: transition %d went to %s, want %s", s.Label, id, m.Current().Label, want)
			}
		}
	}
}

// TestTriggerLabel_ShutdownAndResultLabels: a label picks the state's own
// transition (three shutdowns, per-state result transitions).
func TestTriggerLabel_ShutdownAndResultLabels(t *testing.T) {
	for _, c := range []struct {
		from  StateID
		label string
		id    TransitionID
		to    StateID
		fails bool
	}{
		{StateUnconfigured, "shutdown", TransitionUnconfiguredShutdown, StateShuttingDown, false},
		{StateInactive, "shutdown", TransitionInactiveShutdown, StateShuttingDown, false},
		{StateActive, "shutdown", TransitionActiveShutdown, StateShuttingDown, false},
		{StateFinalized, "shutdown", 0, StateFinalized, true},
		{StateUnconfigured, "configure", TransitionConfigure, StateConfiguring, false},
		{StateUnconfigured, "activate", 0, StateUnconfigured, true},
		{StateInactive, "activate", TransitionActivate, StateActivating, false},
		{StateInactive, "cleanup", TransitionCleanup, StateCleaningUp, false},
		{StateActive, "deactivate", TransitionDeactivate, StateDeactivating, false},
		{StateActive, "cleanup", 0, StateActive, true},
		{StateConfiguring, "transition_error", TransitionOnConfigureError, StateErrorProcessing, false},
		{StateShuttingDown, "transition_failure", TransitionOnShutdownFailure, StateFinalized, false},
		{StateErrorProcessing, "transition_success", TransitionOnErrorSuccess, StateUnconfigured, false},
		{StateInactive, "", 0, StateInactive, true},
		{StateInactive, "Configure", 0, StateInactive, true},
	} {
		m := at(c.from)
		tr, err := m.TriggerLabel(c.label)
		if c.fails {
			if err == nil || m.Current().ID != c.from {
				t.Errorf("%s %q: %v, now %v; want refused", stateOf(c.from).Label, c.label, err, m.Current())
			}
			continue
		}
		if err != nil || tr.ID != c.id || m.Current().ID != c.to {
			t.Errorf("%s %q: %v %v, now %v; want transition %d to %s", stateOf(c.from).Label, c.label, tr, err, m.Current(), c.id, stateOf(c.to).Label)
		}
	}
}

// TestChange_EveryRequestEveryResult runs each requestable transition with
// each callback result and, after an error, each on_error result: the
// callbacks called (with the initial state), the events, the final state
// and the returned result, as rclcpp_lifecycle's change_state.
func TestChange_EveryRequestEveryResult(t *testing.T) {
	type req struct {
		from StateID
		id   TransitionID
		cb   StateID // the transition state whose callback runs
		ok   StateID // goal on success
		fail StateID // goal on failure
	}
	reqs := []req{
		{StateUnconfigured, TransitionConfigure, StateConfiguring, StateInactive, StateUnconfigured},
		{StateInactive, TransitionCleanup, StateCleaningUp, StateUnconfigured, StateInactive},
		{StateInactive, TransitionActivate, StateActivating, StateActive, StateInactive},
		{StateActive, TransitionDeactivate, StateDeactivating, StateInactive, StateActive},
		{StateUnconfigured, TransitionUnconfiguredShutdown, StateShuttingDown, StateFinalized, StateFinalized},
		{StateInactive, TransitionInactiveShutdown, StateShuttingDown, StateFinalized, StateFinalized},
		{StateActive, TransitionActiveShutdown, StateShuttingDown, StateFinalized, StateFinalized},
	}
	results := []Result{Success, Failure, Error, Result(0), Result(200)}
	for _, r := range reqs {
		for _, res := range results {
			onErrs := []Result{Success}
			isErr := res != Success && res != Failure
			if isErr {
				onErrs = []Result{Success, Failure, Error}
			}
			for _, onErr := range onErrs {
				name := fmt.Sprintf("%s/%d/%v", stateOf(r.from).Label, r.id, res)
				if isErr {
					name += fmt.Sprintf("/on_error=%v", onErr)
				}
				t.Run(name, func(t *testing.T) {
					m := at(r.from)
					var calls, events []string
					got, err := m.Change(r.id, func(s StateID, prev State) Result {
						calls = append(calls, fmt.Sprintf("%s(prev %s)", stateOf(s).Label, prev.Label))
						if m.Current().ID != s {
							t.Errorf("callback %s runs in state %s", stateOf(s).Label, m.Current().Label)
						}
						if s == StateErrorProcessing {
							return onErr
						}
						return res
					}, func(tr Transition) { events = append(events, tr.Start.Label+"->"+tr.Goal.Label) })
					if err != nil {
						t.Fatal(err)
					}
					if want := map[bool]Result{true: Error, false: res}[isErr]; got != want {
						t.Errorf("result %v, want %v", got, want)
					}
					from, cb := stateOf(r.from).Label, stateOf(r.cb).Label
					wantCalls := []string{cb + "(prev " + from + ")"}
					wantEvents := []string{from + "->" + cb}
					var final StateID
					switch {
					case res == Success:
						final = r.ok
						wantEvents = append(wantEvents, cb+"->"+stateOf(r.ok).Label)
					case res == Failure:
						final = r.fail
						wantEvents = append(wantEvents, cb+"->"+stateOf(r.fail).Label)
					default:
						wantCalls = append(wantCalls, "errorprocessing(prev "+from+")")
						final = StateFinalized
						if onErr == Success {
							final = StateUnconfigured
						}
						wantEvents = append(wantEvents, cb+"->errorprocessing", "errorprocessing->"+stateOf(final).Label)
					}
					if !reflect.DeepEqual(calls, wantCalls) {
						t.Errorf("callbacks %q, want %q", calls, wantCalls)
					}
					if !reflect.DeepEqual(events, wantEvents) {
						t.Errorf("events %q, want %q", events, wantEvents)
					}
					if m.Current().ID != final {
						t.Errorf("final state %s, want %s", m.Current().Label, stateOf(final).Label)
					}
				})
			}
		}
	}
}

// TestChange_Refused: a transition the state does not have, or one only a
// callback result may take, runs no callback, sends no event and changes
// nothing.
func TestChange_Refused(t *testing.T) {
	for _, c := range []struct {
		from StateID
		id   TransitionID
		not  bool // *NotRequestableError (else *NoTransitionError)
	}{
		{StateUnconfigured, TransitionActivate, false},
		{StateUnconfigured, TransitionCleanup, false},
		{StateInactive, TransitionConfigure, false},
		{StateInactive, TransitionActiveShutdown, false},
		{StateActive, TransitionCleanup, false},
		{StateFinalized, TransitionConfigure, false},
		{StateFinalized, TransitionUnconfiguredShutdown, false},
		{StateUnconfigured, TransitionCreate, false},
		{StateUnconfigured, TransitionDestroy, false},
		{StateUnconfigured, TransitionOnConfigureSuccess, false},
		{StateConfiguring, TransitionConfigure, false},
		{StateConfiguring, TransitionOnConfigureSuccess, true},
		{StateErrorProcessing, TransitionOnErrorSuccess, true},
		{StateShuttingDown, TransitionOnShutdownError, true},
	} {
		m := at(c.from)
		called := false
		_, err := m.Change(c.id, func(StateID, State) Result { called = true; return Success },
			func(Transition) { called = true })
		var nt *NoTransitionError
		var nr *NotRequestableError
		switch {
		case c.not && !errors.As(err, &nr), !c.not && !errors.As(err, &nt):
			t.Errorf("%s %d: error %v", stateOf(c.from).Label, c.id, err)
		case called:
			t.Errorf("%s %d: a callback or event ran", stateOf(c.from).Label, c.id)
		case m.Current().ID != c.from:
			t.Errorf("%s %d: state changed to %s", stateOf(c.from).Label, c.id, m.Current().Label)
		}
	}
}

// TestChange_ConcurrentRequestRefused: a transition requested while a
// callback runs finds the transition state and is refused.
func TestChange_ConcurrentRequestRefused(t *testing.T) {
	m := NewMachine()
	var inner error
	res, err := m.Change(TransitionConfigure, func(s StateID, _ State) Result {
		_, inner = m.Change(TransitionConfigure, func(StateID, State) Result { return Success }, nil)
		return Success
	}, nil)
	if err != nil || res != Success || m.Current().ID != StateInactive {
		t.Fatalf("outer change: %v %v, now %v", res, err, m.Current())
	}
	var nt *NoTransitionError
	if !errors.As(inner, &nt) || nt.State.ID != StateConfiguring {
		t.Fatalf("inner change: %v, want refused in configuring", inner)
	}
}

// TestLifecycle_FullTour walks the usual life: configure, activate,
// deactivate, cleanup, configure, activate, shutdown.
func TestLifecycle_FullTour(t *testing.T) {
	m := NewMachine()
	ok := func(StateID, State) Result { return Success }
	for _, c := range []struct {
		id TransitionID
		to StateID
	}{
		{TransitionConfigure, StateInactive}, {TransitionActivate, StateActive},
		{TransitionDeactivate, StateInactive}, {TransitionCleanup, StateUnconfigured},
		{TransitionConfigure, StateInactive}, {TransitionActivate, StateActive},
		{TransitionActiveShutdown, StateFinalized},
	} {
		if _, err := m.Change(c.id, ok, nil); err != nil || m.Current().ID != c.to {
			t.Fatalf("transition %d: %v, now %v, want %s", c.id, err, m.Current(), stateOf(c.to).Label)
		}
	}
	if got := m.Available(); len(got) != 0 {
		t.Fatalf("finalized has transitions %v", got)
	}
}

// The introspection graph is rcl_lifecycle's table: 10 states, 25 edges
// labelled as ~/get_transition_graph labels them.
func TestFSMGraph(t *testing.T) {
	g := FSMGraph()
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if g.Initial != "unconfigured" || len(g.States) != 10 || len(g.Edges) != len(Graph()) || len(g.Edges) != 25 {
		t.Fatalf("graph: initial %s, %d states, %d edges", g.Initial, len(g.States), len(g.Edges))
	}
	for i, tr := range Graph() {
		if e := g.Edges[i]; e.From != tr.Start.Label || e.To != tr.Goal.Label || e.Guard != tr.Label {
			t.Errorf("edge %d = %+v, want %v", i, e, tr)
		}
	}
	for _, s := range g.States {
		primary := s.Name == "unconfigured" || s.Name == "inactive" || s.Name == "active" || s.Name == "finalized"
		if (s.MaxDwell == 0) != primary {
			t.Errorf("state %s bound %v", s.Name, s.MaxDwell)
		}
	}
}
