// Package joynode adapts internal/joy to ROS 2: the joy driver node (a
// Linux joystick device to sensor_msgs/Joy, like joy_linux's joy_node) and
// the joy_teleop node (sensor_msgs/Joy to a Twist, like teleop_twist_joy).
package joynode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

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

func stamp(t time.Time) builtin_interfaces_msg.Time {
	ns := t.UnixNano()
	return builtin_interfaces_msg.Time{Sec: int32(ns / 1e9), Nanosec: uint32(ns % 1e9)}
}

// SetupJoy turns n into the joystick driver: it reads js_event records
// from the device parameter (default /dev/input/js0) and publishes
// sensor_msgs/Joy on "joy" whenever the state changes, and also every
// 1/autorepeat_rate seconds when autorepeat_rate > 0. A missing or
// unplugged device is reported once and retried every second.
func SetupJoy(ctx context.Context, n *ros.Node) error {
	dev, err := ros.DeclareParam(n, "dev", "/dev/input/js0", ros.ParamDescriptor{Description: "joystick device"})
	if err != nil {
		return err
	}
	deadzone, err := ros.DeclareParam(n, "deadzone", 0.05, ros.ParamDescriptor{Description: "axis deadzone, fraction of full scale"})
	if err != nil {
		return err
	}
	repeat, err := ros.DeclareParam(n, "autorepeat_rate", 0.0, ros.ParamDescriptor{Description: "republish rate in Hz while nothing changes (0: off)"})
	if err != nil {
		return err
	}
	if math.IsNaN(repeat) || repeat < 0 {
		return fmt.Errorf("autorepeat_rate %v must be >= 0", repeat)
	}
	frame, err := ros.DeclareParam(n, "frame_id", "joy", ros.ParamDescriptor{Description: "header frame_id"})
	if err != nil {
		return err
	}
	pub, err := ros.NewPublisher[sensor_msgs_msg.Joy](n, "joy", ros.QoSDefault)
	if err != nil {
		return err
	}
	device, err := joy.NewDevice(deadzone)
	if err != nil {
		return err
	}
	// States are handed to the node goroutine, which owns publishing.
	publish := func(s joy.State) {
		_ = n.Post(func() {
			_ = pub.Publish(&sensor_msgs_msg.Joy{
				Header: headerFor(n, frame), Axes: s.Axes, Buttons: s.Buttons})
		})
	}
	if repeat > 0 {
		if _, err := n.NewTimer(time.Duration(float64(time.Second)/repeat), func() {
			publish(device.State())
		}); err != nil {
			return err
		}
	}
	log := n.Logger()
	go func() {
		warned := false
		for ctx.Err() == nil {
			f, err := os.Open(dev)
			if err != nil {
				if !warned {
					log.Warnf("couldn't open joystick %s (%v); will retry every second", dev, err)
					warned = true
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
				continue
			}
			log.Infof("opened joystick %s", dev)
			warned = false
			go func() { <-ctx.Done(); f.Close() }()
			err = device.ReadEvents(f, publish)
			f.Close()
			if ctx.Err() == nil && !errors.Is(err, io.EOF) {
				log.Warnf("joystick %s: %v; reopening", dev, err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}()
	return nil
}

func headerFor(n *ros.Node, frame string) std_msgs_msg.Header {
	return std_msgs_msg.Header{Stamp: stamp(n.Clock().Now()), FrameId: frame}
}

// SetupTeleop turns n into the joystick teleop: sensor_msgs/Joy on "joy"
// to geometry_msgs/Twist on "teleoperation/cmd_vel" (the RSM control mux's
// teleoperation input), with teleop_twist_joy's parameters and defaults.
func SetupTeleop(_ context.Context, n *ros.Node) error {
	def := joy.DefaultTeleop()
	cfg := def
	var err error
	b := func(dst *bool, name string, v bool) {
		if err == nil {
			*dst, err = ros.DeclareParam(n, name, v, ros.ParamDescriptor{})
		}
	}
	i := func(dst *int, name string, v int) {
		if err == nil {
			var x int64
			x, err = ros.DeclareParam(n, name, int64(v), ros.ParamDescriptor{})
			*dst = int(x)
		}
	}
	f := func(dst *float64, name string, v float64) {
		if err == nil {
			*dst, err = ros.DeclareParam(n, name, v, ros.ParamDescriptor{})
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
	if err != nil {
		return err
	}
	tel, err := joy.NewTeleop(cfg)
	if err != nil {
		return err
	}
	pub, err := ros.NewPublisher[geometry_msgs_msg.Twist](n, "teleoperation/cmd_vel", ros.QoSDefault)
	if err != nil {
		return err
	}
	_, err = ros.NewSubscription(n, "joy", ros.QoSDefault, func(m *sensor_msgs_msg.Joy) {
		lin, ang, ok := tel.Update(joy.State{Axes: m.Axes, Buttons: m.Buttons})
		if ok {
			_ = pub.Publish(&geometry_msgs_msg.Twist{
				Linear: geometry_msgs_msg.Vector3{X: lin}, Angular: geometry_msgs_msg.Vector3{Z: ang}})
		}
	})
	return err
}
