package hexapod

import (
	"errors"
	"fmt"
	"math"
)

// ServoDriver moves the 18 joint servos. Implementations: SimServos here and
// the Dynamixel AX-12A driver in package dynamixel. The Controller calls it
// from its Tick, on the caller's goroutine.
type ServoDriver interface {
	// SetTorque powers the servos (true) or frees them (false).
	SetTorque(on bool) error
	// SetSpeed sets the moving speed as a fraction of the nominal full speed;
	// 0 means as fast as possible (the AX-12A's "no speed control").
	SetSpeed(fraction float64) error
	// WriteGoals commands all 18 joint angles in radians.
	WriteGoals(j *Joints) error
	// ReadPositions reads the present joint angles in radians.
	ReadPositions(j *Joints) error
}

// Config is the complete controller configuration.
type Config struct {
	Geometry Geometry
	Gait     GaitConfig
	// SittingHeight is the foot height above the coxa plane while sitting
	// (the body rests on the ground), 0.05 m.
	SittingHeight float64
	// SitStep is the height change per tick while standing up or sitting
	// down, 0.002 m.
	SitStep float64
	// SittingServoSpeed is the servo speed fraction while sitting, 0.2.
	SittingServoSpeed float64
	// PitchGain, RollGain and YawGain are the body posing gains in Standing
	// in radians per unit of stick (0.4, 0.5, 0.5); the stick value is the
	// commanded velocity divided by the gait's maximum speed.
	PitchGain, RollGain, YawGain float64
}

// DefaultConfig returns the original's values.
func DefaultConfig() Config {
	return Config{
		Geometry:          DefaultGeometry(),
		Gait:              DefaultGaitConfig(),
		SittingHeight:     0.05,
		SitStep:           0.002,
		SittingServoSpeed: 0.2,
		PitchGain:         0.4,
		RollGain:          0.5,
		YawGain:           0.5,
	}
}

// Validate checks the whole configuration; errors name the field.
func (c Config) Validate() error {
	errs := []error{c.Geometry.Validate(), c.Gait.Validate()}
	check := func(name string, v float64, ok bool, want string) {
		if !isFinite(v) || !ok {
			errs = append(errs, fmt.Errorf("config: %s = %v, want %s", name, v, want))
		}
	}
	check("SittingHeight", c.SittingHeight, true, "a finite height")
	check("SitStep", c.SitStep, c.SitStep > 0, "> 0")
	check("SittingServoSpeed", c.SittingServoSpeed, c.SittingServoSpeed >= 0, ">= 0")
	check("PitchGain", c.PitchGain, true, "a finite gain")
	check("RollGain", c.RollGain, true, "a finite gain")
	check("YawGain", c.YawGain, true, "a finite gain")
	if c.SittingHeight <= -c.Geometry.WalkingHeight {
		errs = append(errs, fmt.Errorf("config: SittingHeight %v must be above the walking foot height %v",
			c.SittingHeight, -c.Geometry.WalkingHeight))
	}
	return errors.Join(errs...)
}

// Tuning is the part of Config that may change while the controller runs
// (live parameters of motion_control): the gait's speeds and swing lift
// height and the body posing gains.
type Tuning struct {
	// DistancePerStep is gait.distance_per_step (walking speed).
	DistancePerStep float64
	// DphiMaxStanding is gait.dphi_max_standing (turning speed).
	DphiMaxStanding float64
	// LiftHeight is LEG_LIFT_HEIGHT (swing foot height).
	LiftHeight float64
	// PitchGain, RollGain and YawGain are pose_pitch_gain, pose_roll_gain
	// and pose_yaw_gain.
	PitchGain, RollGain, YawGain float64
}

// Tuning returns the tuning part of c.
func (c Config) Tuning() Tuning {
	return Tuning{DistancePerStep: c.Gait.DistancePerStep, DphiMaxStanding: c.Gait.DphiMaxStanding,
		LiftHeight: c.Gait.LiftHeight, PitchGain: c.PitchGain, RollGain: c.RollGain, YawGain: c.YawGain}
}

// WithTuning returns c with t applied.
func (c Config) WithTuning(t Tuning) Config {
	c.Gait.DistancePerStep, c.Gait.DphiMaxStanding, c.Gait.LiftHeight = t.DistancePerStep, t.DphiMaxStanding, t.LiftHeight
	c.PitchGain, c.RollGain, c.YawGain = t.PitchGain, t.RollGain, t.YawGain
	return c
}

