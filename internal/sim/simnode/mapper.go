package simnode

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/rsm/rsmnode"
	"github.com/fsmnodes/fsmnodes/internal/rsm/tf"
	"github.com/fsmnodes/fsmnodes/internal/sim"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	tf2_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/tf2_msgs/msg"
)

// MapperNodeName is the default name of the scan mapper.
const MapperNodeName = "scan_mapper"

// CounterScansSkipped counts scans the mapper could not place: no odometry
// at their time, no transform from the base to the scan's frame, or a
// malformed scan.
const CounterScansSkipped = "scans_skipped"

// CounterScansTurning counts scans left out because the robot turned faster
// than max_turn_rate when they were taken.
const CounterScansTurning = "scans_turning"

// SetupMapper turns n into an occupancy mapper for a robot with exact
// odometry (Gazebo's), where slam_toolbox is not wanted or not installed:
// it places every scan (sensor_msgs/LaserScan) at the odometry pose
// (nav_msgs/Odometry on odom, interpolated at the scan's stamp) composed
// with the scan frame's place on the robot (base_frame → the scan's frame
// from /tf_static or /tf, robot_state_publisher's), enters it into a grid
// (sim.Mapper) and publishes the grid on map (nav_msgs/OccupancyGrid,
// frame map_frame, transient local) at map_rate on the node clock. With
// publish_map_to_odom (default true) it also publishes map_frame →
// odom_frame as the identity on /tf_static: the odometry of a robot
// spawned at the map origin is its map pose, which is what slam_toolbox
// would publish for it. Scans it cannot place are counted as scans_skipped
// on /diagnostics and warned about once a second; with max_turn_rate > 0,
// scans taken while the robot turned faster are left out, counted as
// scans_turning.
func SetupMapper(_ context.Context, n *ros.Node) error {
	d := ros.NewDeclarer(n)
	def := sim.DefaultMapperConfig()
	res := param.Declare(d, "resolution", def.Resolution, fixed("map cell size, m"), param.Positive)
	width := param.Declare(d, "width", int64(def.Width), param.Descriptor{Description: "map width, cells (read-only: " + startupOnly + ")",
		ReadOnly: true, ReadOnlyReason: startupOnly, IntegerRange: param.Ints(1, 10000)}, nil)
	height := param.Declare(d, "height", int64(def.Height), param.Descriptor{Description: "map height, cells (read-only: " + startupOnly + ")",
		ReadOnly: true, ReadOnlyReason: startupOnly, IntegerRange: param.Ints(1, 10000)}, nil)
	ox := param.Declare(d, "origin_x", def.OriginX, fixed("map x of the corner of cell (0, 0), m"), nil)
	oy := param.Declare(d, "origin_y", def.OriginY, fixed("map y of the corner of cell (0, 0), m"), nil)
	every := rate(d, "map_rate", 1, "map publications per second")
	mapFrame := param.Declare(d, "map_frame", sim.FrameMap, fixed("frame of the map"), nil)
	odomFrame := param.Declare(d, "odom_frame", sim.FrameOdom, fixed("frame of the odometry"), nil)
	baseFrame := param.Declare(d, "base_frame", sim.FrameBase, fixed("the robot frame the odometry places"), nil)
	mapToOdom := param.Declare(d, "publish_map_to_odom", true, fixed("publish map_frame -> odom_frame as the identity on /tf_static"), nil)
	maxTurn := param.Declare(d, "max_turn_rate", 0.0, param.Descriptor{
		Description: "leave out scans taken while the robot turns faster than this, rad/s (0: every scan); a lidar whose scans lag or lead their stamps smears the walls while turning (read-only: " + startupOnly + ")",
		ReadOnly:    true, ReadOnlyReason: startupOnly, FloatRange: param.Floats(0, 100)}, nil)
	if err := d.Err(); err != nil {
		return err
	}
	m, err := sim.NewMapper(sim.MapperConfig{Width: int(width), Height: int(height), Resolution: res, OriginX: ox, OriginY: oy})
	if err != nil {
		return fmt.Errorf("parameter %w", err)
	}
	log := n.Logger()
	skipped := n.Counter(CounterScansSkipped)
	turning := n.Counter(CounterScansTurning)
	var warned time.Time
	skip := func(format string, a ...any) {
		skipped.Inc()
		if now := time.Now(); now.Sub(warned) > time.Second {
			warned = now
			log.Warnf("scan skipped: "+format+" (said at most once a second)", a...)
		}
	}
	history := sim.NewPoseHistory(200) // 200 poses: several seconds of odometry
	buf := tf.NewBuffer()
	buf.Now = n.Clock().Now

	mapPub, err := ros.NewPublisher[nav_msgs_msg.OccupancyGrid](n, sim.TopicMap, ros.QoSLatched)
	if err != nil {
		return err
	}
	if mapToOdom {
		pub, err := ros.NewPublisher[tf2_msgs_msg.TFMessage](n, sim.TopicTFStat, ros.QoSLatched)
		if err != nil {
			return err
		}
		if err := pub.Publish(&tf2_msgs_msg.TFMessage{Transforms: []geometry_msgs_msg.TransformStamped{{
			Header:       header(n.Clock().Now(), mapFrame),
			ChildFrameId: odomFrame,
			Transform:    geometry_msgs_msg.Transform{Rotation: geometry_msgs_msg.Quaternion{W: 1}},
		}}}); err != nil {
			return fmt.Errorf("publish %s -> %s: %w", mapFrame, odomFrame, err)
		}
	}
	onTF := func(static bool) func(*tf2_msgs_msg.TFMessage) {
		return func(msg *tf2_msgs_msg.TFMessage) {
			for i := range msg.Transforms {
				_ = buf.Set(rsmnode.TransformFromMsg(&msg.Transforms[i], static)) // bad ones are dropped
			}
		}
	}
	if _, err := ros.NewSubscription(n, sim.TopicTF, ros.QoSDefault.KeepLast(100), onTF(false)); err != nil {
		return err
	}
	if _, err := ros.NewSubscription(n, sim.TopicTFStat, ros.QoSLatched.KeepLast(100), onTF(true)); err != nil {
		return err
	}
	if _, err := ros.NewSubscription(n, sim.TopicOdom, ros.QoSDefault.KeepLast(50), func(o *nav_msgs_msg.Odometry) {
		p := o.Pose.Pose
		_ = history.Add(stampSeconds(o.Header.Stamp), sim.Pose2D{X: p.Position.X, Y: p.Position.Y, Theta: quatYaw(p.Orientation)})
	}); err != nil {
		return err
	}
	if _, err := ros.NewSubscription(n, sim.TopicScan, ros.QoSSensorData, func(s *sensor_msgs_msg.LaserScan) {
		t := stampSeconds(s.Header.Stamp)
		base, ok := history.At(t, 0.1)
		if !ok {
			skip("no %s within 0.1 s of the scan's stamp %.3f", sim.TopicOdom, t)
			return
		}
		if maxTurn > 0 {
			if turn, ok := history.TurnRate(t, 0.1); ok && turn > maxTurn {
				turning.Inc()
				return
			}
		}
		laser, err := buf.Lookup(baseFrame, tf.Frame(s.Header.FrameId))
		if err != nil {
			skip("%s -> %s: %v", baseFrame, s.Header.FrameId, err)
			return
		}
		yaw := laser.Orientation.Yaw()
		c, sn := math.Cos(base.Theta), math.Sin(base.Theta)
		pose := sim.Pose2D{
			X:     base.X + c*laser.Position.X - sn*laser.Position.Y,
			Y:     base.Y + sn*laser.Position.X + c*laser.Position.Y,
			Theta: base.Theta + yaw,
		}
		if err := m.Add(pose, sim.Scan{AngleMin: float64(s.AngleMin), AngleIncrement: float64(s.AngleIncrement),
			RangeMin: float64(s.RangeMin), RangeMax: float64(s.RangeMax), Ranges: s.Ranges}); err != nil {
			skip("%v", err)
		}
	}); err != nil {
		return err
	}
	_, err = n.NewTimer(every, func() {
		if m.Scans() == 0 {
			return
		}
		if err := mapPub.Publish(gridToMsg(m.Grid(), n.Clock().Now(), mapFrame)); err != nil {
			log.Warnf("publish %s: %v", sim.TopicMap, err)
		}
	})
	return err
}

// stampSeconds returns a message stamp in seconds.
func stampSeconds(t builtin_interfaces_msg.Time) float64 {
	return float64(t.Sec) + float64(t.Nanosec)/1e9
}
