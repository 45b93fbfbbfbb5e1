package rsmnode

import (
	"context"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
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
	d := ros.NewDeclarer(n)
	hz := declareRate(d)
	fixedTopic := func(name, def, what string) string {
		return param.Declare(d, name, def, param.ReadOnly(what, "the topic is subscribed or advertised at start-up"), nonEmpty)
	}
	autoTopic := fixedTopic("autonomy_cmd_vel_topic", "autonomy/cmd_vel", "Twist input used in AUTONOMOUS")
	teleTopic := fixedTopic("teleoperation_cmd_vel_topic", "teleoperation/cmd_vel", "Twist input used in TELEOPERATION")
	outTopic := fixedTopic("cmd_vel_topic", "cmd_vel", "multiplexed Twist output")
	joyUsed := param.Declare(d, "joystick_used", false, param.ReadOnly("whether the joystick switches to TELEOPERATION",
		"the joystick is subscribed at start-up only when used"), nil)
	joyTopic := fixedTopic("joystick_topic", "joy", "sensor_msgs/Joy input (only if joystick_used)")
	idle := param.DeclareLiveDuration(d, "teleoperation_idle_timer", 500*time.Millisecond, param.Descriptor{
		Description: "seconds without teleoperation input until STOPPED (live: a running timer gets the new length)",
		FloatRange:  param.Floats(0, 3600)}, positiveDuration)
	initial := param.Declare(d, "initial_operation_mode", int64(0), param.Descriptor{
		Description: "operation mode at start: 0 STOPPED (original), 1 AUTONOMOUS, 2 TELEOPERATION " +
			"(read-only: it only applies at start-up; change the mode with rsm/setOperationMode)",
		ReadOnly: true, ReadOnlyReason: "it only applies at start-up; change the mode with rsm/setOperationMode",
		IntegerRange: param.Ints(0, 2)}, nil)
	maxLin, maxAng := declareLimits(d, "an input command")
	autoTimeout := param.DeclareLiveDuration(d, "autonomy_cmd_vel_timeout", rsm.DefaultAutonomyTimeout, param.Descriptor{
		Description: "seconds a non-zero autonomy command stays in force without a fresh one; then AUTONOMOUS falls back " +
			"to STOPPED (0 disables; live)",
		FloatRange: param.Floats(0, 3600)}, nil)
	if err := d.Err(); err != nil {
		return err
	}
	tuning := func() rsm.MuxTuning {
		t := rsm.MuxTuning{TeleopIdle: idle.Get(), Limits: cmdvel.Limits{Linear: maxLin.Get(), Angular: maxAng.Get()},
			AutonomyTimeout: autoTimeout.Get()}
		if t.AutonomyTimeout == 0 {
			t.AutonomyTimeout = -1 // disabled
		}
		return t
	}
	tune := tuning()
	mux, err := rsm.NewMux(rsm.MuxConfig{TeleopIdle: tune.TeleopIdle, JoystickUsed: joyUsed,
		Initial: rsm.OperationMode{Mode: rsm.Mode(initial)}, Limits: tune.Limits, AutonomyTimeout: tune.AutonomyTimeout, Log: log})
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
	if _, err := ros.NewService(n, Namespace+"setOperationMode", rsm_msgs_srv.SetOperationMode,
		func(_ context.Context, req *rsm_msgs_srv.SetOperationMode_Request) (*rsm_msgs_srv.SetOperationMode_Response, error) {
			r := ref.check("setOperationMode", mux.SetOperationMode(OperationModeFromMsg(&req.OperationMode)))
			return &rsm_msgs_srv.SetOperationMode_Response{Success: r.Success, Message: r.Message}, nil
		}); err != nil {
		return err
	}
	return tickAt(n, hz, func() {
		// Live parameters changed since the last cycle apply from this one.
		if t := tuning(); t != tune {
			if err := mux.SetTuning(t); err != nil {
				log.Errorf("new tuning refused: %v", err) // the parameter checks make this unreachable
			} else {
				tune = t
			}
		}
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
}
