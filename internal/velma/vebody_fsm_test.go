package velma

import (
	"fmt"
	"testing"
)

// allBodyPredicates enumerates the 64 predicate combinations.
func allBodyPredicates() []BodyPredicates {
	var out []BodyPredicates
	for m := range 64 {
		out = append(out, BodyPredicates{
			RecvStatus: m&1 != 0, RecvCommand: m&2 != 0, AllHwOk: m&4 != 0,
			AllCmdOk: m&8 != 0, CmdExitSafeState: m&16 != 0, SafeItPassed500: m&32 != 0,
		})
	}
	return out
}

// One row per σ of docs/velma.md#ve_body-transitions (several rows for a
// disjunction), plus the τ of idle when it does not hold.
func TestBodyFSM_Next_EverySigmaRow(t *testing.T) {
	ok := BodyPredicates{RecvStatus: true, RecvCommand: true, AllHwOk: true, AllCmdOk: true, CmdExitSafeState: true, SafeItPassed500: true}
	with := func(f func(*BodyPredicates)) BodyPredicates { p := ok; f(&p); return p }
	cases := []struct {
		name string
		from BodyState
		p    BodyPredicates
		want BodyState
	}{
		{"τ_idle=¬recvStatus stays idle", BodyIdle, BodyPredicates{}, BodyIdle},
		{"σ_idle,safe_st recvStatus", BodyIdle, BodyPredicates{RecvStatus: true}, BodySafeSt},
		{"σ_safe_st,safe TRUE (nothing)", BodySafeSt, BodyPredicates{}, BodySafe},
		{"σ_safe_st,safe TRUE (all)", BodySafeSt, ok, BodySafe},
		{"σ_safe,safe_st recvStatus∧¬allHwOk", BodySafe, with(func(p *BodyPredicates) { p.AllHwOk = false }), BodySafeSt},
		{"σ_safe,safe_st_ok recvStatus∧allHwOk", BodySafe, ok, BodySafeStOk},
		{"σ_safe,idle ¬recvStatus", BodySafe, with(func(p *BodyPredicates) { p.RecvStatus = false }), BodyIdle},
		{"σ_safe_st_ok,safe ¬recvCommand", BodySafeStOk, with(func(p *BodyPredicates) { p.RecvCommand = false }), BodySafe},
		{"σ_safe_st_ok,safe ¬allCmdOk", BodySafeStOk, with(func(p *BodyPredicates) { p.AllCmdOk = false }), BodySafe},
		{"σ_safe_st_ok,safe ¬cmdExitSafeState", BodySafeStOk, with(func(p *BodyPredicates) { p.CmdExitSafeState = false }), BodySafe},
		{"σ_safe_st_ok,safe ¬safeItPassed500", BodySafeStOk, with(func(p *BodyPredicates) { p.SafeItPassed500 = false }), BodySafe},
		{"σ_safe_st_ok,transp all four", BodySafeStOk, ok, BodyTransp},
		{"σ_transp,safe_st recvStatus∧¬allHwOk", BodyTransp, with(func(p *BodyPredicates) { p.AllHwOk = false }), BodySafeSt},
		{"σ_transp,transp_st recvStatus∧allHwOk", BodyTransp, ok, BodyTranspSt},
		{"σ_transp,idle ¬recvStatus", BodyTransp, with(func(p *BodyPredicates) { p.RecvStatus = false }), BodyIdle},
		{"σ_transp_st,transp recvCommand∧allCmdOk", BodyTranspSt, ok, BodyTransp},
		{"σ_transp_st,safe ¬recvCommand", BodyTranspSt, with(func(p *BodyPredicates) { p.RecvCommand = false }), BodySafe},
		{"σ_transp_st,safe ¬allCmdOk", BodyTranspSt, with(func(p *BodyPredicates) { p.AllCmdOk = false }), BodySafe},
	}
	f := NewBodyFSM()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.Next(tc.from, tc.p)
			if err != nil || got != tc.want {
				t.Fatalf("Next(%v, %+v) = %v, %v; want %v", tc.from, tc.p, got, err, tc.want)
			}
		})
	}
}

// τ = TRUE for every state but idle, ε = FALSE everywhere, and for every
// state and predicate combination exactly one σ holds when τ holds.
func TestBodyFSM_TerminalErrorAndExhaustiveness(t *testing.T) {
	term, errs := BodyTerminal(), BodyError()
	f := NewBodyFSM()
	for s := BodyIdle; s <= BodyTranspSt; s++ {
		for _, p := range allBodyPredicates() {
			if errs[s].Eval(p) {
				t.Fatalf("ε_%v holds for %+v", s, p)
			}
			if s != BodyIdle && !term[s].Eval(p) {
				t.Fatalf("τ_%v does not hold for %+v", s, p)
			}
			if s == BodyIdle && term[s].Eval(p) != p.RecvStatus {
				t.Fatalf("τ_idle != recvStatus for %+v", p)
			}
			if _, err := f.Next(s, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := len(BodyTransitions()); n != 12 {
		t.Fatalf("%d σ rows, want 12", n)
	}
}

func TestBodyState_IsSafe(t *testing.T) {
	want := map[BodyState]bool{BodyIdle: true, BodySafe: true, BodySafeSt: true, BodySafeStOk: true, BodyTransp: false, BodyTranspSt: false}
	for s, w := range want {
		if s.IsSafe() != w {
			t.Errorf("%v.IsSafe() = %v", s, !w)
		}
	}
	if got := fmt.Sprint(BodySafeStOk); got != "safe_st_ok" {
		t.Errorf("String = %q", got)
	}
}
