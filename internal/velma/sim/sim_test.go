package sim

import (
	"math"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/velma"
	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
)

func newSim(t *testing.T) *Sim {
	t.Helper()
	s, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSim_InitialStatus(t *testing.T) {
	s := newSim(t)
	st, ok := s.ReadStatus()
	if !ok || !st.RArm.OK || !st.LArm.InCmdState || st.Torso.Enabled || !st.HeadPan.HomingRequired {
		t.Fatalf("initial status %+v", st)
	}
	if st.RArm.Q != DefaultConfig().InitialRight {
		t.Fatalf("right arm at %v", st.RArm.Q)
	}
}

func TestSim_ArmAcceleratesUnderTorqueAndStopsByFriction(t *testing.T) {
	s := newSim(t)
	var c velma.EffectorCommand
	c.RArm.Valid = true
	c.RArm.T[6] = 1 // Nm on the last joint
	for range 100 {
		s.WriteCommand(c)
		s.Step()
	}
	st, _ := s.ReadStatus()
	if st.RArm.DQ[6] <= 0.1 || st.RArm.Q[6] <= 0 {
		t.Fatalf("joint 6 dq %.3f q %.3f after 0.2 s of 1 Nm", st.RArm.DQ[6], st.RArm.Q[6])
	}
	// the proximal joints move only through the inertial coupling, much
	// less (the light wrist links 5 and 6 react strongly)
	for j := range 4 {
		if math.Abs(st.RArm.DQ[j]) > math.Abs(st.RArm.DQ[6])/2 {
			t.Fatalf("joint %d dq %.3f vs driven joint %.3f", j, st.RArm.DQ[j], st.RArm.DQ[6])
		}
	}
	for range 1000 { // no command: zero torque, friction stops the joint
		s.Step()
	}
	st, _ = s.ReadStatus()
	if math.Abs(st.RArm.DQ[6]) > 1e-3 {
		t.Fatalf("joint 6 still moving at %.4f", st.RArm.DQ[6])
	}
}

func TestSim_NaNTorqueDropsCommandState_RecoverRestores(t *testing.T) {
	s := newSim(t)
	var c velma.EffectorCommand
	c.LArm.Valid = true
	c.LArm.T[2] = math.NaN()
	s.WriteCommand(c)
	s.Step()
	st, _ := s.ReadStatus()
	if st.LArm.InCmdState || !st.RArm.InCmdState {
		t.Fatalf("after NaN: left in cmd %v, right %v", st.LArm.InCmdState, st.RArm.InCmdState)
	}
	for _, v := range st.LArm.Q {
		if math.IsNaN(v) {
			t.Fatal("NaN reached the state")
		}
	}
	s.Recover()
	if st, _ = s.ReadStatus(); !st.LArm.InCmdState {
		t.Fatal("Recover did not restore command state")
	}
}

func TestSim_TorsoBrakedUntilEnabled(t *testing.T) {
	s := newSim(t)
	c := velma.EffectorCommand{Torso: velma.MotorCommand{T: 50, TValid: true}}
	for range 50 {
		s.WriteCommand(c)
		s.Step()
	}
	if q := s.BodyQ()[0]; q != 0 {
		t.Fatalf("disabled torso moved to %g", q)
	}
	c.Torso.Enable, c.Torso.EnableValid = true, true
	for range 50 {
		s.WriteCommand(c)
		s.Step()
	}
	if q := s.BodyQ()[0]; q <= 0 {
		t.Fatalf("enabled torso at %g under +50 Nm", q)
	}
}

func TestSim_HeadHomingThenPositionFollowing(t *testing.T) {
	s := newSim(t)
	on := velma.MotorCommand{Enable: true, EnableValid: true}
	s.WriteCommand(velma.EffectorCommand{HeadPan: on, HeadTilt: on})
	s.Step()
	// a position command before homing is ignored
	s.WriteCommand(velma.EffectorCommand{HeadPan: velma.MotorCommand{Q: 1, QValid: true}})
	s.Step()
	if hq := s.HeadQ(); hq[0] != 0.2 {
		t.Fatalf("unhomed head moved to %v", hq)
	}
	home := velma.MotorCommand{HomingStart: true, HomingStartValid: true}
	s.WriteCommand(velma.EffectorCommand{HeadPan: home, HeadTilt: home})
	for range 100 {
		s.Step()
	}
	st, _ := s.ReadStatus()
	if st.HeadPan.HomingRequired || st.HeadTilt.HomingRequired || math.Abs(st.HeadPan.Q) >= 0.015 {
		t.Fatalf("after homing %+v %+v", st.HeadPan, st.HeadTilt)
	}
	for range 500 { // 1 s at 1.04 rad/s reaches 0.5
		s.WriteCommand(velma.EffectorCommand{HeadPan: velma.MotorCommand{Q: 0.5, QValid: true}})
		s.Step()
	}
	if hq := s.HeadQ(); math.Abs(hq[0]-0.5) > 1e-9 {
		t.Fatalf("head pan at %v, want 0.5", hq[0])
	}
}

func TestSim_Faults(t *testing.T) {
	s := newSim(t)
	s.SetStatusLost(true)
	if _, ok := s.ReadStatus(); ok {
		t.Fatal("status while lost")
	}
	s.SetStatusLost(false)
	s.SetMotorOK(HeadTilt, false)
	s.SetArmOK(kin.Right, false)
	st, ok := s.ReadStatus()
	if !ok || st.HeadTilt.OK || st.RArm.OK || !st.LArm.OK {
		t.Fatalf("fault flags %+v", st)
	}
}

func TestConfig_Validate(t *testing.T) {
	c := DefaultConfig()
	c.InitialRight[1] = 3
	if _, err := New(c); err == nil {
		t.Fatal("initial pose beyond limit accepted")
	}
	c = DefaultConfig()
	c.Period = 0
	if _, err := New(c); err == nil {
		t.Fatal("zero period accepted")
	}
}
