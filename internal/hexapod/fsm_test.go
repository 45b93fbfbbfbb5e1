package hexapod

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// in builds Inputs from flags and the three conditions.
func in(started, standUp, walk, atWalk, atSit, gaitStanding bool) Inputs {
	return Inputs{Flags: Flags{Started: started, StandUp: standUp, Walk: walk},
		AtWalkingHeight: atWalk, AtSittingHeight: atSit, GaitStanding: gaitStanding}
}

func TestMachine_Next_EveryEdgeAndEveryStay(t *testing.T) {
	const T, F = true, false
	cases := []struct {
		name   string
		from   State
		in     Inputs
		to     State
		action Action
	}{
		// Idle
		{"Idle_Started_ToSittingWithTorqueOn", Idle, in(T, F, T, F, F, T), Sitting, TorqueOn},
		{"Idle_NotStarted_Stays", Idle, in(F, F, T, F, F, T), Idle, NoAction},
		// Sitting
		{"Sitting_StandUp_ToStandingUpAtFullSpeed", Sitting, in(T, T, T, F, F, T), StandingUp, FullSpeed},
		{"Sitting_Stopped_ToIdleWithTorqueOff", Sitting, in(F, F, T, F, F, T), Idle, TorqueOff},
		{"Sitting_StandUpWinsOverStopped", Sitting, in(F, T, T, F, F, T), StandingUp, FullSpeed},
		{"Sitting_StartedNoStandUp_Stays", Sitting, in(T, F, T, F, F, T), Sitting, NoAction},
		// Standing_up
		{"StandingUp_AtWalkingHeight_ToWalking", StandingUp, in(T, T, T, T, F, T), Walking, NoAction},
		{"StandingUp_AtWalkingHeightEvenIfPosing_ToWalking", StandingUp, in(T, T, F, T, F, T), Walking, NoAction},
		{"StandingUp_AtWalkingHeightAfterSitDown_ToWalking", StandingUp, in(T, F, T, T, F, T), Walking, NoAction},
		{"StandingUp_BelowHeight_Stays", StandingUp, in(T, T, T, F, F, T), StandingUp, NoAction},
		{"StandingUp_SitDownWhileRising_Stays", StandingUp, in(T, F, T, F, F, T), StandingUp, NoAction},
		// Standing
		{"Standing_Walk_ToWalking", Standing, in(T, T, T, F, F, T), Walking, NoAction},
		{"Standing_SitDown_ToSittingDown", Standing, in(T, F, F, F, F, T), SittingDown, NoAction},
		{"Standing_SitDownAndWalk_WalkWins", Standing, in(T, F, T, F, F, T), Walking, NoAction},
		{"Standing_Posing_Stays", Standing, in(T, T, F, F, F, T), Standing, NoAction},
		{"Standing_SitDownGaitNotStanding_Stays", Standing, in(T, F, F, F, F, F), Standing, NoAction},
		// Walking
		{"Walking_StandAndGaitStanding_ToStanding", Walking, in(T, T, F, F, F, T), Standing, NoAction},
		{"Walking_SitDownAndGaitStanding_ToSittingDown", Walking, in(T, F, T, F, F, T), SittingDown, NoAction},
		{"Walking_SitDownAndStandBothStanding_StandingWins", Walking, in(T, F, F, F, F, T), Standing, NoAction},
		{"Walking_SitDownGaitMoving_Stays", Walking, in(T, F, T, F, F, F), Walking, NoAction},
		{"Walking_StandGaitMoving_Stays", Walking, in(T, T, F, F, F, F), Walking, NoAction},
		{"Walking_WalkStandUp_Stays", Walking, in(T, T, T, F, F, T), Walking, NoAction},
		// Sitting_down
		{"SittingDown_AtSittingHeight_ToSitting", SittingDown, in(T, F, T, F, T, T), Sitting, NoAction},
		{"SittingDown_AboveHeight_Stays", SittingDown, in(T, F, T, F, F, T), SittingDown, NoAction},
		{"SittingDown_StandUpAgain_Stays", SittingDown, in(T, T, T, F, F, T), SittingDown, NoAction},
		// Unknown is never left by a transition
		{"Unknown_AnyInput_Stays", Unknown, in(T, T, T, T, T, T), Unknown, NoAction},
	}
	m := NewMachine()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			to, a := m.Next(c.from, c.in)
			if to != c.to || a != c.action {
				t.Fatalf("Next(%v, %+v) = %v, %v; want %v, %v", c.from, c.in, to, a, c.to, c.action)
			}
		})
	}
}

