package ros

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// Closing a Context stops every goroutine it started (node loops, timers,
// signal handler, DDS receive goroutine), also with calls pending and
// callbacks closing their own node.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	domainClose := testenv.Domain(t)
	// The first round starts the runtime's own signal goroutine (it stays);
	// the base count is taken after it.
	base := 0
	for i := 0; i < 4; i++ {
		if i == 1 {
			base = runtime.NumGoroutine()
		}
		domain := uint32(domainClose)
		c, err := NewContext(ContextOptions{DomainID: &domain, Getenv: testEnv, LogOutput: testenv.LogWriter{T: t}})
		if err != nil {
			t.Fatal(err)
		}
		n := mustNode(t, c, "closer", "")
		if _, err := n.NewTimer(time.Millisecond, func() {}); err != nil {
			t.Fatal(err)
		}
		if _, err := NewSubscription(n, "x", QoSDefault, func(*std_msgs_msg.String) {}); err != nil {
			t.Fatal(err)
		}
		cli, err := NewClient(n, "/nobody", std_srvs_srv.Trigger)
		if err != nil {
			t.Fatal(err)
		}
		callErr := make(chan error, 1)
		go func() {
			_, err := cli.Call(context.Background(), &std_srvs_srv.Trigger_Request{})
			callErr <- err
		}()
		// A node whose callback waits for an answer that never comes can
		// still be closed: the call fails with ErrClosed.
		waiter := mustNode(t, c, "waiter", "")
		wcli, err := NewClient(waiter, "/nobody/either", std_srvs_srv.Trigger)
		if err != nil {
			t.Fatal(err)
		}
		inCall := make(chan struct{})
		waiterErr := make(chan error, 1)
		waiter.Post(func() {
			close(inCall)
			_, err := wcli.Call(context.Background(), &std_srvs_srv.Trigger_Request{})
			waiterErr <- err
		})
		// A node that closes itself from its own callback.
		self := mustNode(t, c, "self_closer", "")
		closed := make(chan error, 1)
		self.Post(func() { closed <- self.Close() })
		spun := make(chan error, 1)
		go func() { spun <- c.Spin(context.Background()) }()
		if err := <-closed; err != nil {
			t.Errorf("node closing itself: %v", err)
		}
		<-inCall
		if err := waiter.Close(); err != nil {
			t.Errorf("closing a node blocked in Call: %v", err)
		}
		if err := <-waiterErr; err != ErrClosed {
			t.Errorf("Call in a closing node = %v, want ErrClosed", err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-spun; err != nil {
			t.Errorf("Spin after Close = %v, want nil", err)
		}
		if err := <-callErr; err != ErrClosed {
			t.Errorf("pending Call after Close = %v, want ErrClosed", err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := c.NewNode("late", ""); err == nil {
			t.Error("NewNode on a closed Context succeeded")
		}
	}
	deadline := time.Now().Add(failAfter)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines before, %d after closing:\n%s", base, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
