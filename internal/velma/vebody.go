package velma

import "math"

// VeBodyConfig configures the safety layer.
type VeBodyConfig struct {
	Limits Limits
	// ArmDamping are the per-joint damping factors applied in safe
	// [N·m·s/rad] (default 10, 10, 5, 5, 2, 1, 1).
	ArmDamping [ArmDOF]float64
	// TorsoDamping is the torso damping factor in safe (default 20).
	TorsoDamping float64
	// SafeIterations is the number of non-interrupted safe iterations that
	// must be exceeded before transp (default 500).
	SafeIterations int
}

// DefaultVeBodyConfig returns the values of docs/velma.md#joints-and-rates.
func DefaultVeBodyConfig() VeBodyConfig {
	return VeBodyConfig{
		Limits:         DefaultLimits(),
		ArmDamping:     [ArmDOF]float64{10, 10, 5, 5, 2, 1, 1},
		TorsoDamping:   20,
		SafeIterations: 500,
	}
}

// VeBody is the virtual effector velma_core_ve_body. It is run twice per
// iteration: RunStatus with the effector status, then RunCommand with cs's
// command.
type VeBody struct {
	cfg    VeBodyConfig
	fsm    *BodyFSM
	state  BodyState
	safeIt int
	last   EffectorStatus
	// faults of the current iteration (status part from RunStatus, command
	// part from RunCommand)
	stFaultType, stFaultMod   int32
	cmdFaultType, cmdFaultMod int32
	fsmErr                    error
}

// NewVeBody returns ve_body in its initial state idle.
func NewVeBody(cfg VeBodyConfig) *VeBody {
	return &VeBody{cfg: cfg, fsm: NewBodyFSM(), state: BodyIdle}
}

// State returns the current state.
func (v *VeBody) State() BodyState { return v.state }

// SafeIterations returns the number of non-interrupted safe iterations so far.
func (v *VeBody) SafeIterations() int { return v.safeIt }

// SC returns the safety summary of the current iteration.
func (v *VeBody) SC() StatusSC {
	ft, fm := v.stFaultType|v.cmdFaultType, v.stFaultMod|v.cmdFaultMod
	return StatusSC{SafeBehavior: v.state.IsSafe(), Error: ft != 0, FaultType: ft, FaultyModuleID: fm}
}

// LastStatus returns the last status read from the effectors.
func (v *VeBody) LastStatus() EffectorStatus { return v.last }

func (v *VeBody) checkArm(a *ArmStatus, mod int32) bool {
	ok := true
	for i := range ArmDOF {
		if !finite(a.Q[i]) || !finite(a.DQ[i]) || !finite(a.T[i]) {
			v.stFaultType |= FaultNaNStatus
			v.stFaultMod |= mod
			ok = false
		} else if math.Abs(a.Q[i]) > v.cfg.Limits.ArmQ[i] {
			v.stFaultType |= FaultRangeStatus
			v.stFaultMod |= mod
			ok = false
		}
	}
	if !a.OK || !a.InCmdState {
		v.stFaultType |= FaultHWState
		v.stFaultMod |= mod
		ok = false
	}
	return ok
}

func (v *VeBody) checkMotor(m *MotorStatus, mod int32) bool {
	ok := true
	if !finite(m.Q) || !finite(m.DQ) {
		v.stFaultType |= FaultNaNStatus
		v.stFaultMod |= mod
		ok = false
	}
	if !m.OK {
		v.stFaultType |= FaultHWState
		v.stFaultMod |= mod
		ok = false
	}
	return ok
}

// allHwOk evaluates rLwrOk ∧ lLwrOk ∧ rLwrInCmdState ∧ lLwrInCmdState ∧
// tMotorOk ∧ hpMotorOk ∧ htMotorOk; an arm or motor whose status is NaN or
// out of range is not OK.
func (v *VeBody) allHwOk(s *EffectorStatus) bool {
	ok := v.checkArm(&s.RArm, ModuleRArm)
	ok = v.checkArm(&s.LArm, ModuleLArm) && ok
	ok = v.checkMotor(&s.Torso, ModuleTMotor) && ok
	ok = v.checkMotor(&s.HeadPan, ModuleHPMotor) && ok
	return v.checkMotor(&s.HeadTilt, ModuleHTMotor) && ok
}

