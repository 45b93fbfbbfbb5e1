package rsm

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/fsm"
)

// muxChange is one OnChange call.
type muxChange struct{ from, to, cause string }

// newGraphMux returns a mux starting in op (joystick used) that records its
// changes.
func newGraphMux(t *testing.T, op OperationMode, got *[]muxChange) *Mux {
	t.Helper()
	m, err := NewMux(MuxConfig{TeleopIdle: 500 * time.Millisecond, JoystickUsed: true, Initial: op,
		OnChange: func(from, to, cause string) { *got = append(*got, muxChange{from, to, cause}) }})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// muxStates maps MuxGraph's state names back to operation modes.
func muxStates() map[string]OperationMode {
	out := map[string]OperationMode{}
	for _, e := range []bool{false, true} {
		for _, m := range muxModes {
			op := OperationMode{EmergencyStop: e, Mode: m}
			out[MuxStateName(op)] = op
		}
	}
	return out
}

// Every edge of MuxGraph is taken by the mux, from its start state, with
// exactly that guard reported, and nothing else changes.
func TestMuxGraph_EveryEdgeIsTaken(t *testing.T) {
	g := MuxGraph(OperationMode{})
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if g.Initial != "STOPPED" || len(g.States) != 6 || len(g.Edges) != 28 {
		t.Fatalf("graph: initial %s, %d states, %d edges", g.Initial, len(g.States), len(g.Edges))
	}
	if MuxGraph(OperationMode{Mode: ModeAutonomous}).Initial != "AUTONOMOUS" {
		t.Error("initial AUTONOMOUS not followed")
	}
	states := muxStates()
	for _, e := range g.Edges {
		t.Run(fmt.Sprintf("%s->%s/%s", e.From, e.To, e.Guard), func(t *testing.T) {
			var got []muxChange
			m := newGraphMux(t, states[e.From], &got)
			to := states[e.To]
			switch e.Guard {
			case GuardSetMode, GuardEStopOn, GuardEStopOff:
				m.SetOperationMode(to)
			case GuardTeleopCmdVel:
				_ = m.OnTeleop(lin(0.3), t0)
			case GuardJoystick:
				_ = m.OnJoy(Joy{Axes: []float32{0}}, t0)
				_ = m.OnJoy(Joy{Axes: []float32{0.5}}, t0)
			case GuardTeleopIdle:
				if to.EmergencyStop { // the timer runs from before the e-stop
					m = newGraphMux(t, OperationMode{Mode: ModeTeleoperation}, &got)
					_ = m.OnTeleop(lin(0.3), t0)
					m.SetOperationMode(states[e.From])
					got = got[:0]
				}
				_ = m.OnTeleop(lin(0.3), t0)
				m.Tick(t0.Add(time.Second))
			case GuardAutonomyTimeout:
				_ = m.OnAutonomy(lin(0.3), t0)
				m.Tick(t0.Add(3 * time.Second))
			default:
				t.Fatalf("guard %q has no driver in this test", e.Guard)
			}
			want := muxChange{e.From, e.To, e.Guard}
			if len(got) != 1 || got[0] != want {
				t.Errorf("changes %v, want [%v]", got, want)
			}
			if s := MuxStateName(m.OperationMode()); s != e.To {
				t.Errorf("mode %s, want %s", s, e.To)
			}
		})
	}
}

// Whatever arrives, every change the mux reports is an edge of MuxGraph
// with that guard, and ends in the mode the mux then has.
func TestMuxGraph_RandomInputsStayInGraph(t *testing.T) {
	g := MuxGraph(OperationMode{})
	edges := map[fsm.Edge]bool{}
	for _, e := range g.Edges {
		edges[e] = true
	}
	var got []muxChange
	m := newGraphMux(t, OperationMode{}, &got)
	rng := rand.New(rand.NewSource(7))
	now := t0
	taken := map[fsm.Edge]bool{}
	for i := 0; i < 20000; i++ {
		now = now.Add(time.Duration(rng.Intn(400)) * time.Millisecond)
		switch rng.Intn(6) {
		case 0:
			m.SetOperationMode(OperationMode{EmergencyStop: rng.Intn(3) == 0, Mode: Mode(rng.Intn(3))})
		case 1:
			_ = m.OnTeleop(lin(float64(rng.Intn(2))*0.2), now)
		case 2:
			_ = m.OnJoy(Joy{Axes: []float32{float32(rng.Intn(3)) * 0.3}}, now)
		case 3:
			_ = m.OnAutonomy(lin(float64(rng.Intn(2))*0.2), now)
		default:
			m.Tick(now)
		}
		for _, c := range got {
			e := fsm.Edge{From: c.from, To: c.to, Guard: c.cause}
			if !edges[e] {
				t.Fatalf("step %d: change %v is not in MuxGraph", i, c)
			}
			taken[e] = true
		}
		if len(got) > 0 && got[len(got)-1].to != MuxStateName(m.OperationMode()) {
			t.Fatalf("step %d: last change %v, mode %v", i, got[len(got)-1], m.OperationMode())
		}
		got = got[:0]
	}
	if len(taken) != len(edges) {
		t.Errorf("random inputs took %d of %d edges", len(taken), len(edges))
	}
}
