// Package hexapodnode adapts the hexapod controller to ROS 2: the executable
// motion_control runs it as the node hexapod_controller.
//
// adapter.go and settings.go are plain Go (no ROS types) so that the
// behaviour of the node — parameter handling, command services, joystick
// and cmd_vel input, the 100 Hz tick and the ~/state publication — is tested
// without middleware; ros.go wires them to topics, services and a timer.
// Every Adapter method runs on the node's single callback goroutine.
package hexapodnode

import (
	"errors"
	"fmt"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/hexapod"
)

// Logger is the part of the node logger the adapter uses.
type Logger interface {
	Infof(format string, args ...any)
	Warnf(format string, args ...any)
	Errorf(format string, args ...any)
}

// Adapter owns the controller and its inputs.
type Adapter struct {
	ctrl *hexapod.Controller
	joy  *hexapod.Joystick
	vel  hexapod.VelocityInput
	// cmdGuard and joyGuard clamp cmd_vel and joystick velocities to the
	// limits and count rejections and clamps.
	cmdGuard, joyGuard *cmdvel.Guard
	joyBad             uint64 // Joy messages whose velocity was rejected (NaN axes, bad stamp)
	log                Logger
	names              []string
	state              hexapod.State
	sent               bool // ~/state published at least once
	warned             map[string]time.Time
	inactive           bool // the node is not active: nothing is driven, inputs are refused
}

// ErrInactive refuses inputs while the node is not active (lifecycle).
var ErrInactive = errors.New("hexapod_controller is not active: nothing is driven (activate it: ros2 lifecycle set /hexapod_controller activate)")

// TickResult is what one tick publishes.
type TickResult struct {
	// Names and Positions form the joint_states message (commanded angles).
	Names     []string
	Positions []float64
	// State is the FSM state; StateChanged is true when ~/state must be
	// published (on change, and on the first tick).
	State        string
	StateChanged bool
	// Cause is the guard of the transition taken this tick ("" without
	// one); Restarted is set on the first tick of a fresh controller
	// (after Activate), whose state is the FSM's initial one.
	Cause     string
	Restarted bool
}

// NewAdapter builds the controller over servos.
func NewAdapter(s Settings, servos hexapod.ServoDriver, log Logger) (*Adapter, error) {
	ctrl, err := hexapod.NewController(s.Controller, servos)
	if err != nil {
		return nil, err
	}
	joy, err := hexapod.NewJoystick(s.Joy, s.Controller.Gait)
	if err != nil {
		return nil, err
	}
	if len(s.JointNames) != hexapod.NumJoints {
		return nil, fmt.Errorf("hexapod node: %d joint names, want %d", len(s.JointNames), hexapod.NumJoints)
	}
	cmdGuard, err := cmdvel.NewGuard("cmd_vel", s.Limits)
	if err != nil {
		return nil, fmt.Errorf("hexapod node: %w", err)
	}
	joyGuard, err := cmdvel.NewGuard("joystick velocity", s.Limits)
	if err != nil {
		return nil, fmt.Errorf("hexapod node: %w", err)
	}
	return &Adapter{ctrl: ctrl, joy: joy, vel: hexapod.VelocityInput{Timeout: s.CmdVelTimeout, JoyTimeout: s.JoyTimeout}, log: log,
		cmdGuard: cmdGuard, joyGuard: joyGuard,
		names: append([]string(nil), s.JointNames...), state: ctrl.State(), warned: map[string]time.Time{}}, nil
}

// Active reports whether the adapter drives the servos (the managed node
// is active).
func (a *Adapter) Active() bool { return !a.inactive }

// Deactivate stops driving: the velocity inputs are dropped and the servos
// freed (torque off). Until Activate, Tick does nothing and inputs are
// refused with ErrInactive. The error is the servos' (they are counted
// free either way).
func (a *Adapter) Deactivate() error {
	if a.inactive {
		return nil
	}
	a.inactive = true
	a.vel = hexapod.VelocityInput{Timeout: a.vel.Timeout, JoyTimeout: a.vel.JoyTimeout}
	return a.ctrl.Free()
}

// Activate starts driving servos with a fresh controller (the FSM starts
// over, as at process start) that keeps the current configuration and
// tuning; the next Tick publishes ~/state again.
func (a *Adapter) Activate(servos hexapod.ServoDriver) error {
	ctrl, err := hexapod.NewController(a.ctrl.Config(), servos)
	if err != nil {
		return err
	}
	a.ctrl, a.state, a.sent, a.inactive = ctrl, ctrl.State(), false, false
	a.vel = hexapod.VelocityInput{Timeout: a.vel.Timeout, JoyTimeout: a.vel.JoyTimeout}
	return nil
}

