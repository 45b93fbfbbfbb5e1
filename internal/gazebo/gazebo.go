// Package gazebo writes the files Gazebo loads for this project: the flat of
// the built-in simulator as an SDF world, the fsmbot differential-drive
// base as an SDF model, the hexapod's URDF with the Gazebo systems that
// drive its joints, and the ros_gz_bridge configuration of the hexapod, for
// both Gazebo generations the ROS 2 distributions pair with: Fortress
// (Humble; `ign gazebo`, ignition-gazebo-* systems, the ogre engine) and
// Harmonic (Jazzy; `gz sim`, gz-sim-* systems, ogre2).
//
// The files are committed under worlds/<generation>/ and params/;
// `go test ./internal/gazebo -update` rewrites them, and the tests check that
// the committed files are what this package writes and, where `ign` or `gz`
// is installed, that sdformat accepts them.
package gazebo

import (
	"fmt"
	"math"
	"strings"

	"github.com/fsmnodes/fsmnodes/internal/hexapod"
	"github.com/fsmnodes/fsmnodes/internal/sim"
)

// Gen is one Gazebo generation: the names its command, systems, sensors
// and render engines go by.
type Gen struct {
	// Name is the release ("fortress", "harmonic"), the folder of its files
	// under worlds/ and the value of the launch files' gz_version.
	Name string
	// Major is the Gazebo Sim major version (6, 8), ros_gz's gz_version.
	Major int
	// Command starts the simulator ("ign gazebo", "gz sim").
	Command []string
	// pluginFile and pluginClass make a system's library and class name from
	// its short names ("diff-drive", "DiffDrive").
	pluginFile, pluginClass string
	// frameTag is the sensor element that sets the frame_id of its messages.
	frameTag string
	// RenderEngine is the engine of the Sensors system.
	RenderEngine string
}

// Fortress is Gazebo Fortress (ignition-gazebo 6), ROS 2 Humble's Gazebo.
var Fortress = Gen{Name: "fortress", Major: 6, Command: []string{"ign", "gazebo"},
	pluginFile: "ignition-gazebo-%s-system", pluginClass: "ignition::gazebo::systems::%s",
	frameTag: "ignition_frame_id", RenderEngine: "ogre"}

// Harmonic is Gazebo Harmonic (gz-sim 8), ROS 2 Jazzy's Gazebo.
var Harmonic = Gen{Name: "harmonic", Major: 8, Command: []string{"gz", "sim"},
	pluginFile: "gz-sim-%s-system", pluginClass: "gz::sim::systems::%s",
	frameTag: "gz_frame_id", RenderEngine: "ogre2"}

// Generations lists the generations the project writes files for.
func Generations() []Gen { return []Gen{Fortress, Harmonic} }

// Names of what the files put into Gazebo.
const (
	// WorldName is the <world name> of the flat: Gazebo's services and the
	// spawner (ros_gz_sim create -world) use it.
	WorldName = "fsmnodes_flat"
	// HexapodModel is the model name the hexapod is spawned as.
	HexapodModel = "hexapod"
)

// Files lists the files of one generation relative to the repository root
// with their contents.
func Files(g Gen, hexapodURDF string) (map[string]string, error) {
	hx, err := HexapodURDF(g, hexapodURDF)
	if err != nil {
		return nil, err
	}
	dir := "worlds/" + g.Name + "/"
	return map[string]string{
		dir + WorldName + ".sdf":     WorldSDF(g),
		dir + sim.ModelName + ".sdf": FsmbotSDF(g),
		dir + HexapodModel + ".urdf": hx,
	}, nil
}

// plugin writes a system's <plugin> element with its inner elements.
func (g Gen) plugin(indent, file, class, inner string) string {
	return fmt.Sprintf(`%s<plugin filename="%s" name="%s">%s</plugin>`, indent,
		fmt.Sprintf(g.pluginFile, file), fmt.Sprintf(g.pluginClass, class), inner)
}

type printer struct{ b strings.Builder }

func (p *printer) p(format string, a ...any) { fmt.Fprintf(&p.b, format+"\n", a...) }

// generated is the comment every written file starts with.
func generated(g Gen, what string) string {
	return fmt.Sprintf("<!-- %s for Gazebo %s (%s), written by internal/gazebo; do not edit\n     (go test ./internal/gazebo -update). -->",
		what, strings.ToUpper(g.Name[:1])+g.Name[1:], strings.Join(g.Command, " "))
}

