package simnode

import (
	"context"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/sim"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	tf2_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/tf2_msgs/msg"
)

// OdomTFNodeName is the default name of the odometry-to-tf relay.
const OdomTFNodeName = "odom_to_tf"

// CounterOdomRejected counts odometry messages the relay did not pass on:
// a pose that is not finite, a rotation that is not a unit quaternion, or
// a missing frame id.
const CounterOdomRejected = "odometry_rejected"

// SetupOdomTF turns n into a relay from odometry to tf: each
// nav_msgs/Odometry on odom goes out on /tf as the transform
// header.frame_id → child_frame_id with the odometry's stamp and pose. It
// supplies the transform that an odometry source without one leaves out:
// Gazebo Fortress's OdometryPublisher, the robot's true pose, which the
// Gazebo launch files give the fsmbot in place of the drifting wheel
// odometry. Rejected messages are counted (odometry_rejected on
// /diagnostics) and warned about at most once a second.
func SetupOdomTF(_ context.Context, n *ros.Node) error {
	rejected := n.Counter(CounterOdomRejected)
	log := n.Logger()
	var warned time.Time
	reject := func(format string, a ...any) {
		rejected.Inc()
		if now := time.Now(); now.Sub(warned) > time.Second {
			warned = now
			log.Warnf("odometry not relayed: "+format+" (said at most once a second)", a...)
		}
	}
	pub, err := ros.NewPublisher[tf2_msgs_msg.TFMessage](n, sim.TopicTF, ros.QoSDefault.KeepLast(100))
	if err != nil {
		return err
	}
	out := &tf2_msgs_msg.TFMessage{Transforms: make([]geometry_msgs_msg.TransformStamped, 1)}
	_, err = ros.NewSubscription(n, sim.TopicOdom, ros.QoSDefault.KeepLast(50), func(o *nav_msgs_msg.Odometry) {
		p, q := o.Pose.Pose.Position, o.Pose.Pose.Orientation
		switch {
		case o.Header.FrameId == "" || o.ChildFrameId == "":
			reject("frame %q -> child %q: both must be named", o.Header.FrameId, o.ChildFrameId)
			return
		case !finite(p.X, p.Y, p.Z, q.X, q.Y, q.Z, q.W):
			reject("pose is not finite")
			return
		}
		if norm := q.X*q.X + q.Y*q.Y + q.Z*q.Z + q.W*q.W; norm < 0.99 || norm > 1.01 {
			reject("rotation is not a unit quaternion (norm² %.3g)", norm)
			return
		}
		out.Transforms[0] = geometry_msgs_msg.TransformStamped{
			Header:       o.Header,
			ChildFrameId: o.ChildFrameId,
			Transform: geometry_msgs_msg.Transform{
				Translation: geometry_msgs_msg.Vector3(p),
				Rotation:    q,
			},
		}
		if err := pub.Publish(out); err != nil {
			log.Warnf("publish %s: %v", sim.TopicTF, err)
		}
	})
	return err
}
