package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"sync/atomic"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
	"github.com/fsmnodes/fsmnodes/test/bench/internal/blob"
)

// The Go roles mirror bench_peer's (peer/peer.cpp) with internal/ros: the
// same topic and service names, types, default QoS and output lines, so
// the driver can pair any two processes and parse either.
const (
	dataTopic = "bench_data"
	pingTopic = "bench_ping"
	pongTopic = "bench_pong"
	service   = "bench_srv"
	// The fixed-size 1 MiB pair (blob.Blob), measured over shared memory.
	fixedPingTopic = "bench_fping"
	fixedPongTopic = "bench_fpong"
)

// runRole runs one Go role until dur has passed (bytes: message size of
// pub and ping).
//
// With $FSM_BENCH_CPUPROFILE set to a directory, the role writes its CPU
// profile there as ROLE-BYTES-PID.pprof.
func runRole(role string, bytes int, dur time.Duration, nodeGoroutines bool, opts []ros.EndpointOption, out io.Writer) error {
	if dir := os.Getenv("FSM_BENCH_CPUPROFILE"); dir != "" {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d-%d.pprof", role, bytes, os.Getpid())))
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	rc, err := ros.NewContext(ros.ContextOptions{NoSignals: true, LogOutput: os.Stderr, NodeGoroutineCallbacks: nodeGoroutines})
	if err != nil {
		return err
	}
	defer rc.Close()
	n, err := rc.NewNode("bench_go_"+role, "")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	go func() { _ = rc.Spin(ctx) }()
	switch role {
	case "sub":
		return roleSub(ctx, n, opts, out)
	case "pub":
		return rolePub(ctx, n, bytes, out)
	case "pong":
		return rolePong(ctx, n, opts)
	case "ping":
		return rolePing(ctx, n, bytes, opts, out)
	case "fpong", "lpong":
		return roleFixedPong(ctx, n, role == "lpong", opts)
	case "fping", "lping":
		return roleFixedPing(ctx, n, role == "lping", opts, out)
	case "server":
		return roleServer(ctx, n)
	case "client":
		return roleClient(ctx, n, out)
	}
	return fmt.Errorf("unknown role %q", role)
}

func roleSub(ctx context.Context, n *ros.Node, opts []ros.EndpointOption, out io.Writer) error {
	var count atomic.Uint64
	if _, err := ros.NewSubscription(n, dataTopic, ros.QoSDefault, func(*std_msgs_msg.UInt8MultiArray) { count.Add(1) }, opts...); err != nil {
		return err
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var last uint64
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			c := count.Load()
			fmt.Fprintf(out, "rate %d\n", c-last)
			last = c
		}
	}
}

