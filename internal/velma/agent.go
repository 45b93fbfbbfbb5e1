package velma

import (
	"fmt"
	"math"
)

// AgentConfig configures both subsystems.
type AgentConfig struct {
	VeBody VeBodyConfig
	CS     CSConfig
}

// DefaultAgentConfig returns the Velma defaults.
func DefaultAgentConfig() AgentConfig {
	return AgentConfig{VeBody: DefaultVeBodyConfig(), CS: DefaultCSConfig()}
}

// Validate checks the configuration.
func (c *AgentConfig) Validate() error {
	if err := c.VeBody.Limits.Validate(); err != nil {
		return fmt.Errorf("ve_body: %w", err)
	}
	if c.VeBody.SafeIterations < 0 || c.VeBody.TorsoDamping < 0 {
		return fmt.Errorf("ve_body: safe_iterations %d and torso_damping %g must be ≥ 0", c.VeBody.SafeIterations, c.VeBody.TorsoDamping)
	}
	for i, d := range c.VeBody.ArmDamping {
		if !(d >= 0) || math.IsInf(d, 0) {
			return fmt.Errorf("ve_body: arm_damping[%d] = %g, want finite ≥ 0", i, d)
		}
	}
	return c.CS.Validate()
}

// Stepper is implemented by simulated effectors that advance one control
// period after each command (lock-step, like the original Gazebo setup).
type Stepper interface {
	Step()
}

// CommandFault corrupts the cs → ve_body command of one iteration, to test
// ve_body's checks.
type CommandFault int

// Command faults.
const (
	CommandOK         CommandFault = iota
	CommandNaN                     // right arm joint 0 torque = NaN
	CommandOutOfRange              // right arm joint 0 torque beyond the limit
	CommandLost                    // no command reaches ve_body
)

// Report is the outcome of one iteration.
type Report struct {
	Iteration   uint64
	StatusState BodyState // ve_body state after its status run
	BodyState   BodyState // ve_body state after its command run
	SC          StatusSC
	StatusValid bool
	Status      EffectorStatus  // last effector status read by ve_body
	Sent        bool            // a command was sent to the effectors
	Command     EffectorCommand // what was sent
	CS          *CSStatus       // valid until the next Iterate
}

// Agent runs the core agent's iteration over a set of effectors. Its
// methods must be called from one goroutine.
type Agent struct {
	eff   Effectors
	body  *VeBody
	cs    *CS
	fault CommandFault
	rep   Report
}

// NewAgent builds the agent.
func NewAgent(cfg AgentConfig, eff Effectors) (*Agent, error) {
	if eff == nil {
		return nil, fmt.Errorf("velma agent: nil effectors")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("velma agent: %w", err)
	}
	cs, err := NewCS(cfg.CS)
	if err != nil {
		return nil, fmt.Errorf("velma agent: %w", err)
	}
	return &Agent{eff: eff, body: NewVeBody(cfg.VeBody), cs: cs}, nil
}

// VeBody returns the safety layer (read-only use).
func (a *Agent) VeBody() *VeBody { return a.body }

// SetCSTuning changes cs's tuning for the next iteration (CS.SetTuning).
func (a *Agent) SetCSTuning(t CSTuning) error { return a.cs.SetTuning(t) }

// CSTuning returns cs's tuning in force.
func (a *Agent) CSTuning() CSTuning { return a.cs.Tuning() }

// InjectCommandFault corrupts the next iteration's cs → ve_body command.
func (a *Agent) InjectCommandFault(f CommandFault) { a.fault = f }

// Iterate runs one iteration (docs/velma.md#architecture-of-the-original):
// ve_body reads the effector status
// and passes it up, cs computes with the task command (nil if none), ve_body
// checks cs's command and sends to the effectors; simulated effectors then
// step.
func (a *Agent) Iterate(task *TaskCommand) *Report {
	st, ok := a.eff.ReadStatus()
	bs := a.body.RunStatus(st, ok)
	a.rep.StatusState = a.body.State()
	cmd := a.cs.Run(bs, task)
	switch a.fault {
	case CommandNaN:
		cmd.RArm.T[0] = math.NaN()
	case CommandOutOfRange:
		cmd.RArm.T[0] = 10 * a.body.cfg.Limits.ArmTorque[0]
	case CommandLost:
		cmd = BodyCommand{}
	}
	a.fault = CommandOK
	out, send := a.body.RunCommand(cmd)
	if send {
		a.eff.WriteCommand(out)
	}
	if s, ok := a.eff.(Stepper); ok {
		s.Step()
	}
	a.rep.Iteration++
	a.rep.BodyState = a.body.State()
	a.rep.SC = a.body.SC()
	a.rep.StatusValid = ok
	a.rep.Status = a.body.LastStatus()
	a.rep.Sent, a.rep.Command = send, out
	a.rep.CS = a.cs.Status()
	return &a.rep
}
