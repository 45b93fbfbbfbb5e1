package velma_test

import (
	"math"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/velma"
	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
	"github.com/fsmnodes/fsmnodes/internal/velma/sim"
)

type rig struct {
	t   *testing.T
	sim *sim.Sim
	ag  *velma.Agent
	rep *velma.Report
}

func newRig(t *testing.T) *rig {
	t.Helper()
	s, err := sim.New(sim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	a, err := velma.NewAgent(velma.DefaultAgentConfig(), s)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, sim: s, ag: a}
}

func (r *rig) step(task *velma.TaskCommand) *velma.Report {
	r.rep = r.ag.Iterate(task)
	return r.rep
}

// until iterates with no command until cond holds, failing after max.
func (r *rig) until(max int, what string, cond func(*velma.Report) bool) int {
	r.t.Helper()
	for i := 1; i <= max; i++ {
		if cond(r.step(nil)) {
			return i
		}
	}
	r.t.Fatalf("%s not reached in %d iterations (ve_body %v, cs %v)", what, max, r.rep.BodyState, r.rep.CS.State)
	return 0
}

// bringUp runs until ve_body is transparent and cs is in safe; with motors
// it also enables and homes the motors.
func (r *rig) bringUp(motors bool) {
	r.t.Helper()
	r.until(2000, "cs safe", func(rep *velma.Report) bool { return rep.CS.State == velma.CSSafe })
	if !motors {
		return
	}
	r.step(&velma.TaskCommand{Motors: velma.MotorRequests{TorsoEnable: true, HeadPanEnable: true, HeadTiltEnable: true}})
	r.step(&velma.TaskCommand{Motors: velma.MotorRequests{HeadPanHome: true, HeadTiltHome: true}})
	r.until(500, "motors ready", func(rep *velma.Report) bool { return rep.CS.MotorsReady })
}

func TestAgent_StartUp_SafeLastsOver500IterationsThenTransp(t *testing.T) {
	r := newRig(t)
	// first iteration: status arrives, idle → safe_st → safe
	rep := r.step(nil)
	if rep.StatusState != velma.BodySafeSt || rep.BodyState != velma.BodySafe {
		t.Fatalf("first iteration %v/%v, want safe_st/safe", rep.StatusState, rep.BodyState)
	}
	safeIters := 1
	for rep.BodyState != velma.BodyTransp {
		if rep.BodyState != velma.BodySafe {
			t.Fatalf("iteration %d: ve_body %v before transp", rep.Iteration, rep.BodyState)
		}
		if rep.StatusState != velma.BodySafeStOk {
			if rep.Iteration > 1 {
				t.Fatalf("status run in %v, want safe_st_ok (all hardware OK)", rep.StatusState)
			}
		}
		if rep.CS.State != velma.CSIdle {
			t.Fatalf("cs %v while ve_body safe", rep.CS.State)
		}
		rep = r.step(nil)
		if rep.BodyState == velma.BodySafe {
			safeIters++
		}
		if rep.Iteration > 2000 {
			t.Fatal("never left safe")
		}
	}
	if safeIters < 500 {
		t.Fatalf("safe lasted %d iterations, want ≥ 500", safeIters)
	}
	// next iteration: transp_st → transp and cs leaves idle for safe
	rep = r.step(nil)
	if rep.StatusState != velma.BodyTranspSt || rep.BodyState != velma.BodyTransp || rep.CS.State != velma.CSSafe {
		t.Fatalf("after exit: %v/%v cs %v, want transp_st/transp, safe", rep.StatusState, rep.BodyState, rep.CS.State)
	}
}

func TestAgent_StatusLost_VeBodyIdleCSIdle(t *testing.T) {
	r := newRig(t)
	r.bringUp(false)
	r.sim.SetStatusLost(true)
	rep := r.step(nil)
	if rep.BodyState != velma.BodyIdle || rep.Sent {
		t.Fatalf("ve_body %v sent=%v, want idle and nothing sent", rep.BodyState, rep.Sent)
	}
	if rep.CS.State != velma.CSIdle || !rep.CS.Step.InError {
		t.Fatalf("cs %v (%+v), want idle via IN_ERROR", rep.CS.State, rep.CS.Step)
	}
	if rep.SC.FaultType&velma.FaultCommHW == 0 {
		t.Fatalf("fault bits %b lack COMM_HW", rep.SC.FaultType)
	}
	for range 10 {
		if rep = r.step(nil); rep.BodyState != velma.BodyIdle {
			t.Fatalf("ve_body left idle without status: %v", rep.BodyState)
		}
	}
	// status back: idle → safe_st → safe, and transp again only after > 500 safe iterations
	r.sim.SetStatusLost(false)
	n := r.until(2000, "transp again", func(rep *velma.Report) bool { return rep.BodyState == velma.BodyTransp })
	if n < 500 {
		t.Fatalf("back in transp after %d iterations, want > 500", n)
	}
}

