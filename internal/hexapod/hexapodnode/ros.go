package hexapodnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel/cmdvelnode"
	"github.com/fsmnodes/fsmnodes/internal/fsm/fsmnode"
	"github.com/fsmnodes/fsmnodes/internal/gazebo"
	"github.com/fsmnodes/fsmnodes/internal/hexapod"
	"github.com/fsmnodes/fsmnodes/internal/hexapod/dynamixel"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/lifecycle"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// NodeName is the default node name, the original's.
const NodeName = "hexapod_controller"

// Run starts the motion_control node with the command line args (without
// the program name) and blocks until ctx is cancelled or the process gets
// SIGINT/SIGTERM. On the way out the servos are freed.
//
// Interface: subscriptions cmd_vel (geometry_msgs/Twist, or TwistStamped
// with enable_stamped_cmd_vel) and joy
// (sensor_msgs/Joy); services ~/start_stop, ~/stand_up, ~/sit_down and
// ~/stand_walk (std_srvs/Trigger, success=false with the reason when the FSM
// ignores the command); publications joint_states (sensor_msgs/JointState,
// 18 joints, every tick) and ~/state (std_msgs/String, transient local, on
// change). Parameters take their values from --params-file and -p (see
// params/hexapod.yaml); the gait speeds and lift height, posing gains, input
// timeouts and velocity limits may be set while the node runs (Live), the
// rest are read-only.
//
// The node is a managed (lifecycle) node: configure opens the servos,
// activate starts the controller (a fresh FSM), deactivate frees the
// servos (torque off) and stops it, cleanup and shutdown close the servo
// port. It configures and activates itself at start unless the parameter
// autostart is false.
func Run(ctx context.Context, args []string) error {
	return lifecycle.Run(ctx, args, NodeName, Setup)
}

// Setup creates the controller's entities on the managed node l (the
// template of lifecycle.Run): it loads the settings, wires the topics,
// services and the gait timer, and registers the transitions that open,
// drive, free and close the servos. Nothing is driven until l is active.
func Setup(_ context.Context, l *lifecycle.Node) error {
	n := l.Node()
	log := n.Logger()
	s, err := LoadSettings(ros.NewDeclarer(n))
	if err != nil {
		return err
	}
	a, err := NewAdapter(s, nil, log) // checks the settings; drives nothing until activated
	if err != nil {
		return err
	}
	_ = a.Deactivate() // no servos yet
	var gz *hexapod.GazeboServos
	if s.ServoDriver == "gazebo" {
		if gz, err = gazeboServos(n, s.JointNames, log); err != nil {
			return err
		}
	}
	var servos hexapod.ServoDriver
	var closer io.Closer
	release := func() {
		if servos == nil {
			return
		}
		if err := servos.SetTorque(false); err != nil {
			log.Warnf("servos: torque off: %v", err)
		}
		if closer != nil {
			if err := closer.Close(); err != nil {
				log.Warnf("servo port: %v", err)
			}
		}
		servos, closer = nil, nil
	}
	l.OnConfigure(func(lifecycle.State) lifecycle.Result {
		if gz != nil {
			servos, closer = gz, nil
		} else {
			servos, closer = openServos(s, log, n.Clock().Now)
		}
		return lifecycle.Success
	})
	l.OnActivate(func(lifecycle.State) lifecycle.Result {
		if err := a.Activate(servos); err != nil {
			log.Errorf("activate: %v", err)
			return lifecycle.Failure
		}
		if err := a.SetTunables(s.Live.Get()); err != nil {
			log.Errorf("activate: %v", err)
			_ = a.Deactivate()
			return lifecycle.Failure
		}
		return lifecycle.Success
	})
	stop := func(lifecycle.State) lifecycle.Result {
		if err := a.Deactivate(); err != nil {
			log.Warnf("deactivate: %v", err)
		}
		return lifecycle.Success
	}
	l.OnDeactivate(stop)
	l.OnCleanup(func(lifecycle.State) lifecycle.Result { release(); return lifecycle.Success })
	l.OnShutdown(func(p lifecycle.State) lifecycle.Result { stop(p); release(); return lifecycle.Success })
	l.OnError(func(p lifecycle.State) lifecycle.Result { stop(p); release(); return lifecycle.Success })
	period := time.Duration(float64(time.Second) / s.Controller.Gait.Rate)
	fsmPub, err := fsmnode.NewManaged(l, hexapod.Graph(s.Controller, period))
	if err != nil {
		return err
	}
	if err := wire(l, a, s.Live, s.StampedCmdVel, period, fsmPub.Machine(hexapod.FSMMachine)); err != nil {
		return err
	}
	log.Infof("hexapod controller at %v Hz with %s servos", s.Controller.Gait.Rate, s.ServoDriver)
	return nil
}

// openServos returns the configured servo driver. When the serial port
// cannot be opened it logs the error and runs on simulated servos, as the
// original kept running without its servo bus. Simulated servos move in the
// node's time (now), like the gait that drives them.
func openServos(s Settings, log Logger, now func() time.Time) (hexapod.ServoDriver, io.Closer) {
	if s.ServoDriver == "dynamixel" {
		port, err := dynamixel.OpenSerial(s.SerialPort, s.BaudRate)
		if err == nil {
			d, derr := dynamixel.New(port, s.Servos)
			if derr == nil {
				return d, port
			}
			port.Close()
			err = derr
		}
		log.Errorf("servo bus unavailable, using simulated servos: %v", err)
	}
	return hexapod.NewSimServos(now, hexapod.Joints{}), nil
}

