package ros2

import (
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
)

// Stamped velocity commands (enable_stamped_cmd_vel) with rclcpp on both
// ends: an rclcpp TwistStamped publisher, stamped as Nav2 and
// teleop_twist_joy stamp them, drives our diff_drive_sim (the odometry
// moves); and our mux, fed by such a publisher on its autonomy input,
// drives an rclcpp TwistStamped subscriber with the system default QoS, as
// Jazzy's diff_drive_controller subscribes: what it hears is stamped (not
// zero, near now) in base_link. An rclcpp TwistStamped publisher against
// our Twist simulator gets its warning, naming the rclcpp node.
func TestStampedCmdVelWithRclcpp(t *testing.T) {
	d := newDom(t)
	c := d.context()
	n, err := c.NewNode("stamped_watch", "/test")
	if err != nil {
		t.Fatal(err)
	}

	// rclcpp → our simulator.
	d.start("ours diff_drive_sim", d.ours(), ours("diff_drive_sim"),
		"--ros-args", "-p", "enable_stamped_cmd_vel:=true").waitLine("ready")
	var odom testenv.Latest[nav_msgs_msg.Odometry]
	if _, err := ros.NewSubscription(n, "/odom", ros.QoSDefault, func(m *nav_msgs_msg.Odometry) { odom.Set(m, "") }); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, deadline, "odometry", func() bool { return odom.Get() != nil })
	p0 := odom.Get().Pose.Pose.Position
	d.start("rclcpp twist_stamped_pub /cmd_vel", d.rosEnv(), peerBin(), "twist_stamped_pub", "/cmd_vel", "0.3").waitLine("ready")
	testenv.WaitFor(t, deadline, "the simulated robot to move on rclcpp's TwistStamped commands", func() bool {
		p := odom.Get().Pose.Pose.Position
		return math.Hypot(p.X-p0.X, p.Y-p0.Y) > 0.2
	})

	// rclcpp → our mux (AUTONOMOUS from the start) → rclcpp.
	d.start("ours robot_control_mux", d.ours(), ours("robot_control_mux"), "--ros-args",
		"-p", "enable_stamped_cmd_vel:=true", "-p", "initial_operation_mode:=1",
		"-p", "autonomy_cmd_vel_topic:=/autonomy/cmd_vel", "-p", "cmd_vel_topic:=/mux/cmd_vel")
	sub := d.start("rclcpp twist_stamped_sub /mux/cmd_vel", d.rosEnv(), peerBin(), "twist_stamped_sub", "/mux/cmd_vel")
	sub.waitLine("ready")
	d.start("rclcpp twist_stamped_pub /autonomy/cmd_vel", d.rosEnv(), peerBin(), "twist_stamped_pub", "/autonomy/cmd_vel", "0.25",
		"nav2_frame", "--ros-args", "-r", "__node:=autonomy_pub").waitLine("ready")
	heard := regexp.MustCompile(`^heard: stamp=(\d+)\.(\d{9}) frame=(\S*) x=0\.25 z=0$`)
	line := sub.waitMatch("heard: ... x=0.25", heard.MatchString)
	m := heard.FindStringSubmatch(line)
	sec, _ := strconv.ParseInt(m[1], 10, 64)
	nsec, _ := strconv.ParseInt(m[2], 10, 64)
	stamp := time.Unix(sec, nsec)
	if sec == 0 && nsec == 0 {
		t.Errorf("the mux's command has a zero stamp: %q", line)
	}
	// Both run on the wall clock here: the stamp is the mux's now (the
	// bound only catches a stamp that is not a time at all).
	if age := time.Since(stamp); age < -time.Minute || age > time.Minute {
		t.Errorf("the mux's command is stamped %v, %v from now: %q", stamp, age, line)
	}
	if m[3] != "base_link" {
		t.Errorf("the mux's command is in frame %q, want base_link (its frame_id), not the input's: %q", m[3], line)
	}

	// rclcpp TwistStamped against a Twist simulator (the default): ours
	// names the rclcpp node, its type and the parameter to set, once.
	plain := d.start("ours diff_drive_sim (Twist) in /plain", d.ours(), ours("diff_drive_sim"), "--ros-args", "-r", "__ns:=/plain")
	plain.waitLine("ready")
	d.start("rclcpp twist_stamped_pub /plain/cmd_vel", d.rosEnv(), peerBin(), "twist_stamped_pub", "/plain/cmd_vel", "0.3",
		"--ros-args", "-r", "__node:=nav2_like").waitLine("ready")
	plain.waitLine("/plain/cmd_vel: this node subscribes geometry_msgs/msg/Twist (enable_stamped_cmd_vel is false) but its " +
		"publishers (/nav2_like) send geometry_msgs/msg/TwistStamped: none of their commands arrive. Set enable_stamped_cmd_vel:=true on this node")
}