// SetTunables applies a change of the live parameters: controller tuning
// (see hexapod.Controller.SetTuning), input timeouts and velocity limits,
// all or nothing. An invalid change is refused with the reason.
func (a *Adapter) SetTunables(t Tunables) error {
	if err := t.validateInputs(); err != nil {
		return fmt.Errorf("hexapod node: %w", err)
	}
	if err := a.ctrl.SetTuning(t.Controller); err != nil {
		return err
	}
	a.joy.SetGait(a.ctrl.Config().Gait)
	_ = a.cmdGuard.SetLimits(t.Limits) // validated above
	_ = a.joyGuard.SetLimits(t.Limits)
	a.vel.Timeout, a.vel.JoyTimeout = t.CmdVelTimeout, t.JoyTimeout
	return nil
}

// State returns the FSM state.
func (a *Adapter) State() hexapod.State { return a.ctrl.State() }

// Command runs a service command: success and a message for the
// std_srvs/Trigger response (the reason when the FSM ignored it).
func (a *Adapter) Command(cmd hexapod.Command) (success bool, message string) {
	if a.inactive {
		return false, ErrInactive.Error()
	}
	msg, err := a.ctrl.Command(cmd)
	if err != nil {
		a.log.Infof("%v", err)
		return false, err.Error()
	}
	a.log.Infof("%s", msg)
	return true, msg
}

// CmdVel takes a geometry_msgs/Twist (linear then angular components)
// received at now. Any NaN or Inf component rejects the message with a
// reason (the previous command stays in force until it times out); finite
// components beyond max_linear_velocity / max_angular_velocity are clamped.
// Rejections and clamps are counted and logged once per episode, at most
// every cmdvel.ReportInterval. Only linear.x, linear.y and angular.z are
// used.
func (a *Adapter) CmdVel(linear, angular [3]float64, now time.Time) error {
	if a.inactive {
		return ErrInactive
	}
	r := a.cmdGuard.Check(cmdvel.Twist{Linear: linear, Angular: angular}, now)
	if r.Report != nil {
		a.log.Warnf("%v", r.Report)
	}
	if r.Verdict == cmdvel.Rejected {
		return r.Err
	}
	return a.vel.SetCmdVel(hexapod.Velocity{X: r.Twist.Linear[0], Y: r.Twist.Linear[1], Yaw: r.Twist.Angular[2]}, now)
}

// Counts returns how many cmd_vel and joystick velocities were rejected
// (NaN/Inf) and clamped to the limits.
func (a *Adapter) Counts() (rejected, clamped uint64) {
	return a.cmdGuard.Rejected() + a.joyGuard.Rejected() + a.joyBad, a.cmdGuard.Clamped() + a.joyGuard.Clamped()
}

// Joy takes a sensor_msgs/Joy received at now; a zero stamp is replaced by
// now. Button commands are applied at once, in order.
func (a *Adapter) Joy(j hexapod.Joy, now time.Time) error {
	if a.inactive {
		return ErrInactive
	}
	if j.Stamp == 0 {
		j.Stamp = float64(now.UnixNano()) / 1e9
	}
	cmds, vel, err := a.joy.Update(j)
	for _, c := range cmds {
		a.Command(c)
	}
	if err != nil {
		a.joyBad++
		a.warnEvery("joy", now, "%v", err)
		return err
	}
	r := a.joyGuard.Check(cmdvel.Twist{Linear: [3]float64{vel.X, vel.Y}, Angular: [3]float64{2: vel.Yaw}}, now)
	if r.Report != nil {
		a.log.Warnf("%v", r.Report)
	}
	if r.Verdict == cmdvel.Rejected { // Update validated it already
		return r.Err
	}
	return a.vel.SetJoy(hexapod.Velocity{X: r.Twist.Linear[0], Y: r.Twist.Linear[1], Yaw: r.Twist.Angular[2]}, now)
}

// Tick runs one control cycle at now; while inactive it does nothing and
// returns an empty result.
func (a *Adapter) Tick(now time.Time) TickResult {
	if a.inactive {
		return TickResult{}
	}
	// The velocity was validated on the way in; SetVelocity cannot fail.
	_ = a.ctrl.SetVelocity(a.vel.At(now))
	out, err := a.ctrl.Tick()
	if err != nil {
		var oe *hexapod.OutOfRangeError
		if errors.As(err, &oe) {
			a.warnEvery("range", now, "Out of Range: %v", err)
		} else {
			a.warnEvery("servo", now, "%v", err)
		}
	}
	r := TickResult{Names: a.names, Positions: append([]float64(nil), out.Joints[:]...), State: out.State.String(), Cause: out.Cause}
	r.Restarted = !a.sent
	if out.State != a.state || !a.sent {
		if a.sent {
			a.log.Infof("state %v -> %v", a.state, out.State)
		}
		a.state, a.sent = out.State, true
		r.StateChanged = true
	}
	return r
}

// warnEvery logs a warning at most once a second per key.
func (a *Adapter) warnEvery(key string, now time.Time, format string, args ...any) {
	if last, ok := a.warned[key]; ok && now.Sub(last) < time.Second && now.After(last) {
		return
	}
	a.warned[key] = now
	a.log.Warnf(format, args...)
}
