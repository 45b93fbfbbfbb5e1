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
	"go.uber.org/zap"
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
	if _, err := fsmnode.NewManaged(l); err != nil {
		return err
	}
	s, err := newDiffDriveSim(l)
	if err != nil {
		return err
	}
	s.onLifecycle()
	if s.pubs, err = newDrivePubs(l, s.publishClock); err != nil {
		return err
	}
	s.cmdCtr = s.n.Counter(ros.CounterCommandsRejected)
	if _, err := cmdvelnode.Subscribe(s.n, sim.TopicCmdVel, cmdvelnode.SubscriptionOptions{Stamped: s.stamped, Input: "cmd_vel",
		Now: s.now, Timeout: func() time.Duration { return s.cmdTimeout }}, s.command); err != nil {
		return err
	}
	l.OnActivate(s.activate)
	_, err = s.n.NewWallTimer(s.step, s.tick)
	return err
}

// diffDriveSim is diff_drive_sim's state. Every method runs on the node's
// callback goroutine (or in setup before it runs).
type diffDriveSim struct {
	l   *lifecycle.Node
	n   *ros.Node
	log *zap.SugaredLogger

	step, mapEvery time.Duration // the simulation step and the /map period (wall time)
	start          sim.Pose2D
	publishClock   bool
	stamped        bool
	cmdTimeout     time.Duration // a stamped command older than this is ignored; a younger one holds for the rest of it
	limits         *param.Group[cmdvel.Limits]
	guard          *cmdvel.Guard
	cmdCtr         *ros.Counter // commands rejected and clamped, on /diagnostics

	robot      *sim.DiffDrive
	configured *sim.DiffDrive // the robot of the current configuration: nil while unconfigured
	pubs       *drivePubs
	simTime    time.Time // the simulation's time, advanced by each step
	sinceMap   time.Duration
	sinceScan  time.Duration
}

// scanEvery is the /scan period.
const scanEvery = 100 * time.Millisecond

// newDiffDriveSim declares diff_drive_sim's parameters and builds the
// robot at its start pose.
func newDiffDriveSim(l *lifecycle.Node) (*diffDriveSim, error) {
	n := l.Node()
	d := ros.NewDeclarer(n)
	s := &diffDriveSim{l: l, n: n, log: n.Logger(), simTime: time.Unix(0, 0)}
	s.step = rate(d, "rate", 50, "simulation steps per second")
	s.mapEvery = rate(d, "map_rate", 2, "/map publications per second")
	startX := param.Declare(d, "start_x", 0.0, fixed("start position x in the map frame, m"), nil)
	startY := param.Declare(d, "start_y", 0.0, fixed("start position y in the map frame, m"), nil)
	startYaw := param.Declare(d, "start_yaw", 0.0, fixed("start heading, rad"), nil)
	s.publishClock = param.Declare(d, "publish_clock", false, fixed("publish /clock from the simulation time (for use_sim_time)"), nil)
	cfg := sim.DefaultDiffDrive()
	s.limits = cmdvelnode.DeclareLimits(d, cmdvel.Limits{Linear: cfg.MaxLinear, Angular: cfg.MaxAngular}, "cmd_vel")
	s.stamped = cmdvelnode.DeclareStamped(d, cmdvelnode.ParamStamped, "cmd_vel")
	if err := d.Err(); err != nil {
		return nil, err
	}
	var err error
	if s.guard, err = cmdvel.NewGuard("cmd_vel", s.limits.Get()); err != nil {
		return nil, fmt.Errorf("parameter %w", err)
	}
	cfg.MaxLinear, cfg.MaxAngular = s.limits.Get().Linear, s.limits.Get().Angular
	s.start = sim.Pose2D{X: startX, Y: startY, Theta: startYaw}
	if s.robot, err = sim.NewDiffDrive(cfg, sim.DefaultWorld(), s.start); err != nil {
		return nil, err
	}
	s.cmdTimeout = time.Duration(cfg.CmdTimeout * float64(time.Second))
	return s, nil
}

