package velma

import (
	"math"
	"testing"
)

func okStatus() EffectorStatus {
	var s EffectorStatus
	s.RArm.OK, s.RArm.InCmdState, s.LArm.OK, s.LArm.InCmdState = true, true, true, true
	s.Torso.OK, s.HeadPan.OK, s.HeadTilt.OK = true, true, true
	return s
}

func validCommand(sc int32) BodyCommand {
	c := BodyCommand{Valid: true, SC: sc}
	c.RArm.Valid, c.LArm.Valid, c.Torso.TValid = true, true, true
	return c
}

// In safe, ve_body ignores cs and sends τ = −d∘q̇ with the damping factors
// of docs/velma.md#joints-and-rates.
func TestVeBody_Safe_ComputesJointDamping(t *testing.T) {
	v := NewVeBody(DefaultVeBodyConfig())
	st := okStatus()
	for i := range ArmDOF {
		st.RArm.DQ[i] = 0.1 * float64(i+1)
		st.LArm.DQ[i] = -0.2
	}
	st.Torso.DQ = 0.3
	v.RunStatus(st, true)
	cmd := validCommand(0)
	cmd.RArm.T[0] = 7 // must be ignored
	out, send := v.RunCommand(cmd)
	if !send || v.State() != BodySafe {
		t.Fatalf("state %v send %v", v.State(), send)
	}
	d := [ArmDOF]float64{10, 10, 5, 5, 2, 1, 1}
	for i := range ArmDOF {
		if math.Abs(out.RArm.T[i]+d[i]*st.RArm.DQ[i]) > 1e-12 || math.Abs(out.LArm.T[i]-d[i]*0.2) > 1e-12 {
			t.Fatalf("joint %d: %v / %v", i, out.RArm.T[i], out.LArm.T[i])
		}
	}
	if math.Abs(out.Torso.T+20*0.3) > 1e-12 || out.HeadPan.QValid || out.Torso.EnableValid {
		t.Fatalf("torso %v, head/enable must not be commanded in safe: %+v", out.Torso.T, out)
	}
}

// In transp, ve_body passes cs's command through unchanged.
func TestVeBody_Transp_PassesCommandThrough(t *testing.T) {
	cfg := DefaultVeBodyConfig()
	cfg.SafeIterations = 2
	v := NewVeBody(cfg)
	for range 4 {
		v.RunStatus(okStatus(), true)
		v.RunCommand(validCommand(ExitSafeState))
	}
	if v.State() != BodyTransp {
		t.Fatalf("state %v, want transp", v.State())
	}
	bs := v.RunStatus(okStatus(), true)
	if !bs.Valid || bs.SC.SafeBehavior || v.State() != BodyTranspSt {
		t.Fatalf("status run: %+v in %v", bs.SC, v.State())
	}
	cmd := validCommand(0)
	cmd.RArm.T = [ArmDOF]float64{1, 2, 3, 4, 5, 6, 7}
	cmd.Torso.T, cmd.Torso.Enable, cmd.Torso.EnableValid = -5, true, true
	cmd.HeadPan.Q, cmd.HeadPan.QValid, cmd.HeadTilt.HomingStart, cmd.HeadTilt.HomingStartValid = 0.3, true, true, true
	out, send := v.RunCommand(cmd)
	if !send || v.State() != BodyTransp || out != cmd.EffectorCommand {
		t.Fatalf("sent %+v (send %v, %v), want cs's command", out, send, v.State())
	}
}

func TestVeBody_StatusOutOfRangeOrNaN_NotAllHwOk(t *testing.T) {
	for name, mod := range map[string]func(*EffectorStatus){
		"arm q beyond limit": func(s *EffectorStatus) { s.RArm.Q[1] = 2.2 },
		"NaN velocity":       func(s *EffectorStatus) { s.LArm.DQ[3] = math.NaN() },
		"Inf motor position": func(s *EffectorStatus) { s.HeadTilt.Q = math.Inf(-1) },
	} {
		v := NewVeBody(DefaultVeBodyConfig())
		v.RunStatus(okStatus(), true)
		v.RunCommand(validCommand(0))
		st := okStatus()
		mod(&st)
		v.RunStatus(st, true)
		if v.State() != BodySafeSt || v.SC().FaultType&(FaultNaNStatus|FaultRangeStatus) == 0 {
			t.Errorf("%s: state %v faults %b", name, v.State(), v.SC().FaultType)
		}
	}
}
