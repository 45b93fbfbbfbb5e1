package ros

import (
	"sync/atomic"
	"testing"
	"time"

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

// A subscription WithMessagePool decodes into messages it reuses: every
// message arrives whole whatever the sizes before it, and a steady flow of
// 1 MiB messages (published, lent to the receive path, decoded, handed to
// the callback) allocates nothing, where a plain subscription allocates
// each message.
func TestMessagePool(t *testing.T) {
	domain := testenv.Domain(t)
	c := newTestContext(t, domain)
	n := mustNode(t, c, "pool", "")
	pub, err := NewPublisher[std_msgs_msg.UInt8MultiArray](n, "/pool", QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		opts      []EndpointOption
		maxAllocs float64
	}{
		{"pool", []EndpointOption{WithMessagePool()}, 0},
		{"plain", nil, -1}, // allocates: only reported
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan int, 1)
			var bad atomic.Int32
			sub, err := NewSubscription(n, "/pool", QoSDefault, func(m *std_msgs_msg.UInt8MultiArray) {
				if len(m.Data) > 0 && (m.Data[0] != byte(len(m.Data)) || m.Data[len(m.Data)-1] != byte(len(m.Data)>>8)) {
					bad.Add(1)
				}
				got <- len(m.Data)
			}, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			testenv.WaitFor(t, 10*time.Second, "the subscription to match", func() bool {
				k, _ := pub.SubscriptionCount()
				return k == 1
			})
			msgs := map[int]*std_msgs_msg.UInt8MultiArray{}
			send := func(size int) int {
				m := msgs[size]
				if m == nil {
					m = &std_msgs_msg.UInt8MultiArray{Data: make([]byte, size)}
					if size > 0 {
						m.Data[0], m.Data[size-1] = byte(size), byte(size>>8)
					}
					msgs[size] = m
				}
				if err := pub.Publish(m); err != nil {
					t.Fatal(err)
				}
				return <-got
			}
			// Shrinking and growing: each message is whole.
			for _, size := range []int{1 << 20, 10, 0, 300 << 10, 1<<20 + 7, 5} {
				if n := send(size); n != size {
					t.Fatalf("sent %d bytes, the callback got %d", size, n)
				}
			}
			if b := bad.Load(); b != 0 {
				t.Fatalf("%d messages arrived with other bytes", b)
			}
			send(1 << 20)
			allocs := testing.AllocsPerRun(20, func() { send(1 << 20) })
			t.Logf("%s: %.1f allocations per 1 MiB message published and received", tc.name, allocs)
			if tc.maxAllocs >= 0 && allocs > tc.maxAllocs {
				t.Errorf("%s: %.1f allocations per message, want at most %v", tc.name, allocs, tc.maxAllocs)
			}
		})
	}
}
