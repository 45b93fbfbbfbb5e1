// Package rostest holds test helpers that talk to nodes through
// internal/ros. They are apart from internal/testenv because the tests of
// internal/ros itself use testenv, which therefore cannot import it.
package rostest

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
)

// Call calls the service name of type srv from n once the service is
// there, and returns the response. Any error (the client, the wait, the
// call) fails the test; ctx bounds the wait and the call.
func Call[Req, Resp any](t testing.TB, ctx context.Context, n *ros.Node, name string, srv rosidl.Service[Req, Resp], req *Req) *Resp {
	t.Helper()
	c, err := ros.NewClient(n, name, srv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WaitForService(ctx); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	resp, err := c.Call(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return resp
}

// Node returns the test's own node named name in domain and a context that
// ends with the test. Its ROS context spins from the start (entities made
// later join it) until the test ends, and logs into the test's log.
func Node(t testing.TB, domain uint32, name string) (*ros.Node, context.Context) {
	t.Helper()
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "test: "}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	n, err := rc.NewNode(name, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = rc.Spin(ctx) }()
	return n, ctx
}

// Counters follows the fault counters one node reports on /diagnostics
// (internal/ros's standard counters and the node's own).
type Counters struct {
	mu    sync.Mutex
	vals  map[string]uint64
	heard bool
}

// WatchCounters subscribes n to /diagnostics and follows the counters of
// node (a fully qualified node name).
func WatchCounters(t testing.TB, n *ros.Node, node string) *Counters {
	t.Helper()
	c := &Counters{vals: map[string]uint64{}}
	name := ros.DiagnosticsStatusName(node)
	if _, err := ros.NewSubscription(n, ros.DiagnosticsTopic, ros.QoSDiagnosticsReader, func(m *diagnostic_msgs_msg.DiagnosticArray) {
		for _, st := range m.Status {
			if st.Name != name {
				continue
			}
			c.mu.Lock()
			c.heard = true
			for _, kv := range st.Values {
				if v, err := strconv.ParseUint(kv.Value, 10, 64); err == nil {
					c.vals[kv.Key] = v
				}
			}
			c.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	return c
}

// Get returns the last value of counter name (0 before any report).
func (c *Counters) Get(name string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.vals[name]
}

// Heard reports whether a report of the node came.
func (c *Counters) Heard() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.heard
}
