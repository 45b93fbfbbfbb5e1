package hexapodnode

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/cmdvel/cmdvelnode"
	"github.com/fsmnodes/fsmnodes/internal/hexapod"
	"github.com/fsmnodes/fsmnodes/internal/hexapod/dynamixel"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
)

// Settings is everything the node reads from its parameters.
type Settings struct {
	Controller    hexapod.Config
	Joy           hexapod.JoyMapping
	CmdVelTimeout time.Duration
	// StampedCmdVel is enable_stamped_cmd_vel: cmd_vel is
	// geometry_msgs/TwistStamped.
	StampedCmdVel bool
	// JoyTimeout is joy.timeout: how long a stick velocity holds without a
	// new Joy message.
	JoyTimeout time.Duration
	// Limits are max_linear_velocity and max_angular_velocity: cmd_vel and
	// joystick velocities are clamped to them.
	Limits cmdvel.Limits
	// ServoDriver is "sim", "dynamixel" or "gazebo".
	ServoDriver string
	SerialPort  string
	BaudRate    int
	Servos      dynamixel.Config
	JointNames  []string
	// Live holds the parameters that may change while the node runs (gait
	// speeds, swing lift height, posing gains, input timeouts, velocity
	// limits); the tick hands a change (Changed) to the Adapter. Nil when
	// the settings were not declared on a node.
	Live *param.Group[Tunables]
}

// Tunables is what may change while the node runs (Adapter.SetTunables).
type Tunables struct {
	Controller    hexapod.Tuning
	CmdVelTimeout time.Duration
	JoyTimeout    time.Duration
	Limits        cmdvel.Limits
}

// validate checks t against the controller's fixed configuration base:
// the whole controller configuration (hexapod.Config.Validate), then the
// inputs' timeouts and limits. It is the group's check: a value of Live
// has passed it.
func (t Tunables) validate(base hexapod.Config) error {
	if err := base.WithTuning(t.Controller).Validate(); err != nil {
		return err
	}
	return t.validateInputs()
}

// validateInputs checks what the adapter applies itself: the input
// timeouts and the velocity limits.
func (t Tunables) validateInputs() error {
	if t.CmdVelTimeout < 0 {
		return fmt.Errorf("cmd_vel_timeout = %v: must be 0 s (disabled) or above", t.CmdVelTimeout.Seconds())
	}
	if t.JoyTimeout <= 0 {
		return fmt.Errorf("joy.timeout = %v: must be above 0 s: a stick must not hold for ever", t.JoyTimeout.Seconds())
	}
	return t.Limits.Validate()
}

// Reasons given for the read-only parameters.
const (
	whyGeometry = "the leg geometry and the gait timing are built into the controller at start-up"
	whyServo    = "the servo bus is opened at start-up"
	whyStart    = "read once at start-up"
)

// LoadSettings declares every parameter of params/hexapod.yaml on d with
// the original's defaults and builds and validates the settings. Errors
// name the parameter. The parameters in Live may be set while the node
// runs; a set is checked against the whole controller configuration.
func LoadSettings(d *param.Declarer) (Settings, error) {
	l := loader{d: d}
	var s Settings
	c := l.controller()
	// Live: each set is checked as part of the whole configuration
	// (Tunables.validate), the start-up value too.
	live := declareLive(d, c)
	tu := live.Get()
	s.Controller = c.WithTuning(tu.Controller)
	s.CmdVelTimeout, s.JoyTimeout, s.Limits = tu.CmdVelTimeout, tu.JoyTimeout, tu.Limits
	s.Live = live

	s.StampedCmdVel = param.Declare(d, "enable_stamped_cmd_vel", false, param.ReadOnly(
		"cmd_vel is geometry_msgs/msg/TwistStamped instead of geometry_msgs/msg/Twist (as Jazzy's diff_drive_controller "+
			"takes it; a stamp older than cmd_vel_timeout is ignored)", "cmd_vel is subscribed at start-up with one type"), nil)
	s.Joy = l.joyMapping()
	l.servos(&s)
	if err := d.Err(); err != nil {
		return Settings{}, err
	}
	// The controller configuration was checked whole by the Live group.
	var errs []error
	if err := s.Joy.Validate(); err != nil {
		errs = append(errs, err)
	}
	switch s.ServoDriver {
	case "sim", "gazebo":
	case "dynamixel":
		if err := s.Servos.Validate(); err != nil {
			errs = append(errs, err)
		}
	default:
		errs = append(errs, fmt.Errorf("parameter servo.driver = %q: want \"sim\", \"dynamixel\" or \"gazebo\"", s.ServoDriver))
	}
	if err := errors.Join(errs...); err != nil {
		return Settings{}, fmt.Errorf("hexapod parameters: %w", err)
	}
	return s, nil
}

