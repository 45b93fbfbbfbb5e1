package velma

import "fmt"

// CSState is a state (behaviour) of the cs FSM.
type CSState int

// cs states. CSIdle is the initial state. The numeric values are the
// original subsystem_state constants (STATE_IDLE=0 … STATE_RELAX=4).
const (
	CSIdle    CSState = 0
	CSSafe    CSState = 1
	CSCartImp CSState = 2
	CSJntImp  CSState = 3
	CSRelax   CSState = 4
)

// String returns the state name used in the specification.
func (s CSState) String() string {
	switch s {
	case CSIdle:
		return "idle"
	case CSSafe:
		return "safe"
	case CSCartImp:
		return "cart_imp"
	case CSJntImp:
		return "jnt_imp"
	case CSRelax:
		return "relax"
	}
	return fmt.Sprintf("CSState(%d)", int(s))
}

// CSStates lists every cs state.
var CSStates = []CSState{CSIdle, CSSafe, CSRelax, CSCartImp, CSJntImp}

// CSPredicates are the inputs of cs's conditions for one iteration.
type CSPredicates struct {
	VeBodyStatusValid bool // new, valid status from ve_body
	VeBodyInSafeState bool // ve_body is in safe, safe_st, safe_st_ok or idle
	CurrentBehaviorOK bool // the behaviour of the last iteration had no error
	RecvOneCmd        bool // exactly one of cart_imp, jnt_imp, relax commands
	RecvCartImpCmd    bool
	RecvJntImpCmd     bool
	RecvRelaxCmd      bool
	InSelfCollision   bool
	MotorsReady       bool // torso, head pan and tilt enabled and homed
}

// CSCond is a named condition; σ conditions also see IN_ERROR.
type CSCond struct {
	Name string
	Eval func(p CSPredicates, inError bool) bool
}

// CSTransition is one σ row.
type CSTransition struct {
	From, To CSState
	Cond     CSCond
}

func csc(name string, f func(p CSPredicates, inError bool) bool) CSCond { return CSCond{name, f} }

// csBehaviourError is ε of every state but idle.
var csBehaviourError = csc("¬CURRENT_BEHAVIOR_OK ∨ ¬veBodyStatusValid ∨ veBodyInSafeState",
	func(p CSPredicates, _ bool) bool {
		return !p.CurrentBehaviorOK || !p.VeBodyStatusValid || p.VeBodyInSafeState
	})

// CSTerminal returns τ of each state (docs/velma.md#cs-transitions).
func CSTerminal() map[CSState]CSCond {
	return map[CSState]CSCond{
		CSIdle: csc("veBodyStatusValid ∧ ¬veBodyInSafeState", func(p CSPredicates, _ bool) bool {
			return p.VeBodyStatusValid && !p.VeBodyInSafeState
		}),
		CSSafe: csc("recvOneCmd ∧ (((recvCartImpCmd ∨ recvJntImpCmd) ∧ ¬inSelfCollision) ∨ recvRelaxCmd) ∧ motorsReady",
			func(p CSPredicates, _ bool) bool {
				return p.RecvOneCmd && (((p.RecvCartImpCmd || p.RecvJntImpCmd) && !p.InSelfCollision) || p.RecvRelaxCmd) && p.MotorsReady
			}),
		CSRelax: csc("recvOneCmd ∧ (recvCartImpCmd ∨ recvJntImpCmd) ∧ ¬inSelfCollision", func(p CSPredicates, _ bool) bool {
			return p.RecvOneCmd && (p.RecvCartImpCmd || p.RecvJntImpCmd) && !p.InSelfCollision
		}),
		CSCartImp: csc("(recvOneCmd ∧ (recvJntImpCmd ∨ recvRelaxCmd)) ∨ inSelfCollision", func(p CSPredicates, _ bool) bool {
			return (p.RecvOneCmd && (p.RecvJntImpCmd || p.RecvRelaxCmd)) || p.InSelfCollision
		}),
		CSJntImp: csc("(recvOneCmd ∧ (recvCartImpCmd ∨ recvRelaxCmd)) ∨ inSelfCollision", func(p CSPredicates, _ bool) bool {
			return (p.RecvOneCmd && (p.RecvCartImpCmd || p.RecvRelaxCmd)) || p.InSelfCollision
		}),
	}
}

