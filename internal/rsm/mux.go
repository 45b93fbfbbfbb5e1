package rsm

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// MoveThreshold is how much a joystick axis must grow (in absolute value)
// between two Joy messages to count as a moving command (MOVE_THRESH).
const MoveThreshold = 0.05

// MuxConfig configures the robot control multiplexer (private parameters
// of robotControlMuxNode).
type MuxConfig struct {
	// (optional) teleoperation_idle_timer: silence on the teleoperation
	// inputs after which TELEOPERATION drops to STOPPED; default 0.5 s.
	TeleopIdle time.Duration
	// joystick_used: whether Joy messages may switch to TELEOPERATION.
	// FIX: the original read this parameter but always used the joystick.
	JoystickUsed bool
	// (optional) Initial is the operation mode at start; default STOPPED
	// without e-stop (the original's). Simulations may start AUTONOMOUS.
	Initial OperationMode
}

// Joy is the part of sensor_msgs/Joy the mux looks at.
type Joy struct {
	Axes    []float32
	Buttons []int32
}

// Mux is the robot control multiplexer: it forwards the autonomy or the
// teleoperation velocity command (or zero) according to the operation mode
// and the software e-stop, switches to TELEOPERATION when an operator
// drives, and back to STOPPED after TeleopIdle of silence.
//
// Bad input (NaN/Inf) is never forwarded: the input's stored command
// becomes zero, and the method returns an error only for the first bad
// message of a burst, so the node logs once per burst.
type Mux struct {
	cfg        MuxConfig
	op         OperationMode
	autonomy   Twist
	teleop     Twist
	lastJoy    *Joy
	deadline   time.Time
	timerOn    bool
	badBurst   [3]bool // autonomy, teleop, joy
	rejections uint64
}

const (
	inAutonomy = iota
	inTeleop
	inJoy
)

// ErrUnknownMode is returned (wrapped) for an operation mode other than
// STOPPED, AUTONOMOUS and TELEOPERATION.
var ErrUnknownMode = errors.New("unknown operation mode")

// NewMux returns a mux in cfg.Initial (STOPPED without e-stop by default).
func NewMux(cfg MuxConfig) (*Mux, error) {
	if cfg.TeleopIdle == 0 {
		cfg.TeleopIdle = 500 * time.Millisecond
	}
	if cfg.TeleopIdle < 0 {
		return nil, fmt.Errorf("teleoperation_idle_timer %v: must be positive", cfg.TeleopIdle)
	}
	if !cfg.Initial.Mode.Valid() {
		return nil, fmt.Errorf("initial operation mode %d: %w", cfg.Initial.Mode, ErrUnknownMode)
	}
	return &Mux{cfg: cfg, op: cfg.Initial}, nil
}

// OperationMode returns the current operation mode.
func (m *Mux) OperationMode() OperationMode { return m.op }

// Rejections returns how many input messages were rejected as bad.
func (m *Mux) Rejections() uint64 { return m.rejections }

// reject counts a bad message and returns err only for the first one of a
// burst on that input.
func (m *Mux) reject(input int, err error) error {
	m.rejections++
	if m.badBurst[input] {
		return nil
	}
	m.badBurst[input] = true
	return fmt.Errorf("%w (further bad messages on this input are dropped silently until a good one arrives)", err)
}

// SetOperationMode sets e-stop and mode verbatim (/rsm/setOperationMode):
// "Operation mode set". An unknown mode is refused and changes nothing.
func (m *Mux) SetOperationMode(op OperationMode) Reply {
	if !op.Mode.Valid() {
		return fail(fmt.Sprintf("Unknown operation mode %d (0 STOPPED, 1 AUTONOMOUS, 2 TELEOPERATION)", op.Mode))
	}
	m.op = op
	if op.Mode != ModeTeleoperation {
		m.timerOn = false
	}
	return ok("Operation mode set")
}

// OnAutonomy stores the autonomy command. A NaN/Inf command is replaced by
// zero.
func (m *Mux) OnAutonomy(t Twist) error {
	if err := t.Validate(); err != nil {
		m.autonomy = Twist{}
		return m.reject(inAutonomy, fmt.Errorf("autonomy cmd_vel rejected: %w", err))
	}
	m.badBurst[inAutonomy] = false
	m.autonomy = t
	return nil
}

// OnTeleop stores the teleoperation command (ignored during e-stop). A
// non-zero command switches to TELEOPERATION; in TELEOPERATION every
// message restarts the idle timer. A NaN/Inf command is replaced by zero
// and does not count as a command.
func (m *Mux) OnTeleop(t Twist, now time.Time) error {
	if err := t.Validate(); err != nil {
		m.teleop = Twist{}
		return m.reject(inTeleop, fmt.Errorf("teleoperation cmd_vel rejected: %w", err))
	}
	m.badBurst[inTeleop] = false
	if m.op.EmergencyStop {
		return nil
	}
	m.teleop = t
	if !t.IsZero() {
		m.op.Mode = ModeTeleoperation
	}
	m.restartTimer(now)
	return nil
}

// OnJoy handles a joystick message (ignored during e-stop and when the
// joystick is not used). Compared with the previous message of the same
// size, an axis whose absolute value grew by more than MoveThreshold or a
// button going 0→1 switches to TELEOPERATION; in TELEOPERATION every
// message restarts the idle timer.
func (m *Mux) OnJoy(j Joy, now time.Time) error {
	if !m.cfg.JoystickUsed {
		return nil
	}
	for i, a := range j.Axes {
		if math.IsNaN(float64(a)) || math.IsInf(float64(a), 0) {
			return m.reject(inJoy, fmt.Errorf("joy axis %d = %v rejected: %w", i, a, ErrNotFinite))
		}
	}
	m.badBurst[inJoy] = false
	if m.op.EmergencyStop {
		return nil
	}
	if joyMoved(m.lastJoy, j) {
		m.op.Mode = ModeTeleoperation
	}
	c := Joy{Axes: append([]float32(nil), j.Axes...), Buttons: append([]int32(nil), j.Buttons...)}
	m.lastJoy = &c
	m.restartTimer(now)
	return nil
}

func joyMoved(prev *Joy, j Joy) bool {
	if prev == nil || len(prev.Axes) != len(j.Axes) || len(prev.Buttons) != len(j.Buttons) {
		return false
	}
	for i := range j.Axes {
		if math.Abs(float64(j.Axes[i]))-math.Abs(float64(prev.Axes[i])) > MoveThreshold {
			return true
		}
	}
	for i := range j.Buttons {
		if prev.Buttons[i] == 0 && j.Buttons[i] != 0 {
			return true
		}
	}
	return false
}

func (m *Mux) restartTimer(now time.Time) {
	if m.op.Mode == ModeTeleoperation {
		m.timerOn, m.deadline = true, now.Add(m.cfg.TeleopIdle)
	}
}

// Tick runs the idle timer and returns the command to publish on cmd_vel
// and the operation mode to publish on /rsm/operationMode: zero during
// e-stop and in STOPPED, else the last command of the selected input.
func (m *Mux) Tick(now time.Time) (Twist, OperationMode) {
	if m.timerOn && !now.Before(m.deadline) {
		m.timerOn = false
		if m.op.Mode == ModeTeleoperation {
			m.op.Mode = ModeStopped
			m.teleop = Twist{}
		}
	}
	if m.op.EmergencyStop {
		return Twist{}, m.op
	}
	switch m.op.Mode {
	case ModeAutonomous:
		return m.autonomy, m.op
	case ModeTeleoperation:
		return m.teleop, m.op
	}
	return Twist{}, m.op
}
