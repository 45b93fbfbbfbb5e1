package ros2

import (
	"strings"
	"testing"
)

// Incompatible QoS between rclcpp and us, both ways: each side warns (our
// warning is rclcpp's, word for word) and nothing is delivered.
func TestIncompatibleQoSWithRclcpp(t *testing.T) {
	d := newDom(t)
	env := d.ours()
	const (
		ourWarn = "New publisher discovered on topic '/qos/cpp', offering incompatible QoS. " +
			"No messages will be sent to it. Last incompatible policy: DURABILITY_QOS_POLICY"
		cppWarn = "New subscription discovered on topic '/qos/cpp', requesting incompatible QoS. " +
			"No messages will be sent to it. Last incompatible policy: DURABILITY_QOS_POLICY"
		ourPubWarn = "New subscription discovered on topic '/qos/ours', requesting incompatible QoS. " +
			"No messages will be sent to it. Last incompatible policy: DURABILITY_QOS_POLICY"
	)

	// An rclcpp talker (volatile) and our transient-local subscriber: rclcpp's
	// default warning on its side, ours on ours.
	talker := d.start("rclcpp talker", d.rosEnv(), peerBin(), "talker", "/qos/cpp")
	talker.waitLine("ready")
	echo := d.start("fsmnodes topic echo", env, ours("fsmnodes"), "topic", "echo", "/qos/cpp", "std_msgs/msg/String",
		"--qos-durability", "transient_local")
	echo.waitLine(ourWarn)
	talker.waitLine(cppWarn)

	// Our volatile publisher and an rclcpp transient-local listener: its
	// incompatible-QoS callback gets RMW_QOS_POLICY_DURABILITY (2), and our
	// publisher warns.
	listener := d.start("rclcpp transient-local listener", d.rosEnv(), peerBin(), "listener", "/qos/ours", "transient_local")
	listener.waitLine("ready")
	pub := d.start("fsmnodes topic pub", env, ours("fsmnodes"), "topic", "pub", "/qos/ours", "std_msgs/msg/String", "{data: x}", "-r", "5")
	pub.waitLine(ourPubWarn)
	listener.waitLine("incompatible qos: policy 2")

	for _, p := range []*proc{echo, listener} {
		if strings.Contains(p.output(), "hello") || strings.Contains(p.output(), "heard:") {
			t.Errorf("%s received across incompatible QoS:\n%s", p.name, p.output())
		}
	}
}