func (v *VeBody) checkArmCmd(c *ArmCommand, mod int32) bool {
	if !c.Valid {
		v.cmdFaultType |= FaultCommUp
		v.cmdFaultMod |= mod
		return false
	}
	ok := true
	for i, t := range c.T {
		switch {
		case !finite(t):
			v.cmdFaultType |= FaultNaNCommand
			v.cmdFaultMod |= mod
			ok = false
		case math.Abs(t) > v.cfg.Limits.ArmTorque[i]:
			v.cmdFaultType |= FaultRangeCommand
			v.cmdFaultMod |= mod
			ok = false
		}
	}
	return ok
}

// allCmdOk evaluates rLwrCmdOk ∧ lLwrCmdOk ∧ tCmdOk: each torque present,
// finite and within the limits.
func (v *VeBody) allCmdOk(c *BodyCommand) bool {
	ok := v.checkArmCmd(&c.RArm, ModuleRArm)
	ok = v.checkArmCmd(&c.LArm, ModuleLArm) && ok
	switch {
	case !c.Torso.TValid:
		v.cmdFaultType |= FaultCommUp
		v.cmdFaultMod |= ModuleTMotor
		ok = false
	case !finite(c.Torso.T):
		v.cmdFaultType |= FaultNaNCommand
		v.cmdFaultMod |= ModuleTMotor
		ok = false
	case math.Abs(c.Torso.T) > v.cfg.Limits.TorsoTorque:
		v.cmdFaultType |= FaultRangeCommand
		v.cmdFaultMod |= ModuleTMotor
		ok = false
	}
	return ok
}

func (v *VeBody) transition(p BodyPredicates) {
	next, err := v.fsm.Next(v.state, p)
	v.fsmErr = err
	switch next {
	case BodyIdle, BodyTransp, BodyTranspSt:
		v.safeIt = 0
	}
	v.state = next
}

// RunStatus is ve_body's first run of an iteration: it takes the effector
// status (ok=false when none arrived), switches state and, in safe_st,
// safe_st_ok and transp_st, passes the status up to cs.
func (v *VeBody) RunStatus(st EffectorStatus, ok bool) BodyStatus {
	v.stFaultType, v.stFaultMod = 0, 0
	p := BodyPredicates{RecvStatus: ok}
	if ok {
		p.AllHwOk = v.allHwOk(&st)
		v.last = st
	} else {
		v.stFaultType |= FaultCommHW
	}
	v.transition(p)
	switch v.state {
	case BodySafeSt, BodySafeStOk, BodyTranspSt:
		return BodyStatus{Valid: true, SC: v.SC(), EffectorStatus: v.last}
	}
	return BodyStatus{}
}

// RunCommand is ve_body's second run: it takes cs's command, switches state
// and returns what to send to the effectors (send=false in idle). In safe it
// computes joint damping itself; in transp it passes the command through.
func (v *VeBody) RunCommand(cmd BodyCommand) (out EffectorCommand, send bool) {
	v.cmdFaultType, v.cmdFaultMod = 0, 0
	p := BodyPredicates{RecvCommand: cmd.Valid}
	if cmd.Valid {
		p.AllCmdOk = v.allCmdOk(&cmd)
		p.CmdExitSafeState = cmd.SC == ExitSafeState
	} else {
		v.cmdFaultType |= FaultCommUp
	}
	p.SafeItPassed500 = v.safeIt > v.cfg.SafeIterations
	v.transition(p)
	switch v.state {
	case BodySafe:
		v.safeIt++
		return v.safeCommand(), true
	case BodyTransp:
		return cmd.EffectorCommand, true
	}
	return EffectorCommand{}, false
}

// safeCommand is the safe behaviour: per-joint damping of the last status.
func (v *VeBody) safeCommand() EffectorCommand {
	var c EffectorCommand
	c.RArm.Valid, c.LArm.Valid = true, true
	for i := range ArmDOF {
		c.RArm.T[i] = damp(v.cfg.ArmDamping[i], v.last.RArm.DQ[i])
		c.LArm.T[i] = damp(v.cfg.ArmDamping[i], v.last.LArm.DQ[i])
	}
	c.Torso.T, c.Torso.TValid = damp(v.cfg.TorsoDamping, v.last.Torso.DQ), true
	return c
}

// damp returns −k·dq, or 0 for a non-finite velocity.
func damp(k, dq float64) float64 {
	if !finite(dq) {
		return 0
	}
	return -k * dq
}