// onLifecycle registers the transitions but activation: configure places
// a new robot at the start pose, cleanup, shutdown and error drop it, and
// deactivate stops it (to stand still when activated again).
func (s *diffDriveSim) onLifecycle() {
	s.l.OnConfigure(func(lifecycle.State) lifecycle.Result {
		r, err := sim.NewDiffDrive(s.robot.Config(), sim.DefaultWorld(), s.start)
		if err != nil {
			s.log.Errorf("configure: %v", err)
			return lifecycle.Failure
		}
		s.robot, s.configured = r, r
		return lifecycle.Success
	})
	release := func(lifecycle.State) lifecycle.Result { s.configured = nil; return lifecycle.Success }
	s.l.OnCleanup(release)
	s.l.OnShutdown(release)
	s.l.OnError(release)
	s.l.OnDeactivate(func(lifecycle.State) lifecycle.Result {
		_ = s.robot.Command(0, 0)
		return lifecycle.Success
	})
}

// activate publishes map → odom and the map seen so far (both latched).
func (s *diffDriveSim) activate(lifecycle.State) lifecycle.Result {
	now := s.n.Clock().Now()
	static := &tf2_msgs_msg.TFMessage{Transforms: []geometry_msgs_msg.TransformStamped{
		{Header: header(now, sim.FrameMap), ChildFrameId: sim.FrameOdom,
			Transform: geometry_msgs_msg.Transform{Rotation: yawQuat(0)}},
	}}
	if err := s.pubs.tfStatic.Publish(static); err != nil {
		s.log.Errorf("activate: publish %s: %v", sim.TopicTFStat, err)
		return lifecycle.Failure
	}
	_ = s.pubs.grid.Publish(gridToMsg(s.robot.Seen(), now, sim.FrameMap))
	return lifecycle.Success
}

// now is the simulation's clock: sim time when it publishes /clock, else
// the node clock. Its stamps and the age of stamped commands are in it.
func (s *diffDriveSim) now() time.Time {
	if s.pubs.clock != nil {
		return s.simTime
	}
	return s.n.Clock().Now()
}

// applyLimits takes live limits changed since the last command or step:
// they apply from this one.
func (s *diffDriveSim) applyLimits() {
	l, ok := s.limits.Changed()
	if !ok {
		return
	}
	_ = s.guard.SetLimits(l) // valid: the group checked it with cmdvel.Limits.Validate
	_ = s.robot.SetLimits(l.Linear, l.Angular)
	s.log.Infof("velocity limits now %g m/s, %g rad/s", l.Linear, l.Angular)
}

// command takes one cmd_vel while active: checked by the guard (rejected
// and clamped ones counted and reported), then commanded with its age.
func (s *diffDriveSim) command(c cmdvelnode.Command) {
	if !s.l.Active() {
		return // not active: commands are not integrated
	}
	s.applyLimits()
	r := s.guard.Check(c.Twist, time.Now())
	if r.Verdict != cmdvel.Accepted {
		s.cmdCtr.Inc()
	}
	if r.Report != nil {
		s.log.Warnf("%v", r.Report)
	}
	if r.Verdict == cmdvel.Rejected {
		return // the previous command stays in force until it times out
	}
	// Finite and within the limits.
	_ = s.robot.CommandAged(r.Twist.Linear[0], r.Twist.Angular[2], s.now().Sub(c.At).Seconds())
}

// tick is one simulation step while active and configured: the robot
// moves, /clock advances (with publish_clock), and odometry, TF and joint
// states go out every step, /scan and /map at their own periods.
func (s *diffDriveSim) tick() {
	if !s.l.Active() || s.configured == nil {
		return // not active: the world stands still
	}
	s.applyLimits()
	s.robot.Step(s.step.Seconds())
	s.simTime = s.simTime.Add(s.step)
	t := s.n.Clock().Now()
	if s.pubs.clock != nil {
		t = s.simTime
		_ = s.pubs.clock.Publish(&rosgraph_msgs_msg.Clock{Clock: builtin_interfaces_msg.TimeOf(s.simTime)})
	}
	s.pubs.state(s.robot, t)
	if s.sinceScan += s.step; s.sinceScan >= scanEvery {
		s.sinceScan = 0
		s.pubs.scanOf(s.robot, t, scanEvery)
	}
	if s.sinceMap += s.step; s.sinceMap >= s.mapEvery {
		s.sinceMap = 0
		_ = s.pubs.grid.Publish(gridToMsg(s.robot.Seen(), t, sim.FrameMap))
	}
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
