package rsm

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/fsm"
	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// MoveThreshold is how much a joystick axis must grow (in absolute value)
// between two Joy messages to count as a moving command (MOVE_THRESH).
const MoveThreshold = 0.05

// Defaults of the mux's velocity limits (parameters max_linear_velocity and
// max_angular_velocity) and of autonomy_cmd_vel_timeout.
const (
	DefaultMaxLinearVelocity  = 1.0 // m/s
	DefaultMaxAngularVelocity = 2.0 // rad/s
	DefaultAutonomyTimeout    = 2 * time.Second
)

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
	// (optional) Limits are max_linear_velocity and max_angular_velocity:
	// every component of an input command is clamped to them. The zero
	// value means the defaults (1 m/s, 2 rad/s).
	Limits cmdvel.Limits
	// (optional) AutonomyTimeout is autonomy_cmd_vel_timeout: how long a
	// non-zero autonomy command stays in force without a fresh one. After
	// that the command counts as zero and, in AUTONOMOUS, the mux falls
	// back to STOPPED. Zero means DefaultAutonomyTimeout; negative
	// disables the check (the original's behaviour).
	AutonomyTimeout time.Duration
	// (optional) Log receives the fallback warning; nil discards it.
	Log Logger
	// (optional) OnChange is called, synchronously, with every change of
	// the operation mode or the e-stop: the states of MuxGraph it left and
	// entered, and the guard of the edge (MuxGraph's names).
	OnChange func(from, to, cause string)
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
// Bad input is never forwarded: a NaN/Inf command is rejected (the input's
// stored command becomes zero), a finite one beyond the limits is clamped
// (cmdvel.Guard). The On* methods return an error only when the node should
// log it (the first bad command of an episode, rate-limited); every bad
// command is counted. A non-zero autonomy command that is not refreshed
// within AutonomyTimeout (its source died or hangs) is dropped and the mux
// falls back from AUTONOMOUS to STOPPED.
type Mux struct {
	cfg         MuxConfig
	op          OperationMode
	autonomy    Twist
	autonomyAt  time.Time // when the autonomy command was received
	teleop      Twist
	lastJoy     *Joy
	deadline    time.Time
	timerOn     bool
	autoGuard   *cmdvel.Guard
	teleGuard   *cmdvel.Guard
	joyBad      bool // in a burst of bad Joy messages
	joyRejected uint64
	fallbacks   uint64
}

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
	if cfg.AutonomyTimeout == 0 {
		cfg.AutonomyTimeout = DefaultAutonomyTimeout
	}
	if cfg.Limits == (cmdvel.Limits{}) {
		cfg.Limits = cmdvel.Limits{Linear: DefaultMaxLinearVelocity, Angular: DefaultMaxAngularVelocity}
	}
	if cfg.Log == nil {
		cfg.Log = nopLogger{}
	}
	if !cfg.Initial.Mode.Valid() {
		return nil, fmt.Errorf("initial operation mode %d: %w", cfg.Initial.Mode, ErrUnknownMode)
	}
	autoGuard, err := cmdvel.NewGuard("autonomy cmd_vel", cfg.Limits)
	if err != nil {
		return nil, err
	}
	teleGuard, err := cmdvel.NewGuard("teleoperation cmd_vel", cfg.Limits)
	if err != nil {
		return nil, err
	}
	return &Mux{cfg: cfg, op: cfg.Initial, autoGuard: autoGuard, teleGuard: teleGuard}, nil
}

// MuxTuning is the part of MuxConfig that may change while the mux runs
// (the node's live parameters teleoperation_idle_timer,
// max_linear_velocity, max_angular_velocity and autonomy_cmd_vel_timeout).
// Zero values mean the defaults, as in MuxConfig.
type MuxTuning struct {
	TeleopIdle      time.Duration
	Limits          cmdvel.Limits
	AutonomyTimeout time.Duration
}

// Tuning returns the tuning in force (defaults filled in).
func (m *Mux) Tuning() MuxTuning {
	return MuxTuning{TeleopIdle: m.cfg.TeleopIdle, Limits: m.cfg.Limits, AutonomyTimeout: m.cfg.AutonomyTimeout}
}

