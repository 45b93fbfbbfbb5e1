package ros

import (
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// Publishing allocates nothing once warm: the serialization buffer and the
// encoder are reused (a pooled buffer put back as &local, or a fresh
// encoder passed through the message's interface, each cost an allocation
// per message), and a large message is serialized into the writer's memory.
func TestPublishAllocatesNothing(t *testing.T) {
	domain := testenv.Domain(t)
	c := newTestContext(t, domain)
	n := mustNode(t, c, "allocs_pub", "")
	pub, err := NewPublisher[std_msgs_msg.UInt8MultiArray](n, "/allocs", QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1024, 1 << 20} {
		msg := &std_msgs_msg.UInt8MultiArray{Data: make([]byte, size)}
		if err := pub.Publish(msg); err != nil { // learns the size
			t.Fatal(err)
		}
		if got := testing.AllocsPerRun(50, func() {
			if err := pub.Publish(msg); err != nil {
				t.Fatal(err)
			}
		}); got != 0 {
			t.Errorf("Publish of %d bytes allocates %v times per message, want 0", size, got)
		}
	}
}

// Decoding allocates only what the message keeps (here the message and its
// byte slice); the decoder is reused.
func TestUnmarshalAllocatesOnlyTheMessage(t *testing.T) {
	payload := rosidl.Marshal(&std_msgs_msg.UInt8MultiArray{Data: make([]byte, 1024)}, nil)
	if got := testing.AllocsPerRun(200, func() {
		m := new(std_msgs_msg.UInt8MultiArray)
		if err := rosidl.Unmarshal(payload, m); err != nil {
			t.Fatal(err)
		}
	}); got > 2 {
		t.Errorf("Unmarshal allocates %v times per message, want at most 2 (the message and its data)", got)
	}
}

// The callback queue between the receive goroutine and a node's callback
// goroutine allocates nothing in a steady flow.
func TestInboxSteadyFlowAllocatesNothing(t *testing.T) {
	n := bareNode(t)
	done := make(chan struct{}, 1)
	q := newInbox(n, inboxLimits{depth: 10}, func(int) { done <- struct{}{} })
	for range 10 { // warm up the arrays
		q.push(1, 8)
		<-done
	}
	if got := testing.AllocsPerRun(200, func() {
		q.push(1, 8)
		<-done
	}); got != 0 {
		t.Errorf("push and run allocate %v times per item, want 0", got)
	}
}
