package ros

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/goid"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// newInlineContext starts a test Context with inline callbacks on (the
// default) or off (ContextOptions.NodeGoroutineCallbacks).
func newInlineContext(t *testing.T, domain uint32, inlineCallbacks bool) *Context {
	t.Helper()
	return startTestContext(t, ContextOptions{DomainID: &domain, NodeGoroutineCallbacks: !inlineCallbacks})
}

// TestCallbackGoroutines: a message for an idle node is handled on the
// receive goroutine unless ContextOptions.NodeGoroutineCallbacks; either way
// the callback counts as on the node's callback goroutine.
func TestCallbackGoroutines(t *testing.T) {
	for _, inlineOn := range []bool{true, false} {
		t.Run(map[bool]string{true: "default", false: "NodeGoroutineCallbacks"}[inlineOn], func(t *testing.T) {
			c := newInlineContext(t, testenv.Domain(t), inlineOn)
			n := mustNode(t, c, "where", "")
			type where struct{ receive, node, onCallback bool }
			got := make(chan where, 1)
			if _, err := NewSubscription(n, "where", QoSDefault, func(*std_msgs_msg.Int32) {
				g := goid.Current()
				got <- where{receive: g == c.part.ReceiveGoroutine(), node: g == n.loopG.Load(), onCallback: n.OnCallbackGoroutine()}
			}); err != nil {
				t.Fatal(err)
			}
			pub, err := NewPublisher[std_msgs_msg.Int32](n, "where", QoSDefault)
			if err != nil {
				t.Fatal(err)
			}
			waitGraph(t, c, "the subscription", func() bool { k, _ := pub.SubscriptionCount(); return k == 1 })
			// A message finds the node idle unless another of its
			// callbacks runs (start-up work on a loaded machine): send
			// until one has run on the receive goroutine, or 20.
			inline := 0
			for i := 0; i < 20 && (!inlineOn || inline == 0); i++ {
				if err := pub.Publish(&std_msgs_msg.Int32{Data: int32(i)}); err != nil {
					t.Fatal(err)
				}
				var w where
				select {
				case w = <-got:
				case <-time.After(failAfter):
					t.Fatal("no message")
				}
				if !w.onCallback || w.receive == w.node {
					t.Fatalf("callback ran with %+v", w)
				}
				if w.receive {
					inline++
				}
			}
			if !inlineOn && inline > 0 {
				t.Errorf("%d callbacks ran on the receive goroutine with NodeGoroutineCallbacks", inline)
			}
			if inlineOn && inline == 0 {
				t.Error("no callback of the idle node ran on the receive goroutine")
			}
		})
	}
}