func TestAgent_HardwareFault_SafeSt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inject func(*sim.Sim)
		module int32
	}{
		{"head pan motor not OK", func(s *sim.Sim) { s.SetMotorOK(sim.HeadPan, false) }, velma.ModuleHPMotor},
		{"torso motor not OK", func(s *sim.Sim) { s.SetMotorOK(sim.Torso, false) }, velma.ModuleTMotor},
		{"right arm not OK", func(s *sim.Sim) { s.SetArmOK(kin.Right, false) }, velma.ModuleRArm},
		{"left arm out of command state", func(s *sim.Sim) { s.SetArmInCommandState(kin.Left, false) }, velma.ModuleLArm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			r.bringUp(false)
			tc.inject(r.sim)
			rep := r.step(nil)
			if rep.StatusState != velma.BodySafeSt || rep.BodyState != velma.BodySafe {
				t.Fatalf("%v/%v, want safe_st/safe", rep.StatusState, rep.BodyState)
			}
			if rep.SC.FaultType&velma.FaultHWState == 0 || rep.SC.FaultyModuleID&tc.module == 0 {
				t.Fatalf("fault %b module %b, want HW_STATE and module %b", rep.SC.FaultType, rep.SC.FaultyModuleID, tc.module)
			}
			if rep.CS.State != velma.CSIdle {
				t.Fatalf("cs %v, want idle", rep.CS.State)
			}
			// oscillates safe ↔ safe_st while the fault lasts
			for range 600 {
				if rep = r.step(nil); rep.StatusState != velma.BodySafeSt || rep.BodyState != velma.BodySafe {
					t.Fatalf("%v/%v while faulty", rep.StatusState, rep.BodyState)
				}
			}
		})
	}
}

func TestAgent_InvalidCommand_VeBodyReturnsToSafe(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault velma.CommandFault
		bit   int32
	}{
		{"NaN torque", velma.CommandNaN, velma.FaultNaNCommand},
		{"torque out of range", velma.CommandOutOfRange, velma.FaultRangeCommand},
		{"command lost", velma.CommandLost, velma.FaultCommUp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			r.bringUp(false)
			r.ag.InjectCommandFault(tc.fault)
			rep := r.step(nil)
			if rep.StatusState != velma.BodyTranspSt || rep.BodyState != velma.BodySafe {
				t.Fatalf("%v/%v, want transp_st/safe", rep.StatusState, rep.BodyState)
			}
			if rep.SC.FaultType&tc.bit == 0 {
				t.Fatalf("fault bits %b lack %b", rep.SC.FaultType, tc.bit)
			}
			// the command sent is ve_body's damping, not cs's corrupted one
			for _, v := range rep.Command.RArm.T {
				if math.IsNaN(v) || math.Abs(v) > 50 {
					t.Fatalf("sent torque %v", rep.Command.RArm.T)
				}
			}
			if rep = r.step(nil); rep.CS.State != velma.CSIdle {
				t.Fatalf("cs %v, want idle after ve_body went safe", rep.CS.State)
			}
		})
	}
	t.Run("invalid command keeps ve_body in safe", func(t *testing.T) {
		r := newRig(t)
		for range 700 {
			r.ag.InjectCommandFault(velma.CommandNaN)
			if rep := r.step(nil); rep.BodyState != velma.BodySafe {
				t.Fatalf("ve_body %v with a NaN command", rep.BodyState)
			}
		}
		if n := r.ag.VeBody().SafeIterations(); n <= 500 {
			t.Fatalf("safe iterations %d, want > 500", n)
		}
		if rep := r.step(nil); rep.BodyState != velma.BodyTransp {
			t.Fatalf("ve_body %v with a valid command, want transp", rep.BodyState)
		}
	})
}

func TestAgent_Motors_EnableAndHoming(t *testing.T) {
	r := newRig(t)
	r.bringUp(false)
	if r.rep.CS.MotorsReady {
		t.Fatal("motors ready before enable")
	}
	// a command in safe without ready motors is rejected and cs stays safe
	rep := r.step(&velma.TaskCommand{Jnt: holdCommand(r, 1)})
	if rep.CS.State != velma.CSSafe || rep.CS.Jnt.State != velma.TrajRejected {
		t.Fatalf("cs %v jnt %v, want safe/rejected", rep.CS.State, rep.CS.Jnt)
	}
	r.bringUp(true)
	hq := r.sim.HeadQ()
	if math.Abs(hq[0]) > 0.015 || math.Abs(hq[1]) > 0.015 {
		t.Fatalf("head after homing at %v", hq)
	}
}

// holdCommand is a one-point jnt command to the current position.
func holdCommand(r *rig, id uint32) *velma.JointTrajectoryCommand {
	q, _ := r.rep.Status.BodyQ()
	return &velma.JointTrajectoryCommand{ID: id, Points: []velma.JointPoint{{Positions: q[:], TimeFromStart: 100 * time.Millisecond}}}
}