// WorldSDF renders the flat of the built-in simulator (sim.DefaultWalls,
// 0.5 m high walls) as an SDF 1.9 world with the systems the robots need:
// physics (1 ms steps), user commands (the spawner), the scene broadcaster
// and the sensors (the fsmbot's lidar, rendered by g's engine). The robots
// are spawned into it by the launch files.
func WorldSDF(g Gen) string {
	var w printer
	w.p(`<?xml version="1.0"?>`)
	w.p(`%s`, generated(g, "The flat of internal/sim.DefaultWalls"))
	w.p(`<sdf version="1.9">`)
	w.p(`  <world name="%s">`, WorldName)
	w.p(`    <physics name="1ms" type="ignored"><max_step_size>0.001</max_step_size><real_time_factor>1.0</real_time_factor></physics>`)
	w.p(`%s`, g.plugin("    ", "physics", "Physics", ""))
	w.p(`%s`, g.plugin("    ", "user-commands", "UserCommands", ""))
	w.p(`%s`, g.plugin("    ", "scene-broadcaster", "SceneBroadcaster", ""))
	w.p(`%s`, g.plugin("    ", "sensors", "Sensors", "<render_engine>"+g.RenderEngine+"</render_engine>"))
	w.p(`    <light type="directional" name="sun"><cast_shadows>true</cast_shadows><pose>0 0 10 0 0 0</pose><direction>-0.5 0.1 -0.9</direction></light>`)
	w.p(`    <model name="ground_plane"><static>true</static><link name="link">`)
	w.p(`      <collision name="collision"><geometry><plane><normal>0 0 1</normal><size>100 100</size></plane></geometry></collision>`)
	w.p(`      <visual name="visual"><geometry><plane><normal>0 0 1</normal><size>100 100</size></plane></geometry>`)
	w.p(`        <material><ambient>0.8 0.8 0.8 1</ambient><diffuse>0.8 0.8 0.8 1</diffuse></material></visual>`)
	w.p(`    </link></model>`)
	w.p(`    <model name="walls"><static>true</static><link name="link">`)
	for i, r := range sim.DefaultWalls() {
		cx, cy := (r.X0+r.X1)/2, (r.Y0+r.Y1)/2
		geom := fmt.Sprintf("<geometry><box><size>%.3f %.3f 0.5</size></box></geometry>", r.X1-r.X0, r.Y1-r.Y0)
		w.p(`      <collision name="wall%d_collision"><pose>%.3f %.3f 0.25 0 0 0</pose>%s</collision>`, i, cx, cy, geom)
		w.p(`      <visual name="wall%d_visual"><pose>%.3f %.3f 0.25 0 0 0</pose>%s</visual>`, i, cx, cy, geom)
	}
	w.p(`    </link></model>`)
	w.p(`  </world>`)
	w.p(`</sdf>`)
	return w.b.String()
}

// cylinderInertia returns the principal moments of a uniform solid
// cylinder about its centre, its axis along z.
func cylinderInertia(m, r, l float64) (ixx, izz float64) {
	return m * (3*r*r + l*l) / 12, m * r * r / 2
}

// The fsmbot's DiffDrive accelerations, m/s² and rad/s²: within what the
// wheels' friction can give the robot, so they do not slip.
const (
	wheelAccel = 0.5
	turnAccel  = 1.5
)

// Gazebo topics of the fsmbot's wheel odometry (DiffDrive's estimate from
// the wheels, gz.msgs.Odometry and its odom → base_footprint as
// gz.msgs.Pose_V). They are not bridged: sim.TopicOdom carries the robot's
// true pose instead (see FsmbotSDF).
const (
	FsmbotWheelOdomTopic = "wheel_odom"
	FsmbotWheelTFTopic   = "wheel_tf"
)