// controller declares the controller's read-only parameters: the leg
// geometry, the gait timing and the sitting motion.
func (l *loader) controller() hexapod.Config {
	c := hexapod.DefaultConfig()
	g := &c.Geometry
	deg := math.Pi / 180

	if n := l.int("NUMBER_OF_LEGS", 6, "number of legs; must be 6", whyGeometry); n != 6 && l.ok() {
		l.fail(fmt.Errorf("parameter NUMBER_OF_LEGS = %d: only 6 legs are supported", n))
	}
	g.CoxaLength = l.float("COXA_LENGTH", g.CoxaLength, "coxa link length (m)", whyGeometry)
	g.FemurLength = l.float("FEMUR_LENGTH", g.FemurLength, "femur link length (m)", whyGeometry)
	g.TibiaLength = l.float("TIBIA_LENGTH", g.TibiaLength, "tibia link length (m)", whyGeometry)
	l.float("TARSUS_LENGTH", 0, "declared by the original, unused (3-DOF legs)", whyGeometry)
	g.CoxaX = l.six("COXA_TO_CENTER_X", g.CoxaX, 1, "coxa joint x per leg, RR RM RF LR LM LF (m)")
	g.CoxaY = l.six("COXA_TO_CENTER_Y", g.CoxaY, 1, "coxa joint y per leg (m)")
	g.InitCoxaAngle = l.six("INIT_COXA_ANGLE", g.InitCoxaAngle, deg, "coxa mounting angle per leg (degrees)")
	g.NeutralX = l.six("INIT_FOOT_POS_X", g.NeutralX, 1, "neutral foot x per leg (m)")
	g.NeutralY = l.six("INIT_FOOT_POS_Y", g.NeutralY, 1, "neutral foot y per leg (m)")
	g.WalkingHeight = l.float("INIT_FOOT_POS_Z", g.WalkingHeight, "walking height: coxa plane above the feet (m)",
		"changing it would move the body while it stands on its legs")

	c.Gait.SubSteps = int(l.int("SUB_STEPS", int64(c.Gait.SubSteps), "ticks per half gait cycle", whyGeometry))
	c.Gait.Rate = param.Declare(l.d, "rate", c.Gait.Rate, param.ReadOnly("control rate (Hz)",
		"every gait constant is per tick; a new rate would change all speeds"), param.Frequency)
	c.Gait.HeightPerStep = l.float("gait.height_per_step", c.Gait.HeightPerStep, "swing rise/fall per tick (m)", whyGeometry)
	c.Gait.StabilityRadius = l.float("gait.stability_radius", c.Gait.StabilityRadius, "neutral tolerance to stop walking (m)", whyStart)
	c.Gait.TransitionXY = l.three("gait.transition_xy", c.Gait.TransitionXY, "stance-to-swing xy table")
	c.Gait.TransitionZ = l.three("gait.transition_z", c.Gait.TransitionZ, "stance-to-swing z table")

	c.SittingHeight = l.float("sitting_height", c.SittingHeight, "feet above the coxa plane while sitting (m)", whyStart)
	c.SitStep = l.float("sit_step_height", c.SitStep, "height change per tick standing up / sitting down (m)", whyStart)
	c.SittingServoSpeed = l.float("sitting_servo_speed", c.SittingServoSpeed, "servo speed fraction while sitting", whyStart)
	return c
}