// `ros2 launch fsmnodes rsm_sim.launch.xml enable_stamped_cmd_vel:=true`
// (launch_ros, from a colcon overlay): the argument reaches the simulator,
// the navigator and the mux, whose cmd_vel the ros2 CLI sees as
// TwistStamped on both ends and echoes stamped in base_link; `ros2 topic
// pub` of TwistStamped teleoperation commands with `header: auto` (restamped
// at every publication) drives the robot.
func TestStampedSimulationLaunchedByROS2(t *testing.T) {
	d := newDom(t)
	if peer.colconErr != nil {
		t.Fatal(peer.colconErr)
	}
	env, err := sourceEnv(d.rosEnv(), filepath.Join(peer.ws, "install", "setup.bash"))
	if err != nil {
		t.Fatal(err)
	}
	d.start("ros2 launch", append(env, "ROS_HOME="+filepath.Join(d.dir, "home")), "ros2", "launch", "fsmnodes", "rsm_sim.launch.xml",
		"enable_stamped_cmd_vel:=true")
	c := d.context()
	waitGraph(t, c, "the simulation's nodes", func() bool {
		return hasNodes(c, "/diff_drive_sim", "/navigator", "/robotControlMuxNode")
	})
	n, err := c.NewNode("stamped_launch_watch", "/test")
	if err != nil {
		t.Fatal(err)
	}
	var odom testenv.Latest[nav_msgs_msg.Odometry]
	if _, err := ros.NewSubscription(n, "/odom", ros.QoSDefault, func(m *nav_msgs_msg.Odometry) { odom.Set(m, "") }); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, deadline, "odometry", func() bool { return odom.Get() != nil })
	p0 := odom.Get().Pose.Pose.Position

	nd := []string{"--no-daemon", "--spin-time", "3"}
	with := func(argv ...string) ros2Cmd { return ros2Cmd{Argv: append(argv, nd...)} }
	res := d.ros2(
		with("param", "get", "/diff_drive_sim", "enable_stamped_cmd_vel").in(0),
		with("param", "get", "/navigator", "enable_stamped_cmd_vel").in(0),
		with("param", "get", "/robotControlMuxNode", "enable_stamped_cmd_vel").in(0),
		with("topic", "info", "-v", "/cmd_vel").in(1),
		ros2Cmd{Argv: []string{"topic", "echo", "--once", "/cmd_vel"}, Timeout: 30}.in(2),
		ros2Cmd{Argv: []string{"topic", "pub", "-r", "10", "-t", "40", "/teleoperation/cmd_vel", "geometry_msgs/msg/TwistStamped",
			"{header: auto, twist: {linear: {x: 0.3}}}"}, Timeout: 60}.in(3),
	)
	for i, r := range res {
		if !r.ok() {
			t.Fatalf("%v", r)
		}
		if i < 3 {
			mustContain(t, strings.Join(r.Argv, " "), r.Stdout, "Boolean value is: True")
		}
	}
	info := res[3].Stdout
	if strings.Contains(info, "geometry_msgs/msg/Twist\n") || strings.Count(info, "Topic type: geometry_msgs/msg/TwistStamped") < 2 {
		t.Errorf("ros2 topic info -v /cmd_vel: want the mux's publisher and the simulator's subscription as TwistStamped:\n%s", info)
	}
	mustContain(t, "ros2 topic echo --once /cmd_vel", res[4].Stdout, "frame_id: base_link")
	p := odom.Get().Pose.Pose.Position
	if moved := math.Hypot(p.X-p0.X, p.Y-p0.Y); moved < 0.2 {
		t.Errorf("the robot moved %.3f m on 4 s of ros2 topic pub at 0.3 m/s, want > 0.2 m", moved)
	}
}