// TestTransitions_MatchSeedEdgeSet checks that the table has exactly the
// edges of the original (docs/hexapod.md#original-state-machine).
func TestTransitions_MatchSeedEdgeSet(t *testing.T) {
	want := map[string]bool{
		"Idle->Sitting": true, "Sitting->Standing_up": true, "Sitting->Idle": true,
		"Standing_up->Walking": true, "Standing->Walking": true, "Standing->Sitting_down": true,
		"Walking->Standing": true, "Walking->Sitting_down": true, "Sitting_down->Sitting": true,
	}
	got := map[string]bool{}
	for _, tr := range Transitions() {
		got[fmt.Sprintf("%v->%v", tr.From, tr.To)] = true
	}
	if len(got) != len(want) {
		t.Fatalf("edges %v, want %v", got, want)
	}
	for e := range want {
		if !got[e] {
			t.Errorf("missing edge %s", e)
		}
	}
}

func TestFlags_Apply_CommandRules(t *testing.T) {
	cases := []struct {
		name    string
		before  Flags
		cmd     Command
		after   Flags
		ignored bool
	}{
		{"StartStop_FromStopped_Starts", Flags{Walk: true}, CmdStartStop, Flags{Started: true, Walk: true}, false},
		{"StartStop_FromStarted_Stops", Flags{Started: true, Walk: true}, CmdStartStop, Flags{Walk: true}, false},
		{"StartStop_WhileStandUp_Ignored", Flags{Started: true, StandUp: true, Walk: true}, CmdStartStop, Flags{Started: true, StandUp: true, Walk: true}, true},
		{"StandUp_NotStarted_Ignored", Flags{Walk: true}, CmdStandUp, Flags{Walk: true}, true},
		{"StandUp_Started_Sets", Flags{Started: true}, CmdStandUp, Flags{Started: true, StandUp: true}, false},
		{"StandUp_AlreadyUp_StaysSet", Flags{Started: true, StandUp: true}, CmdStandUp, Flags{Started: true, StandUp: true}, false},
		{"SitDown_NotStarted_Ignored", Flags{}, CmdSitDown, Flags{}, true},
		{"SitDown_Started_Clears", Flags{Started: true, StandUp: true, Walk: true}, CmdSitDown, Flags{Started: true, Walk: true}, false},
		{"StandWalk_NotUp_Ignored", Flags{Started: true, Walk: true}, CmdStandWalk, Flags{Started: true, Walk: true}, true},
		{"StandWalk_UpWalking_ToPosing", Flags{Started: true, StandUp: true, Walk: true}, CmdStandWalk, Flags{Started: true, StandUp: true}, false},
		{"StandWalk_UpPosing_ToWalking", Flags{Started: true, StandUp: true}, CmdStandWalk, Flags{Started: true, StandUp: true, Walk: true}, false},
		{"Unknown_Ignored", Flags{Started: true}, Command(42), Flags{Started: true}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.before
			msg, err := f.Apply(c.cmd, Sitting)
			var ie *IgnoredError
			if c.ignored {
				if !errors.As(err, &ie) || ie.Command != c.cmd || ie.Reason == "" {
					t.Fatalf("Apply(%v) = %q, %v; want *IgnoredError with a reason", c.cmd, msg, err)
				}
			} else if err != nil || msg == "" {
				t.Fatalf("Apply(%v) = %q, %v; want accepted with a message", c.cmd, msg, err)
			}
			if f != c.after {
				t.Fatalf("flags after %v = %+v, want %+v", c.cmd, f, c.after)
			}
		})
	}
}

