package ros2

import (
	"regexp"
	"strings"
	"testing"
)

// Topics both ways between our nodes and rclcpp, the ros2 topic and node
// verbs on our node, /rosout, and QoS as between two rclcpp nodes.
func TestTopicsWithRclcpp(t *testing.T) {
	d := newDom(t)
	ours := d.start("ours talker", d.ours(), ours("gopeer"), "ours_talker")
	ours.waitLine("gopeer ready")

	// rclcpp listeners of our reliable topic: reliable, best effort; a
	// transient-local late joiner of our latched topic; and a
	// transient-local subscriber of our volatile topic, which cannot match
	// (rclcpp reports the incompatible QoS, as it would for an rclcpp
	// publisher).
	reliable := d.start("rclcpp listener", d.rosEnv(), peerBin(), "listener", "/ours/chatter",
		"--ros-args", "-r", "__node:=reliable_listener")
	bestEffort := d.start("rclcpp best-effort listener", d.rosEnv(), peerBin(), "listener", "/ours/chatter", "best_effort",
		"--ros-args", "-r", "__node:=best_effort_listener")
	late := d.start("rclcpp late joiner", d.rosEnv(), peerBin(), "listener", "/ours/latched", "transient_local",
		"--ros-args", "-r", "__node:=late_joiner")
	incompatible := d.start("rclcpp transient-local listener", d.rosEnv(), peerBin(), "listener", "/ours/chatter", "transient_local",
		"--ros-args", "-r", "__node:=incompatible_listener")
	heard := regexp.MustCompile(`^heard: ours \d+$`)
	reliable.waitMatch("heard: ours N", heard.MatchString)
	bestEffort.waitMatch("heard: ours N", heard.MatchString)
	late.waitLine("heard: latched from ours")
	incompatible.waitLine("incompatible qos")
	if strings.Contains(incompatible.output(), "heard:") {
		t.Errorf("a transient-local subscriber received from a volatile publisher:\n%s", incompatible.output())
	}

	// rclcpp → our CLI: a talker, and a latched publisher that our late
	// subscriber asks for transient local.
	d.start("rclcpp talker", d.rosEnv(), peerBin(), "talker", "/cpp/chatter").waitLine("ready")
	d.start("rclcpp latched", d.rosEnv(), peerBin(), "latched", "/cpp/latched", "latched from cpp").waitLine("published")
	out := d.fsmnodes("topic", "echo", "/cpp/chatter", "std_msgs/msg/String", "--once")
	if !regexp.MustCompile(`data: hello \d+`).MatchString(out) {
		t.Errorf("fsmnodes topic echo /cpp/chatter:\n%s", out)
	}
	out = d.fsmnodes("topic", "echo", "/cpp/latched", "std_msgs/msg/String", "--once", "--qos-durability", "transient_local")
	mustContain(t, "fsmnodes topic echo /cpp/latched", out, "data: latched from cpp")
	out = d.fsmnodes("topic", "info", "/cpp/chatter", "-v")
	mustContain(t, "fsmnodes topic info -v /cpp/chatter", out, "Node name: talker", "Topic type: std_msgs/msg/String")

	// A live ros2 topic echo of /rosout, subscribed before our node logs
	// (records live 10 s: a late echo could miss them).
	c := d.context()
	rosout := d.start("ros2 topic echo /rosout", d.rosEnv(), "ros2", "topic", "echo", "/rosout", "rcl_interfaces/msg/Log", "--no-daemon")
	waitGraph(t, c, "ros2 topic echo subscribed to /rosout", func() bool {
		for _, e := range c.SubscriptionsInfo("/rosout") {
			if strings.HasPrefix(e.NodeName, "_ros2cli") {
				return true
			}
		}
		return false
	})

	// The ros2 CLI on our node, in three lanes side by side.
	res := d.ros2(
		ros2Cmd{Argv: []string{"topic", "list", "-t", "--no-daemon", "--spin-time", "2"}}.in(0),
		ros2Cmd{Argv: []string{"topic", "info", "-v", "/ours/chatter", "--no-daemon", "--spin-time", "2"}}.in(0),
		ros2Cmd{Argv: []string{"topic", "echo", "--once", "/ours/chatter", "--no-daemon", "--spin-time", "2"}}.in(1),
		ros2Cmd{Argv: []string{"topic", "echo", "--once", "/ours/latched", "--no-daemon", "--spin-time", "2"}}.in(1),
		ros2Cmd{Argv: []string{"topic", "pub", "--once", "-w", "1", "/ours/to_ours", "std_msgs/msg/String", "{data: from ros2}"}}.in(2),
		ros2Cmd{Argv: []string{"node", "list", "--no-daemon", "--spin-time", "2"}}.in(2),
		ros2Cmd{Argv: []string{"node", "info", "/ours_talker", "--no-daemon", "--spin-time", "2"}}.in(2),
	)
	for _, r := range res[:7] {
		if !r.ok() {
			t.Errorf("failed: %v", r)
		}
	}
	mustContain(t, "ros2 topic list -t", res[0].Stdout,
		"/ours/chatter [std_msgs/msg/String]", "/ours/latched [std_msgs/msg/String]", "/ours/to_ours [std_msgs/msg/String]",
		"/rosout [rcl_interfaces/msg/Log]", "/parameter_events [rcl_interfaces/msg/ParameterEvent]")
	info := res[1].Stdout
	mustContain(t, "ros2 topic info -v /ours/chatter", info,
		"Type: std_msgs/msg/String", "Publisher count: 1", "Node name: ours_talker", "Node namespace: /",
		"Endpoint type: PUBLISHER", "Reliability: RELIABLE", "Durability: VOLATILE",
		"Node name: reliable_listener", "Node name: best_effort_listener", "Reliability: BEST_EFFORT")
	if !regexp.MustCompile(`data: ours \d+`).MatchString(res[2].Stdout) {
		t.Errorf("ros2 topic echo --once /ours/chatter:\n%s", res[2].Stdout)
	}
	mustContain(t, "ros2 topic echo --once /ours/latched", res[3].Stdout, "data: latched from ours")
	ours.waitLine("got: from ros2")
	mustContain(t, "ros2 node list", res[5].Stdout, "/ours_talker", "/reliable_listener", "/talker", "/latched")
	mustContain(t, "ros2 node info /ours_talker", res[6].Stdout,
		"/ours_talker", "Subscribers:", "/ours/to_ours: std_msgs/msg/String",
		"Publishers:", "/ours/chatter: std_msgs/msg/String", "/rosout: rcl_interfaces/msg/Log",
		"Service Servers:", "/ours_talker/get_parameters: rcl_interfaces/srv/GetParameters")
	// /rosout records of our node, logged when the message from ros2
	// topic pub arrived: name, level (INFO 20, WARN 30), text, caller.
	rosout.waitOutput("our info record", regexp.MustCompile(`level: 20\nname: ours_talker\nmsg: 'got: from ros2'\nfile: ros2\.go\nfunction: \S+\nline: \d+`))
	rosout.waitOutput("our warning record", regexp.MustCompile(`level: 30\nname: ours_talker\nmsg: 'warned: from ros2'`))
	// ros2 topic hz measures our 10 Hz timer (printed, not asserted: the
	// figure depends on the machine's load).
	hz := d.start("ros2 topic hz", d.rosEnv(), "ros2", "topic", "hz", "/ours/chatter")
	t.Logf("ros2 topic hz /ours/chatter: %s (timer: 10 Hz)", hz.waitLine("average rate:"))
	hz.stop()
}