// withDefaults fills in the defaults of the zero fields.
func (t MuxTuning) withDefaults() MuxTuning {
	if t.TeleopIdle == 0 {
		t.TeleopIdle = 500 * time.Millisecond
	}
	if t.AutonomyTimeout == 0 {
		t.AutonomyTimeout = DefaultAutonomyTimeout
	}
	if t.Limits == (cmdvel.Limits{}) {
		t.Limits = cmdvel.Limits{Linear: DefaultMaxLinearVelocity, Angular: DefaultMaxAngularVelocity}
	}
	return t
}

// Validate checks a tuning as SetTuning takes it: zero fields take their
// defaults, a negative idle time and invalid limits are refused.
func (t MuxTuning) Validate() error {
	t = t.withDefaults()
	if t.TeleopIdle < 0 {
		return fmt.Errorf("teleoperation_idle_timer %v: must be positive", t.TeleopIdle)
	}
	return t.Limits.Validate()
}

// SetTuning changes the tuning; invalid values are refused with the reason
// and change nothing. A running idle timer keeps its start and gets the new
// length (it may expire at the next Tick); new limits apply to the next
// input command; a new autonomy timeout applies at the next Tick.
func (m *Mux) SetTuning(t MuxTuning) error {
	if err := t.Validate(); err != nil {
		return err
	}
	t = t.withDefaults()
	_ = m.autoGuard.SetLimits(t.Limits) // validated above
	_ = m.teleGuard.SetLimits(t.Limits)
	if m.timerOn {
		m.deadline = m.deadline.Add(t.TeleopIdle - m.cfg.TeleopIdle)
	}
	m.cfg.TeleopIdle, m.cfg.Limits, m.cfg.AutonomyTimeout = t.TeleopIdle, t.Limits, t.AutonomyTimeout
	return nil
}

// OperationMode returns the current operation mode.
func (m *Mux) OperationMode() OperationMode { return m.op }

// Rejections returns how many input messages were rejected as bad
// (NaN/Inf commands and Joy axes).
func (m *Mux) Rejections() uint64 {
	return m.autoGuard.Rejected() + m.teleGuard.Rejected() + m.joyRejected
}

// Clamps returns how many input commands were clamped to the limits.
func (m *Mux) Clamps() uint64 { return m.autoGuard.Clamped() + m.teleGuard.Clamped() }

// Fallbacks returns how many times a silent autonomy input made the mux
// drop its command (and fall back to STOPPED when in AUTONOMOUS).
func (m *Mux) Fallbacks() uint64 { return m.fallbacks }

func twistOf(t Twist) cmdvel.Twist {
	return cmdvel.Twist{Linear: [3]float64{t.Linear.X, t.Linear.Y, t.Linear.Z},
		Angular: [3]float64{t.Angular.X, t.Angular.Y, t.Angular.Z}}
}

func fromCmdvel(t cmdvel.Twist) Twist {
	return Twist{Linear: geom.Vec3{X: t.Linear[0], Y: t.Linear[1], Z: t.Linear[2]},
		Angular: geom.Vec3{X: t.Angular[0], Y: t.Angular[1], Z: t.Angular[2]}}
}

