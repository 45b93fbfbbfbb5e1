package rsmnode

import (
	"context"
	"fmt"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/cmdvel/cmdvelnode"
	"github.com/fsmnodes/fsmnodes/internal/fsm/fsmnode"
	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
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
// and rsm/operationMode outputs every cycle, and rsm/setOperationMode. With
// enable_stamped_cmd_vel the inputs and the output are
// geometry_msgs/TwistStamped (the output stamped with the node clock's now,
// frame frame_id).
func SetupMux(_ context.Context, n *ros.Node) error {
	log := n.Logger()
	d := ros.NewDeclarer(n)
	hz := declareRate(d)
	p := declareMuxParams(d)
	live := declareMuxLive(d)
	p.initial = param.Declare(d, "initial_operation_mode", int64(0), param.Descriptor{
		Description: "operation mode at start: 0 STOPPED (original), 1 AUTONOMOUS, 2 TELEOPERATION " +
			"(read-only: it only applies at start-up; change the mode with rsm/setOperationMode)",
		ReadOnly: true, ReadOnlyReason: "it only applies at start-up; change the mode with rsm/setOperationMode",
		IntegerRange: param.Ints(0, 2)}, nil)
	p.stamped = cmdvelnode.DeclareStamped(d, cmdvelnode.ParamStamped, "the autonomy and teleoperation inputs and the cmd_vel output")
	p.frame = cmdvelnode.DeclareFrame(d, "frame_id", cmdvelnode.DefaultFrame)
	if err := d.Err(); err != nil {
		return err
	}
	tune := live.Get().tuning()
	initialOp := rsm.OperationMode{Mode: rsm.Mode(p.initial)}
	fsmPub, err := fsmnode.New(n, rsm.MuxGraph(initialOp))
	if err != nil {
		return err
	}
	modes := fsmPub.Machine(rsm.MuxMachine)
	mux, err := rsm.NewMux(rsm.MuxConfig{TeleopIdle: tune.TeleopIdle, JoystickUsed: p.joyUsed,
		Initial: initialOp, Limits: tune.Limits, AutonomyTimeout: tune.AutonomyTimeout, Log: log,
		OnChange: func(_, to, cause string) { modes.Observe(to, cause) }})
	if err != nil {
		return err
	}
	outQoS := ros.QoSDefault.KeepLast(1)
	out, err := cmdvelnode.Advertise(n, p.outTopic, cmdvelnode.PublisherOptions{Stamped: p.stamped, Frame: p.frame, QoS: &outQoS})
	if err != nil {
		return err
	}
	opPub, err := ros.NewPublisher[rsm_msgs_msg.OperationMode](n, Namespace+"operationMode", ros.QoSDefault.KeepLast(1))
	if err != nil {
		return err
	}
	ref := newRefusals(n)
	count := muxCounters(n, mux)
	if err := muxInputs(n, p, live, mux); err != nil {
		return err
	}
	if _, err := ros.NewService(n, Namespace+"setOperationMode", rsm_msgs_srv.SetOperationMode,
		func(_ context.Context, req *rsm_msgs_srv.SetOperationMode_Request) (*rsm_msgs_srv.SetOperationMode_Response, error) {
			r := ref.check("setOperationMode", mux.SetOperationMode(OperationModeFromMsg(&req.OperationMode)))
			return &rsm_msgs_srv.SetOperationMode_Response{Success: r.Success, Message: r.Message}, nil
		}); err != nil {
		return err
	}
	clk := n.Clock()
	return tickAt(n, hz, func() {
		// Live parameters changed since the last cycle apply from this one.
		if c, ok := live.Changed(); ok {
			_ = mux.SetTuning(c.tuning()) // valid: the group checked it with rsm.MuxTuning.Validate
		}
		tw, op := mux.Tick(clk.Now())
		count()
		o := OperationModeToMsg(op)
		if err := out.Publish(cmdvelTwist(tw)); err != nil {
			log.Errorf("publish %s: %v", p.outTopic, err)
		}
		if err := opPub.Publish(&o); err != nil {
			log.Errorf("publish operationMode: %v", err)
		}
	})
}

// muxParams are robotControlMuxNode's read-only parameters.
type muxParams struct {
	autoTopic, teleTopic, outTopic string
	joyUsed                        bool
	joyTopic                       string
	initial                        int64 // initial_operation_mode
	stamped                        bool
	frame                          string
}

// declareMuxParams declares the topics and the joystick switch.
func declareMuxParams(d *param.Declarer) muxParams {
	fixedTopic := func(name, def, what string) string {
		return param.Declare(d, name, def, param.ReadOnly(what, "the topic is subscribed or advertised at start-up"), nonEmpty)
	}
	var p muxParams
	p.autoTopic = fixedTopic("autonomy_cmd_vel_topic", "autonomy/cmd_vel", "Twist input used in AUTONOMOUS")
	p.teleTopic = fixedTopic("teleoperation_cmd_vel_topic", "teleoperation/cmd_vel", "Twist input used in TELEOPERATION")
	p.outTopic = fixedTopic("cmd_vel_topic", "cmd_vel", "multiplexed Twist output")
	p.joyUsed = param.Declare(d, "joystick_used", false, param.ReadOnly("whether the joystick switches to TELEOPERATION",
		"the joystick is subscribed at start-up only when used"), nil)
	p.joyTopic = fixedTopic("joystick_topic", "joy", "sensor_msgs/Joy input (only if joystick_used)")
	return p
}

// muxCounters returns the function that adds the mux's rejected and
// clamped commands and its autonomy timeouts since its last call to
// /diagnostics (commands_rejected, autonomy_timeouts).
func muxCounters(n *ros.Node, mux *rsm.Mux) func() {
	cmdCtr, fallbackCtr := n.Counter(ros.CounterCommandsRejected), n.Counter("autonomy_timeouts")
	var cmdSeen, fallbackSeen uint64
	return func() {
		if c := mux.Rejections() + mux.Clamps(); c > cmdSeen {
			cmdCtr.Add(c - cmdSeen)
			cmdSeen = c
		}
		if f := mux.Fallbacks(); f > fallbackSeen {
			fallbackCtr.Add(f - fallbackSeen)
			fallbackSeen = f
		}
	}
}

// muxInputs subscribes the mux's inputs: autonomy and teleoperation
// commands and, if used, the joystick. A stamped command counts from its
// stamp: older than the input's timer (autonomy_cmd_vel_timeout,
// teleoperation_idle_timer) it is ignored as if it had not come
// (cmdvel.Stamps).
func muxInputs(n *ros.Node, p muxParams, live *param.Group[muxLive], mux *rsm.Mux) error {
	log := n.Logger()
	warn := func(err error) {
		if err != nil {
			log.Warnf("%v", err)
		}
	}
	clk := n.Clock()
	if _, err := cmdvelnode.Subscribe(n, p.autoTopic, cmdvelnode.SubscriptionOptions{Stamped: p.stamped, Input: "autonomy cmd_vel",
		Timeout: func() time.Duration { return live.Get().AutonomyTimeout }}, func(c cmdvelnode.Command) {
		warn(mux.OnAutonomy(rsmTwist(c.Twist), c.At))
	}); err != nil {
		return err
	}
	if _, err := cmdvelnode.Subscribe(n, p.teleTopic, cmdvelnode.SubscriptionOptions{Stamped: p.stamped, Input: "teleoperation cmd_vel",
		Timeout: func() time.Duration { return live.Get().Idle }}, func(c cmdvelnode.Command) {
		warn(mux.OnTeleop(rsmTwist(c.Twist), c.At))
	}); err != nil {
		return err
	}
	// FIX: the original subscribed to the joystick even with joystick_used=false.
	if p.joyUsed {
		if _, err := ros.NewSubscription(n, p.joyTopic, ros.QoSSensorData, func(m *sensor_msgs_msg.Joy) {
			warn(mux.OnJoy(rsm.Joy{Axes: m.Axes, Buttons: m.Buttons}, clk.Now()))
		}); err != nil {
			return err
		}
	}
	return nil
}

// rsmTwist converts a command to the state machine's type.
func rsmTwist(t cmdvel.Twist) rsm.Twist {
	return rsm.Twist{Linear: geom.Vec3{X: t.Linear[0], Y: t.Linear[1], Z: t.Linear[2]},
		Angular: geom.Vec3{X: t.Angular[0], Y: t.Angular[1], Z: t.Angular[2]}}
}

// cmdvelTwist converts the state machine's command for cmdvelnode.
func cmdvelTwist(t rsm.Twist) cmdvel.Twist {
	return cmdvel.Twist{Linear: [3]float64{t.Linear.X, t.Linear.Y, t.Linear.Z},
		Angular: [3]float64{t.Angular.X, t.Angular.Y, t.Angular.Z}}
}

// declareMuxLive declares the mux's live parameters: the idle and
// autonomy timeouts and the velocity limits.
func declareMuxLive(d *param.Declarer) *param.Group[muxLive] {
	return param.DeclareGroup(d, muxLive{Idle: 500 * time.Millisecond, AutonomyTimeout: rsm.DefaultAutonomyTimeout,
		Limits: cmdvel.Limits{Linear: rsm.DefaultMaxLinearVelocity, Angular: rsm.DefaultMaxAngularVelocity}}, muxLive.validate,
		append([]param.GroupField[muxLive]{
			param.DurationField("teleoperation_idle_timer", func(c *muxLive) *time.Duration { return &c.Idle }, param.Descriptor{
				Description: "seconds without teleoperation input until STOPPED (live: a running timer gets the new length)",
				FloatRange:  param.Floats(0, 3600)}),
			param.DurationField("autonomy_cmd_vel_timeout", func(c *muxLive) *time.Duration { return &c.AutonomyTimeout }, param.Descriptor{
				Description: "seconds a non-zero autonomy command stays in force without a fresh one; then AUTONOMOUS falls back " +
					"to STOPPED (0 disables; live)",
				FloatRange: param.Floats(0, 3600)}),
		}, cmdvelnode.LimitFields(func(c *muxLive) *cmdvel.Limits { return &c.Limits }, "an input command")...)...)
}

// muxLive is the mux's live configuration as its parameters hold it:
// autonomy_cmd_vel_timeout 0 disables the timeout.
type muxLive struct {
	Idle, AutonomyTimeout time.Duration
	Limits                cmdvel.Limits
}

// tuning is c as the mux takes it (a disabled timeout is negative).
func (c muxLive) tuning() rsm.MuxTuning {
	t := rsm.MuxTuning{TeleopIdle: c.Idle, Limits: c.Limits, AutonomyTimeout: c.AutonomyTimeout}
	if t.AutonomyTimeout == 0 {
		t.AutonomyTimeout = -1 // disabled
	}
	return t
}

// validate is the mux's own check; the parameter refuses an idle time of
// 0, which the mux would take as its default.
func (c muxLive) validate() error {
	if err := positiveDuration(c.Idle); err != nil {
		return fmt.Errorf("teleoperation_idle_timer = %v: %w", c.Idle.Seconds(), err)
	}
	return c.tuning().Validate()
}