// CSError returns ε of each state.
func CSError() map[CSState]CSCond {
	return map[CSState]CSCond{
		CSIdle:    csc("FALSE", func(CSPredicates, bool) bool { return false }),
		CSSafe:    csBehaviourError,
		CSRelax:   csBehaviourError,
		CSCartImp: csBehaviourError,
		CSJntImp:  csBehaviourError,
	}
}

// CSTransitions returns the σ table of docs/velma.md#cs-transitions, in the
// specification's order.
func CSTransitions() []CSTransition {
	inErr := csc("IN_ERROR", func(_ CSPredicates, e bool) bool { return e })
	cart := csc("¬IN_ERROR ∧ recvCartImpCmd", func(p CSPredicates, e bool) bool { return !e && p.RecvCartImpCmd })
	jnt := csc("¬IN_ERROR ∧ recvJntImpCmd", func(p CSPredicates, e bool) bool { return !e && p.RecvJntImpCmd })
	relax := csc("¬IN_ERROR ∧ recvRelaxCmd", func(p CSPredicates, e bool) bool { return !e && p.RecvRelaxCmd })
	noCmd := csc("¬IN_ERROR ∧ ¬recvOneCmd", func(p CSPredicates, e bool) bool { return !e && !p.RecvOneCmd })
	oneCart := csc("¬IN_ERROR ∧ recvOneCmd ∧ recvCartImpCmd", func(p CSPredicates, e bool) bool {
		return !e && p.RecvOneCmd && p.RecvCartImpCmd
	})
	oneJnt := csc("¬IN_ERROR ∧ recvOneCmd ∧ recvJntImpCmd", func(p CSPredicates, e bool) bool {
		return !e && p.RecvOneCmd && p.RecvJntImpCmd
	})
	oneRelax := csc("¬IN_ERROR ∧ recvOneCmd ∧ recvRelaxCmd", func(p CSPredicates, e bool) bool {
		return !e && p.RecvOneCmd && p.RecvRelaxCmd
	})
	return []CSTransition{
		{CSIdle, CSSafe, csc("TRUE", func(CSPredicates, bool) bool { return true })},
		{CSSafe, CSIdle, inErr},
		{CSSafe, CSCartImp, cart},
		{CSSafe, CSJntImp, jnt},
		{CSSafe, CSRelax, relax},
		{CSRelax, CSIdle, inErr},
		{CSRelax, CSCartImp, cart},
		{CSRelax, CSJntImp, jnt},
		{CSCartImp, CSIdle, inErr},
		{CSCartImp, CSSafe, noCmd},
		{CSCartImp, CSJntImp, oneJnt},
		{CSCartImp, CSRelax, oneRelax},
		{CSJntImp, CSIdle, inErr},
		{CSJntImp, CSSafe, noCmd},
		{CSJntImp, CSCartImp, oneCart},
		{CSJntImp, CSRelax, oneRelax},
	}
}

// CSFSM evaluates cs's τ/σ/ε tables.
type CSFSM struct {
	terminal map[CSState]CSCond
	errs     map[CSState]CSCond
	trans    map[CSState][]CSTransition
}

// NewCSFSM builds the FSM from the specification tables.
func NewCSFSM() *CSFSM {
	f := &CSFSM{terminal: CSTerminal(), errs: CSError(), trans: map[CSState][]CSTransition{}}
	for _, t := range CSTransitions() {
		f.trans[t.From] = append(f.trans[t.From], t)
	}
	return f
}

// CSStep is the outcome of evaluating the FSM for one iteration.
type CSStep struct {
	Next    CSState
	InError bool // ε held
	Ended   bool // τ or ε held (the state's behaviour ended)
	// Fallback is set when the state ended but no σ (or more than one)
	// held; the specification leaves this case open (e.g. cart_imp in
	// self-collision while a cart_imp command arrives) and the FSM then goes
	// to safe.
	Fallback bool
}

// Next evaluates ε, then τ, then σ from cur.
func (f *CSFSM) Next(cur CSState, p CSPredicates) CSStep {
	inErr := f.errs[cur].Eval(p, false)
	if !inErr && !f.terminal[cur].Eval(p, false) {
		return CSStep{Next: cur}
	}
	next, n := cur, 0
	for _, t := range f.trans[cur] {
		if t.Cond.Eval(p, inErr) {
			next = t.To
			n++
		}
	}
	if n != 1 {
		return CSStep{Next: CSSafe, InError: inErr, Ended: true, Fallback: true}
	}
	return CSStep{Next: next, InError: inErr, Ended: true}
}
