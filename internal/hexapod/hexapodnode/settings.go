package hexapodnode

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/hexapod"
	"github.com/fsmnodes/fsmnodes/internal/hexapod/dynamixel"
)

// Declarer declares one parameter with a default and a description and
// returns its effective value (the default overridden by a parameter file
// or -p). The ROS node implements it with read-only parameters; tests use
// MapDeclarer.
type Declarer interface {
	Float64(name string, def float64, desc string) (float64, error)
	Int64(name string, def int64, desc string) (int64, error)
	String(name string, def string, desc string) (string, error)
	Float64s(name string, def []float64, desc string) ([]float64, error)
	Int64s(name string, def []int64, desc string) ([]int64, error)
	Strings(name string, def []string, desc string) ([]string, error)
}

// Settings is everything the node reads from its parameters.
type Settings struct {
	Controller    hexapod.Config
	Joy           hexapod.JoyMapping
	CmdVelTimeout time.Duration
	// JoyTimeout is joy.timeout: how long a stick velocity holds without a
	// new Joy message.
	JoyTimeout time.Duration
	// Limits are max_linear_velocity and max_angular_velocity: cmd_vel and
	// joystick velocities are clamped to them.
	Limits cmdvel.Limits
	// ServoDriver is "sim" or "dynamixel".
	ServoDriver string
	SerialPort  string
	BaudRate    int
	Servos      dynamixel.Config
	JointNames  []string
}

