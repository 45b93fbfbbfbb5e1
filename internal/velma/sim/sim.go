// Package sim simulates Velma's real effectors for the core agent: two
// torque-driven 7-joint LWR arms (rigid-body model: configuration-dependent
// mass matrix from velma/kin, viscous and Coulomb friction, hard joint
// stops; arm gravity is taken as compensated below the controller, as on the
// real robot and in the original Gazebo plugin), a torque-driven torso
// (inertia 10 kg·m², damping 10 N·m·s/rad, braked while disabled), and head
// pan/tilt position servos with enable, homing and a 1.04 rad/s rate limit.
//
// Faults can be injected: status lost, an arm or motor not OK, an arm out
// of FRI command state. An arm that receives a non-finite torque drops out
// of command state (as FRI does) until Recover is called; finite torques
// beyond the physical limits are saturated.
//
// Sim implements velma.Effectors and velma.Stepper and is lock-stepped: each
// Step advances one period. It is not safe for concurrent use.
package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/velma"
	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
	"github.com/fsmnodes/fsmnodes/internal/velma/la"
)

// Config parameterises the simulation.
type Config struct {
	Period       time.Duration          // integration step (2 ms)
	InitialRight [kin.ArmDOF]float64    // initial right arm pose
	InitialLeft  [kin.ArmDOF]float64    // initial left arm pose
	InitialTorso float64                // initial torso angle
	InitialHead  [velma.HeadDOF]float64 // head position before homing
	ArmViscous   [kin.ArmDOF]float64    // N·m·s/rad (1.0)
	ArmCoulomb   float64                // Nm (0.2)
	ArmMaxTorque [kin.ArmDOF]float64    // physical saturation (176,176,100,100,100,38,38)
	TorsoInertia float64                // kg·m² (10)
	TorsoViscous float64                // N·m·s/rad (10)
	TorsoCoulomb float64                // Nm (0.5)
	HeadMaxVel   float64                // rad/s (1.04)
	HomingStep   float64                // rad per step while homing (0.008)
	HomingTol    float64                // homing done below this |q| (0.015)
}

