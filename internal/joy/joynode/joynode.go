// Package joynode adapts internal/joy to ROS 2: the joy driver node (a
// Linux joystick device to sensor_msgs/Joy, like joy_linux's joy_node) and
// the joy_teleop node (sensor_msgs/Joy to a Twist, like teleop_twist_joy).
package joynode

import (
	"context"
	"fmt"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/cmdvel/cmdvelnode"
	"github.com/fsmnodes/fsmnodes/internal/joy"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// Default node names.
const (
	JoyNodeName    = "joy_node"
	TeleopNodeName = "teleop_twist_joy_node"
)

// SetupJoy turns n into the joystick driver, joy_linux's joy_node: it
// reads js_event records from a Linux joystick device and publishes
// sensor_msgs/Joy on "joy", with joy_linux's parameters and defaults
// (read-only; they are read once at start-up):
//
//	dev                /dev/input/js0  the device
//	dev_name           ""              if set: the first /dev/input/js* whose name contains it
//	device_id          0               ROS 2 joy's device index: with dev at its default, N selects /dev/input/jsN
//	deadzone           0.05            fraction of the axis range around the centre that reads 0
//	autorepeat_rate    20.0            Hz; republish an unchanged state (0: off)
//	coalesce_interval  0.001           s; axis events this close go out in one message
//	sticky_buttons     false           each press toggles its button
//	default_trig_val   false           use the axis values the device reports on open
//	frame_id           joy             header.frame_id
//
// A missing or unplugged device is logged once and retried every second.
func SetupJoy(_ context.Context, n *ros.Node) error {
	cfg := joy.DefaultConfig()
	d := ros.NewDeclarer(n)
	const why = "the device is opened and configured at start-up"
	str := func(name, def, desc string) string {
		return param.Declare(d, name, def, param.ReadOnly(desc, why), nil)
	}
	flt := func(name string, def float64, desc string) float64 {
		return param.Declare(d, name, def, param.ReadOnly(desc, why), nil)
	}
	boolean := func(name string, def bool, desc string) bool {
		return param.Declare(d, name, def, param.ReadOnly(desc, why), nil)
	}
	const defaultDev = "/dev/input/js0"
	dev := str("dev", defaultDev, "joystick device")
	devName := str("dev_name", "", "use the first /dev/input/js* whose name contains this (empty: use dev)")
	id := param.Declare(d, "device_id", int64(0), param.Descriptor{
		Description: "joystick index as in ROS 2 joy: with dev left at its default, N opens /dev/input/jsN (read-only: " + why + ")",
		ReadOnly:    true, ReadOnlyReason: why, IntegerRange: param.Ints(0, 255)}, nil)
	cfg.Deadzone = flt("deadzone", cfg.Deadzone, "axis deadzone, fraction of the range [-1, 1]")
	cfg.AutorepeatRate = flt("autorepeat_rate", cfg.AutorepeatRate, "republish rate in Hz while nothing changes (0: off)")
	cfg.CoalesceInterval = param.DeclareDuration(d, "coalesce_interval", cfg.CoalesceInterval,
		param.ReadOnly("seconds during which axis events are gathered into one message", why), nil)
	cfg.StickyButtons = boolean("sticky_buttons", cfg.StickyButtons, "a press toggles the button")
	cfg.DefaultTrigVal = boolean("default_trig_val", cfg.DefaultTrigVal, "publish the axis values reported when the device opens")
	frame := str("frame_id", "joy", "header frame_id")
	if err := d.Err(); err != nil {
		return err
	}
	if id != 0 && dev == defaultDev {
		dev = fmt.Sprintf("/dev/input/js%d", id)
	}
	// Validate now so that a bad value stops the node with an error.
	if _, _, err := cfg.Sanitize(); err != nil {
		return err
	}
	pub, err := ros.NewPublisher[sensor_msgs_msg.Joy](n, "joy", ros.QoSDefault)
	if err != nil {
		return err
	}
	log := n.Logger()
	drv := &joy.Driver{Config: cfg, Dev: dev, DevName: devName, Log: log,
		Publish: func(s joy.State) {
			if err := pub.Publish(&sensor_msgs_msg.Joy{Header: headerFor(n, frame), Axes: s.Axes, Buttons: s.Buttons}); err != nil {
				log.Errorf("publish joy: %v", err)
			}
		}}
	// The driver loop lives as long as the node; Run waits for it to end
	// before the node closes.
	n.Context().Go(drv.Run)
	return nil
}

func headerFor(n *ros.Node, frame string) std_msgs_msg.Header {
	return std_msgs_msg.Header{Stamp: builtin_interfaces_msg.TimeOf(n.Clock().Now()), FrameId: frame}
}

// Defaults of joy_teleop's velocity limits (max_linear_velocity,
// max_angular_velocity): twice teleop_twist_joy's turbo scales, so a
// normal stick is never cut.
const (
	DefaultTeleopMaxLinear  = 2.0 // m/s
	DefaultTeleopMaxAngular = 2.0 // rad/s
)

// SetupTeleop turns n into the joystick teleop: sensor_msgs/Joy on "joy"
// to geometry_msgs/Twist on "teleoperation/cmd_vel" (the RSM control mux's
// teleoperation input), with teleop_twist_joy's parameters and defaults.
// The output is clamped to max_linear_velocity and max_angular_velocity
// (a hostile Joy axis of 1e30 gives the limit, said once and counted).
// The scales and limits may be set while the node runs (they apply to the
// next Joy message); the button and axis mapping is read-only. With
// publish_stamped_twist the output is geometry_msgs/TwistStamped, stamped
// with the node clock's now and frame (default teleop_twist_joy), as
// teleop_twist_joy sends it.
func SetupTeleop(_ context.Context, n *ros.Node) error {
	def := joy.DefaultTeleop()
	cfg := def
	d := ros.NewDeclarer(n)
	const why = "the button and axis mapping is read once at start-up"
	b := func(dst *bool, name string, v bool) { *dst = param.Declare(d, name, v, param.ReadOnly("", why), nil) }
	i := func(dst *int, name string, v int) {
		*dst = int(param.Declare(d, name, int64(v), param.Descriptor{Description: "(read-only: " + why + ")",
			ReadOnly: true, ReadOnlyReason: why, IntegerRange: param.Ints(-1, 255)}, nil))
	}
	b(&cfg.RequireEnableButton, "require_enable_button", def.RequireEnableButton)
	i(&cfg.EnableButton, "enable_button", def.EnableButton)
	i(&cfg.TurboButton, "enable_turbo_button", def.TurboButton)
	i(&cfg.AxisLinearX, "axis_linear.x", def.AxisLinearX)
	i(&cfg.AxisAngularYaw, "axis_angular.yaw", def.AxisAngularYaw)
	// Live: the scales (checked with the whole mapping) and the limits.
	scale := func(name string, field func(c *teleopLive) *float64, desc string) param.GroupField[teleopLive] {
		return param.Field(name, field, param.Descriptor{Description: desc + " (live)", FloatRange: param.Floats(-1000, 1000)})
	}
	live := param.DeclareGroup(d, teleopLive{Config: cfg, Limits: cmdvel.Limits{Linear: DefaultTeleopMaxLinear, Angular: DefaultTeleopMaxAngular}},
		teleopLive.validate, append([]param.GroupField[teleopLive]{
			scale("scale_linear.x", func(c *teleopLive) *float64 { return &c.Config.ScaleLinearX }, "m/s at full stick"),
			scale("scale_linear_turbo.x", func(c *teleopLive) *float64 { return &c.Config.TurboLinearX }, "m/s at full stick with the turbo button"),
			scale("scale_angular.yaw", func(c *teleopLive) *float64 { return &c.Config.ScaleAngularYaw }, "rad/s at full stick"),
			scale("scale_angular_turbo.yaw", func(c *teleopLive) *float64 { return &c.Config.TurboAngularYaw }, "rad/s at full stick with the turbo button"),
		}, cmdvelnode.LimitFields(func(c *teleopLive) *cmdvel.Limits { return &c.Limits }, "the output")...)...)
	// teleop_twist_joy's names and defaults.
	stamped := cmdvelnode.DeclareStamped(d, cmdvelnode.ParamPublishStamped, "the output")
	frame := param.Declare(d, "frame", "teleop_twist_joy", param.ReadOnly(
		"header.frame_id of the output with "+cmdvelnode.ParamPublishStamped, "it is read once at start-up"), nil)
	if err := d.Err(); err != nil {
		return err
	}
	start := live.Get()
	tel, err := joy.NewTeleop(start.Config)
	if err != nil {
		return err
	}
	guard, err := cmdvel.NewGuard("joy_teleop output", start.Limits)
	if err != nil {
		return fmt.Errorf("parameter %w", err)
	}
	cmdCtr := n.Counter(ros.CounterCommandsRejected) // rejected and clamped, on /diagnostics
	pub, err := cmdvelnode.Advertise(n, "teleoperation/cmd_vel", cmdvelnode.PublisherOptions{Stamped: stamped,
		Param: cmdvelnode.ParamPublishStamped, Frame: frame})
	if err != nil {
		return err
	}
	_, err = ros.NewSubscription(n, "joy", ros.QoSDefault, func(m *sensor_msgs_msg.Joy) {
		// Live parameters changed since the last message apply from this one.
		if c, ok := live.Changed(); ok { // valid: the group checked it with teleopLive.validate
			_ = tel.SetConfig(c.Config)
			_ = guard.SetLimits(c.Limits)
		}
		lin, ang, ok := tel.Update(joy.State{Axes: m.Axes, Buttons: m.Buttons})
		if !ok {
			return
		}
		r := guard.Check(cmdvel.Twist{Linear: [3]float64{lin}, Angular: [3]float64{2: ang}}, time.Now())
		if r.Verdict != cmdvel.Accepted {
			cmdCtr.Inc()
		}
		if r.Report != nil {
			n.Logger().Warnf("%v", r.Report)
		}
		if r.Verdict == cmdvel.Rejected { // Update zeroes NaN axes; a NaN scale is refused at start
			return
		}
		_ = pub.Publish(cmdvel.Twist{Linear: [3]float64{r.Twist.Linear[0]}, Angular: [3]float64{2: r.Twist.Angular[2]}})
	})
	return err
}

// teleopLive is joy_teleop's live configuration: the teleop mapping (its
// scales live, the rest read-only) and the output limits.
type teleopLive struct {
	Config joy.TeleopConfig
	Limits cmdvel.Limits
}

func (c teleopLive) validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	return c.Limits.Validate()
}