// FsmbotSDF renders the fsmbot base of the built-in simulator
// (sim.DefaultDiffDrive) as an SDF 1.9 model: a 0.1 m tall body of the
// footprint radius, two wheels on revolute joints and a frictionless rear
// caster, Gazebo's DiffDrive system on sim.TopicCmdVel, the wheels on
// sim.TopicJoints, and a 360° gpu_lidar on sim.TopicScan in frame laser
// with the beams and ranges of the built-in lidar. Its origin is
// base_footprint, on the ground under the axle centre.
//
// sim.TopicOdom carries the robot's true pose in the world (the
// OdometryPublisher system, frames odom → base_footprint), as the built-in
// simulator's odometry does: the navigator and scan_mapper take the odometry
// as the map pose of a robot spawned at the map origin, and DiffDrive's
// wheel odometry drifted 0.1–0.2 m over a minute and a half of exploring,
// enough to smear the map's walls. Fortress's OdometryPublisher publishes no
// transform: the launch files run odom_to_tf for odom → base_footprint.
// DiffDrive's own estimate stays on FsmbotWheelOdomTopic and
// FsmbotWheelTFTopic, inside Gazebo.
func FsmbotSDF(g Gen) string {
	cfg := sim.DefaultDiffDrive()
	rel := func(topic string) string { return strings.TrimPrefix(topic, "/") }
	var w printer
	w.p(`<?xml version="1.0"?>`)
	w.p(`%s`, generated(g, "The fsmbot base of internal/sim.DefaultDiffDrive"))
	w.p(`<sdf version="1.9">`)
	w.p(`  <model name="%s">`, sim.ModelName)
	w.p(`    <link name="%s">`, sim.FrameBase)
	// The centre of mass is behind the axle, so the base rests on its caster.
	bxx, bzz := cylinderInertia(1.0, cfg.Radius, 0.1)
	w.p(`      <inertial><pose>-0.04 0 0.06 0 0 0</pose><mass>1.0</mass><inertia><ixx>%.6f</ixx><iyy>%.6f</iyy><izz>%.6f</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>`, bxx, bxx, bzz)
	body := fmt.Sprintf(`<pose>0 0 0.06 0 0 0</pose><geometry><cylinder><radius>%.3f</radius><length>0.1</length></cylinder></geometry>`, cfg.Radius)
	w.p(`      <collision name="body_collision">%s</collision>`, body)
	w.p(`      <visual name="body_visual">%s`, body)
	w.p(`        <material><ambient>0.2 0.45 0.8 1</ambient><diffuse>0.2 0.45 0.8 1</diffuse></material></visual>`)
	w.p(`      <collision name="caster_collision"><pose>-0.12 0 0.01 0 0 0</pose><geometry><sphere><radius>0.01</radius></sphere></geometry>`)
	w.p(`        <surface><friction><ode><mu>0</mu><mu2>0</mu2></ode></friction></surface></collision>`)
	w.p(`      <visual name="laser_visual"><pose>0 0 %.2f 0 0 0</pose><geometry><cylinder><radius>0.035</radius><length>0.04</length></cylinder></geometry></visual>`, sim.LaserHeight)
	w.p(`      <sensor name="lidar" type="gpu_lidar"><pose>0 0 %.2f 0 0 0</pose><topic>%s</topic><%s>%s</%[3]s><update_rate>10</update_rate>`,
		sim.LaserHeight, rel(sim.TopicScan), g.frameTag, sim.FrameScan)
	w.p(`        <lidar><scan><horizontal><samples>%d</samples><resolution>1</resolution><min_angle>0</min_angle><max_angle>%.6f</max_angle></horizontal></scan>`,
		cfg.ScanBeams, 2*math.Pi*float64(cfg.ScanBeams-1)/float64(cfg.ScanBeams))
	w.p(`          <range><min>%.2f</min><max>%.2f</max><resolution>0.01</resolution></range></lidar>`, cfg.ScanMinRange, cfg.ScanRange)
	w.p(`        <always_on>true</always_on><visualize>false</visualize></sensor>`)
	w.p(`    </link>`)
	wxx, wzz := cylinderInertia(0.1, sim.WheelRadius, 0.02)
	for _, side := range []struct {
		name, joint string
		y           float64
	}{{"left", sim.WheelLeftJoint, sim.WheelSeparation / 2}, {"right", sim.WheelRightJoint, -sim.WheelSeparation / 2}} {
		wheel := fmt.Sprintf(`<geometry><cylinder><radius>%.3f</radius><length>0.02</length></cylinder></geometry>`, sim.WheelRadius)
		w.p(`    <link name="wheel_%s"><pose>0 %.3f %.3f -1.5707963 0 0</pose>`, side.name, side.y, sim.WheelRadius)
		w.p(`      <inertial><mass>0.1</mass><inertia><ixx>%.7f</ixx><iyy>%.7f</iyy><izz>%.7f</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>`, wxx, wxx, wzz)
		w.p(`      <collision name="wheel_%s_collision">%s</collision>`, side.name, wheel)
		w.p(`      <visual name="wheel_%s_visual">%s</visual>`, side.name, wheel)
		w.p(`    </link>`)
		w.p(`    <joint name="%s" type="revolute"><parent>%s</parent><child>wheel_%s</child><axis><xyz>0 0 1</xyz><limit><lower>-1e16</lower><upper>1e16</upper></limit></axis></joint>`,
			side.joint, sim.FrameBase, side.name)
	}
	dd := fmt.Sprintf("\n      <left_joint>%s</left_joint><right_joint>%s</right_joint>", sim.WheelLeftJoint, sim.WheelRightJoint) +
		fmt.Sprintf("\n      <wheel_separation>%.3f</wheel_separation><wheel_radius>%.3f</wheel_radius>", sim.WheelSeparation, sim.WheelRadius) +
		fmt.Sprintf("\n      <max_linear_velocity>%.2f</max_linear_velocity><max_angular_velocity>%.2f</max_angular_velocity>", cfg.MaxLinear, cfg.MaxAngular) +
		// a velocity step slips the wheels, and DiffDrive's odometry counts
		// the wheels: bounded accelerations keep the odometry close to the
		// robot's real motion
		fmt.Sprintf("\n      <max_linear_acceleration>%.1f</max_linear_acceleration><min_linear_acceleration>%.1f</min_linear_acceleration>", wheelAccel, -wheelAccel) +
		fmt.Sprintf("<max_angular_acceleration>%.1f</max_angular_acceleration><min_angular_acceleration>%.1f</min_angular_acceleration>", turnAccel, -turnAccel) +
		fmt.Sprintf("\n      <topic>%s</topic><odom_topic>%s</odom_topic><tf_topic>%s</tf_topic>", rel(sim.TopicCmdVel), FsmbotWheelOdomTopic, FsmbotWheelTFTopic) +
		fmt.Sprintf("\n      <frame_id>%s</frame_id><child_frame_id>%s</child_frame_id><odom_publish_frequency>30</odom_publish_frequency>\n    ", sim.FrameOdom, sim.FrameBase)
	w.p(`%s`, g.plugin("    ", "diff-drive", "DiffDrive", dd))
	w.p(`%s`, g.plugin("    ", "odometry-publisher", "OdometryPublisher",
		fmt.Sprintf("\n      <odom_topic>%s</odom_topic><odom_frame>%s</odom_frame><robot_base_frame>%s</robot_base_frame><dimensions>2</dimensions><odom_publish_frequency>30</odom_publish_frequency>\n    ",
			rel(sim.TopicOdom), sim.FrameOdom, sim.FrameBase)))
	w.p(`%s`, g.plugin("    ", "joint-state-publisher", "JointStatePublisher",
		fmt.Sprintf("<topic>%s</topic><joint_name>%s</joint_name><joint_name>%s</joint_name>", rel(sim.TopicJoints), sim.WheelLeftJoint, sim.WheelRightJoint)))
	w.p(`  </model>`)
	w.p(`</sdf>`)
	return w.b.String()
}

