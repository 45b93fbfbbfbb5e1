package hexapod

import (
	"errors"
	"fmt"
	"time"
)

// Joy is the content of a sensor_msgs/Joy message the controller uses.
type Joy struct {
	// Stamp is header.stamp in seconds; the node substitutes the receive
	// time when the publisher left it zero.
	Stamp   float64
	Axes    []float32
	Buttons []int32
}

// JoyMapping says which Joy buttons and axes drive which command, with the
// original's Xbox One defaults. Indices out of a message's range read as
// released or centred.
type JoyMapping struct {
	StandUp, SitDown, StandWalk, StartStop int     // button indices (0, 1, 2, 7)
	LinearX, LinearY, AngularZ             int     // axis indices (1, 0, 3; 2 on the Raspberry Pi's evdev driver)
	Debounce                               float64 // seconds between two accepted presses of one button (1)
}

// DefaultJoyMapping returns the original's mapping for a PC joystick.
func DefaultJoyMapping() JoyMapping {
	return JoyMapping{StandUp: 0, SitDown: 1, StandWalk: 2, StartStop: 7,
		LinearX: 1, LinearY: 0, AngularZ: 3, Debounce: 1}
}

// Validate rejects negative indices and a negative or non-finite debounce.
func (m JoyMapping) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{{"StandUp", m.StandUp}, {"SitDown", m.SitDown}, {"StandWalk", m.StandWalk}, {"StartStop", m.StartStop},
		{"LinearX", m.LinearX}, {"LinearY", m.LinearY}, {"AngularZ", m.AngularZ}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("joy mapping: %s index %d is negative", f.name, f.v))
		}
	}
	if !isFinite(m.Debounce) || m.Debounce < 0 {
		errs = append(errs, fmt.Errorf("joy mapping: debounce %v must be finite and >= 0", m.Debounce))
	}
	return errors.Join(errs...)
}

// Joystick turns Joy messages into commands and a velocity. A command fires
// when its button goes from released to pressed, unless the same button
// fired less than Debounce seconds earlier by the message stamps (the
// original's per-button one-second debounce). Full stick is the gait's
// maximum speed, so a stick deflection a means a·MaxLinearSpeed m/s (or
// a·MaxAngularSpeed rad/s), exactly the original's speed per stick value.
//
// Compared with the original, commands are returned from Update instead of
// being left in a variable the next tick reads, so a press is not lost when
// a second Joy message arrives before the tick; and a held button no
// longer repeats its command every second.
type Joystick struct {
	m          JoyMapping
	maxLinear  float64
	maxAngular float64
	pressed    map[int]bool
	lastFired  map[int]float64
}

// NewJoystick returns a joystick mapper for the mapping and gait limits.
func NewJoystick(m JoyMapping, gait GaitConfig) (*Joystick, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &Joystick{m: m, maxLinear: gait.MaxLinearSpeed(), maxAngular: gait.MaxAngularSpeed(),
		pressed: map[int]bool{}, lastFired: map[int]float64{}}, nil
}

// SetGait takes new gait speeds: full stick then means the new
// MaxLinearSpeed and MaxAngularSpeed.
func (j *Joystick) SetGait(gait GaitConfig) {
	j.maxLinear, j.maxAngular = gait.MaxLinearSpeed(), gait.MaxAngularSpeed()
}

// Update processes one Joy message. It returns the commands to apply in
// order, and the velocity of the sticks; err is non-nil when the axes or the
// stamp are unusable (NaN/Inf): then vel is zero and must not be applied,
// while the returned commands are still valid.
func (j *Joystick) Update(msg Joy) (cmds []Command, vel Velocity, err error) {
	stampOK := isFinite(msg.Stamp)
	for _, b := range []struct {
		idx int
		cmd Command
	}{{j.m.StandUp, CmdStandUp}, {j.m.SitDown, CmdSitDown}, {j.m.StandWalk, CmdStandWalk}, {j.m.StartStop, CmdStartStop}} {
		down := b.idx < len(msg.Buttons) && msg.Buttons[b.idx] != 0
		edge := down && !j.pressed[b.idx]
		j.pressed[b.idx] = down
		if !edge || !stampOK {
			continue
		}
		if last, ok := j.lastFired[b.idx]; ok && msg.Stamp >= last && msg.Stamp-last < j.m.Debounce {
			continue
		}
		j.lastFired[b.idx] = msg.Stamp
		cmds = append(cmds, b.cmd)
	}
	if !stampOK {
		return cmds, Velocity{}, fmt.Errorf("joy: stamp %v is not finite; buttons ignored", msg.Stamp)
	}
	axis := func(i int) float64 {
		if i < len(msg.Axes) {
			return float64(msg.Axes[i])
		}
		return 0
	}
	vel = Velocity{X: axis(j.m.LinearX) * j.maxLinear, Y: axis(j.m.LinearY) * j.maxLinear, Yaw: axis(j.m.AngularZ) * j.maxAngular}
	if err := vel.Validate(); err != nil {
		return cmds, Velocity{}, fmt.Errorf("joy: %w", err)
	}
	return cmds, vel, nil
}

// VelocityInput arbitrates the two velocity sources. cmd_vel holds for
// Timeout after it was received and counts as zero afterwards; the
// joystick's velocity holds for JoyTimeout (a joy driver with autorepeat
// republishes a held stick, 20 times a second by default, so a held stick
// keeps the robot walking and a dead driver stops it). A fresh non-zero
// joystick velocity overrides cmd_vel, so the operator's stick always
// wins, while a centred stick leaves cmd_vel in charge.
type VelocityInput struct {
	// Timeout is cmd_vel_timeout (0.5 s by default); zero disables it.
	Timeout time.Duration
	// JoyTimeout is joy.timeout (0.5 s by default); zero or less counts
	// as DefaultJoyTimeout: a stick never holds for ever.
	JoyTimeout time.Duration

	cmd, joy     Velocity
	cmdAt, joyAt time.Time
}

// DefaultJoyTimeout is how long a stick velocity holds without a new Joy
// message when VelocityInput.JoyTimeout is not set.
const DefaultJoyTimeout = 500 * time.Millisecond

// SetCmdVel stores a cmd_vel twist received at now. NaN or Inf components
// reject the message with a reason; the previous command stays in force
// until it times out.
func (in *VelocityInput) SetCmdVel(v Velocity, now time.Time) error {
	if err := v.Validate(); err != nil {
		return fmt.Errorf("cmd_vel rejected: %w", err)
	}
	in.cmd, in.cmdAt = v, now
	return nil
}

// SetJoy stores the stick velocity of a Joy message received at now.
func (in *VelocityInput) SetJoy(v Velocity, now time.Time) error {
	if err := v.Validate(); err != nil {
		return fmt.Errorf("joy rejected: %w", err)
	}
	in.joy, in.joyAt = v, now
	return nil
}

func fresh(at, now time.Time, timeout time.Duration) bool {
	if at.IsZero() {
		return false
	}
	return timeout <= 0 || now.Sub(at) <= timeout
}

// At returns the velocity in force at now.
func (in *VelocityInput) At(now time.Time) Velocity {
	joyTimeout := in.JoyTimeout
	if joyTimeout <= 0 {
		joyTimeout = DefaultJoyTimeout
	}
	if fresh(in.joyAt, now, joyTimeout) && !in.joy.IsZero() {
		return in.joy
	}
	if fresh(in.cmdAt, now, in.Timeout) {
		return in.cmd
	}
	return Velocity{}
}