// LoadSettings declares every parameter of params/hexapod.yaml with the
// original's defaults and builds and validates the settings. Errors name
// the parameter.
func LoadSettings(d Declarer) (Settings, error) {
	l := loader{d: d}
	var s Settings
	c := hexapod.DefaultConfig()
	g := &c.Geometry
	deg := math.Pi / 180

	if n := l.int("NUMBER_OF_LEGS", 6, "number of legs; must be 6"); n != 6 && l.err == nil {
		l.fail(fmt.Errorf("parameter NUMBER_OF_LEGS = %d: only 6 legs are supported", n))
	}
	g.CoxaLength = l.float("COXA_LENGTH", g.CoxaLength, "coxa link length (m)")
	g.FemurLength = l.float("FEMUR_LENGTH", g.FemurLength, "femur link length (m)")
	g.TibiaLength = l.float("TIBIA_LENGTH", g.TibiaLength, "tibia link length (m)")
	l.float("TARSUS_LENGTH", 0, "declared by the original, unused (3-DOF legs)")
	g.CoxaX = l.six("COXA_TO_CENTER_X", g.CoxaX, 1, "coxa joint x per leg, RR RM RF LR LM LF (m)")
	g.CoxaY = l.six("COXA_TO_CENTER_Y", g.CoxaY, 1, "coxa joint y per leg (m)")
	g.InitCoxaAngle = l.six("INIT_COXA_ANGLE", g.InitCoxaAngle, deg, "coxa mounting angle per leg (degrees)")
	g.NeutralX = l.six("INIT_FOOT_POS_X", g.NeutralX, 1, "neutral foot x per leg (m)")
	g.NeutralY = l.six("INIT_FOOT_POS_Y", g.NeutralY, 1, "neutral foot y per leg (m)")
	g.WalkingHeight = l.float("INIT_FOOT_POS_Z", g.WalkingHeight, "walking height: coxa plane above the feet (m)")

	c.Gait.SubSteps = int(l.int("SUB_STEPS", int64(c.Gait.SubSteps), "ticks per half gait cycle"))
	c.Gait.LiftHeight = l.float("LEG_LIFT_HEIGHT", c.Gait.LiftHeight, "swing foot height (m)")
	c.Gait.Rate = l.float("rate", c.Gait.Rate, "control rate (Hz)")
	c.Gait.DistancePerStep = l.float("gait.distance_per_step", c.Gait.DistancePerStep, "stance travel per tick at full stick (m)")
	c.Gait.HeightPerStep = l.float("gait.height_per_step", c.Gait.HeightPerStep, "swing rise/fall per tick (m)")
	c.Gait.StabilityRadius = l.float("gait.stability_radius", c.Gait.StabilityRadius, "neutral tolerance to stop walking (m)")
	c.Gait.DphiMaxStanding = l.float("gait.dphi_max_standing", c.Gait.DphiMaxStanding, "turn per tick in place at full stick (rad)")
	c.Gait.TransitionXY = l.three("gait.transition_xy", c.Gait.TransitionXY, "stance-to-swing xy table")
	c.Gait.TransitionZ = l.three("gait.transition_z", c.Gait.TransitionZ, "stance-to-swing z table")

	c.SittingHeight = l.float("sitting_height", c.SittingHeight, "feet above the coxa plane while sitting (m)")
	c.SitStep = l.float("sit_step_height", c.SitStep, "height change per tick standing up / sitting down (m)")
	c.SittingServoSpeed = l.float("sitting_servo_speed", c.SittingServoSpeed, "servo speed fraction while sitting")
	c.PitchGain = l.float("pose_pitch_gain", c.PitchGain, "body pitch per unit stick in Standing (rad)")
	c.RollGain = l.float("pose_roll_gain", c.RollGain, "body roll per unit stick in Standing (rad)")
	c.YawGain = l.float("pose_yaw_gain", c.YawGain, "body yaw per unit stick in Standing (rad)")
	s.Controller = c

	timeout := l.float("cmd_vel_timeout", 0.5, "age after which cmd_vel counts as zero (s); 0 disables")
	if l.err == nil && (timeout < 0 || timeout > 3600) {
		l.fail(fmt.Errorf("parameter cmd_vel_timeout = %v outside [0, 3600] s", timeout))
	}
	s.CmdVelTimeout = time.Duration(timeout * float64(time.Second))
	// Just above the default gait's top speeds (0.212 m/s, 1 rad/s), so a
	// full stick is never cut; smaller values slow the robot down.
	s.Limits.Linear = l.float("max_linear_velocity", 0.25,
		"cmd_vel and joystick: each linear component clamped to ±this (m/s)")
	s.Limits.Angular = l.float("max_angular_velocity", 1.2,
		"cmd_vel and joystick: each angular component clamped to ±this (rad/s)")
	if err := s.Limits.Validate(); err != nil && l.err == nil {
		l.fail(fmt.Errorf("parameter %w", err))
	}

	j := hexapod.DefaultJoyMapping()
	j.StandUp = int(l.int("joy.button_stand_up", int64(j.StandUp), "Joy button index of stand_up"))
	j.SitDown = int(l.int("joy.button_sit_down", int64(j.SitDown), "Joy button index of sit_down"))
	j.StandWalk = int(l.int("joy.button_stand_walk", int64(j.StandWalk), "Joy button index of stand_walk"))
	j.StartStop = int(l.int("joy.button_start_stop", int64(j.StartStop), "Joy button index of start_stop"))
	j.LinearX = int(l.int("joy.axis_linear_x", int64(j.LinearX), "Joy axis index of linear.x"))
	j.LinearY = int(l.int("joy.axis_linear_y", int64(j.LinearY), "Joy axis index of linear.y"))
	j.AngularZ = int(l.int("joy.axis_angular_z", int64(j.AngularZ), "Joy axis index of angular.z (2 on a Raspberry Pi)"))
	j.Debounce = l.float("joy.debounce", j.Debounce, "seconds between two accepted presses of one button")
	s.Joy = j
	joyTimeout := l.float("joy.timeout", hexapod.DefaultJoyTimeout.Seconds(),
		"age after which the stick velocity counts as zero (s); longer than the joy driver's 1/autorepeat_rate")
	if l.err == nil && !(joyTimeout > 0 && joyTimeout <= 60) {
		l.fail(fmt.Errorf("parameter joy.timeout = %v outside (0, 60] s", joyTimeout))
	}
	s.JoyTimeout = time.Duration(joyTimeout * float64(time.Second))

	s.ServoDriver = l.str("servo.driver", "sim", `"sim" or "dynamixel"`)
	s.SerialPort = l.str("servo.port", "/dev/ttyUSB0", "serial port of the Dynamixel adapter")
	s.BaudRate = int(l.int("servo.baud_rate", 1000000, "serial baud rate"))
	dx := dynamixel.DefaultConfig()
	dx.Timeout = time.Duration(l.float("servo.timeout", dx.Timeout.Seconds(), "status packet timeout (s)") * float64(time.Second))
	dx.FullSpeed = int(l.int("servo.full_speed", int64(dx.FullSpeed), "moving-speed register value at speed fraction 1"))
	s.JointNames = l.strs("SERVO_NAMES", hexapod.JointNames(), "the 18 joint names in joint_states order")
	limits := [3][2]int64{}
	for k, name := range []string{"LIMIT_COXA", "LIMIT_FEMUR", "LIMIT_TIBIA"} {
		def := dynamixel.DefaultLimits[k]
		v := l.ints(name, []int64{int64(def[0]), int64(def[1])}, "goal tick range [min, max], exclusive")
		if l.err == nil && len(v) != 2 {
			l.fail(fmt.Errorf("parameter %s has %d entries, want 2", name, len(v)))
		}
		if len(v) == 2 {
			limits[k] = [2]int64{v[0], v[1]}
		}
	}
	if l.err == nil {
		l.servoTable(&dx, s.JointNames, limits)
	}
	s.Servos = dx
	if l.err != nil {
		return Settings{}, l.err
	}
	var errs []error
	if err := s.Controller.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := s.Joy.Validate(); err != nil {
		errs = append(errs, err)
	}
	switch s.ServoDriver {
	case "sim":
	case "dynamixel":
		if err := s.Servos.Validate(); err != nil {
			errs = append(errs, err)
		}
	default:
		errs = append(errs, fmt.Errorf("parameter servo.driver = %q: want \"sim\" or \"dynamixel\"", s.ServoDriver))
	}
	if err := errors.Join(errs...); err != nil {
		return Settings{}, fmt.Errorf("hexapod parameters: %w", err)
	}
	return s, nil
}

