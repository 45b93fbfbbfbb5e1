package ros2

import (
	"os"
	"path/filepath"
	"testing"
)

// `ros2 launch fsmnodes velma.launch.xml` from the colcon overlay on Humble
// starts the four processes of the core agent (ROS 2's own launch reads the
// if/unless arguments and the per-node parameters); the ros2 CLI sees the
// nodes and their diag topics, reads their parameters, and sees the public interface (node
// velma_core) served by velma_task_cs_ros_interface.
func TestVelmaFourProcessesLaunchedByROS2(t *testing.T) {
	d := newDom(t)
	if peer.colconErr != nil {
		t.Fatal(peer.colconErr)
	}
	env, err := sourceEnv(d.rosEnv(), filepath.Join(peer.ws, "install", "setup.bash"))
	if err != nil {
		t.Fatal(err)
	}
	bufs, err := os.MkdirTemp("/dev/shm", "velma-ros2-")
	if err != nil {
		bufs = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(bufs) })
	}
	d.start("ros2 launch", env, "ros2", "launch", "fsmnodes", "velma.launch.xml", "buffers:="+bufs+"/velma")
	c := d.context()
	nodes := []string{"/velma_sim", "/velma_core_ve_body", "/velma_core_cs", "/velma_core", "/robot_state_publisher"}
	waitGraph(t, c, "the four velma processes", func() bool { return hasNodes(c, nodes...) })
	nd := []string{"--no-daemon", "--spin-time", "3"}
	with := func(argv ...string) ros2Cmd { return ros2Cmd{Argv: append(argv, nd...)} }
	res := d.ros2(
		with("node", "list").in(0),
		with("topic", "list", "-t").in(1),
		with("node", "info", "/velma_core").in(2),
		with("param", "get", "/velma_core_ve_body", "ve_body.command_timeout").in(1),
		with("param", "get", "/velma_core_cs", "cs.safe_stiffness").in(0),
		with("topic", "echo", "--once", "/velma_core_ve_body/diag", "diagnostic_msgs/msg/DiagnosticArray").in(2),
	)
	for _, r := range res {
		if !r.ok() {
			t.Errorf("failed: %v", r)
		}
	}
	mustContain(t, "ros2 node list", res[0].Stdout, nodes...)
	mustContain(t, "ros2 topic list -t", res[1].Stdout, "/velma_core_ve_body/diag [diagnostic_msgs/msg/DiagnosticArray]",
		"/velma_core_cs/diag [diagnostic_msgs/msg/DiagnosticArray]", "/velma_core/status [velma_msgs/msg/Status]", "/joint_states [sensor_msgs/msg/JointState]")
	mustContain(t, "ros2 node info /velma_core", res[2].Stdout, "/velma_core/status: velma_msgs/msg/Status",
		"/velma_core/motors/enable: std_srvs/srv/Trigger", "/velma_core/spline_trajectory_action_joint: control_msgs/action/FollowJointTrajectory")
	mustContain(t, "ros2 param get ve_body.command_timeout (the launch file's timeout, the original's 2 ms)", res[3].Stdout, "Double value is: 0.002")
	mustContain(t, "ros2 param get cs.safe_stiffness (from params/velma.yaml)", res[4].Stdout, "Double value is: 5.0")
	mustContain(t, "ros2 topic echo ve_body's diag (diagnostic_msgs)", res[5].Stdout, "status:", "level:", "values:", "key:")
}