// Output is the result of one control tick.
type Output struct {
	State State // state after the tick
	// Cause is the guard (and action) of the transition taken this tick,
	// "" when the state did not change.
	Cause string
	Gait  GaitPhase // phase of the gait
	// Joints are the last commanded joint angles (unchanged when the tick
	// was out of range or the robot is Idle).
	Joints Joints
	Feet   Feet // foot positions in the body frame after the tick
	Body   Pose // body pose used by the IK
	// Sent is true when new joint goals were computed and written this tick.
	Sent bool
}

// Controller is the motion controller: the FSM of motion_control.cpp driving
// the gait, the body posing and the IK, and writing joint goals to a
// ServoDriver. It is not safe for concurrent use.
type Controller struct {
	cfg     Config
	servos  ServoDriver
	machine *Machine
	gait    *Gait

	state  State
	flags  Flags
	vel    Velocity // last accepted velocity command
	height float64  // current foot height in Sitting, Standing_up, Sitting_down
	feet   Feet
	body   Pose
	joints Joints
	speed  float64 // last servo speed fraction written, NaN before the first
}

// NewController returns a controller in Idle with the feet at the sitting
// pose. servos may be nil for a controller that only computes angles.
func NewController(cfg Config, servos ServoDriver) (*Controller, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("hexapod: invalid config: %w", err)
	}
	g := newGait(cfg.Gait, cfg.Geometry)
	if servos == nil {
		servos = nopServos{}
	}
	c := &Controller{cfg: cfg, servos: servos, machine: NewMachine(), gait: g,
		state: Idle, flags: InitialFlags(), height: cfg.SittingHeight, speed: math.NaN()}
	for i := range c.feet {
		c.feet[i] = cfg.Geometry.Neutral(i, c.height)
	}
	if err := cfg.Geometry.SolveIK(&c.feet, c.body, &c.joints); err != nil {
		return nil, fmt.Errorf("hexapod: sitting pose unreachable: %w", err)
	}
	return c, nil
}

// State returns the current FSM state.
func (c *Controller) State() State { return c.state }

// Config returns the configuration (with the latest tuning; the gait takes
// a change of its constants at its next half cycle, see Gait.SetConfig).
func (c *Controller) Config() Config { return c.cfg }

// SetTuning changes the tuning while the controller runs. An invalid tuning
// (a non-finite or non-positive speed, a lift height the half cycle has no
// time for) is refused with the reason and changes nothing. The posing
// gains apply at the next tick; the gait constants at once in Standing and
// at the gait's next half cycle while walking.
func (c *Controller) SetTuning(t Tuning) error {
	cfg := c.cfg.WithTuning(t)
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("hexapod: tuning: %w", err)
	}
	c.gait.schedule(cfg.Gait)
	c.cfg = cfg
	return nil
}

// Flags returns the command flags.
func (c *Controller) Flags() Flags { return c.flags }

// Free frees the servos (torque off), as the original did when it stopped.
// The controller keeps its state; a managed node that stops driving
// builds a new controller to start again.
func (c *Controller) Free() error {
	if err := c.servos.SetTorque(false); err != nil {
		return fmt.Errorf("servos: torque off: %w", err)
	}
	return nil
}

// Joints returns the last commanded joint angles.
func (c *Controller) Joints() Joints { return c.joints }

// Command applies an operator command. It returns a short description
// ("Start", "Stand up", ...) or an *IgnoredError naming the reason.
func (c *Controller) Command(cmd Command) (string, error) {
	return c.flags.Apply(cmd, c.state)
}

// SetVelocity stores the commanded body twist; non-finite values are
// rejected with a reason and the previous command is kept. Speeds beyond the
// gait's maximum are scaled down by the gait.
func (c *Controller) SetVelocity(v Velocity) error {
	if err := v.Validate(); err != nil {
		return err
	}
	c.vel = v
	return nil
}

// effectiveVelocity is update_vel(): the command while stand_up is set, zero
// otherwise so that the robot comes to a standstill before sitting.
func (c *Controller) effectiveVelocity() Velocity {
	if c.flags.StandUp {
		return c.vel
	}
	return Velocity{}
}

