package simnode

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/cmdvel/cmdvelnode"
	"github.com/fsmnodes/fsmnodes/internal/fsm/fsmnode"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/lifecycle"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/sim"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	rosgraph_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rosgraph_msgs/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	tf2_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/tf2_msgs/msg"
)

// DriveNodeName is the default name of the differential-drive simulator.
const DriveNodeName = "diff_drive_sim"

// SetupDiffDrive turns n into the built-in stand-in for Gazebo plus
// ros_gz_bridge: a differential-drive robot in the default world. It reads
// /cmd_vel (clamped to max_linear_velocity and max_angular_velocity, which
// may be changed at run time) and publishes /odom, /tf (odom →
// base_footprint), /tf_static (map → odom: the odometry is perfect),
// joint_states (the two wheels, as Gazebo's JointStatePublisher), /scan
// (frame laser) and the /map the robot has seen so far (transient-local,
// like a map server), and /clock when publish_clock is true. The robot's
// own frames (base_footprint → base_link → laser, the wheels) come from
// robot_state_publisher with urdf/diffbot.urdf, as with Gazebo. Non-finite
// commands are rejected; rejections and clamps are counted and logged once
// per episode, at most every 5 s. With enable_stamped_cmd_vel, cmd_vel is
// geometry_msgs/TwistStamped, as Jazzy's diff_drive_controller takes it: a
// command stamped longer ago than the command timeout (0.5 s, in the
// simulation's clock) is ignored, a younger one holds for the rest of it,
// and a zero stamp is taken as now (cmdvel.Stamps).
//
// n is a managed (lifecycle) node: configure places the robot at its start
// pose, activate starts the simulation (stepping, the publications,
// commands), deactivate stops the robot and freezes the world (no step, no
// odom, tf, scan, map or /clock; commands are ignored), cleanup and shutdown
// drop the robot. With the default autostart it runs from the start.
func SetupDiffDrive(_ context.Context, l *lifecycle.Node) error {
	n := l.Node()
	log := n.Logger()
	d := ros.NewDeclarer(n)
	if _, err := fsmnode.NewManaged(l); err != nil {
		return err
	}
	step := rate(d, "rate", 50, "simulation steps per second")
	mapEvery := rate(d, "map_rate", 2, "/map publications per second")
	startX := param.Declare(d, "start_x", 0.0, fixed("start position x in the map frame, m"), nil)
	startY := param.Declare(d, "start_y", 0.0, fixed("start position y in the map frame, m"), nil)
	startYaw := param.Declare(d, "start_yaw", 0.0, fixed("start heading, rad"), nil)
	pubClock := param.Declare(d, "publish_clock", false, fixed("publish /clock from the simulation time (for use_sim_time)"), nil)
	cfg := sim.DefaultDiffDrive()
	limits := cmdvelnode.DeclareLimits(d, cmdvel.Limits{Linear: cfg.MaxLinear, Angular: cfg.MaxAngular}, "cmd_vel")
	stamped := cmdvelnode.DeclareStamped(d, cmdvelnode.ParamStamped, "cmd_vel")
	if err := d.Err(); err != nil {
		return err
	}
	guard, err := cmdvel.NewGuard("cmd_vel", limits.Get())
	if err != nil {
		return fmt.Errorf("parameter %w", err)
	}
	cfg.MaxLinear, cfg.MaxAngular = limits.Get().Linear, limits.Get().Angular
	start := sim.Pose2D{X: startX, Y: startY, Theta: startYaw}
	robot, err := sim.NewDiffDrive(cfg, sim.DefaultWorld(), start)
	if err != nil {
		return err
	}
	// The robot of the current configuration: nil while unconfigured. Every
	// use is on the node's callback goroutine (or in setup before it runs).
	var configured *sim.DiffDrive
	l.OnConfigure(func(lifecycle.State) lifecycle.Result {
		r, err := sim.NewDiffDrive(robot.Config(), sim.DefaultWorld(), start)
		if err != nil {
			log.Errorf("configure: %v", err)
			return lifecycle.Failure
		}
		robot, configured = r, r
		return lifecycle.Success
	})
	release := func(lifecycle.State) lifecycle.Result { configured = nil; return lifecycle.Success }
	l.OnCleanup(release)
	l.OnShutdown(release)
	l.OnError(release)
	l.OnDeactivate(func(lifecycle.State) lifecycle.Result {
		_ = robot.Command(0, 0) // stand still when activated again
		return lifecycle.Success
	})
	// Live limits changed since the last command or step apply from this one
	// (both run on the node's callback goroutine).
	applyLimits := func() {
		l, ok := limits.Changed()
		if !ok {
			return
		}
		_ = guard.SetLimits(l) // valid: the group checked it with cmdvel.Limits.Validate
		_ = robot.SetLimits(l.Linear, l.Angular)
		log.Infof("velocity limits now %g m/s, %g rad/s", l.Linear, l.Angular)
	}

	pubs, err := newDrivePubs(l, pubClock)
	if err != nil {
		return err
	}
	clockPub, mapPub := pubs.clock, pubs.grid

	// The simulation's clock: sim time when it publishes /clock, else the
	// node clock. Its stamps and the age of stamped commands are in it.
	simTime := time.Unix(0, 0)
	simNow := func() time.Time {
		if clockPub != nil {
			return simTime
		}
		return n.Clock().Now()
	}
	cmdCtr := n.Counter(ros.CounterCommandsRejected) // rejected and clamped, on /diagnostics
	// A stamped command older than the command timeout is ignored; a
	// younger one holds for the rest of it.
	cmdTimeout := time.Duration(cfg.CmdTimeout * float64(time.Second))
	if _, err := cmdvelnode.Subscribe(n, sim.TopicCmdVel, cmdvelnode.SubscriptionOptions{Stamped: stamped, Input: "cmd_vel",
		Now: simNow, Timeout: func() time.Duration { return cmdTimeout }}, func(c cmdvelnode.Command) {
		if !l.Active() {
			return // not active: commands are not integrated
		}
		applyLimits()
		r := guard.Check(c.Twist, time.Now())
		if r.Verdict != cmdvel.Accepted {
			cmdCtr.Inc()
		}
		if r.Report != nil {
			log.Warnf("%v", r.Report)
		}
		if r.Verdict == cmdvel.Rejected {
			return // the previous command stays in force until it times out
		}
		// Finite and within the limits.
		_ = robot.CommandAged(r.Twist.Linear[0], r.Twist.Angular[2], simNow().Sub(c.At).Seconds())
	}); err != nil {
		return err
	}

	// Activation publishes map → odom and the map seen so far (both latched).
	l.OnActivate(func(lifecycle.State) lifecycle.Result {
		now := n.Clock().Now()
		static := &tf2_msgs_msg.TFMessage{Transforms: []geometry_msgs_msg.TransformStamped{
			{Header: header(now, sim.FrameMap), ChildFrameId: sim.FrameOdom,
				Transform: geometry_msgs_msg.Transform{Rotation: yawQuat(0)}},
		}}
		if err := pubs.tfStatic.Publish(static); err != nil {
			log.Errorf("activate: publish %s: %v", sim.TopicTFStat, err)
			return lifecycle.Failure
		}
		_ = mapPub.Publish(gridToMsg(robot.Seen(), now, sim.FrameMap))
		return lifecycle.Success
	})

	dt := step.Seconds()
	var sinceMap, sinceScan time.Duration
	scanEvery := 100 * time.Millisecond
	_, err = n.NewWallTimer(step, func() {
		if !l.Active() || configured == nil {
			return // not active: the world stands still
		}
		applyLimits()
		robot.Step(dt)
		simTime = simTime.Add(step)
		t := n.Clock().Now()
		if clockPub != nil {
			t = simTime
			_ = clockPub.Publish(&rosgraph_msgs_msg.Clock{Clock: builtin_interfaces_msg.TimeOf(simTime)})
		}
		pubs.state(robot, t)
		if sinceScan += step; sinceScan >= scanEvery {
			sinceScan = 0
			pubs.scanOf(robot, t, scanEvery)
		}
		if sinceMap += step; sinceMap >= mapEvery {
			sinceMap = 0
			_ = mapPub.Publish(gridToMsg(robot.Seen(), t, sim.FrameMap))
		}
	})
	return err
}

