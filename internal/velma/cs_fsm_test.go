package velma

import "testing"

func allCSPredicates() []CSPredicates {
	var out []CSPredicates
	for m := range 1 << 9 {
		b := func(i int) bool { return m&(1<<i) != 0 }
		out = append(out, CSPredicates{
			VeBodyStatusValid: b(0), VeBodyInSafeState: b(1), CurrentBehaviorOK: b(2),
			RecvCartImpCmd: b(3), RecvJntImpCmd: b(4), RecvRelaxCmd: b(5),
			InSelfCollision: b(6), MotorsReady: b(7),
		})
		// recvOneCmd is derived from the three command predicates
		p := &out[len(out)-1]
		n := 0
		for _, x := range []bool{p.RecvCartImpCmd, p.RecvJntImpCmd, p.RecvRelaxCmd} {
			if x {
				n++
			}
		}
		p.RecvOneCmd = n == 1
	}
	return out
}

// healthy: ve_body in transp with valid status, behaviour OK, motors ready.
var healthy = CSPredicates{VeBodyStatusValid: true, CurrentBehaviorOK: true, MotorsReady: true}

func cmdP(cart, jnt, relax bool) CSPredicates {
	p := healthy
	p.RecvCartImpCmd, p.RecvJntImpCmd, p.RecvRelaxCmd = cart, jnt, relax
	n := 0
	for _, x := range []bool{cart, jnt, relax} {
		if x {
			n++
		}
	}
	p.RecvOneCmd = n == 1
	return p
}

func mod(p CSPredicates, f func(*CSPredicates)) CSPredicates { f(&p); return p }

// One row per τ, σ and ε of docs/velma.md#cs-transitions.
func TestCSFSM_Next_EveryRow(t *testing.T) {
	cart, jnt, relax := cmdP(true, false, false), cmdP(false, true, false), cmdP(false, false, true)
	none := healthy
	notOK := mod(healthy, func(p *CSPredicates) { p.CurrentBehaviorOK = false })
	noStatus := mod(healthy, func(p *CSPredicates) { p.VeBodyStatusValid = false })
	inSafe := mod(healthy, func(p *CSPredicates) { p.VeBodyInSafeState = true })
	coll := func(p CSPredicates) CSPredicates { p.InSelfCollision = true; return p }
	cases := []struct {
		name    string
		from    CSState
		p       CSPredicates
		want    CSState
		inError bool
	}{
		// idle
		{"τ_idle false: ve_body in safe", CSIdle, inSafe, CSIdle, false},
		{"τ_idle false: no status", CSIdle, noStatus, CSIdle, false},
		{"ε_idle FALSE even with behaviour error", CSIdle, mod(inSafe, func(p *CSPredicates) { p.CurrentBehaviorOK = false }), CSIdle, false},
		{"σ_idle,safe", CSIdle, none, CSSafe, false},
		// ε of every behaviour state → idle via IN_ERROR
		{"ε_safe ¬CURRENT_BEHAVIOR_OK", CSSafe, notOK, CSIdle, true},
		{"ε_safe ¬veBodyStatusValid", CSSafe, noStatus, CSIdle, true},
		{"ε_safe veBodyInSafeState", CSSafe, inSafe, CSIdle, true},
		{"ε_relax", CSRelax, inSafe, CSIdle, true},
		{"ε_cart_imp", CSCartImp, noStatus, CSIdle, true},
		{"ε_jnt_imp", CSJntImp, notOK, CSIdle, true},
		{"ε beats τ: safe with relax command but ve_body safe", CSSafe, mod(relax, func(p *CSPredicates) { p.VeBodyInSafeState = true }), CSIdle, true},
		// safe
		{"τ_safe false: no command", CSSafe, none, CSSafe, false},
		{"τ_safe false: two commands", CSSafe, cmdP(true, true, false), CSSafe, false},
		{"τ_safe false: motors not ready", CSSafe, mod(jnt, func(p *CSPredicates) { p.MotorsReady = false }), CSSafe, false},
		{"τ_safe false: cart in self-collision", CSSafe, coll(cart), CSSafe, false},
		{"τ_safe false: jnt in self-collision", CSSafe, coll(jnt), CSSafe, false},
		{"σ_safe,cart_imp", CSSafe, cart, CSCartImp, false},
		{"σ_safe,jnt_imp", CSSafe, jnt, CSJntImp, false},
		{"σ_safe,relax", CSSafe, relax, CSRelax, false},
		{"σ_safe,relax even in self-collision", CSSafe, coll(relax), CSRelax, false},
		// relax
		{"τ_relax false: no command", CSRelax, none, CSRelax, false},
		{"τ_relax false: relax command", CSRelax, relax, CSRelax, false},
		{"τ_relax false: jnt in self-collision", CSRelax, coll(jnt), CSRelax, false},
		{"σ_relax,cart_imp", CSRelax, cart, CSCartImp, false},
		{"σ_relax,jnt_imp", CSRelax, jnt, CSJntImp, false},
		// cart_imp
		{"τ_cart_imp false: no command, no collision", CSCartImp, none, CSCartImp, false},
		{"τ_cart_imp false: new cart command", CSCartImp, cart, CSCartImp, false},
		{"σ_cart_imp,safe: self-collision, no command", CSCartImp, coll(none), CSSafe, false},
		{"σ_cart_imp,jnt_imp", CSCartImp, jnt, CSJntImp, false},
		{"σ_cart_imp,relax", CSCartImp, relax, CSRelax, false},
		{"σ_cart_imp,jnt_imp in self-collision", CSCartImp, coll(jnt), CSJntImp, false},
		// jnt_imp
		{"τ_jnt_imp false: no command, no collision", CSJntImp, none, CSJntImp, false},
		{"τ_jnt_imp false: new jnt command", CSJntImp, jnt, CSJntImp, false},
		{"σ_jnt_imp,safe: self-collision, no command", CSJntImp, coll(none), CSSafe, false},
		{"σ_jnt_imp,cart_imp", CSJntImp, cart, CSCartImp, false},
		{"σ_jnt_imp,relax", CSJntImp, relax, CSRelax, false},
	}
	f := NewCSFSM()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := f.Next(tc.from, tc.p)
			if st.Next != tc.want || st.InError != tc.inError || st.Fallback {
				t.Fatalf("Next(%v) = %+v; want %v (in error %v)", tc.from, st, tc.want, tc.inError)
			}
		})
	}
}

