package ros

import (
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// TestDiscoveryRange_String: every range prints as the spelling the
// environment variable takes, and that spelling reads back as the range.
func TestDiscoveryRange_String(t *testing.T) {
	for _, r := range []DiscoveryRange{RangeSubnet, RangeLocalhost, RangeOff, RangeSystemDefault} {
		s, err := readDiscoverySettings(func(k string) string {
			if k == "ROS_AUTOMATIC_DISCOVERY_RANGE" {
				return r.String()
			}
			return ""
		}, Jazzy)
		if err != nil || s.Range != r || len(s.Warnings) != 0 {
			t.Errorf("%v read back as %v (%v, %v)", r, s.Range, err, s.Warnings)
		}
	}
	if s := DiscoveryRange(42).String(); s != "UNKNOWN" {
		t.Errorf("out of range: %q", s)
	}
}

// TestSubscription_IgnoreLocal: with WithIgnoreLocal a subscription hears a
// publisher of another Context but not one of its own Context; publishers
// have distinct, non-zero GIDs.
func TestSubscription_IgnoreLocal(t *testing.T) {
	domain := testenv.Domain(t)
	local, remote := newTestContext(t, domain), newTestContext(t, domain)
	ln, err := local.NewNode("local", "")
	if err != nil {
		t.Fatal(err)
	}
	rn, err := remote.NewNode("remote", "")
	if err != nil {
		t.Fatal(err)
	}
	localPub, err := NewPublisher[std_msgs_msg.String](ln, "chatter", QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	remotePub, err := NewPublisher[std_msgs_msg.String](rn, "chatter", QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	if g1, g2 := localPub.GID(), remotePub.GID(); g1 == (dds.GUID{}) || g1 == g2 {
		t.Fatalf("GIDs %v and %v", g1, g2)
	}
	got := make(chan string, 100)
	sub, err := NewSubscription(ln, "chatter", QoSDefault, func(m *std_msgs_msg.String) { got <- m.Data }, WithIgnoreLocal())
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, failAfter, "the remote publisher", func() bool { n, _ := sub.PublisherCount(); return n >= 1 })
	testenv.WaitFor(t, failAfter, "the subscription at the remote publisher", func() bool { n, _ := remotePub.SubscriptionCount(); return n >= 1 })
	// Both publish until the remote sample arrives; a local one must never.
	deadline := time.Now().Add(failAfter)
	for {
		_ = localPub.Publish(&std_msgs_msg.String{Data: "local"})
		_ = remotePub.Publish(&std_msgs_msg.String{Data: "remote"})
		select {
		case s := <-got:
			if s != "remote" {
				t.Fatalf("heard %q through WithIgnoreLocal", s)
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("never heard the remote publisher")
		}
	}
}
