// Package joynode adapts internal/joy to ROS 2: the joy driver node (a
// Linux joystick device to sensor_msgs/Joy, like joy_linux's joy_node) and
// the joy_teleop node (sensor_msgs/Joy to a Twist, like teleop_twist_joy).
package joynode

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/joy"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
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
	ro := func(desc string) ros.ParamDescriptor { return ros.ParamDescriptor{Description: desc, ReadOnly: true} }
	cfg := joy.DefaultConfig()
	var err error
	str := func(name, def, desc string) string {
		if err != nil {
			return def
		}
		var v string
		v, err = ros.DeclareParam(n, name, def, ro(desc))
		return v
	}
	flt := func(name string, def float64, desc string) float64 {
		if err != nil {
			return def
		}
		var v float64
		v, err = ros.DeclareParam(n, name, def, ro(desc))
		return v
	}
	boolean := func(name string, def bool, desc string) bool {
		if err != nil {
			return def
		}
		var v bool
		v, err = ros.DeclareParam(n, name, def, ro(desc))
		return v
	}
	const defaultDev = "/dev/input/js0"
	dev := str("dev", defaultDev, "joystick device")
	devName := str("dev_name", "", "use the first /dev/input/js* whose name contains this (empty: use dev)")
	var id int64
	if err == nil {
		id, err = ros.DeclareParam(n, "device_id", int64(0),
			ro("joystick index as in ROS 2 joy: with dev left at its default, N opens /dev/input/jsN"))
	}
	cfg.Deadzone = flt("deadzone", cfg.Deadzone, "axis deadzone, fraction of the range [-1, 1]")
	cfg.AutorepeatRate = flt("autorepeat_rate", cfg.AutorepeatRate, "republish rate in Hz while nothing changes (0: off)")
	coalesce := flt("coalesce_interval", cfg.CoalesceInterval.Seconds(), "seconds during which axis events are gathered into one message")
	cfg.StickyButtons = boolean("sticky_buttons", cfg.StickyButtons, "a press toggles the button")
	cfg.DefaultTrigVal = boolean("default_trig_val", cfg.DefaultTrigVal, "publish the axis values reported when the device opens")
	frame := str("frame_id", "joy", "header frame_id")
	if err != nil {
		return err
	}
	if math.IsNaN(coalesce) || math.IsInf(coalesce, 0) {
		return fmt.Errorf("parameter coalesce_interval = %v is not finite", coalesce)
	}
	cfg.CoalesceInterval = time.Duration(coalesce * float64(time.Second))
	if id < 0 || id > 255 {
		return fmt.Errorf("parameter device_id = %d outside 0..255", id)
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
	d := &joy.Driver{Config: cfg, Dev: dev, DevName: devName, Log: log,
		Publish: func(s joy.State) {
			if err := pub.Publish(&sensor_msgs_msg.Joy{Header: headerFor(n, frame), Axes: s.Axes, Buttons: s.Buttons}); err != nil {
				log.Errorf("publish joy: %v", err)
			}
		}}
	// The driver loop lives as long as the node; Run waits for it to end
	// before the node closes.
	n.Context().Go(d.Run)
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
// The parameters are read at start-up (read-only, the reason in the
// descriptor).
func SetupTeleop(_ context.Context, n *ros.Node) error {
	def := joy.DefaultTeleop()
	cfg := def
	var err error
	ro := ros.ParamDescriptor{ReadOnly: true, AdditionalConstraints: "read at start-up: restart the node to change it"}
	b := func(dst *bool, name string, v bool) {
		if err == nil {
			*dst, err = ros.DeclareParam(n, name, v, ro)
		}
	}
	i := func(dst *int, name string, v int) {
		if err == nil {
			var x int64
			x, err = ros.DeclareParam(n, name, int64(v), ro)
			*dst = int(x)
		}
	}
	f := func(dst *float64, name string, v float64) {
		if err == nil {
			*dst, err = ros.DeclareParam(n, name, v, ro)
		}
	}
	b(&cfg.RequireEnableButton, "require_enable_button", def.RequireEnableButton)
	i(&cfg.EnableButton, "enable_button", def.EnableButton)
	i(&cfg.TurboButton, "enable_turbo_button", def.TurboButton)
	i(&cfg.AxisLinearX, "axis_linear.x", def.AxisLinearX)
	f(&cfg.ScaleLinearX, "scale_linear.x", def.ScaleLinearX)
	f(&cfg.TurboLinearX, "scale_linear_turbo.x", def.TurboLinearX)
	i(&cfg.AxisAngularYaw, "axis_angular.yaw", def.AxisAngularYaw)
	f(&cfg.ScaleAngularYaw, "scale_angular.yaw", def.ScaleAngularYaw)
	f(&cfg.TurboAngularYaw, "scale_angular_turbo.yaw", def.TurboAngularYaw)
	limits := cmdvel.Limits{Linear: DefaultTeleopMaxLinear, Angular: DefaultTeleopMaxAngular}
	f(&limits.Linear, "max_linear_velocity", limits.Linear)
	f(&limits.Angular, "max_angular_velocity", limits.Angular)
	if err != nil {
		return err
	}
	tel, err := joy.NewTeleop(cfg)
	if err != nil {
		return err
	}
	guard, err := cmdvel.NewGuard("joy_teleop output", limits)
	if err != nil {
		return fmt.Errorf("parameter %w", err)
	}
	cmdCtr := n.Counter(ros.CounterCommandsRejected) // rejected and clamped, on /diagnostics
	pub, err := ros.NewPublisher[geometry_msgs_msg.Twist](n, "teleoperation/cmd_vel", ros.QoSDefault)
	if err != nil {
		return err
	}
	_, err = ros.NewSubscription(n, "joy", ros.QoSDefault, func(m *sensor_msgs_msg.Joy) {
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
		_ = pub.Publish(&geometry_msgs_msg.Twist{
			Linear: geometry_msgs_msg.Vector3{X: r.Twist.Linear[0]}, Angular: geometry_msgs_msg.Vector3{Z: r.Twist.Angular[2]}})
	})
	return err
}