// SetOperationMode answers /rsm/setOperationMode. Success means the
// requested e-stop flag and mode are now in effect (FIX: the e-stop locks
// the mode):
//
//   - without e-stop, both fields are set as given ("Operation mode set"),
//     as the original did;
//   - while the e-stop is on, the mode is locked: a request that keeps the
//     e-stop on and selects AUTONOMOUS or TELEOPERATION (other than the
//     current mode) is refused and changes nothing; STOPPED is allowed
//     (the original's GUI locked the mode buttons, but a script could
//     still change the mode, so releasing resumed autonomy at once);
//   - releasing the e-stop always lands in STOPPED; a release asking for
//     another mode is carried out but answered false, saying the mode must
//     be selected again.
//
// An unknown mode is refused and changes nothing.
func (m *Mux) SetOperationMode(op OperationMode) Reply {
	if !op.Mode.Valid() {
		return fail(fmt.Sprintf("Unknown operation mode %d (0 STOPPED, 1 AUTONOMOUS, 2 TELEOPERATION)", op.Mode))
	}
	if m.op.EmergencyStop {
		if op.EmergencyStop {
			if op.Mode != m.op.Mode && op.Mode != ModeStopped {
				return fail(fmt.Sprintf("Emergency stop is on: operation mode stays %v; release the emergency stop "+
					"first (emergency_stop false), then select %v", m.op.Mode, op.Mode))
			}
			m.setOp(OperationMode{EmergencyStop: true, Mode: op.Mode}, GuardSetMode)
			return ok("Operation mode set")
		}
		// Release: always to STOPPED, never straight back into motion.
		m.setOp(OperationMode{Mode: ModeStopped}, GuardEStopOff)
		m.timerOn = false
		if op.Mode != ModeStopped {
			return fail(fmt.Sprintf("Emergency stop released; operation mode is STOPPED, not %v: select %v again "+
				"now that the emergency stop is off", op.Mode, op.Mode))
		}
		return ok("Operation mode set")
	}
	if op.EmergencyStop {
		m.setOp(op, GuardEStopOn)
	} else {
		m.setOp(op, GuardSetMode)
	}
	if op.Mode != ModeTeleoperation {
		m.timerOn = false
	}
	return ok("Operation mode set")
}

// OnAutonomy stores the autonomy command received at now, clamped to the
// limits. A NaN/Inf command is replaced by zero.
func (m *Mux) OnAutonomy(t Twist, now time.Time) error {
	r := m.autoGuard.Check(twistOf(t), now)
	m.autonomy, m.autonomyAt = fromCmdvel(r.Twist), now
	return r.Report
}

