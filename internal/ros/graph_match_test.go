package ros

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// TestWaitForGraphSeesLateMatches: Cyclone publishes a peer's new reader
// on the built-in topics (a graph event) before it matches that reader
// with our writers. WaitForGraph must also wake on the matches that
// follow, or a wait on matched counts that ran at the discovery event
// sleeps through them to its deadline (test/e2e TestPubSubAcrossProcesses
// failed once in CI this way: "waiting for the echo node to match every
// topic: context deadline exceeded").
//
// Here the matching is made to take long, so the wait runs in the middle
// of it: the peer's reader is transient local, and each of many
// transient-local writers hands it its history as they are matched one by
// one. The reader is created below the ROS layer, so that no
// ros_discovery_info update follows it and wakes the wait by chance.
func TestWaitForGraphSeesLateMatches(t *testing.T) {
	domain := testenv.Domain(t)
	const writers, depth = 50, 400
	c := newTestContext(t, domain)
	peer := newTestContext(t, domain) // same process: local matching, same order
	n := mustNode(t, c, "late_match_writers", "")
	qos := QoS{History: HistoryKeepLast, Depth: depth, Reliability: ReliabilityReliable, Durability: DurabilityTransientLocal}
	msg := &std_msgs_msg.String{Data: strings.Repeat("x", 100)}
	var pubs []*Publisher[std_msgs_msg.String]
	for range writers {
		p, err := NewPublisher[std_msgs_msg.String](n, "late_match", qos)
		if err != nil {
			t.Fatal(err)
		}
		for range depth {
			if err := p.Publish(msg); err != nil {
				t.Fatal(err)
			}
		}
		pubs = append(pubs, p)
	}
	// The peer knows every writer: all graph events of their creation are
	// behind us.
	waitGraph(t, peer, "the peer to see the writers", func() bool {
		return peer.CountPublishers("/late_match") == writers
	})

	evaluated := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), failAfter)
		defer cancel()
		first := true
		done <- c.WaitForGraph(ctx, func() bool {
			if first {
				first = false
				close(evaluated)
			}
			for _, p := range pubs {
				if k, _ := p.SubscriptionCount(); k != 1 {
					return false
				}
			}
			return true
		})
	}()
	<-evaluated

	topic, err := peer.part.Topic(ddsTopicName(topicPrefix, "/late_match", "", false), std_msgs_msg.String_TypeInfo.DDSName)
	if err != nil {
		t.Fatal(err)
	}
	dq, err := qos.ddsQoS(nil, false)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r, err := peer.part.NewReader(topic, dq, func([]dds.Sample) {})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	t.Logf("creating the reader (matching %d writers, %d historical samples) took %v", writers, writers*depth, time.Since(start))
	if err := <-done; err != nil {
		matched := 0
		for _, p := range pubs {
			if k, _ := p.SubscriptionCount(); k == 1 {
				matched++
			}
		}
		t.Fatalf("WaitForGraph: %v, with %d of %d writers matched", err, matched, writers)
	}
}