// gazeboServos returns the servo driver "gazebo": a std_msgs/Float64
// publisher per joint on servos/<joint>/command (the joint's target,
// radians, which ros_gz_bridge hands to Gazebo's position controller of
// that joint) and a subscription to servos/joint_states, the joints as
// Gazebo measured them (bridged from its JointStatePublisher). Reports
// that do not fit (lengths differ, a position not finite) are dropped and
// counted as malformed_samples on /diagnostics. The targets move at the
// servo speed in the node's time, so under use_sim_time in Gazebo's.
func gazeboServos(n *ros.Node, names []string, log Logger) (*hexapod.GazeboServos, error) {
	pubs := make([]*ros.Publisher[std_msgs_msg.Float64], len(names))
	for i, name := range names {
		p, err := ros.NewPublisher[std_msgs_msg.Float64](n, gazebo.HexapodServoCommand(name), ros.QoSDefault)
		if err != nil {
			return nil, fmt.Errorf("servo driver gazebo: %w", err)
		}
		pubs[i] = p
	}
	g, err := hexapod.NewGazeboServos(n.Clock().Now, names, hexapod.Joints{}, func(t *hexapod.Joints) error {
		var errs []error
		for i, p := range pubs {
			if err := p.Publish(&std_msgs_msg.Float64{Data: t[i]}); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", names[i], err))
			}
		}
		return errors.Join(errs...)
	})
	if err != nil {
		return nil, err
	}
	bad := n.Counter(ros.CounterMalformedSamples)
	var warned time.Time
	if _, err := ros.NewSubscription(n, gazebo.HexapodServoStates, ros.QoSDefault, func(m *sensor_msgs_msg.JointState) {
		if err := g.JointStates(m.Name, m.Position); err != nil {
			bad.Add(1)
			if now := time.Now(); now.Sub(warned) > time.Second {
				warned = now
				log.Warnf("%s dropped: %v", gazebo.HexapodServoStates, err)
			}
		}
	}); err != nil {
		return nil, err
	}
	return g, nil
}

// wire creates the node's topics, services and timer around the adapter.
// The gait and the command and stick timeouts run on the node clock, so
// under use_sim_time the hexapod walks in sim time (a paused simulation
// pauses the gait; the servos keep their last goal positions).
func wire(l *lifecycle.Node, a *Adapter, live *param.Group[Tunables], stamped bool, period time.Duration, motion *fsmnode.Machine) error {
	n := l.Node()
	clk := n.Clock()
	js, err := lifecycle.NewPublisher[sensor_msgs_msg.JointState](l, "joint_states", ros.QoSDefault)
	if err != nil {
		return err
	}
	state, err := lifecycle.NewPublisher[std_msgs_msg.String](l, "~/state", ros.QoSLatched)
	if err != nil {
		return err
	}
	// Rejected and clamped velocities are counted on /diagnostics.
	cmdCtr := n.Counter(ros.CounterCommandsRejected)
	var counted uint64
	count := func() {
		rej, cl := a.Counts()
		if c := rej + cl; c > counted {
			cmdCtr.Add(c - counted)
			counted = c
		}
	}
	// A stamped command counts from its stamp; one older than
	// cmd_vel_timeout is ignored (cmdvel.Stamps).
	if _, err := cmdvelnode.Subscribe(n, "cmd_vel", cmdvelnode.SubscriptionOptions{Stamped: stamped,
		Timeout: func() time.Duration { return live.Get().CmdVelTimeout }}, func(c cmdvelnode.Command) {
		_ = a.CmdVel(c.Twist.Linear, c.Twist.Angular, c.At)
		count()
	}); err != nil {
		return err
	}
	if _, err := ros.NewSubscription(n, "joy", ros.QoSDefault, func(m *sensor_msgs_msg.Joy) {
		stamp := float64(m.Header.Stamp.Sec) + float64(m.Header.Stamp.Nanosec)/1e9
		_ = a.Joy(hexapod.Joy{Stamp: stamp, Axes: m.Axes, Buttons: m.Buttons}, clk.Now())
		count()
	}); err != nil {
		return err
	}
	for _, c := range []hexapod.Command{hexapod.CmdStartStop, hexapod.CmdStandUp, hexapod.CmdSitDown, hexapod.CmdStandWalk} {
		cmd := c
		if _, err := ros.NewService(n, "~/"+cmd.String(), std_srvs_srv.Trigger,
			func(_ context.Context, _ *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
				ok, msg := a.Command(cmd)
				return &std_srvs_srv.Trigger_Response{Success: ok, Message: msg}, nil
			}); err != nil {
			return err
		}
	}
	log := n.Logger()
	_, err = n.NewTimer(period, func() {
		if !a.Active() {
			return // not active: the servos are not driven
		}
		now := clk.Now()
		// Live parameters changed since the last tick apply from this one.
		if t, ok := live.Changed(); ok {
			_ = a.SetTunables(t) // valid: the group checked it with Tunables.validate
		}
		r := a.Tick(now)
		msg := sensor_msgs_msg.JointState{
			Header:   std_msgs_msg.Header{Stamp: builtin_interfaces_msg.TimeOf(now)},
			Name:     r.Names,
			Position: r.Positions,
		}
		if err := js.Publish(&msg); err != nil {
			a.warnEvery("publish", now, "publish joint_states: %v", err)
		}
		if r.StateChanged {
			if err := state.Publish(&std_msgs_msg.String{Data: r.State}); err != nil {
				log.Errorf("publish ~/state: %v", err)
			}
		}
		if r.Restarted {
			motion.Restart("activate (a fresh controller)")
		}
		motion.Observe(r.State, r.Cause)
	})
	return err
}