// drivePubs are diff_drive_sim's publishers.
type drivePubs struct {
	odom         *lifecycle.Publisher[nav_msgs_msg.Odometry]
	tf, tfStatic *lifecycle.Publisher[tf2_msgs_msg.TFMessage]
	joints       *lifecycle.Publisher[sensor_msgs_msg.JointState]
	scan         *lifecycle.Publisher[sensor_msgs_msg.LaserScan]
	grid         *lifecycle.Publisher[nav_msgs_msg.OccupancyGrid]
	clock        *lifecycle.Publisher[rosgraph_msgs_msg.Clock] // nil without publish_clock
}

func newDrivePubs(l *lifecycle.Node, clock bool) (*drivePubs, error) {
	var p drivePubs
	var err error
	if p.odom, err = lifecycle.NewPublisher[nav_msgs_msg.Odometry](l, sim.TopicOdom, ros.QoSDefault); err != nil {
		return nil, err
	}
	if p.tf, err = lifecycle.NewPublisher[tf2_msgs_msg.TFMessage](l, sim.TopicTF, ros.QoSDefault.KeepLast(100)); err != nil {
		return nil, err
	}
	if p.tfStatic, err = lifecycle.NewPublisher[tf2_msgs_msg.TFMessage](l, sim.TopicTFStat, ros.QoSLatched); err != nil {
		return nil, err
	}
	if p.joints, err = lifecycle.NewPublisher[sensor_msgs_msg.JointState](l, sim.TopicJoints, ros.QoSDefault); err != nil {
		return nil, err
	}
	if p.scan, err = lifecycle.NewPublisher[sensor_msgs_msg.LaserScan](l, sim.TopicScan, ros.QoSSensorData); err != nil {
		return nil, err
	}
	if p.grid, err = lifecycle.NewPublisher[nav_msgs_msg.OccupancyGrid](l, sim.TopicMap, ros.QoSLatched); err != nil {
		return nil, err
	}
	if clock {
		if p.clock, err = lifecycle.NewPublisher[rosgraph_msgs_msg.Clock](l, sim.TopicClock, ros.QoSClock); err != nil {
			return nil, err
		}
	}
	return &p, nil
}

