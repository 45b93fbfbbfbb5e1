package ros2

import (
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// shmConfig is the suite's Cyclone configuration with shared memory on,
// as a user turns it on for rmw_cyclonedds_cpp.
var shmConfig = strings.Replace(moreParticipants, "</Domain>",
	"<SharedMemory><Enable>true</Enable><LogLevel>warn</LogLevel></SharedMemory></Domain>", 1)

// Shared memory (iceoryx) between our processes and the ROS 2 CLI, both
// with shared memory on, so samples on this host go through RouDi's
// chunks only. rclpy publishes a fixed-size type (Twist) as raw C memory,
// which our reader turns into CDR by the type's layout; a string type
// goes as serialized CDR both ways.
func TestSharedMemoryWithROS2(t *testing.T) {
	d := newDom(t)
	testenv.RouDi(t) // before the processes: it stops after them
	rosEnv := append(d.rosEnv(), "CYCLONEDDS_URI="+shmConfig)
	oursEnv := append(d.ours(), "CYCLONEDDS_URI="+shmConfig)

	// rclpy → ours, raw chunks of a fixed-size type.
	d.start("ros2 topic pub twist", rosEnv, "ros2", "topic", "pub", "-r", "10", "/shm/from_ros2",
		"geometry_msgs/msg/Twist", "{linear: {x: 1.5, y: -2.0, z: 0.125}, angular: {z: -0.25}}")
	out := d.run(oursEnv, ours("fsmnodes"), "topic", "echo", "/shm/from_ros2", "geometry_msgs/msg/Twist", "--once")
	mustContain(t, "fsmnodes topic echo /shm/from_ros2 (raw chunk)", out, "x: 1.5", "y: -2.0", "z: 0.125", "z: -0.25")

	// ours → rclpy, serialized chunks of a fixed-size and a string type.
	d.start("fsmnodes topic pub twist", oursEnv, ours("fsmnodes"), "topic", "pub", "/shm/from_ours",
		"geometry_msgs/msg/Twist", "{linear: {x: 0.75}, angular: {z: 1.25}}", "-r", "10")
	d.start("fsmnodes topic pub string", oursEnv, ours("fsmnodes"), "topic", "pub", "/shm/chatter",
		"std_msgs/msg/String", "{data: through shared memory}", "-r", "10")
	out = d.run(rosEnv, "ros2", "topic", "echo", "--once", "--no-daemon", "/shm/from_ours", "geometry_msgs/msg/Twist")
	mustContain(t, "ros2 topic echo /shm/from_ours", out, "x: 0.75", "z: 1.25")
	out = d.run(rosEnv, "ros2", "topic", "echo", "--once", "--no-daemon", "/shm/chatter", "std_msgs/msg/String")
	mustContain(t, "ros2 topic echo /shm/chatter", out, "data: through shared memory")
}