// servoTable reads one [NR, ID, Ticks, Center, Max_Degree, Sign, Offset]
// parameter per joint name. The joint type (and so its LIMIT_*) is found
// by the substring COXA, FEMUR or TIBIA in the name, as in the original;
// Offset is in degrees.
func (l *loader) servoTable(dx *dynamixel.Config, names []string, limits [3][2]int64) {
	if len(names) != hexapod.NumJoints {
		l.fail(fmt.Errorf("parameter SERVO_NAMES has %d names, want %d", len(names), hexapod.NumJoints))
		return
	}
	for i, name := range names {
		if slices.Index(names, name) != i || name == "" {
			l.fail(fmt.Errorf("parameter SERVO_NAMES: name %q empty or repeated", name))
			return
		}
		kind := -1
		for k, sub := range []string{"COXA", "FEMUR", "TIBIA"} {
			if strings.Contains(strings.ToUpper(name), sub) {
				kind = k
			}
		}
		if kind < 0 {
			l.fail(fmt.Errorf("parameter SERVO_NAMES: %q contains none of COXA, FEMUR, TIBIA", name))
			return
		}
		def := dx.Servos[i]
		v := l.ints(name, []int64{int64(i), int64(def.ID), int64(def.Ticks), int64(def.Center), int64(def.MaxDegree),
			int64(def.Sign), 0}, "[NR, ID, Ticks, Center, Max_Degree, Sign, Offset(deg)]")
		if l.err != nil {
			return
		}
		if len(v) != 7 {
			l.fail(fmt.Errorf("parameter %s has %d entries, want 7 [NR, ID, Ticks, Center, Max_Degree, Sign, Offset]", name, len(v)))
			return
		}
		if v[1] < 0 || v[1] > 253 {
			l.fail(fmt.Errorf("parameter %s: servo id %d outside 0..253", name, v[1]))
			return
		}
		dx.Servos[i] = dynamixel.Servo{Name: name, ID: byte(v[1]), Ticks: int(v[2]), Center: int(v[3]),
			MaxDegree: float64(v[4]), Sign: int(v[5]), Offset: float64(v[6]) * math.Pi / 180,
			Min: int(limits[kind][0]), Max: int(limits[kind][1])}
	}
}

// loader keeps the first error so that the declarations read in a row.
type loader struct {
	d   Declarer
	err error
}

func (l *loader) fail(err error) {
	if l.err == nil {
		l.err = err
	}
}

func (l *loader) float(name string, def float64, desc string) float64 {
	if l.err != nil {
		return def
	}
	v, err := l.d.Float64(name, def, desc)
	if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
		err = fmt.Errorf("parameter %s = %v is not finite", name, v)
	}
	if err != nil {
		l.fail(err)
		return def
	}
	return v
}