// state publishes the robot's odometry, odom → base_link and its wheel
// joints, stamped t.
func (p *drivePubs) state(robot *sim.DiffDrive, t time.Time) {
	pose := robot.Pose()
	v, w := robot.Twist()
	odom := &nav_msgs_msg.Odometry{Header: header(t, sim.FrameOdom), ChildFrameId: sim.FrameBase}
	odom.Pose.Pose.Position = geometry_msgs_msg.Point{X: pose.X, Y: pose.Y}
	odom.Pose.Pose.Orientation = yawQuat(pose.Theta)
	odom.Twist.Twist.Linear.X = v
	odom.Twist.Twist.Angular.Z = w
	_ = p.odom.Publish(odom)
	_ = p.tf.Publish(&tf2_msgs_msg.TFMessage{Transforms: []geometry_msgs_msg.TransformStamped{{
		Header: header(t, sim.FrameOdom), ChildFrameId: sim.FrameBase,
		Transform: geometry_msgs_msg.Transform{
			Translation: geometry_msgs_msg.Vector3{X: pose.X, Y: pose.Y},
			Rotation:    yawQuat(pose.Theta)},
	}}})
	wheelPos, wheelVel := robot.Wheels()
	_ = p.joints.Publish(&sensor_msgs_msg.JointState{
		Header:   header(t, ""),
		Name:     sim.WheelJoints(),
		Position: wheelPos[:],
		Velocity: wheelVel[:],
	})
}

// scanOf publishes the robot's laser scan, stamped t, taken every period.
func (p *drivePubs) scanOf(robot *sim.DiffDrive, t time.Time, period time.Duration) {
	ranges := robot.Scan()
	inc := 2 * math.Pi / float64(len(ranges))
	_ = p.scan.Publish(&sensor_msgs_msg.LaserScan{
		Header:   header(t, sim.FrameScan),
		AngleMin: 0, AngleMax: float32(2*math.Pi - inc), AngleIncrement: float32(inc),
		ScanTime: float32(period.Seconds()), RangeMin: float32(robot.Config().ScanMinRange), RangeMax: float32(robot.Config().ScanRange),
		Ranges: ranges,
	})
}
