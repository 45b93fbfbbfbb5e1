package ros2

import (
	"strings"
	"testing"
)

// TestHeartbeatIsNoROSTopic: a process of ours with an action client sends
// heartbeats on the DDS topic fsmnodes_heartbeat (internal/ros
// heartbeat.go). The real ros2 CLI neither lists it, not even with
// --include-hidden-topics, nor warns about it: Jazzy's rmw_cyclonedds
// printed "Failed to parse type hash for topic 'fsmnodes_heartbeat'" on
// every call until its endpoints carried the type hash in USER_DATA.
func TestHeartbeatIsNoROSTopic(t *testing.T) {
	d := newDom(t)
	goal := d.start("fsmnodes action send_goal", d.ours(), ours("fsmnodes"), "action", "send_goal", "/hb_check", "nav2_msgs/action/NavigateToPose")
	goal.waitLine("Waiting for an action server")
	var out string
	for range 5 { // the CLI may answer before it discovered our endpoints
		out = d.run(d.rosEnv(), "ros2", "topic", "list", "--include-hidden-topics", "--no-daemon")
		if strings.Contains(out, "/hb_check/_action/status") {
			break
		}
	}
	if !strings.Contains(out, "/hb_check/_action/status") {
		t.Fatalf("ros2 topic list never showed the CLI's action client:\n%s", out)
	}
	if strings.Contains(out, "heartbeat") {
		t.Errorf("ros2 topic list shows or warns about the heartbeat topic:\n%s", out)
	}
}
