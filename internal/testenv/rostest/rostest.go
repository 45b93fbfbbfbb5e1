// Package rostest holds test helpers that talk to nodes through
// internal/ros. They are apart from internal/testenv because the tests of
// internal/ros itself use testenv, which therefore cannot import it.
package rostest

import (
	"context"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
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