// Tick runs one control cycle (the original's motion_loop at 100 Hz). The
// returned error is an *OutOfRangeError when the new feet were unreachable
// (the previous feet and joint angles are kept) and/or servo driver errors;
// the FSM advances either way.
func (c *Controller) Tick() (Output, error) {
	var errs []error
	servo := func(what string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("servos: %s: %w", what, err))
		}
	}
	oldFeet, oldBody := c.feet, c.body
	v := c.effectiveVelocity()
	in := Inputs{Flags: c.flags}
	switch c.state {
	case Unknown:
		servo("free", c.servos.SetTorque(false))
	case Sitting:
		c.height = c.cfg.SittingHeight
		servo("speed", c.setSpeed(c.cfg.SittingServoSpeed))
		for i := range c.feet {
			c.feet[i] = c.cfg.Geometry.Neutral(i, c.height)
		}
	case StandingUp:
		c.height -= c.cfg.SitStep
		if c.height <= -c.cfg.Geometry.WalkingHeight {
			c.height = -c.cfg.Geometry.WalkingHeight
			in.AtWalkingHeight = true
		}
		for i := range c.feet {
			c.feet[i].Z = c.height
		}
	case Standing:
		lim, _ := c.cfg.Gait.Limit(v)
		c.body.Pitch = c.cfg.PitchGain * lim.X / c.cfg.Gait.MaxLinearSpeed()
		c.body.Roll = c.cfg.RollGain * lim.Y / c.cfg.Gait.MaxLinearSpeed()
		c.body.Yaw = c.cfg.YawGain * lim.Yaw / c.cfg.Gait.MaxAngularSpeed()
	case Walking:
		c.feet = c.gait.Step(v)
	case SittingDown:
		c.height += c.cfg.SitStep
		if c.height >= c.cfg.SittingHeight {
			c.height = c.cfg.SittingHeight
			in.AtSittingHeight = true
		}
		for i := range c.feet {
			c.feet[i].Z = c.height
		}
	}
	in.GaitStanding = c.gait.IsStanding()
	next, action, cause := c.state, NoAction, ""
	if t, ok := c.machine.Step(c.state, in); ok {
		next, action, cause = t.To, t.Action, t.label()
	}
	switch action {
	case TorqueOn:
		servo("speed", c.setSpeed(c.cfg.SittingServoSpeed))
		servo("torque on", c.servos.SetTorque(true))
	case TorqueOff:
		servo("torque off", c.servos.SetTorque(false))
	case FullSpeed:
		servo("speed", c.setSpeed(0))
	}
	prev := c.state
	if next != c.state {
		c.enter(next)
	}
	c.state = next

	out := Output{State: c.state, Gait: c.gait.Phase()}
	if next != prev {
		out.Cause = cause
	}
	if c.state != Idle && c.state != Unknown {
		var j Joints
		if err := c.cfg.Geometry.SolveIK(&c.feet, c.body, &j); err != nil {
			errs = append(errs, err)
			c.feet, c.body = oldFeet, oldBody
			if c.state == Walking {
				c.gait.SetFeet(oldFeet)
			}
		} else {
			c.joints = j
			out.Sent = true
			servo("write goals", c.servos.WriteGoals(&c.joints))
		}
	}
	out.Joints, out.Feet, out.Body = c.joints, c.feet, c.body
	return out, errors.Join(errs...)
}

// enter runs on a state change. Entering Walking hands the current feet to
// the gait and levels the body: the original kept the last posing angles
// while walking, which tilted the whole walk; this port walks level.
func (c *Controller) enter(s State) {
	switch s {
	case Walking:
		c.body = Pose{}
		c.gait.SetFeet(c.feet)
	case SittingDown, Standing:
		c.height = -c.cfg.Geometry.WalkingHeight
	}
}

func (c *Controller) setSpeed(f float64) error {
	if f == c.speed {
		return nil
	}
	if err := c.servos.SetSpeed(f); err != nil {
		return err
	}
	c.speed = f
	return nil
}

type nopServos struct{}

func (nopServos) SetTorque(bool) error          { return nil }
func (nopServos) SetSpeed(float64) error        { return nil }
func (nopServos) WriteGoals(*Joints) error      { return nil }
func (nopServos) ReadPositions(j *Joints) error { return nil }