func TestInitialFlags_WalkingSetLikeOriginal(t *testing.T) {
	if f := InitialFlags(); f != (Flags{Walk: true}) {
		t.Fatalf("InitialFlags() = %+v", f)
	}
}

func TestStateString_OriginalNames(t *testing.T) {
	want := []string{"Unknown", "Idle", "Sitting", "Standing_up", "Standing", "Walking", "Sitting_down"}
	for i, w := range want {
		if got := State(i).String(); got != w {
			t.Errorf("State(%d) = %q, want %q", i, got, w)
		}
	}
	if got := State(99).String(); got != "State(99)" {
		t.Errorf("State(99) = %q", got)
	}
}

func TestMermaid_Golden(t *testing.T) {
	path := filepath.Join("testdata", "fsm.mmd")
	got := Mermaid()
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (set UPDATE_GOLDEN=1 to create): %v", err)
	}
	if got != string(want) {
		t.Fatalf("Mermaid() differs from %s:\n%s", path, got)
	}
}

// The introspection graph is the transition table: every edge with its
// guard and action, the states entered by transitions, Idle first, and
// bounds on the two height ramps only.
func TestGraph_IsTheTable(t *testing.T) {
	g := Graph(DefaultConfig(), 10*time.Millisecond)
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if g.Machine != "motion" || g.Initial != "Idle" || len(g.Edges) != len(Transitions()) {
		t.Fatalf("graph %s initial %s with %d edges", g.Machine, g.Initial, len(g.Edges))
	}
	for i, tr := range Transitions() {
		e := g.Edges[i]
		if e.From != tr.From.String() || e.To != tr.To.String() || !strings.HasPrefix(e.Guard, tr.Guard.Name) {
			t.Errorf("edge %d = %+v, table has %v -> %v (%s)", i, e, tr.From, tr.To, tr.Guard.Name)
		}
	}
	if e := g.Edges[0]; e.Guard != "start_cmd / torque on" {
		t.Errorf("Idle -> Sitting guard %q", e.Guard)
	}
	// 93 ticks of 10 ms to stand up: bound 2·0.93 s + 1 s.
	for _, s := range g.States {
		want := time.Duration(0)
		if s.Name == "Standing_up" || s.Name == "Sitting_down" {
			want = 2860 * time.Millisecond
		}
		if s.MaxDwell != want {
			t.Errorf("state %s bound %v, want %v", s.Name, s.MaxDwell, want)
		}
	}
	if _, ok := g.State("Unknown"); ok {
		t.Error("Unknown is in the graph; no transition enters it")
	}
	if g := Graph(DefaultConfig(), 0); g.States[3].MaxDwell != 0 {
		t.Errorf("no tick period: bound %v, want none", g.States[3].MaxDwell)
	}
}

// A tick that changes state names the edge taken; others name none.
func TestController_OutputCause(t *testing.T) {
	c, _ := newTestController(t, DefaultConfig())
	if out := mustTick(t, c); out.Cause != "" {
		t.Errorf("idle tick cause %q", out.Cause)
	}
	wantAccepted(t, c, CmdStartStop)
	if out := mustTick(t, c); out.State != Sitting || out.Cause != "start_cmd / torque on" {
		t.Errorf("start tick: %v cause %q", out.State, out.Cause)
	}
	if out := mustTick(t, c); out.Cause != "" {
		t.Errorf("second sitting tick cause %q", out.Cause)
	}
	wantAccepted(t, c, CmdStandUp)
	if out := mustTick(t, c); out.State != StandingUp || out.Cause != "stand_up_cmd / full speed" {
		t.Errorf("stand up tick: %v cause %q", out.State, out.Cause)
	}
}