// declareLive declares the live parameters as one group over base, the
// read-only part of the controller configuration.
func declareLive(d *param.Declarer, base hexapod.Config) *param.Group[Tunables] {
	tunable := func(name, desc string, field func(t *Tunables) *float64) param.GroupField[Tunables] {
		return param.Field(name, field, param.Descriptor{Description: desc + " (live)"})
	}
	// Just above the default gait's top speeds (0.212 m/s, 1 rad/s), so a
	// full stick is never cut; smaller values slow the robot down.
	def := Tunables{Controller: base.Tuning(), CmdVelTimeout: 500 * time.Millisecond, JoyTimeout: hexapod.DefaultJoyTimeout,
		Limits: cmdvel.Limits{Linear: 0.25, Angular: 1.2}}
	return param.DeclareGroup(d, def, func(t Tunables) error { return t.validate(base) }, append([]param.GroupField[Tunables]{
		tunable("LEG_LIFT_HEIGHT", "swing foot height (m); applies from the next step",
			func(t *Tunables) *float64 { return &t.Controller.LiftHeight }),
		tunable("gait.distance_per_step", "stance travel per tick at full stick (m), i.e. the walking speed; applies from the next step",
			func(t *Tunables) *float64 { return &t.Controller.DistancePerStep }),
		tunable("gait.dphi_max_standing", "turn per tick in place at full stick (rad), i.e. the turning speed; applies from the next step",
			func(t *Tunables) *float64 { return &t.Controller.DphiMaxStanding }),
		tunable("pose_pitch_gain", "body pitch per unit stick in Standing (rad)", func(t *Tunables) *float64 { return &t.Controller.PitchGain }),
		tunable("pose_roll_gain", "body roll per unit stick in Standing (rad)", func(t *Tunables) *float64 { return &t.Controller.RollGain }),
		tunable("pose_yaw_gain", "body yaw per unit stick in Standing (rad)", func(t *Tunables) *float64 { return &t.Controller.YawGain }),
		param.DurationField("cmd_vel_timeout", func(t *Tunables) *time.Duration { return &t.CmdVelTimeout }, param.Descriptor{
			Description: "age after which cmd_vel counts as zero (s); 0 disables (live)", FloatRange: param.Floats(0, 3600)}),
		param.DurationField("joy.timeout", func(t *Tunables) *time.Duration { return &t.JoyTimeout }, param.Descriptor{
			Description: "age after which the stick velocity counts as zero (s); longer than the joy driver's 1/autorepeat_rate (live)",
			FloatRange:  param.Floats(0, 60)}),
	}, cmdvelnode.LimitFields(func(t *Tunables) *cmdvel.Limits { return &t.Limits }, "cmd_vel and the joystick's command")...)...)
}

// joyMapping declares the joystick's buttons, axes and debounce.
func (l *loader) joyMapping() hexapod.JoyMapping {
	j := hexapod.DefaultJoyMapping()
	btn := func(name string, def int, desc string) int { return int(l.int(name, int64(def), desc, whyStart)) }
	j.StandUp = btn("joy.button_stand_up", j.StandUp, "Joy button index of stand_up")
	j.SitDown = btn("joy.button_sit_down", j.SitDown, "Joy button index of sit_down")
	j.StandWalk = btn("joy.button_stand_walk", j.StandWalk, "Joy button index of stand_walk")
	j.StartStop = btn("joy.button_start_stop", j.StartStop, "Joy button index of start_stop")
	j.LinearX = btn("joy.axis_linear_x", j.LinearX, "Joy axis index of linear.x")
	j.LinearY = btn("joy.axis_linear_y", j.LinearY, "Joy axis index of linear.y")
	j.AngularZ = btn("joy.axis_angular_z", j.AngularZ, "Joy axis index of angular.z (2 on a Raspberry Pi)")
	j.Debounce = l.float("joy.debounce", j.Debounce, "seconds between two accepted presses of one button", whyStart)
	return j
}