// Gazebo topics of the spawned hexapod.
const (
	// HexapodJointStateTopic carries the measured positions of all 18 joints
	// (gz.msgs.Model from the JointStatePublisher system).
	HexapodJointStateTopic = "/model/" + HexapodModel + "/joint_state"
	// HexapodOdomTopic carries the body's pose in the world frame
	// (gz.msgs.Odometry from the OdometryPublisher system).
	HexapodOdomTopic = "/model/" + HexapodModel + "/odometry"
)

// HexapodJointCommandTopic is the Gazebo topic of a joint's position
// controller (gz.msgs.Double, radians), the system's default name.
func HexapodJointCommandTopic(joint string) string {
	return "/model/" + HexapodModel + "/joint/" + joint + "/0/cmd_pos"
}

// ROS topics of the hexapod's Gazebo bridge, relative to the hexapod's
// namespace: the gazebo servo driver of motion_control publishes a joint's
// goal on HexapodServoCommand(joint) and reads the joints back from
// HexapodServoStates; HexapodOdom is the body's pose in Gazebo's world.
const (
	HexapodServoStates = "servos/joint_states"
	HexapodOdom        = "gazebo/odom"
)

// HexapodServoCommand is the ROS topic (std_msgs/Float64, relative) of a
// joint's goal.
func HexapodServoCommand(joint string) string { return "servos/" + joint + "/command" }

