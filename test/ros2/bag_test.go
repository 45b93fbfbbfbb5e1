package ros2

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/bag"
	"github.com/fsmnodes/fsmnodes/internal/ros"
)

// fsmnodes bag with rclcpp on both ends: our recorder records an rclcpp
// talker and a latched rclcpp publisher (keeping rclcpp's offered QoS),
// and our player plays the bag, remapped, to rclcpp listeners: a reliable
// one and a transient-local one, which gets the latched message.
func TestBagWithRclcpp(t *testing.T) {
	d := newDom(t)
	d.start("rclcpp talker", d.rosEnv(), peerBin(), "talker", "/cpp/chatter").waitLine("ready")
	d.start("rclcpp latched", d.rosEnv(), peerBin(), "latched", "/cpp/latched", "latched from cpp").waitLine("published")
	dir := filepath.Join(t.TempDir(), "cpp")
	rec := d.start("fsmnodes bag record", d.ours(), ours("fsmnodes"), "bag", "record", "/cpp/chatter", "/cpp/latched", "-o", dir)
	rec.waitLine("Subscribed to topic '/cpp/chatter'")
	rec.waitLine("Subscribed to topic '/cpp/latched'")
	time.Sleep(3 * time.Second)
	rec.interrupt()
	if err := rec.wait(); err != nil {
		t.Fatalf("bag record: %v\n%s", err, rec.output())
	}

	b, err := bag.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	chatter, ok1 := b.Topic("/cpp/chatter")
	latched, ok2 := b.Topic("/cpp/latched")
	if !ok1 || !ok2 || chatter.MessageCount < 2 || latched.MessageCount != 1 || b.Metadata.ROSDistro != peer.distro {
		t.Fatalf("recorded from rclcpp: %+v (distro %q)", b.Metadata.Topics, b.Metadata.ROSDistro)
	}
	if len(latched.OfferedQoS) != 1 || latched.OfferedQoS[0].Durability != ros.DurabilityTransientLocal ||
		len(chatter.OfferedQoS) != 1 || chatter.OfferedQoS[0].Reliability != ros.ReliabilityReliable {
		t.Errorf("rclcpp's offered QoS: chatter %+v, latched %+v", chatter.OfferedQoS, latched.OfferedQoS)
	}

	listener := d.start("rclcpp listener", d.rosEnv(), peerBin(), "listener", "/replayed/chatter",
		"--ros-args", "-r", "__node:=replay_listener")
	late := d.start("rclcpp transient-local listener", d.rosEnv(), peerBin(), "listener", "/replayed/latched", "transient_local",
		"--ros-args", "-r", "__node:=replay_late_joiner")
	out := d.fsmnodes("bag", "play", dir, "-m", "/cpp/chatter:=/replayed/chatter", "/cpp/latched:=/replayed/latched", "--delay", "2")
	if !strings.Contains(out, "Published ") {
		t.Errorf("bag play:\n%s", out)
	}
	listener.waitMatch("heard: hello N", regexp.MustCompile(`^heard: hello \d+$`).MatchString)
	late.waitLine("heard: latched from cpp")
}
