package ros

import (
	"bytes"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// A raw subscription hands over exactly the bytes a typed publisher
// wrote, in both delivery modes, and runs its callback where it says.
func TestRawSubscription_BytesAsPublished(t *testing.T) {
	domain := testenv.Domain(t)
	t.Parallel()
	c1 := newTestContext(t, domain)
	c2 := newTestContext(t, domain)
	talker := mustNode(t, c1, "talker", "/raw")
	listener := mustNode(t, c2, "listener", "/raw")

	type got struct {
		m      RawMessage
		onNode bool
	}
	queued, direct := make(chan got, 10), make(chan got, 10)
	subQ, err := NewRawSubscription(listener, "chatter", std_msgs_msg.String_TypeInfo, QoSDefault, func(m RawMessage) {
		queued <- got{m, listener.OnCallbackGoroutine()}
	})
	if err != nil {
		t.Fatal(err)
	}
	subD, err := NewRawSubscription(listener, "chatter", std_msgs_msg.String_TypeInfo, QoSDefault, func(m RawMessage) {
		direct <- got{m, listener.OnCallbackGoroutine()}
	}, WithReceiveGoroutine())
	if err != nil {
		t.Fatal(err)
	}
	if subQ.TopicName() != "/raw/chatter" {
		t.Errorf("topic %q", subQ.TopicName())
	}
	pub, err := NewPublisher[std_msgs_msg.String](talker, "chatter", QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	waitGraph(t, c1, "both raw subscriptions to match", func() bool {
		n, _ := pub.SubscriptionCount()
		return n == 2
	})
	before := time.Now()
	msg := &std_msgs_msg.String{Data: "raw bytes, héllo"}
	if err := pub.Publish(msg); err != nil {
		t.Fatal(err)
	}
	want := rosidl.Marshal(msg, nil)
	for name, ch := range map[string]chan got{"queued": queued, "direct": direct} {
		select {
		case g := <-ch:
			// Cyclone may pad the sample to a multiple of 4 bytes.
			if !bytes.HasPrefix(g.m.Data, want) || len(g.m.Data)-len(want) > 3 {
				t.Errorf("%s: % x, want % x", name, g.m.Data, want)
			}
			var back std_msgs_msg.String
			if err := rosidl.Unmarshal(g.m.Data, &back); err != nil || back.Data != msg.Data {
				t.Errorf("%s: decodes to %q, %v", name, back.Data, err)
			}
			if g.m.ReceivedAt.Before(before.Add(-time.Second)) || g.m.SourceTimestamp.IsZero() {
				t.Errorf("%s: received %v, source %v", name, g.m.ReceivedAt, g.m.SourceTimestamp)
			}
			if wantNode := name == "queued"; g.onNode != wantNode {
				t.Errorf("%s: on the node goroutine = %v", name, g.onNode)
			}
		case <-time.After(failAfter):
			t.Fatalf("%s: nothing received", name)
		}
	}
	if subQ.Dropped() != 0 || subD.Dropped() != 0 {
		t.Errorf("dropped %d %d", subQ.Dropped(), subD.Dropped())
	}
	if err := subD.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(msg); err != nil {
		t.Fatal(err)
	}
	<-queued
	select {
	case <-direct:
		t.Error("a closed raw subscription still delivers")
	case <-time.After(200 * time.Millisecond):
	}
}
