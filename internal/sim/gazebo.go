package sim

import (
	"fmt"
	"strings"
)

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

// WorldSDF renders the default world and the fsmbot robot as an SDF 1.9
// world for Gazebo (gz sim). The walls are DefaultWalls, 0.5 m high; the
// robot is a two-wheeled base with a caster, gz's DiffDrive system on
// TopicCmdVel and a 360° lidar on TopicScan matching DefaultDiffDrive.
func WorldSDF() string {
	cfg := DefaultDiffDrive()
	var b strings.Builder
	p := func(format string, a ...interface{}) { fmt.Fprintf(&b, format+"\n", a...) }
	p(`<?xml version="1.0"?>`)
	p(`<!-- Generated from internal/sim.DefaultWalls by WorldSDF; do not edit (go test ./internal/sim -update). -->`)
	p(`<sdf version="1.9">`)
	p(`  <world name="fsmnodes_flat">`)
	p(`    <physics name="1ms" type="ignored"><max_step_size>0.001</max_step_size><real_time_factor>1.0</real_time_factor></physics>`)
	for _, sys := range [][2]string{{"physics", "Physics"}, {"user-commands", "UserCommands"},
		{"scene-broadcaster", "SceneBroadcaster"}, {"sensors", "Sensors"}} {
		extra := ""
		if sys[0] == "sensors" {
			extra = "<render_engine>ogre2</render_engine>"
		}
		p(`    <plugin filename="gz-sim-%s-system" name="gz::sim::systems::%s">%s</plugin>`, sys[0], sys[1], extra)
	}
	p(`    <light type="directional" name="sun"><cast_shadows>true</cast_shadows><pose>0 0 10 0 0 0</pose><direction>-0.5 0.1 -0.9</direction></light>`)
	p(`    <model name="ground_plane"><static>true</static><link name="link">`)
	p(`      <collision name="collision"><geometry><plane><normal>0 0 1</normal><size>100 100</size></plane></geometry></collision>`)
	p(`      <visual name="visual"><geometry><plane><normal>0 0 1</normal><size>100 100</size></plane></geometry></visual>`)
	p(`    </link></model>`)
	p(`    <model name="walls"><static>true</static><link name="link">`)
	for i, r := range DefaultWalls() {
		cx, cy := (r.X0+r.X1)/2, (r.Y0+r.Y1)/2
		sx, sy := r.X1-r.X0, r.Y1-r.Y0
		geom := fmt.Sprintf("<geometry><box><size>%.3f %.3f 0.5</size></box></geometry>", sx, sy)
		p(`      <collision name="wall%d_c"><pose>%.3f %.3f 0.25 0 0 0</pose>%s</collision>`, i, cx, cy, geom)
		p(`      <visual name="wall%d_v"><pose>%.3f %.3f 0.25 0 0 0</pose>%s</visual>`, i, cx, cy, geom)
	}
	p(`    </link></model>`)
	p(`    <model name="%s"><pose>0 0 0.01 0 0 0</pose>`, ModelName)
	p(`      <link name="%s"><inertial><mass>1.0</mass></inertial>`, FrameBase)
	p(`        <collision name="body"><pose>0 0 0.06 0 0 0</pose><geometry><cylinder><radius>%.3f</radius><length>0.1</length></cylinder></geometry></collision>`, cfg.Radius)
	p(`        <visual name="body"><pose>0 0 0.06 0 0 0</pose><geometry><cylinder><radius>%.3f</radius><length>0.1</length></cylinder></geometry></visual>`, cfg.Radius)
	p(`        <collision name="caster"><pose>-0.12 0 0.01 0 0 0</pose><geometry><sphere><radius>0.01</radius></sphere></geometry>`)
	p(`          <surface><friction><ode><mu>0</mu><mu2>0</mu2></ode></friction></surface></collision>`)
	p(`        <sensor name="lidar" type="gpu_lidar"><pose>0 0 %.2f 0 0 0</pose><topic>%s</topic><gz_frame_id>%s</gz_frame_id><update_rate>10</update_rate>`, LaserHeight, strings.TrimPrefix(TopicScan, "/"), FrameScan)
	p(`          <lidar><scan><horizontal><samples>%d</samples><min_angle>0</min_angle><max_angle>%.6f</max_angle></horizontal></scan>`, cfg.ScanBeams, 2*3.141592653589793*float64(cfg.ScanBeams-1)/float64(cfg.ScanBeams))
	p(`            <range><min>%.2f</min><max>%.2f</max><resolution>0.01</resolution></range></lidar>`, cfg.ScanMinRange, cfg.ScanRange)
	p(`          <always_on>true</always_on><visualize>false</visualize></sensor>`)
	p(`      </link>`)
	for _, side := range []struct {
		name string
		y    float64
	}{{"left", WheelSeparation / 2}, {"right", -WheelSeparation / 2}} {
		p(`      <link name="wheel_%s"><pose>0 %.3f %.3f -1.5707963 0 0</pose><inertial><mass>0.1</mass></inertial>`, side.name, side.y, WheelRadius)
		p(`        <collision name="c"><geometry><cylinder><radius>%.3f</radius><length>0.02</length></cylinder></geometry></collision>`, WheelRadius)
		p(`        <visual name="v"><geometry><cylinder><radius>%.3f</radius><length>0.02</length></cylinder></geometry></visual></link>`, WheelRadius)
		p(`      <joint name="wheel_%s_joint" type="revolute"><parent>%s</parent><child>wheel_%s</child><axis><xyz>0 0 1</xyz></axis></joint>`, side.name, FrameBase, side.name)
	}
	p(`      <plugin filename="gz-sim-diff-drive-system" name="gz::sim::systems::DiffDrive">`)
	p(`        <left_joint>wheel_left_joint</left_joint><right_joint>wheel_right_joint</right_joint>`)
	p(`        <wheel_separation>%.3f</wheel_separation><wheel_radius>%.3f</wheel_radius>`, WheelSeparation, WheelRadius)
	p(`        <max_linear_velocity>%.2f</max_linear_velocity><max_angular_velocity>%.2f</max_angular_velocity>`, cfg.MaxLinear, cfg.MaxAngular)
	p(`        <topic>%s</topic><odom_topic>%s</odom_topic><tf_topic>%s</tf_topic>`, strings.TrimPrefix(TopicCmdVel, "/"), strings.TrimPrefix(TopicOdom, "/"), strings.TrimPrefix(TopicTF, "/"))
	p(`        <frame_id>%s</frame_id><child_frame_id>%s</child_frame_id><odom_publish_frequency>30</odom_publish_frequency>`, FrameOdom, FrameBase)
	p(`      </plugin>`)
	p(`      <plugin filename="gz-sim-joint-state-publisher-system" name="gz::sim::systems::JointStatePublisher">`)
	p(`        <topic>%s</topic><joint_name>%s</joint_name><joint_name>%s</joint_name>`, strings.TrimPrefix(TopicJoints, "/"), WheelLeftJoint, WheelRightJoint)
	p(`      </plugin>`)
	p(`    </model>`)
	p(`  </world>`)
	p(`</sdf>`)
	return b.String()
}
