package velma

import (
	"fmt"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/fsm"
)

// BodyMermaid renders the ve_body FSM (σ rows, τ as notes) as a Mermaid
// state diagram; docs/velma.md shows it and a test keeps them equal.
func BodyMermaid() string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	fmt.Fprintf(&b, "    [*] --> %s\n", BodyIdle)
	for _, t := range BodyTransitions() {
		fmt.Fprintf(&b, "    %s --> %s: %s\n", t.From, t.To, t.Cond.Name)
	}
	return b.String()
}

// CSMermaid renders the cs FSM as a Mermaid state diagram. Every state
// but idle also has ε = ¬CURRENT_BEHAVIOR_OK ∨ ¬veBodyStatusValid ∨
// veBodyInSafeState leading to idle (the IN_ERROR rows).
func CSMermaid() string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	fmt.Fprintf(&b, "    [*] --> %s\n", CSIdle)
	term := CSTerminal()
	for _, t := range CSTransitions() {
		label := t.Cond.Name
		if t.From == CSIdle {
			label = "TRUE, once τ_idle = " + term[CSIdle].Name
		}
		fmt.Fprintf(&b, "    %s --> %s: %s\n", t.From, t.To, label)
	}
	return b.String()
}

// Machine names of ve_body and cs in the introspection graphs.
const (
	BodyMachine = "ve_body"
	CSMachine   = "cs"
)

// BodyStatusBound is the dwell bound of ve_body's status states (safe_st,
// safe_st_ok, transp_st): ve_body leaves them at its next run, within the
// same iteration, so a stay of more than 100 ms means the loop stalled.
const BodyStatusBound = 100 * time.Millisecond

// BodyGraph returns the ve_body FSM as an introspection graph: its states,
// the σ rows with their conditions as guards and the initial state idle.
func BodyGraph() fsm.Graph {
	g := fsm.Graph{Machine: BodyMachine, Initial: BodyIdle.String()}
	for s := BodyIdle; s <= BodyTranspSt; s++ {
		st := fsm.State{Name: s.String()}
		if s == BodySafeSt || s == BodySafeStOk || s == BodyTranspSt {
			st.MaxDwell = BodyStatusBound
		}
		g.States = append(g.States, st)
	}
	for _, t := range BodyTransitions() {
		g.Edges = append(g.Edges, fsm.Edge{From: t.From.String(), To: t.To.String(), Guard: t.Cond.Name})
	}
	return g
}

// CSFallbackGuard names the transitions to safe that CSFSM.Next takes when
// a state ended but no σ (or more than one) holds.
const CSFallbackGuard = "no single σ holds (fallback)"

// CSGraph returns the cs FSM as an introspection graph: its states, the σ
// rows with their conditions as guards (idle's TRUE row shown with τ_idle,
// as CSMermaid does), the fallback to safe of the states whose σ rows can
// all fail (relax, cart_imp, jnt_imp) and the initial state idle.
func CSGraph() fsm.Graph {
	g := fsm.Graph{Machine: CSMachine, Initial: CSIdle.String()}
	for _, s := range CSStates {
		g.States = append(g.States, fsm.State{Name: s.String()})
	}
	term := CSTerminal()
	for _, t := range CSTransitions() {
		guard := t.Cond.Name
		if t.From == CSIdle {
			guard = "TRUE, once τ_idle = " + term[CSIdle].Name
		}
		g.Edges = append(g.Edges, fsm.Edge{From: t.From.String(), To: t.To.String(), Guard: guard})
	}
	for _, s := range []CSState{CSRelax, CSCartImp, CSJntImp} {
		g.Edges = append(g.Edges, fsm.Edge{From: s.String(), To: CSSafe.String(), Guard: CSFallbackGuard})
	}
	return g
}
