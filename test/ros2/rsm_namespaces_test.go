package ros2

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/rsm"
)

// TestRSMPerNamespaceLaunchedByROS2: ros2 launch runs rsm.launch.xml
// included in the namespaces robot1 and robot2 (docs/rsm.md#one-rsm-per-robot)
// as fsmnodes launch does: each robot's nodes take relative velocity
// topics, and each service provider its own waypoint file under ROS_HOME,
// derived by launch_ros's ros_namespace configuration; a waypoint added to
// robot1 with the ros2 CLI lands in robot1's file only.
func TestRSMPerNamespaceLaunchedByROS2(t *testing.T) {
	d := newDom(t)
	if peer.colconErr != nil {
		t.Fatal(peer.colconErr)
	}
	home := filepath.Join(d.dir, "home")
	file := filepath.Join(d.dir, "robots.launch.xml")
	var body strings.Builder
	body.WriteString("<launch>\n")
	for _, ns := range []string{"robot1", "robot2"} {
		body.WriteString(`  <group>
    <push_ros_namespace namespace="` + ns + `"/>
    <include file="$(find-pkg-share fsmnodes)/launch/rsm.launch.xml"/>
  </group>
`)
	}
	body.WriteString("</launch>\n")
	if err := os.WriteFile(file, []byte(body.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	env, err := sourceEnv(d.rosEnv(), filepath.Join(peer.ws, "install", "setup.bash"))
	if err != nil {
		t.Fatal(err)
	}
	d.start("ros2 launch", append(env, "ROS_HOME="+home), "ros2", "launch", file)

	c := d.context()
	waitGraph(t, c, "both robots' RSM nodes", func() bool {
		return hasNodes(c, "/robot1/serviceProviderNode", "/robot2/serviceProviderNode",
			"/robot1/robotControlMuxNode", "/robot2/robotControlMuxNode")
	})
	nd := []string{"--no-daemon", "--spin-time", "3"}
	with := func(argv ...string) ros2Cmd { return ros2Cmd{Argv: append(argv, nd...)} }
	res := d.ros2(
		with("param", "get", "/robot1/serviceProviderNode", "waypoints_file").in(0),
		with("param", "get", "/robot2/serviceProviderNode", "waypoints_file").in(1),
		with("param", "get", "/robot1/robotControlMuxNode", "cmd_vel_topic").in(2),
		with("topic", "info", "/robot2/teleoperation/cmd_vel").in(3),
	)
	for _, r := range res {
		if !r.ok() {
			t.Fatalf("%v", r)
		}
	}
	for i, ns := range []string{"robot1", "robot2"} {
		mustContain(t, "waypoints_file of "+ns, res[i].Stdout, filepath.Join(home, "fsmnodes", ns, "waypoints.yaml"))
	}
	mustContain(t, "cmd_vel_topic of robot1", res[2].Stdout, "String value is: cmd_vel")
	mustContain(t, "/robot2/teleoperation/cmd_vel", res[3].Stdout, "Subscription count: 1")

	r := d.ros2(ros2Cmd{Argv: []string{"service", "call", "/robot1/rsm/addWaypoint", "rsm_msgs/srv/AddWaypoint",
		"{waypoint: {pose: {position: {x: 1.5}, orientation: {w: 1.0}}}, position: -1}"}})[0]
	if !r.ok() || !strings.Contains(r.Stdout, "success=True") {
		t.Fatalf("addWaypoint on robot1: %v", r)
	}
	arr, err := rsm.LoadWaypoints(filepath.Join(home, "fsmnodes", "robot1", "waypoints.yaml"))
	if err != nil || len(arr.Waypoints) != 1 || arr.Waypoints[0].Pose.Position.X != 1.5 {
		t.Errorf("robot1's waypoint file: %+v, %v; want the one waypoint at x 1.5", arr, err)
	}
	for _, p := range []string{filepath.Join(home, "fsmnodes", "robot2", "waypoints.yaml"), filepath.Join(home, "fsmnodes", "waypoints.yaml")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s: %v; want no file (nothing was added there)", p, err)
		}
	}
}
