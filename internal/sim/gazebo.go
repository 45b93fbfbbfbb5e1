package sim

import "strings"

// Topics of the built-in differential-drive simulator (nodes/diff_drive_sim)
// and of the navigator and frontier detector. Relative names resolve in the
// node's namespace, so a launch file can put a robot in a namespace; TF and
// the clock are absolute, as in ROS 2. The Gazebo launch files bridge
// exactly these names (see params/gz_bridge.yaml), so the rest of the
// system cannot tell the two simulators apart.
const (
	TopicCmdVel = "cmd_vel"      // geometry_msgs/msg/Twist, in
	TopicOdom   = "odom"         // nav_msgs/msg/Odometry, out
	TopicTF     = "/tf"          // tf2_msgs/msg/TFMessage, out (odom -> base_footprint)
	TopicTFStat = "/tf_static"   // tf2_msgs/msg/TFMessage, out (map -> odom)
	TopicJoints = "joint_states" // sensor_msgs/msg/JointState, out (the wheels)
	TopicScan   = "scan"         // sensor_msgs/msg/LaserScan, out (frame laser)
	TopicMap    = "map"          // nav_msgs/msg/OccupancyGrid, out (what the robot has seen)
	TopicClock  = "/clock"       // rosgraph_msgs/msg/Clock, out when publish_clock is true
)

// Frame names used by the simulators, and the robot's dimensions. The
// frames follow REP 105: map → odom → base_footprint (the simulator) →
// base_link → laser (urdf/diffbot.urdf through robot_state_publisher).
const (
	FrameMap        = "map"
	FrameOdom       = "odom"
	FrameBase       = "base_footprint"
	FrameBaseLink   = "base_link"
	FrameScan       = "laser"
	ModelName       = "fsmbot"
	WheelRadius     = 0.033
	WheelSeparation = 0.16
	LaserHeight     = 0.15 // lidar above the ground, m
	WheelLeftJoint  = "wheel_left_joint"
	WheelRightJoint = "wheel_right_joint"
)

// WheelJoints returns the joints of the simulator's joint_states, left
// first.
func WheelJoints() []string { return []string{WheelLeftJoint, WheelRightJoint} }

// SimTopics lists every ROS topic the built-in simulator node publishes or
// subscribes, as it resolves in the root namespace, with its type. Tests
// check the Gazebo bridge against it.
func SimTopics() map[string]string {
	abs := func(name string) string { return "/" + strings.TrimPrefix(name, "/") }
	return map[string]string{
		abs(TopicCmdVel): "geometry_msgs/msg/Twist",
		abs(TopicOdom):   "nav_msgs/msg/Odometry",
		abs(TopicTF):     "tf2_msgs/msg/TFMessage",
		abs(TopicTFStat): "tf2_msgs/msg/TFMessage",
		abs(TopicJoints): "sensor_msgs/msg/JointState",
		abs(TopicScan):   "sensor_msgs/msg/LaserScan",
		abs(TopicMap):    "nav_msgs/msg/OccupancyGrid",
		abs(TopicClock):  "rosgraph_msgs/msg/Clock",
	}
}