// OnTeleop stores the teleoperation command, clamped to the limits
// (ignored during e-stop). A non-zero command switches to TELEOPERATION;
// in TELEOPERATION every message restarts the idle timer. A NaN/Inf
// command is replaced by zero and does not count as a command.
func (m *Mux) OnTeleop(t Twist, now time.Time) error {
	r := m.teleGuard.Check(twistOf(t), now)
	if r.Verdict == cmdvel.Rejected {
		m.teleop = Twist{}
		return r.Report
	}
	if m.op.EmergencyStop {
		return r.Report
	}
	m.teleop = fromCmdvel(r.Twist)
	if !m.teleop.IsZero() {
		m.setMode(ModeTeleoperation, GuardTeleopCmdVel)
	}
	m.restartTimer(now)
	return r.Report
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
			m.joyRejected++
			if m.joyBad {
				return nil
			}
			m.joyBad = true
			return fmt.Errorf("joy axis %d = %v rejected: %w (further bad messages are dropped silently until a good one arrives)", i, a, ErrNotFinite)
		}
	}
	m.joyBad = false
	if m.op.EmergencyStop {
		return nil
	}
	if joyMoved(m.lastJoy, j) {
		m.setMode(ModeTeleoperation, GuardJoystick)
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

// Tick runs the idle timer and the autonomy watchdog and returns the
// command to publish on cmd_vel and the operation mode to publish on
// /rsm/operationMode: zero during e-stop and in STOPPED, else the last
// command of the selected input.
func (m *Mux) Tick(now time.Time) (Twist, OperationMode) {
	if m.cfg.AutonomyTimeout > 0 && !m.autonomy.IsZero() && now.Sub(m.autonomyAt) >= m.cfg.AutonomyTimeout {
		// The autonomy source stopped sending while commanding motion:
		// it died or hangs. Never repeat its last command again.
		m.fallbacks++
		stale := m.autonomy
		m.autonomy = Twist{}
		if m.op.Mode == ModeAutonomous {
			m.setMode(ModeStopped, GuardAutonomyTimeout)
			m.cfg.Log.Warnf("rsm: no autonomy cmd_vel for %v while it commanded linear %.3g, angular %.3g: falling back to STOPPED "+
				"(select AUTONOMOUS again when the autonomy source is back)", now.Sub(m.autonomyAt).Round(time.Millisecond),
				stale.Linear.Norm(), stale.Angular.Norm())
		}
	}
	if m.timerOn && !now.Before(m.deadline) {
		m.timerOn = false
		if m.op.Mode == ModeTeleoperation {
			m.setMode(ModeStopped, GuardTeleopIdle)
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

// MuxMachine is the name of the mux's operation-mode machine in the
// introspection graph.
const MuxMachine = "operation_mode"

// Guards of the mux's operation-mode machine (MuxGraph), named after what
// makes the change.
const (
	GuardSetMode         = "setOperationMode"
	GuardEStopOn         = "setOperationMode (e-stop on)"
	GuardEStopOff        = "setOperationMode (e-stop off)"
	GuardTeleopCmdVel    = "non-zero teleoperation cmd_vel"
	GuardJoystick        = "joystick moved"
	GuardTeleopIdle      = "teleoperation_idle_timer"
	GuardAutonomyTimeout = "autonomy_cmd_vel_timeout"
)

// MuxStateName is the name of an operation mode as a state of MuxGraph:
// the mode ("STOPPED", "AUTONOMOUS", "TELEOPERATION"), prefixed with
// "E-STOP/" while the e-stop is on.
func MuxStateName(op OperationMode) string {
	if op.EmergencyStop {
		return "E-STOP/" + op.Mode.String()
	}
	return op.Mode.String()
}

var muxModes = []Mode{ModeStopped, ModeAutonomous, ModeTeleoperation}

// MuxGraph returns the mux's operation-mode machine as an introspection
// graph, starting in initial: the three modes with and without the e-stop,
// and every change SetOperationMode, the teleoperation inputs, the idle
// timer and the autonomy watchdog make (also while the e-stop is on; the rules of SetOperationMode,
// OnTeleop, OnJoy and Tick).
func MuxGraph(initial OperationMode) fsm.Graph {
	g := fsm.Graph{Machine: MuxMachine, Initial: MuxStateName(initial)}
	for _, estop := range []bool{false, true} {
		for _, m := range muxModes {
			g.States = append(g.States, fsm.State{Name: MuxStateName(OperationMode{EmergencyStop: estop, Mode: m})})
		}
	}
	edge := func(from, to OperationMode, guard string) {
		g.Edges = append(g.Edges, fsm.Edge{From: MuxStateName(from), To: MuxStateName(to), Guard: guard})
	}
	for _, a := range muxModes {
		free := OperationMode{Mode: a}
		for _, b := range muxModes {
			if a != b {
				edge(free, OperationMode{Mode: b}, GuardSetMode)
			}
		}
		for _, b := range muxModes {
			edge(free, OperationMode{EmergencyStop: true, Mode: b}, GuardEStopOn)
		}
	}
	for _, a := range muxModes {
		stopped := OperationMode{EmergencyStop: true, Mode: a}
		if a != ModeStopped {
			edge(stopped, OperationMode{EmergencyStop: true, Mode: ModeStopped}, GuardSetMode)
		}
		edge(stopped, OperationMode{Mode: ModeStopped}, GuardEStopOff)
	}
	for _, a := range []Mode{ModeStopped, ModeAutonomous} {
		edge(OperationMode{Mode: a}, OperationMode{Mode: ModeTeleoperation}, GuardTeleopCmdVel)
		edge(OperationMode{Mode: a}, OperationMode{Mode: ModeTeleoperation}, GuardJoystick)
	}
	// The idle timer and the watchdog also run while the e-stop is on.
	for _, estop := range []bool{false, true} {
		edge(OperationMode{EmergencyStop: estop, Mode: ModeTeleoperation}, OperationMode{EmergencyStop: estop, Mode: ModeStopped}, GuardTeleopIdle)
		edge(OperationMode{EmergencyStop: estop, Mode: ModeAutonomous}, OperationMode{EmergencyStop: estop, Mode: ModeStopped}, GuardAutonomyTimeout)
	}
	return g
}

// setOp changes the operation mode and reports a change to OnChange.
func (m *Mux) setOp(op OperationMode, cause string) {
	from := m.op
	m.op = op
	if from != op && m.cfg.OnChange != nil {
		m.cfg.OnChange(MuxStateName(from), MuxStateName(op), cause)
	}
}

// setMode changes the mode, keeping the e-stop flag.
func (m *Mux) setMode(mode Mode, cause string) {
	m.setOp(OperationMode{EmergencyStop: m.op.EmergencyStop, Mode: mode}, cause)
}
