package ros2

import (
	"strings"
	"testing"
)

// loopbackURI keeps Cyclone on 127.0.0.1 through CYCLONEDDS_URI, which
// ROS 2 and our nodes (with or without ROS_DISTRO) append alike: the same
// effect as Humble's ROS_LOCALHOST_ONLY=1 or Jazzy's
// ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST, without depending on how a node
// without ROS_DISTRO reads those variables.
const loopbackURI = `<CycloneDDS><Domain><General><Interfaces><NetworkInterface address="127.0.0.1"/></Interfaces></General></Domain></CycloneDDS>,` + moreParticipants

// Our node without ROS_DISTRO on a network of the peer's distro must not
// break the peers' graph tools: `ros2 node list` keeps working and lists
// it, whether the ROS 2 nodes were there first or came after it. Our node
// starts out speaking Jazzy, so against Humble "ours first" is a switch and
// against Jazzy it is a confirmation: the suite runs against both. A third
// case has the distro's own loopback variable on every process
// (ROS_LOCALHOST_ONLY=1 for Humble, ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
// for Jazzy), which our node without ROS_DISTRO must read as that distro
// does to be found at all. In the fourth, the first ROS 2 process our node
// meets is the short-lived `ros2 node list --no-daemon` itself: its first
// call must work (first contact: our node decides the dialect from the
// peer's ros_discovery_info reader before that reader is sent our sample).
func TestDialectWithoutROSDistroBesidePeer(t *testing.T) {
	for _, order := range []string{"peer first", "ours first", "ours first localhost only", "ours first cli first"} {
		t.Run(strings.ReplaceAll(order, " ", "_"), func(t *testing.T) {
			d := newDom(t)
			if !strings.Contains(order, "localhost only") {
				d.net = []string{"CYCLONEDDS_URI=" + loopbackURI}
			}
			startOurs := func() *proc {
				// A node in the root namespace first: what a Humble peer
				// makes of its Jazzy layout is an empty node name.
				p := d.start("ours", d.oursEnv(""), ours("gopeer"), "nodes", "/ours_dialect", "/dialect/ours")
				p.waitLine("gopeer ready")
				return p
			}
			var o *proc
			if strings.HasPrefix(order, "ours first") {
				o = startOurs()
			}
			want := []string{"/ours_dialect", "/dialect/ours"}
			if !strings.HasSuffix(order, "cli first") {
				talker := d.start("rclcpp talker", d.rosEnv(), peerBin(), "talker", "/dialect/chatter")
				talker.waitLine("ready")
				want = append(want, "/talker")
			}
			if o == nil {
				o = startOurs()
			}
			res := d.ros2(
				ros2Cmd{Argv: []string{"node", "list", "--no-daemon", "--spin-time", "2"}},
				ros2Cmd{Argv: []string{"node", "info", "/dialect/ours", "--no-daemon", "--spin-time", "2"}},
				ros2Cmd{Argv: []string{"param", "list", "/dialect/ours", "--no-daemon", "--spin-time", "2"}},
			)
			if !res[0].ok() {
				t.Fatalf("ros2 node list failed beside our node without ROS_DISTRO:\n%v", res[0])
			}
			mustContain(t, "ros2 node list", res[0].Stdout, want...)
			if !res[1].ok() {
				t.Errorf("ros2 node info /dialect/ours failed:\n%v", res[1])
			}
			mustContain(t, "ros2 node info", res[1].Stdout, "/dialect/ours", "/dialect/ours/get_parameters")
			if !res[2].ok() {
				t.Errorf("ros2 param list /dialect/ours failed:\n%v", res[2])
			}
			mustContain(t, "ros2 param list", res[2].Stdout, "use_sim_time")
			// The choice is logged once.
			o.waitLine("ROS_DISTRO is not set: speaking " + peer.distro)
			if n := strings.Count(o.output(), "ROS_DISTRO is not set"); n != 1 {
				t.Errorf("the dialect choice is logged %d times:\n%s", n, o.output())
			}
		})
	}
}
