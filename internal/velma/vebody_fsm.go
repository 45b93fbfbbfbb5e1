package velma

import "fmt"

// BodyState is a state of the ve_body FSM.
type BodyState int

// ve_body states. BodyIdle is the initial state.
const (
	BodyIdle BodyState = iota
	BodySafe
	BodySafeSt
	BodySafeStOk
	BodyTransp
	BodyTranspSt
)

var bodyStateNames = [...]string{"idle", "safe", "safe_st", "safe_st_ok", "transp", "transp_st"}

// String returns the state name used in the specification.
func (s BodyState) String() string {
	if s >= 0 && int(s) < len(bodyStateNames) {
		return bodyStateNames[s]
	}
	return fmt.Sprintf("BodyState(%d)", int(s))
}

// IsSafe reports whether s is one of ve_body's safe states (safe, safe_st,
// safe_st_ok or idle), as cs's veBodyInSafeState sees it.
func (s BodyState) IsSafe() bool { return s != BodyTransp && s != BodyTranspSt }

// BodyPredicates are the inputs of ve_body's conditions for one run.
type BodyPredicates struct {
	RecvStatus       bool // new status from the real effectors
	RecvCommand      bool // new command from cs
	AllHwOk          bool // rLwrOk ∧ lLwrOk ∧ rLwrInCmdState ∧ lLwrInCmdState ∧ tMotorOk ∧ hpMotorOk ∧ htMotorOk
	AllCmdOk         bool // rLwrCmdOk ∧ lLwrCmdOk ∧ tCmdOk
	CmdExitSafeState bool // the cs command says "exit safe state" (sc == 1)
	SafeItPassed500  bool // non-interrupted safe iterations over 500
}

// BodyCond is a named condition over BodyPredicates.
type BodyCond struct {
	Name string
	Eval func(BodyPredicates) bool
}

// BodyTransition is one σ row: from → to when Cond holds.
type BodyTransition struct {
	From, To BodyState
	Cond     BodyCond
}

func always() BodyCond { return BodyCond{"TRUE", func(BodyPredicates) bool { return true }} }
func never() BodyCond  { return BodyCond{"FALSE", func(BodyPredicates) bool { return false }} }

var (
	bRecvStatusHwOk    = BodyCond{"recvStatus ∧ allHwOk", func(p BodyPredicates) bool { return p.RecvStatus && p.AllHwOk }}
	bRecvStatusNotHwOk = BodyCond{"recvStatus ∧ ¬allHwOk", func(p BodyPredicates) bool { return p.RecvStatus && !p.AllHwOk }}
	bNoStatus          = BodyCond{"¬recvStatus", func(p BodyPredicates) bool { return !p.RecvStatus }}
	bExit              = BodyCond{"recvCommand ∧ allCmdOk ∧ cmdExitSafeState ∧ safeItPassed500", func(p BodyPredicates) bool {
		return p.RecvCommand && p.AllCmdOk && p.CmdExitSafeState && p.SafeItPassed500
	}}
	bNotExit = BodyCond{"¬recvCommand ∨ ¬allCmdOk ∨ ¬cmdExitSafeState ∨ ¬safeItPassed500", func(p BodyPredicates) bool {
		return !p.RecvCommand || !p.AllCmdOk || !p.CmdExitSafeState || !p.SafeItPassed500
	}}
	bCmdOk    = BodyCond{"recvCommand ∧ allCmdOk", func(p BodyPredicates) bool { return p.RecvCommand && p.AllCmdOk }}
	bCmdNotOk = BodyCond{"¬recvCommand ∨ ¬allCmdOk", func(p BodyPredicates) bool { return !p.RecvCommand || !p.AllCmdOk }}
)

// BodyTerminal returns τ of each state (docs/velma.md#ve_body-transitions).
func BodyTerminal() map[BodyState]BodyCond {
	return map[BodyState]BodyCond{
		BodyIdle:     {"recvStatus", func(p BodyPredicates) bool { return p.RecvStatus }},
		BodySafe:     always(),
		BodySafeSt:   always(),
		BodySafeStOk: always(),
		BodyTransp:   always(),
		BodyTranspSt: always(),
	}
}

// BodyError returns ε of each state: FALSE everywhere (ve_body has no error
// handling).
func BodyError() map[BodyState]BodyCond {
	m := map[BodyState]BodyCond{}
	for s := BodyIdle; s <= BodyTranspSt; s++ {
		m[s] = never()
	}
	return m
}

// BodyTransitions returns the σ table of docs/velma.md#ve_body-transitions, in
// the specification's order.
func BodyTransitions() []BodyTransition {
	return []BodyTransition{
		{BodyIdle, BodySafeSt, always()},
		{BodySafeSt, BodySafe, always()},
		{BodySafe, BodySafeSt, bRecvStatusNotHwOk},
		{BodySafe, BodySafeStOk, bRecvStatusHwOk},
		{BodySafe, BodyIdle, bNoStatus},
		{BodySafeStOk, BodySafe, bNotExit},
		{BodySafeStOk, BodyTransp, bExit},
		{BodyTransp, BodySafeSt, bRecvStatusNotHwOk},
		{BodyTransp, BodyTranspSt, bRecvStatusHwOk},
		{BodyTransp, BodyIdle, bNoStatus},
		{BodyTranspSt, BodyTransp, bCmdOk},
		{BodyTranspSt, BodySafe, bCmdNotOk},
	}
}

// BodyFSM evaluates ve_body's τ/σ/ε tables.
type BodyFSM struct {
	terminal map[BodyState]BodyCond
	errs     map[BodyState]BodyCond
	trans    map[BodyState][]BodyTransition
}

// NewBodyFSM builds the FSM from the specification tables.
func NewBodyFSM() *BodyFSM {
	f := &BodyFSM{terminal: BodyTerminal(), errs: BodyError(), trans: map[BodyState][]BodyTransition{}}
	for _, t := range BodyTransitions() {
		f.trans[t.From] = append(f.trans[t.From], t)
	}
	return f
}

// Next returns the state to execute after cur given the predicates: cur
// itself unless τ (or ε) holds, else the target of the single σ that holds.
// An error means the table is not exhaustive for p (no or several σ hold);
// the caller then falls back to safe.
func (f *BodyFSM) Next(cur BodyState, p BodyPredicates) (BodyState, error) {
	if !f.errs[cur].Eval(p) && !f.terminal[cur].Eval(p) {
		return cur, nil
	}
	next, n := cur, 0
	for _, t := range f.trans[cur] {
		if t.Cond.Eval(p) {
			next = t.To
			n++
		}
	}
	if n != 1 {
		return BodySafe, fmt.Errorf("ve_body: %d transitions hold from %v for %+v", n, cur, p)
	}
	return next, nil
}