// TestBlockingCallbackHoldsUpOnlyItsNode: while one node's callback blocks
// (here: it calls a service of another node of the same Context, and waits
// for a message that node B receives), the other nodes go on receiving;
// the blocked node's later messages wait and arrive in order.
func TestBlockingCallbackHoldsUpOnlyItsNode(t *testing.T) {
	c := newInlineContext(t, testenv.Domain(t), true)
	a := mustNode(t, c, "a", "")
	b := mustNode(t, c, "b", "")
	srv := mustNode(t, c, "server", "")
	if _, err := NewService(srv, "/set", std_srvs_srv.SetBool, func(_ context.Context, r *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
		return &std_srvs_srv.SetBool_Response{Success: r.Data, Message: "set"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	cli, err := NewClient(a, "/set", std_srvs_srv.SetBool)
	if err != nil {
		t.Fatal(err)
	}
	fromB := make(chan int32, 16)
	if _, err := NewSubscription(b, "/to_b", QoSDefault, func(m *std_msgs_msg.Int32) { fromB <- m.Data }); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int32
	var callErr error
	var firstInline atomic.Bool
	if _, err := NewSubscription(a, "/to_a", QoS{History: HistoryKeepAll, Reliability: ReliabilityReliable}, func(m *std_msgs_msg.Int32) {
		if m.Data == 0 {
			firstInline.Store(goid.Current() == c.part.ReceiveGoroutine())
			// Blocks on what only other deliveries bring: a response
			// and a message of node b.
			ctx, cancel := context.WithTimeout(context.Background(), failAfter)
			defer cancel()
			resp, err := cli.Call(ctx, &std_srvs_srv.SetBool_Request{Data: true})
			if err == nil && (!resp.Success || resp.Message != "set") {
				err = context.DeadlineExceeded
			}
			if err == nil {
				select {
				case <-fromB:
				case <-ctx.Done():
					err = ctx.Err()
				}
			}
			mu.Lock()
			callErr = err
			mu.Unlock()
		}
		mu.Lock()
		order = append(order, m.Data)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	toA, err := NewPublisher[std_msgs_msg.Int32](srv, "/to_a", QoS{History: HistoryKeepAll, Reliability: ReliabilityReliable})
	if err != nil {
		t.Fatal(err)
	}
	toB, err := NewPublisher[std_msgs_msg.Int32](srv, "/to_b", QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	waitGraph(t, c, "the subscriptions and the service", func() bool {
		ka, _ := toA.SubscriptionCount()
		kb, _ := toB.SubscriptionCount()
		return ka == 1 && kb == 1 && cli.ServiceIsReady()
	})
	for i := int32(0); i < 20; i++ {
		if err := toA.Publish(&std_msgs_msg.Int32{Data: i}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(20 * time.Millisecond) // a's first callback now waits for b's message
	if err := toB.Publish(&std_msgs_msg.Int32{Data: 99}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, failAfter, "node a's 20 messages", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order) == 20
	})
	mu.Lock()
	defer mu.Unlock()
	if callErr != nil {
		t.Errorf("the blocked callback's call or wait: %v", callErr)
	}
	for i, v := range order {
		if v != int32(i) {
			t.Fatalf("node a's messages out of order: %v", order)
		}
	}
	switch {
	case !firstInline.Load():
		// The node was busy when the first message came (start-up work
		// on a loaded machine): it ran on the node's goroutine.
		t.Log("the blocking callback did not run on the receive goroutine")
	case c.part.HandOffs() == 0:
		t.Error("no hand-off while a callback blocked on the receive goroutine")
	}
}

// TestCloseNodeFromInlineCallback: a callback run on the receive goroutine
// may close its own node.
func TestCloseNodeFromInlineCallback(t *testing.T) {
	c := newInlineContext(t, testenv.Domain(t), true)
	n := mustNode(t, c, "closer", "")
	closed := make(chan error, 1)
	if _, err := NewSubscription(n, "close", QoSDefault, func(*std_msgs_msg.Int32) { closed <- n.Close() }); err != nil {
		t.Fatal(err)
	}
	p := mustNode(t, c, "sender", "")
	pub, err := NewPublisher[std_msgs_msg.Int32](p, "close", QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	waitGraph(t, c, "the subscription", func() bool { k, _ := pub.SubscriptionCount(); return k == 1 })
	if err := pub.Publish(&std_msgs_msg.Int32{Data: 1}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close from the callback: %v", err)
		}
	case <-time.After(failAfter):
		t.Fatal("the callback did not close its node")
	}
}

// TestInlineCallbacksEnv: FSMNODES_INLINE_CALLBACKS=0 (false, no, off)
// turns inline callbacks off as ContextOptions.NodeGoroutineCallbacks does;
// unset or anything else leaves them on.
func TestInlineCallbacksEnv(t *testing.T) {
	for _, tc := range []struct {
		env, opt string
		off      bool
	}{
		{"", "", false}, {"1", "", false}, {"yes", "", false}, {"on", "", false},
		{"0", "", true}, {"false", "", true}, {" Off ", "", true}, {"NO", "", true},
		{"", "option", true}, {"1", "option", true},
	} {
		domain := testenv.Domain(t)
		c, err := NewContext(ContextOptions{
			DomainID: &domain, NoSignals: true, NodeGoroutineCallbacks: tc.opt != "",
			Getenv: func(k string) string {
				if k == "FSMNODES_INLINE_CALLBACKS" {
					return tc.env
				}
				return os.Getenv(k)
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.noInline != tc.off {
			t.Errorf("FSMNODES_INLINE_CALLBACKS=%q, option %q: inline off %v, want %v", tc.env, tc.opt, c.noInline, tc.off)
		}
		c.Close()
	}
}