// DefaultConfig returns the simulation start of
// docs/velma-model.md#initial-configuration and the approximations of
// docs/velma-model.md#simulation-model.
func DefaultConfig() Config {
	return Config{
		Period:       2 * time.Millisecond,
		InitialRight: [kin.ArmDOF]float64{-0.3, -1.8, 1.25, 0.85, 0, -0.5, 0},
		InitialLeft:  [kin.ArmDOF]float64{0.3, 1.8, -1.25, -0.85, 0, 0.5, 0},
		InitialHead:  [velma.HeadDOF]float64{0.2, -0.1},
		ArmViscous:   [kin.ArmDOF]float64{1, 1, 1, 1, 1, 1, 1},
		ArmCoulomb:   0.2,
		ArmMaxTorque: [kin.ArmDOF]float64{176, 176, 100, 100, 100, 38, 38},
		TorsoInertia: kin.TorsoInertia,
		TorsoViscous: 10,
		TorsoCoulomb: 0.5,
		HeadMaxVel:   1.04,
		HomingStep:   0.008,
		HomingTol:    0.015,
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	if c.Period <= 0 || c.Period > 100*time.Millisecond {
		return fmt.Errorf("sim config: period %v, want (0, 100ms]", c.Period)
	}
	if !(c.TorsoInertia > 0) {
		return fmt.Errorf("sim config: torso inertia %g, want > 0", c.TorsoInertia)
	}
	for i := range kin.ArmDOF {
		for name, v := range map[string]float64{"initial_right": c.InitialRight[i], "initial_left": c.InitialLeft[i]} {
			l := velma.BodyLimits[1+i]
			if !(v >= l.Lo && v <= l.Hi) {
				return fmt.Errorf("sim config: %s[%d] = %g outside [%g, %g]", name, i, v, l.Lo, l.Hi)
			}
		}
		if !(c.ArmViscous[i] >= 0) || !(c.ArmMaxTorque[i] > 0) {
			return fmt.Errorf("sim config: arm joint %d friction/max torque invalid", i)
		}
	}
	if !(c.InitialTorso >= -1.57 && c.InitialTorso <= 1.57) {
		return fmt.Errorf("sim config: initial_torso %g outside ±1.57", c.InitialTorso)
	}
	if !(c.HeadMaxVel > 0) || !(c.HomingStep > 0) || !(c.HomingTol > 0) {
		return fmt.Errorf("sim config: head velocity and homing parameters must be > 0")
	}
	return nil
}

type arm struct {
	side          kin.Side
	q, dq, t, ext [kin.ArmDOF]float64
	cmd           [kin.ArmDOF]float64
	ok, inCmd     bool
}

type motor struct {
	q, dq, t, ext                  float64
	target                         float64
	enabled, homingReq, homing, ok bool
	hasTarget                      bool
}

// Motor selects the torso or a head motor for fault injection.
type Motor int

// Motors.
const (
	Torso Motor = iota
	HeadPan
	HeadTilt
)

// Sim is the simulated robot.
type Sim struct {
	cfg        Config
	arms       [2]arm
	torso      motor
	head       [velma.HeadDOF]motor
	statusLost bool
	fresh      bool // a command arrived for this step
	steps      uint64
	m, l       la.Mat // mass matrix and its Cholesky factor (scratch)
}

// New returns a simulator at its initial configuration: arms OK and in
// command state, motors OK but disabled, head needing homing.
func New(cfg Config) (*Sim, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Sim{cfg: cfg, m: la.New(kin.ArmDOF, kin.ArmDOF), l: la.New(kin.ArmDOF, kin.ArmDOF)}
	s.arms[0] = arm{side: kin.Right, q: cfg.InitialRight, ok: true, inCmd: true}
	s.arms[1] = arm{side: kin.Left, q: cfg.InitialLeft, ok: true, inCmd: true}
	s.torso = motor{q: cfg.InitialTorso, ok: true}
	for i := range s.head {
		s.head[i] = motor{q: cfg.InitialHead[i], ok: true, homingReq: true}
	}
	return s, nil
}

// SetStatusLost makes ReadStatus report no status while lost is true.
func (s *Sim) SetStatusLost(lost bool) { s.statusLost = lost }

// SetArmOK sets an arm's OK flag (false: drive fault).
func (s *Sim) SetArmOK(side kin.Side, ok bool) { s.arms[side].ok = ok }

// SetArmInCommandState sets an arm's FRI command-state flag.
func (s *Sim) SetArmInCommandState(side kin.Side, in bool) { s.arms[side].inCmd = in }

// SetMotorOK sets a motor's OK flag (false: drive fault, commands ignored).
func (s *Sim) SetMotorOK(m Motor, ok bool) { s.motor(m).ok = ok }

// Recover clears arm faults and puts both arms back into command state.
func (s *Sim) Recover() {
	for i := range s.arms {
		s.arms[i].ok, s.arms[i].inCmd = true, true
	}
}

// SetExternalTorque applies an external torque to the 15 body joints
// (torso, right 0–6, left 0–6) until changed.
func (s *Sim) SetExternalTorque(t [velma.BodyDOF]float64) {
	s.torso.ext = t[0]
	copy(s.arms[0].ext[:], t[1:8])
	copy(s.arms[1].ext[:], t[8:15])
}

// BodyQ returns the true body joint positions.
func (s *Sim) BodyQ() [velma.BodyDOF]float64 {
	var q [velma.BodyDOF]float64
	q[0] = s.torso.q
	copy(q[1:8], s.arms[0].q[:])
	copy(q[8:15], s.arms[1].q[:])
	return q
}

// HeadQ returns the true head positions.
func (s *Sim) HeadQ() [velma.HeadDOF]float64 { return [velma.HeadDOF]float64{s.head[0].q, s.head[1].q} }

// Steps returns the number of steps simulated.
func (s *Sim) Steps() uint64 { return s.steps }

func (s *Sim) motor(m Motor) *motor {
	switch m {
	case HeadPan:
		return &s.head[0]
	case HeadTilt:
		return &s.head[1]
	}
	return &s.torso
}

// ReadStatus implements velma.Effectors.
func (s *Sim) ReadStatus() (velma.EffectorStatus, bool) {
	if s.statusLost {
		return velma.EffectorStatus{}, false
	}
	var st velma.EffectorStatus
	for i, a := range []*velma.ArmStatus{&st.RArm, &st.LArm} {
		r := &s.arms[i]
		a.Q, a.DQ, a.T, a.OK, a.InCmdState = r.q, r.dq, r.t, r.ok, r.inCmd
	}
	st.Torso = motorStatus(&s.torso)
	st.HeadPan = motorStatus(&s.head[0])
	st.HeadTilt = motorStatus(&s.head[1])
	return st, true
}

func motorStatus(m *motor) velma.MotorStatus {
	return velma.MotorStatus{Q: m.q, DQ: m.dq, Enabled: m.enabled, HomingRequired: m.homingReq, HomingInProgress: m.homing, OK: m.ok}
}

// WriteCommand implements velma.Effectors.
func (s *Sim) WriteCommand(c velma.EffectorCommand) {
	s.fresh = true
	for i, ac := range []*velma.ArmCommand{&c.RArm, &c.LArm} {
		a := &s.arms[i]
		a.cmd = [kin.ArmDOF]float64{}
		if !ac.Valid || !a.ok || !a.inCmd {
			continue
		}
		for j, t := range ac.T {
			if math.IsNaN(t) || math.IsInf(t, 0) {
				a.inCmd = false // FRI drops out of command mode
				a.cmd = [kin.ArmDOF]float64{}
				break
			}
			a.cmd[j] = math.Max(-s.cfg.ArmMaxTorque[j], math.Min(s.cfg.ArmMaxTorque[j], t))
		}
	}
	s.motorCommand(&s.torso, &c.Torso, false)
	s.motorCommand(&s.head[0], &c.HeadPan, true)
	s.motorCommand(&s.head[1], &c.HeadTilt, true)
}

func (s *Sim) motorCommand(m *motor, c *velma.MotorCommand, head bool) {
	m.t = 0
	if !m.ok {
		return
	}
	if c.EnableValid {
		m.enabled = c.Enable
	}
	if !m.enabled {
		return
	}
	if head && c.HomingStartValid && c.HomingStart {
		m.homing = true
	}
	if c.TValid && !head && !math.IsNaN(c.T) && !math.IsInf(c.T, 0) {
		m.t = math.Max(-100, math.Min(100, c.T))
	}
	if head && c.QValid && !math.IsNaN(c.Q) && !math.IsInf(c.Q, 0) {
		m.target, m.hasTarget = c.Q, true
	}
}

// Step advances the simulation by one period. Without a fresh command the
// arms and torso get zero torque.
func (s *Sim) Step() {
	dt := s.cfg.Period.Seconds()
	if !s.fresh {
		for i := range s.arms {
			s.arms[i].cmd = [kin.ArmDOF]float64{}
		}
		s.torso.t = 0
	}
	s.fresh = false
	for i := range s.arms {
		s.stepArm(&s.arms[i], dt)
	}
	s.stepTorso(dt)
	for i := range s.head {
		s.stepHead(&s.head[i], velma.HeadLimits[i], dt)
	}
	s.steps++
}

// applyFriction applies viscous (implicitly) and Coulomb friction to a
// velocity over one step, using the joint's own inertia m; Coulomb friction
// never reverses the velocity, so the explicit integration cannot chatter
// around zero.
func applyFriction(v, m, viscous, coulomb, dt float64) float64 {
	v /= 1 + dt*viscous/m
	fr := coulomb * dt / m
	if math.Abs(v) <= fr {
		return 0
	}
	return v - math.Copysign(fr, v)
}

func (s *Sim) stepArm(a *arm, dt float64) {
	ch := kin.Forward(a.side, s.torso.q, a.q)
	mm := ch.MassMatrix()
	for i := range kin.ArmDOF {
		copy(s.m.D[i*kin.ArmDOF:], mm[i][:])
	}
	if err := la.CholeskyInto(s.l, s.m); err != nil {
		return // cannot happen for the model's inertials; freeze rather than integrate garbage
	}
	var f, y, acc [kin.ArmDOF]float64
	for j := range kin.ArmDOF {
		f[j] = a.cmd[j] + a.ext[j]
	}
	la.SolveCholInto(s.l, f[:], y[:], acc[:])
	for j := range kin.ArmDOF {
		a.dq[j] = applyFriction(a.dq[j]+acc[j]*dt, mm[j][j], s.cfg.ArmViscous[j], s.cfg.ArmCoulomb, dt)
		a.q[j] += a.dq[j] * dt
		lim := velma.BodyLimits[1+j]
		if a.q[j] < lim.Lo {
			a.q[j], a.dq[j] = lim.Lo, math.Max(0, a.dq[j])
		} else if a.q[j] > lim.Hi {
			a.q[j], a.dq[j] = lim.Hi, math.Min(0, a.dq[j])
		}
		a.t[j] = a.cmd[j]
	}
}

func (s *Sim) stepTorso(dt float64) {
	m := &s.torso
	if !m.enabled || !m.ok {
		m.dq = 0
		return
	}
	m.dq = applyFriction(m.dq+(m.t+m.ext)/s.cfg.TorsoInertia*dt, s.cfg.TorsoInertia, s.cfg.TorsoViscous, s.cfg.TorsoCoulomb, dt)
	m.q += m.dq * dt
	if m.q < -1.57 {
		m.q, m.dq = -1.57, math.Max(0, m.dq)
	} else if m.q > 1.57 {
		m.q, m.dq = 1.57, math.Min(0, m.dq)
	}
}

func (s *Sim) stepHead(m *motor, lim velma.JointLimit, dt float64) {
	prev := m.q
	defer func() { m.dq = (m.q - prev) / dt }()
	if !m.enabled || !m.ok {
		return
	}
	if m.homing {
		m.q -= math.Copysign(math.Min(s.cfg.HomingStep, math.Abs(m.q)), m.q)
		if math.Abs(m.q) < s.cfg.HomingTol {
			m.homing, m.homingReq, m.hasTarget = false, false, false
		}
		return
	}
	if m.homingReq || !m.hasTarget {
		return
	}
	tg := math.Max(lim.Lo, math.Min(lim.Hi, m.target))
	step := s.cfg.HeadMaxVel * dt
	m.q += math.Max(-step, math.Min(step, tg-m.q))
}