// waitUntil polls cond every millisecond until it holds or ctx is done.
func waitUntil(ctx context.Context, what string, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

func rolePub(ctx context.Context, n *ros.Node, bytes int, out io.Writer) error {
	pub, err := ros.NewPublisher[std_msgs_msg.UInt8MultiArray](n, dataTopic, ros.QoSDefault)
	if err != nil {
		return err
	}
	if err := waitUntil(ctx, "a subscriber", func() bool { k, _ := pub.SubscriptionCount(); return k > 0 }); err != nil {
		return err
	}
	msg := &std_msgs_msg.UInt8MultiArray{Data: make([]byte, bytes)}
	var sent uint64
	for ctx.Err() == nil {
		msg.Data[0] = byte(sent)
		if err := pub.Publish(msg); err != nil {
			return err
		}
		sent++
	}
	fmt.Fprintf(out, "sent %d\n", sent)
	return nil
}

func rolePong(ctx context.Context, n *ros.Node, opts []ros.EndpointOption) error {
	pub, err := ros.NewPublisher[std_msgs_msg.UInt8MultiArray](n, pongTopic, ros.QoSDefault)
	if err != nil {
		return err
	}
	if _, err := ros.NewSubscription(n, pingTopic, ros.QoSDefault, func(m *std_msgs_msg.UInt8MultiArray) { _ = pub.Publish(m) }, opts...); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// resendAfter is how long a ping or a call waits for its answer before it
// is counted as lost and sent anew (a first message may go out before the
// other side's answering writer has matched this side's reader).
const resendAfter = time.Second

func rolePing(ctx context.Context, n *ros.Node, bytes int, opts []ros.EndpointOption, out io.Writer) error {
	pub, err := ros.NewPublisher[std_msgs_msg.UInt8MultiArray](n, pingTopic, ros.QoSDefault)
	if err != nil {
		return err
	}
	// The first 8 bytes carry the ping's sequence number; only the answer
	// to the current ping counts.
	var seq atomic.Uint64
	got := make(chan struct{}, 1)
	sub, err := ros.NewSubscription(n, pongTopic, ros.QoSDefault, func(m *std_msgs_msg.UInt8MultiArray) {
		if len(m.Data) >= 8 {
			answered(&seq, got, binary.LittleEndian.Uint64(m.Data))
		}
	}, opts...)
	if err != nil {
		return err
	}
	if err := waitPaired(ctx, pub, sub); err != nil {
		return err
	}
	msg := &std_msgs_msg.UInt8MultiArray{Data: make([]byte, max(bytes, 8))}
	return pingLoop(ctx, &seq, got, out, func(s uint64) error {
		binary.LittleEndian.PutUint64(msg.Data, s)
		return pub.Publish(msg)
	})
}

// answered signals got when s answers the current ping (seq), without
// blocking: pingLoop takes at most one answer per ping.
func answered(seq *atomic.Uint64, got chan struct{}, s uint64) {
	if s != seq.Load() {
		return
	}
	select {
	case got <- struct{}{}:
	default:
	}
}

// waitPaired waits until the ping publisher has the pong's subscription
// and the ping's subscription has the pong's publisher.
func waitPaired(ctx context.Context, pub interface{ SubscriptionCount() (int, error) }, sub *ros.Subscription) error {
	return waitUntil(ctx, "the pong", func() bool {
		k, _ := pub.SubscriptionCount()
		m, _ := sub.PublisherCount()
		return k > 0 && m > 0
	})
}

// pingLoop sends pings with send(seq) until ctx is done, one in flight,
// and prints the rtt line; got receives when the answer to seq arrives.
func pingLoop(ctx context.Context, seq *atomic.Uint64, got chan struct{}, out io.Writer, send func(uint64) error) error {
	var rtts []int64
	var lost int
	resend := time.NewTimer(resendAfter)
	for ctx.Err() == nil {
		s := seq.Add(1)
		select {
		case <-got: // a late answer to an earlier ping
		default:
		}
		t0 := time.Now()
		if err := send(s); err != nil {
			return err
		}
		resend.Reset(resendAfter)
		select {
		case <-got:
			rtts = append(rtts, int64(time.Since(t0)))
		case <-resend.C:
			lost++
		case <-ctx.Done():
		}
	}
	sort.Slice(rtts, func(i, j int) bool { return rtts[i] < rtts[j] })
	p := func(q int) int64 {
		if len(rtts) == 0 {
			return 0
		}
		return rtts[(len(rtts)-1)*q/100]
	}
	fmt.Fprintf(out, "rtt n %d median %d p90 %d p99 %d lost %d\n", len(rtts), p(50), p(90), p(99), lost)
	return nil
}

func roleFixedPong(ctx context.Context, n *ros.Node, loan bool, opts []ros.EndpointOption) error {
	_, send, err := blob.NewSender(n, fixedPongTopic, loan)
	if err != nil {
		return err
	}
	if _, err := ros.NewSubscription(n, fixedPingTopic, ros.QoSDefault, func(m *blob.Blob) { _ = send(m, m.Seq) }, opts...); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

func roleFixedPing(ctx context.Context, n *ros.Node, loan bool, opts []ros.EndpointOption, out io.Writer) error {
	pub, send, err := blob.NewSender(n, fixedPingTopic, loan)
	if err != nil {
		return err
	}
	var seq atomic.Uint64
	got := make(chan struct{}, 1)
	sub, err := ros.NewSubscription(n, fixedPongTopic, ros.QoSDefault, func(m *blob.Blob) { answered(&seq, got, m.Seq) }, opts...)
	if err != nil {
		return err
	}
	if err := waitPaired(ctx, pub, sub); err != nil {
		return err
	}
	return pingLoop(ctx, &seq, got, out, func(s uint64) error { return send(nil, s) })
}

func roleServer(ctx context.Context, n *ros.Node) error {
	if _, err := ros.NewService(n, service, std_srvs_srv.SetBool, func(_ context.Context, req *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
		return &std_srvs_srv.SetBool_Response{Success: req.Data}, nil
	}); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

func roleClient(ctx context.Context, n *ros.Node, out io.Writer) error {
	cli, err := ros.NewClient(n, service, std_srvs_srv.SetBool)
	if err != nil {
		return err
	}
	if err := cli.WaitForService(ctx); err != nil {
		return err
	}
	req := &std_srvs_srv.SetBool_Request{Data: true}
	t0 := time.Now()
	var calls, lost uint64
	for ctx.Err() == nil {
		callCtx, cancel := context.WithTimeout(ctx, resendAfter)
		_, err := cli.Call(callCtx, req)
		cancel()
		switch {
		case err == nil:
			calls++
		case ctx.Err() != nil:
		case errors.Is(err, context.DeadlineExceeded):
			lost++
		default:
			return fmt.Errorf("call %d: %w", calls, err)
		}
	}
	fmt.Fprintf(out, "calls %d seconds %f lost %d\n", calls, time.Since(t0).Seconds(), lost)
	return nil
}