// servos declares the servo driver, the serial bus, the joint names and
// the servo table into s.
func (l *loader) servos(s *Settings) {
	s.ServoDriver = l.str("servo.driver", "sim", `"sim", "dynamixel" or "gazebo" (the joints of a hexapod in Gazebo, over ros_gz_bridge)`)
	s.SerialPort = l.str("servo.port", "/dev/ttyUSB0", "serial port of the Dynamixel adapter")
	s.BaudRate = int(l.int("servo.baud_rate", 1000000, "serial baud rate", whyServo))
	dx := dynamixel.DefaultConfig()
	dx.Timeout = time.Duration(l.float("servo.timeout", dx.Timeout.Seconds(), "status packet timeout (s)", whyServo) * float64(time.Second))
	dx.FullSpeed = int(l.int("servo.full_speed", int64(dx.FullSpeed), "moving-speed register value at speed fraction 1", whyServo))
	s.JointNames = l.strs("SERVO_NAMES", hexapod.JointNames(), "the 18 joint names in joint_states order")
	limits := [3][2]int64{}
	for k, name := range []string{"LIMIT_COXA", "LIMIT_FEMUR", "LIMIT_TIBIA"} {
		def := dynamixel.DefaultLimits[k]
		v := l.ints(name, []int64{int64(def[0]), int64(def[1])}, "goal tick range [min, max], exclusive")
		if l.ok() && len(v) != 2 {
			l.fail(fmt.Errorf("parameter %s has %d entries, want 2", name, len(v)))
		}
		if len(v) == 2 {
			limits[k] = [2]int64{v[0], v[1]}
		}
	}
	if l.ok() {
		l.servoTable(&dx, s.JointNames, limits)
	}
	s.Servos = dx
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
		if !l.ok() {
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

// loader declares the read-only parameters on its Declarer, which keeps
// the first error so that the declarations read in a row.
type loader struct {
	d *param.Declarer
}

func (l *loader) fail(err error) { l.d.Fail(err) }

func (l *loader) ok() bool { return l.d.Err() == nil }

func (l *loader) float(name string, def float64, desc, why string) float64 {
	return param.Declare(l.d, name, def, param.ReadOnly(desc, why), func(v float64) error {
		if math.IsInf(v, 0) {
			return param.ErrNotFinite
		}
		return nil
	})
}

func (l *loader) int(name string, def int64, desc, why string) int64 {
	return param.Declare(l.d, name, def, param.Descriptor{Description: desc + " (read-only: " + why + ")",
		ReadOnly: true, ReadOnlyReason: why, IntegerRange: param.Ints(math.MinInt32, math.MaxInt32)}, nil)
}

func (l *loader) str(name, def, desc string) string {
	return param.Declare(l.d, name, def, param.ReadOnly(desc, whyServo), nil)
}

func (l *loader) strs(name string, def []string, desc string) []string {
	return param.Declare(l.d, name, def, param.ReadOnly(desc, whyServo), nil)
}

func (l *loader) ints(name string, def []int64, desc string) []int64 {
	return param.Declare(l.d, name, def, param.ReadOnly(desc, whyServo), nil)
}

func (l *loader) floats(name string, def []float64, desc string) []float64 {
	return param.Declare(l.d, name, def, param.ReadOnly(desc, whyGeometry), func(v []float64) error {
		for _, x := range v {
			if math.IsInf(x, 0) {
				return fmt.Errorf("contains %v", x)
			}
		}
		return nil
	})
}

func (l *loader) six(name string, def [hexapod.NumLegs]float64, scale float64, desc string) [hexapod.NumLegs]float64 {
	d := make([]float64, len(def))
	for i, x := range def {
		d[i] = x / scale
	}
	v := l.floats(name, d, desc)
	if !l.ok() {
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
	if !l.ok() {
		return def
	}
	if len(v) != 3 {
		l.fail(fmt.Errorf("parameter %s has %d entries, want 3", name, len(v)))
		return def
	}
	return [3]float64{v[0], v[1], v[2]}
}
