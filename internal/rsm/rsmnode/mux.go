package rsmnode

import (
	"context"
	"fmt"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
)

// MuxNodeName is the robot control mux's node name.
const MuxNodeName = "robotControlMuxNode"

// SetupMux declares the mux's parameters and creates its subscriptions,
// publishers, service and timer on n (robotControlMuxNode):
// autonomy/teleoperation Twist inputs (clamped to max_linear_velocity and
// max_angular_velocity; a silent autonomy input falls back to STOPPED after
// autonomy_cmd_vel_timeout), the joystick (only if joystick_used), cmd_vel
// and rsm/operationMode outputs every cycle, and rsm/setOperationMode.
func SetupMux(n *ros.Node) error {
	log := n.Logger()
	period, err := rate(n)
	if err != nil {
		return err
	}
	autoTopic, err := str(n, "autonomy_cmd_vel_topic", "autonomy/cmd_vel", "Twist input used in AUTONOMOUS")
	if err != nil {
		return err
	}
	teleTopic, err := str(n, "teleoperation_cmd_vel_topic", "teleoperation/cmd_vel", "Twist input used in TELEOPERATION")
	if err != nil {
		return err
	}
	outTopic, err := str(n, "cmd_vel_topic", "cmd_vel", "multiplexed Twist output")
	if err != nil {
		return err
	}
	joyUsed, err := ros.DeclareParam(n, "joystick_used", false,
		ros.ParamDescriptor{Description: "whether the joystick switches to TELEOPERATION", ReadOnly: true})
	if err != nil {
		return err
	}
	joyTopic, err := str(n, "joystick_topic", "joy", "sensor_msgs/Joy input (only if joystick_used)")
	if err != nil {
		return err
	}
	idle, err := seconds(n, "teleoperation_idle_timer", 0.5, "seconds without teleoperation input until STOPPED")
	if err != nil {
		return err
	}
	if idle == 0 {
		return fmt.Errorf("parameter teleoperation_idle_timer must be > 0")
	}
	initial, err := ros.DeclareParam(n, "initial_operation_mode", int64(0), ros.ParamDescriptor{
		Description: "operation mode at start: 0 STOPPED (original), 1 AUTONOMOUS, 2 TELEOPERATION", ReadOnly: true})
	if err != nil {
		return err
	}
	if initial < 0 || initial > 2 {
		return fmt.Errorf("parameter initial_operation_mode = %d: want 0 STOPPED, 1 AUTONOMOUS or 2 TELEOPERATION", initial)
	}
	maxLin, err := ros.DeclareParam(n, "max_linear_velocity", rsm.DefaultMaxLinearVelocity, ros.ParamDescriptor{
		Description: "m/s: every linear component of an input command is clamped to ±this", ReadOnly: true})
	if err != nil {
		return err
	}
	maxAng, err := ros.DeclareParam(n, "max_angular_velocity", rsm.DefaultMaxAngularVelocity, ros.ParamDescriptor{
		Description: "rad/s: every angular component of an input command is clamped to ±this", ReadOnly: true})
	if err != nil {
		return err
	}
	limits := cmdvel.Limits{Linear: maxLin, Angular: maxAng}
	if err := limits.Validate(); err != nil {
		return fmt.Errorf("parameter %w", err)
	}
	autoTimeout, err := seconds(n, "autonomy_cmd_vel_timeout", rsm.DefaultAutonomyTimeout.Seconds(),
		"seconds a non-zero autonomy command stays in force without a fresh one; then AUTONOMOUS falls back to STOPPED (0 disables)")
	if err != nil {
		return err
	}
	if autoTimeout == 0 {
		autoTimeout = -1 // disabled
	}
	mux, err := rsm.NewMux(rsm.MuxConfig{TeleopIdle: idle, JoystickUsed: joyUsed,
		Initial: rsm.OperationMode{Mode: rsm.Mode(initial)}, Limits: limits, AutonomyTimeout: autoTimeout, Log: log})
	if err != nil {
		return err
	}
	out, err := ros.NewPublisher[geometry_msgs_msg.Twist](n, outTopic, ros.QoSDefault.KeepLast(1))
	if err != nil {
		return err
	}
	opPub, err := ros.NewPublisher[rsm_msgs_msg.OperationMode](n, Namespace+"operationMode", ros.QoSDefault.KeepLast(1))
	if err != nil {
		return err
	}
	ref := newRefusals(n)
	// Rejected and clamped commands and autonomy timeouts are counted on
	// /diagnostics (commands_rejected, autonomy_timeouts).
	cmdCtr, fallbackCtr := n.Counter(ros.CounterCommandsRejected), n.Counter("autonomy_timeouts")
	var cmdSeen, fallbackSeen uint64
	count := func() {
		if c := mux.Rejections() + mux.Clamps(); c > cmdSeen {
			cmdCtr.Add(c - cmdSeen)
			cmdSeen = c
		}
		if f := mux.Fallbacks(); f > fallbackSeen {
			fallbackCtr.Add(f - fallbackSeen)
			fallbackSeen = f
		}
	}
	warn := func(err error) {
		if err != nil {
			log.Warnf("%v", err)
		}
	}
	clk := n.Clock()
	if _, err := ros.NewSubscription(n, autoTopic, ros.QoSDefault, func(m *geometry_msgs_msg.Twist) {
		warn(mux.OnAutonomy(TwistFromMsg(m), clk.Now()))
	}); err != nil {
		return err
	}
	if _, err := ros.NewSubscription(n, teleTopic, ros.QoSDefault, func(m *geometry_msgs_msg.Twist) {
		warn(mux.OnTeleop(TwistFromMsg(m), clk.Now()))
	}); err != nil {
		return err
	}
	// FIX: the original subscribed to the joystick even with joystick_used=false.
	if joyUsed {
		if _, err := ros.NewSubscription(n, joyTopic, ros.QoSSensorData, func(m *sensor_msgs_msg.Joy) {
			warn(mux.OnJoy(rsm.Joy{Axes: m.Axes, Buttons: m.Buttons}, clk.Now()))
		}); err != nil {
			return err
		}
	}
	if _, err := ros.NewService(n, Namespace+"setOperationMode",
		func(_ context.Context, req *rsm_msgs_srv.SetOperationMode_Request) (*rsm_msgs_srv.SetOperationMode_Response, error) {
			r := ref.check("setOperationMode", mux.SetOperationMode(OperationModeFromMsg(&req.OperationMode)))
			return &rsm_msgs_srv.SetOperationMode_Response{Success: r.Success, Message: r.Message}, nil
		}); err != nil {
		return err
	}
	_, err = n.NewTimer(period, func() {
		tw, op := mux.Tick(clk.Now())
		count()
		t, o := TwistToMsg(tw), OperationModeToMsg(op)
		if err := out.Publish(&t); err != nil {
			log.Errorf("publish %s: %v", outTopic, err)
		}
		if err := opPub.Publish(&o); err != nil {
			log.Errorf("publish operationMode: %v", err)
		}
	})
	return err
}