// The only case the specification leaves open: cart_imp/jnt_imp end on
// self-collision while a command of their own kind arrives; no σ holds and
// cs goes to safe.
func TestCSFSM_Next_SelfCollisionWithOwnCommand_FallsBackToSafe(t *testing.T) {
	f := NewCSFSM()
	for _, tc := range []struct {
		from CSState
		p    CSPredicates
	}{
		{CSCartImp, cmdP(true, false, false)},
		{CSJntImp, cmdP(false, true, false)},
	} {
		tc.p.InSelfCollision = true
		st := f.Next(tc.from, tc.p)
		if st.Next != CSSafe || !st.Fallback {
			t.Fatalf("%v: %+v, want fallback to safe", tc.from, st)
		}
	}
}

// Over all predicate combinations: fallback happens only in that open case,
// and every σ row is used at least once.
func TestCSFSM_Exhaustive(t *testing.T) {
	f := NewCSFSM()
	used := map[[2]CSState]bool{}
	for _, s := range CSStates {
		for _, p := range allCSPredicates() {
			st := f.Next(s, p)
			if st.Fallback {
				open := (s == CSCartImp || s == CSJntImp) && p.InSelfCollision && p.RecvOneCmd && !st.InError &&
					((s == CSCartImp && p.RecvCartImpCmd) || (s == CSJntImp && p.RecvJntImpCmd))
				if !open {
					t.Fatalf("unexpected fallback from %v with %+v", s, p)
				}
				continue
			}
			if st.Ended {
				used[[2]CSState{s, st.Next}] = true
			}
		}
	}
	for _, tr := range CSTransitions() {
		if !used[[2]CSState{tr.From, tr.To}] {
			t.Errorf("σ_%v,%v never taken", tr.From, tr.To)
		}
	}
	if n := len(CSTransitions()); n != 16 {
		t.Fatalf("%d σ rows, want 16", n)
	}
}