// HexapodURDF returns urdf (urdf/hexapod.urdf) with the Gazebo systems of
// generation g in a <gazebo> element: a JointPositionController per joint,
// moving the joint at up to its velocity limit toward the last position on
// its topic (velocity commands, so the joint's effort limit bounds the
// force), a JointStatePublisher of all joints and an OdometryPublisher of
// the body's pose in 3-D. The feet get the friction of rubber on a floor.
func HexapodURDF(g Gen, urdf string) (string, error) {
	end := strings.LastIndex(urdf, "</robot>")
	if end < 0 {
		return "", fmt.Errorf("gazebo: hexapod URDF has no </robot>")
	}
	for _, j := range hexapod.JointNames() {
		if !strings.Contains(urdf, fmt.Sprintf(`<joint name="%s" type="revolute">`, j)) {
			return "", fmt.Errorf("gazebo: hexapod URDF has no revolute joint %s", j)
		}
	}
	var w printer
	w.p(`  <!-- Gazebo %s: written by internal/gazebo from urdf/hexapod.urdf; do not edit. -->`, g.Name)
	for i := range hexapod.NumLegs {
		w.p(`  <gazebo reference="foot_%s"><mu1>1.0</mu1><mu2>1.0</mu2></gazebo>`, hexapod.LegName(i))
	}
	w.p(`  <gazebo>`)
	for _, j := range hexapod.JointNames() {
		w.p(`%s`, g.plugin("    ", "joint-position-controller", "JointPositionController",
			fmt.Sprintf("<joint_name>%s</joint_name><use_velocity_commands>true</use_velocity_commands><cmd_max>6.2</cmd_max><cmd_min>-6.2</cmd_min>", j)))
	}
	w.p(`%s`, g.plugin("    ", "joint-state-publisher", "JointStatePublisher", "<topic>"+HexapodJointStateTopic+"</topic>"))
	w.p(`%s`, g.plugin("    ", "odometry-publisher", "OdometryPublisher",
		"<odom_frame>world</odom_frame><robot_base_frame>base_link</robot_base_frame><dimensions>3</dimensions>"+
			"<odom_topic>"+HexapodOdomTopic+"</odom_topic><odom_publish_frequency>30</odom_publish_frequency>"))
	w.p(`  </gazebo>`)
	head := strings.Replace(urdf[:end], "<!-- The hexapod", generated(g, "urdf/hexapod.urdf with its Gazebo systems")+"\n<!-- The hexapod", 1)
	return head + w.b.String() + urdf[end:], nil
}

// BridgeEntry is one topic of a ros_gz_bridge configuration file.
type BridgeEntry struct {
	ROSTopic  string `yaml:"ros_topic_name"`
	GZTopic   string `yaml:"gz_topic_name"`
	ROSType   string `yaml:"ros_type_name"`
	GZType    string `yaml:"gz_type_name"`
	Direction string `yaml:"direction"`
}

// HexapodBridge lists the topics the hexapod's ros_gz_bridge carries: a
// goal per joint to its position controller, the measured joints and the
// body's pose back. The ROS names are relative (the bridge runs in the
// hexapod's namespace); gz.msgs names are understood by the bridge of both
// generations (Fortress's also takes ignition.msgs).
func HexapodBridge() []BridgeEntry {
	var es []BridgeEntry
	for _, j := range hexapod.JointNames() {
		es = append(es, BridgeEntry{HexapodServoCommand(j), HexapodJointCommandTopic(j), "std_msgs/msg/Float64", "gz.msgs.Double", "ROS_TO_GZ"})
	}
	return append(es,
		BridgeEntry{HexapodServoStates, HexapodJointStateTopic, "sensor_msgs/msg/JointState", "gz.msgs.Model", "GZ_TO_ROS"},
		BridgeEntry{HexapodOdom, HexapodOdomTopic, "nav_msgs/msg/Odometry", "gz.msgs.Odometry", "GZ_TO_ROS"})
}

// BridgeYAML renders entries as a ros_gz_bridge configuration file under a
// comment.
func BridgeYAML(comment string, entries []BridgeEntry) string {
	var w printer
	for _, l := range strings.Split(strings.TrimSpace(comment), "\n") {
		w.p("# %s", l)
	}
	for _, e := range entries {
		w.p(`- ros_topic_name: "%s"`, e.ROSTopic)
		w.p(`  gz_topic_name: "%s"`, e.GZTopic)
		w.p(`  ros_type_name: "%s"`, e.ROSType)
		w.p(`  gz_type_name: "%s"`, e.GZType)
		w.p(`  direction: %s`, e.Direction)
	}
	return w.b.String()
}
