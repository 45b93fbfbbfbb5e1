package ros

import (
	"context"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// Benchmarks run between two contexts of this process
// (loopback, Cyclone's network stack included).
// BenchmarkPubSub1KiB measures publish -> callback throughput of 1 KiB
// messages (reliable, keep all on both sides, so nothing may be lost)
// through the node's callback goroutine.
func BenchmarkPubSub1KiB(b *testing.B) {
	domainBench := testenv.Domain(b)
	c1 := newTestContext(b, domainBench)
	c2 := newTestContext(b, domainBench)
	pn := mustNode(b, c1, "bench_pub", "")
	sn := mustNode(b, c2, "bench_sub", "")
	got := make(chan struct{}, 1)
	var count, want int
	qos := QoSDefault.KeepAll()
	sub, err := NewSubscription(sn, "/bench", qos, func(m *std_msgs_msg.UInt8MultiArray) {
		count++
		if count == want {
			got <- struct{}{}
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	pub, err := NewPublisher[std_msgs_msg.UInt8MultiArray](pn, "/bench", qos)
	if err != nil {
		b.Fatal(err)
	}
	waitGraph(b, c1, "match", func() bool { k, _ := pub.SubscriptionCount(); return k == 1 })
	msg := &std_msgs_msg.UInt8MultiArray{Data: make([]byte, 1024)}
	// Warm up, then measure b.N messages; the callback counts on the node
	// goroutine, so b.N is posted to it before starting.
	done := make(chan struct{})
	sn.Post(func() { count, want = 0, b.N; close(done) })
	<-done
	b.SetBytes(1024)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := pub.Publish(msg); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-got:
	case <-time.After(time.Minute):
		lost := make(chan int)
		sn.Post(func() { lost <- want - count })
		b.Fatalf("%d of %d messages lost (%d dropped by the queue)", <-lost, b.N, sub.Dropped())
	}
}

// BenchmarkServiceRoundTrip measures Call latency between two contexts.
func BenchmarkServiceRoundTrip(b *testing.B) {
	domainBench := testenv.Domain(b)
	c1 := newTestContext(b, domainBench)
	c2 := newTestContext(b, domainBench)
	sn := mustNode(b, c1, "bench_server", "")
	cn := mustNode(b, c2, "bench_client", "")
	if _, err := NewService(sn, "/bench_srv", std_srvs_srv.SetBool, func(_ context.Context, r *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
		return &std_srvs_srv.SetBool_Response{Success: r.Data}, nil
	}); err != nil {
		b.Fatal(err)
	}
	cli, err := NewClient(cn, "/bench_srv", std_srvs_srv.SetBool)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cli.WaitForService(ctx); err != nil {
		b.Fatal(err)
	}
	req := &std_srvs_srv.SetBool_Request{Data: true}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := cli.Call(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