func (l *loader) int(name string, def int64, desc string) int64 {
	if l.err != nil {
		return def
	}
	v, err := l.d.Int64(name, def, desc)
	if err == nil && (v < math.MinInt32 || v > math.MaxInt32) {
		err = fmt.Errorf("parameter %s = %d out of range", name, v)
	}
	if err != nil {
		l.fail(err)
		return def
	}
	return v
}

func (l *loader) str(name, def, desc string) string {
	if l.err != nil {
		return def
	}
	v, err := l.d.String(name, def, desc)
	if err != nil {
		l.fail(err)
		return def
	}
	return v
}

func (l *loader) strs(name string, def []string, desc string) []string {
	if l.err != nil {
		return def
	}
	v, err := l.d.Strings(name, def, desc)
	if err != nil {
		l.fail(err)
		return def
	}
	return v
}

func (l *loader) ints(name string, def []int64, desc string) []int64 {
	if l.err != nil {
		return def
	}
	v, err := l.d.Int64s(name, def, desc)
	if err != nil {
		l.fail(err)
		return def
	}
	return v
}

func (l *loader) floats(name string, def []float64, desc string) []float64 {
	if l.err != nil {
		return def
	}
	v, err := l.d.Float64s(name, def, desc)
	if err == nil {
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				err = fmt.Errorf("parameter %s contains %v", name, x)
			}
		}
	}
	if err != nil {
		l.fail(err)
		return def
	}
	return v
}

func (l *loader) six(name string, def [hexapod.NumLegs]float64, scale float64, desc string) [hexapod.NumLegs]float64 {
	d := make([]float64, len(def))
	for i, x := range def {
		d[i] = x / scale
	}
	v := l.floats(name, d, desc)
	if l.err != nil {
		return def
	}
	if len(v) != hexapod.NumLegs {
		l.fail(fmt.Errorf("parameter %s has %d entries, want %d", name, len(v), hexapod.NumLegs))
		return def
	}
	var out [hexapod.NumLegs]float64
	for i, x := range v {
		out[i] = x * scale
	}
	return out
}

func (l *loader) three(name string, def [3]float64, desc string) [3]float64 {
	v := l.floats(name, def[:], desc)
	if l.err != nil {
		return def
	}
	if len(v) != 3 {
		l.fail(fmt.Errorf("parameter %s has %d entries, want 3", name, len(v)))
		return def
	}
	return [3]float64{v[0], v[1], v[2]}
}

// MapDeclarer is a Declarer over a map of overrides (for tests and for
// running without a ROS parameter service). Values must have the Go type of
// the parameter (float64, int64, string, []float64, []int64, []string);
// Declared records every declared name.
type MapDeclarer struct {
	Overrides map[string]any
	Declared  []string
}

func mapGet[T any](m *MapDeclarer, name string, def T) (T, error) {
	m.Declared = append(m.Declared, name)
	v, ok := m.Overrides[name]
	if !ok {
		return def, nil
	}
	t, ok := v.(T)
	if !ok {
		return def, fmt.Errorf("parameter %s: value %v has type %T, want %T", name, v, v, def)
	}
	return t, nil
}

// Float64 implements Declarer.
func (m *MapDeclarer) Float64(name string, def float64, _ string) (float64, error) {
	return mapGet(m, name, def)
}

// Int64 implements Declarer.
func (m *MapDeclarer) Int64(name string, def int64, _ string) (int64, error) {
	return mapGet(m, name, def)
}

// String implements Declarer.
func (m *MapDeclarer) String(name string, def string, _ string) (string, error) {
	return mapGet(m, name, def)
}

// Float64s implements Declarer.
func (m *MapDeclarer) Float64s(name string, def []float64, _ string) ([]float64, error) {
	return mapGet(m, name, def)
}

// Int64s implements Declarer.
func (m *MapDeclarer) Int64s(name string, def []int64, _ string) ([]int64, error) {
	return mapGet(m, name, def)
}

// Strings implements Declarer.
func (m *MapDeclarer) Strings(name string, def []string, _ string) ([]string, error) {
	return mapGet(m, name, def)
}
