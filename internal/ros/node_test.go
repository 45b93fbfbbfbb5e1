package ros

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// Each test that talks over DDS reserves its own domain (testenv.Domain),
// so parallel tests never hear each other.

// failAfter is a failure timeout only; nothing asserts on timing.
const failAfter = 20 * time.Second

// TestMain keeps contexts that read the real environment (other tests of
// this package) on loopback too (testenv.Main).
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m))
}

// testEnv keeps all test traffic on this machine, whatever the environment
// of the test run says. It names the distro (Jazzy, the default dialect):
// a Context without ROS_DISTRO first waits to learn its peers' dialect
// (dialect_test.go covers that).
func testEnv(k string) string {
	switch k {
	case "ROS_AUTOMATIC_DISCOVERY_RANGE":
		return "LOCALHOST"
	case "ROS_DISTRO":
		return "jazzy"
	}
	return ""
}

// newTestContext creates a spinning Context on domain with the given
// command line; it is closed at the end of the test.
func newTestContext(t testing.TB, domain uint32, args ...string) *Context {
	t.Helper()
	return startTestContext(t, ContextOptions{Args: args, DomainID: &domain})
}

// startTestContext creates a spinning Context with opts, the test's
// environment (testEnv), no signal handler and the log to the test; it is
// closed at the end of the test.
func startTestContext(t testing.TB, opts ContextOptions) *Context {
	t.Helper()
	opts.Getenv, opts.NoSignals, opts.LogOutput = testEnv, true, testenv.LogWriter{T: t}
	c, err := NewContext(opts)
	if err != nil {
		t.Fatalf("NewContext: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Spin(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func mustNode(t testing.TB, c *Context, name, ns string) *Node {
	t.Helper()
	n, err := c.NewNode(name, ns)
	if err != nil {
		t.Fatalf("NewNode(%q, %q): %v", name, ns, err)
	}
	return n
}

func waitGraph(t testing.TB, c *Context, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	if err := c.WaitForGraph(ctx, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func TestPubSubAcrossContexts(t *testing.T) {
	domainPubSub := testenv.Domain(t)
	t.Parallel()
	c1 := newTestContext(t, domainPubSub)
	c2 := newTestContext(t, domainPubSub)
	talker := mustNode(t, c1, "talker", "/demo")
	listener := mustNode(t, c2, "listener", "/demo")

	got := make(chan string, 100)
	sub, err := NewSubscription(listener, "chatter", QoSDefault, func(m *std_msgs_msg.String) { got <- m.Data })
	if err != nil {
		t.Fatal(err)
	}
	pub, err := NewPublisher[std_msgs_msg.String](talker, "chatter", QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	if pub.TopicName() != "/demo/chatter" || sub.TopicName() != "/demo/chatter" {
		t.Fatalf("topic names %q %q", pub.TopicName(), sub.TopicName())
	}
	waitGraph(t, c1, "the subscription to match", func() bool {
		n, _ := pub.SubscriptionCount()
		return n == 1
	})
	for i := 0; i < 5; i++ {
		if err := pub.Publish(&std_msgs_msg.String{Data: fmt.Sprintf("hello %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 5; i++ {
		select {
		case s := <-got:
			if want := fmt.Sprintf("hello %d", i); s != want {
				t.Fatalf("message %d = %q, want %q", i, s, want)
			}
		case <-time.After(failAfter):
			t.Fatalf("message %d not received", i)
		}
	}
	if sub.Malformed() != 0 || sub.Dropped() != 0 {
		t.Errorf("malformed %d dropped %d", sub.Malformed(), sub.Dropped())
	}
}

func TestGraphQueries(t *testing.T) {
	domainGraph := testenv.Domain(t)
	t.Parallel()
	c1 := newTestContext(t, domainGraph)
	c2 := newTestContext(t, domainGraph)
	a := mustNode(t, c1, "alpha", "/g")
	mustNode(t, c2, "beta", "")
	if _, err := NewPublisher[std_msgs_msg.String](a, "~/out", QoSLatched); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSubscription(a, "/in", QoSSensorData, func(*std_msgs_msg.Bool) {}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewService(a, "reset", std_srvs_srv.Trigger, func(context.Context, *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
		return &std_srvs_srv.Trigger_Response{Success: true}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewClient(a, "/other/enable", std_srvs_srv.SetBool); err != nil {
		t.Fatal(err)
	}
	waitGraph(t, c2, "node alpha with its endpoints", func() bool {
		pubs, err := c2.PublisherNamesAndTypesByNode("alpha", "/g")
		clients, _ := c2.ClientNamesAndTypesByNode("alpha", "/g")
		services := c2.ServiceNamesAndTypes()
		return err == nil && hasNT(pubs, "/g/alpha/out", "std_msgs/msg/String") && len(c2.PublishersInfo("/g/alpha/out")) == 1 &&
			len(c2.SubscriptionsInfo("/in")) == 1 && hasNT(services, "/g/reset", "std_srvs/srv/Trigger") &&
			hasNT(services, "/other/enable", "std_srvs/srv/SetBool") && hasNT(clients, "/other/enable", "std_srvs/srv/SetBool") &&
			len(c2.NodeNames()) == 2
	})
	names := c2.NodeNames()
	if len(names) != 2 || names[0].FullyQualifiedName() != "/beta" || names[1].FullyQualifiedName() != "/g/alpha" {
		t.Errorf("NodeNames = %+v", names)
	}
	topics := c2.TopicNamesAndTypes()
	want := map[string]string{"/g/alpha/out": "std_msgs/msg/String", "/in": "std_msgs/msg/Bool"}
	for name, typ := range want {
		found := false
		for _, nt := range topics {
			if nt.Name == name && len(nt.Types) == 1 && nt.Types[0] == typ {
				found = true
			}
		}
		if !found {
			t.Errorf("topic %s %s missing from %+v", name, typ, topics)
		}
	}
	for _, nt := range topics {
		if strings.HasPrefix(nt.Name, "/ros_discovery_info") || strings.Contains(nt.Name, "Request") {
			t.Errorf("non-topic listed: %+v", nt)
		}
	}
	for _, nt := range c2.ServiceNamesAndTypes() {
		if len(nt.Types) != 1 || !strings.Contains(nt.Types[0], "/srv/") {
			t.Errorf("service %s has types %q", nt.Name, nt.Types)
		}
	}
	info := c2.PublishersInfo("/g/alpha/out")[0]
	if info.NodeName != "alpha" || info.NodeNamespace != "/g" || info.TopicType != "std_msgs/msg/String" ||
		info.TopicTypeHash != std_msgs_msg.String_TypeInfo.Hash || info.QoS.Durability != DurabilityTransientLocal ||
		info.QoS.Depth != 1 || info.Kind != EndpointPublisher {
		t.Errorf("PublishersInfo = %+v", info)
	}
	sinfo := c2.SubscriptionsInfo("/in")
	if len(sinfo) != 1 || sinfo[0].QoS.Reliability != ReliabilityBestEffort || sinfo[0].Kind != EndpointSubscription {
		t.Errorf("SubscriptionsInfo = %+v", sinfo)
	}
	check := func(what string, got []NameAndTypes, err error, name, typ string) {
		t.Helper()
		if err != nil || !hasNT(got, name, typ) {
			t.Errorf("%s = %+v, %v; want %s %s", what, got, err, name, typ)
		}
	}
	got, err := c2.SubscriberNamesAndTypesByNode("alpha", "/g")
	check("subscribers", got, err, "/in", "std_msgs/msg/Bool")
	got, err = c2.ServiceNamesAndTypesByNode("alpha", "/g")
	check("services", got, err, "/g/reset", "std_srvs/srv/Trigger")
	got, err = c2.ClientNamesAndTypesByNode("alpha", "/g")
	check("clients", got, err, "/other/enable", "std_srvs/srv/SetBool")
	if _, err := c2.PublisherNamesAndTypesByNode("nobody", "/"); err == nil {
		t.Error("unknown node: no error")
	}
	if c2.CountPublishers("/g/alpha/out") != 1 || c2.CountSubscribers("/in") != 1 {
		t.Error("counts wrong")
	}
	// Closing the node removes it from the other context's graph.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	waitGraph(t, c2, "alpha to leave", func() bool {
		for _, n := range c2.NodeNames() {
			if n.Name == "alpha" {
				return false
			}
		}
		return len(c2.PublishersInfo("/g/alpha/out")) == 0
	})
}

// hasNT reports whether list holds name with exactly the one type typ.
func hasNT(list []NameAndTypes, name, typ string) bool {
	for _, nt := range list {
		if nt.Name == name {
			return len(nt.Types) == 1 && nt.Types[0] == typ
		}
	}
	return false
}

func TestServiceCallFromCallback(t *testing.T) {
	domainService := testenv.Domain(t)
	t.Parallel()
	c1 := newTestContext(t, domainService)
	c2 := newTestContext(t, domainService)
	server := mustNode(t, c1, "server", "")
	var served atomic.Int32
	_, err := NewService(server, "~/set", std_srvs_srv.SetBool, func(_ context.Context, req *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
		served.Add(1)
		return &std_srvs_srv.SetBool_Response{Success: req.Data, Message: fmt.Sprintf("got %v", req.Data)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	caller := mustNode(t, c2, "caller", "")
	cli, err := NewClient(caller, "/server/set", std_srvs_srv.SetBool)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	if err := cli.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Call(ctx, &std_srvs_srv.SetBool_Request{Data: true})
	if err != nil || !resp.Success || resp.Message != "got true" {
		t.Fatalf("Call = %+v, %v", resp, err)
	}
	// Call from inside a subscription callback of the client's own node.
	results := make(chan string, 1)
	_, err = NewSubscription(caller, "trigger", QoSDefault, func(m *std_msgs_msg.Bool) {
		r, err := cli.Call(ctx, &std_srvs_srv.SetBool_Request{Data: m.Data})
		if err != nil {
			results <- err.Error()
			return
		}
		results <- r.Message
	})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := NewPublisher[std_msgs_msg.Bool](caller, "trigger", QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	waitGraph(t, c2, "trigger subscription", func() bool { n, _ := pub.SubscriptionCount(); return n == 1 })
	if err := pub.Publish(&std_msgs_msg.Bool{Data: false}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-results:
		if r != "got false" {
			t.Fatalf("call from callback: %s", r)
		}
	case <-ctx.Done():
		t.Fatal("call from callback did not complete")
	}
	if served.Load() != 2 {
		t.Errorf("served %d requests, want 2", served.Load())
	}
	// A cancelled context ends a call to a service that is gone.
	cli2, err := NewClient(caller, "/nobody/home", std_srvs_srv.SetBool)
	if err != nil {
		t.Fatal(err)
	}
	if cli2.ServiceIsReady() {
		t.Error("service without server reported ready")
	}
	short, cancelShort := context.WithCancel(ctx)
	cancelShort()
	if _, err := cli2.Call(short, &std_srvs_srv.SetBool_Request{}); err == nil {
		t.Error("call with cancelled context succeeded")
	}
}

func TestCallbacksRunOneAtATime(t *testing.T) {
	domainExecutor := testenv.Domain(t)
	t.Parallel()
	c := newTestContext(t, domainExecutor)
	n := mustNode(t, c, "exec", "")
	var running, overlaps atomic.Int32
	var count atomic.Int32
	enter := func() {
		if running.Add(1) != 1 {
			overlaps.Add(1)
		}
		time.Sleep(time.Millisecond) // widen the window for overlaps
		running.Add(-1)
		count.Add(1)
	}
	for _, topic := range []string{"a", "b"} {
		if _, err := NewSubscription(n, topic, QoSDefault.KeepLast(100), func(*std_msgs_msg.Int32) { enter() }); err != nil {
			t.Fatal(err)
		}
	}
	tm, err := n.NewTimer(time.Millisecond, enter)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, topic := range []string{"a", "b"} {
		pub, err := NewPublisher[std_msgs_msg.Int32](n, topic, QoSDefault)
		if err != nil {
			t.Fatal(err)
		}
		waitGraph(t, c, "local match", func() bool { k, _ := pub.SubscriptionCount(); return k == 1 })
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				pub.Publish(&std_msgs_msg.Int32{Data: int32(i)})
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(failAfter)
	for count.Load() < 60 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	tm.Close()
	if overlaps.Load() != 0 {
		t.Errorf("%d callbacks overlapped", overlaps.Load())
	}
	if count.Load() < 60 {
		t.Errorf("only %d callbacks ran", count.Load())
	}
	// Post runs on the callback goroutine too.
	onLoop := make(chan bool, 1)
	if err := n.Post(func() { onLoop <- n.OnCallbackGoroutine() }); err != nil {
		t.Fatal(err)
	}
	if !<-onLoop {
		t.Error("Post callback not on the node goroutine")
	}
	if n.OnCallbackGoroutine() {
		t.Error("test goroutine reported as callback goroutine")
	}
	n.Close()
	if err := n.Post(func() {}); err != ErrClosed {
		t.Errorf("Post after Close = %v, want ErrClosed", err)
	}
}

func TestMalformedSamplesAreCounted(t *testing.T) {
	domainMalform := testenv.Domain(t)
	t.Parallel()
	c := newTestContext(t, domainMalform)
	n := mustNode(t, c, "victim", "")
	got := make(chan string, 10)
	sub, err := NewSubscription(n, "/text", QoSDefault, func(m *std_msgs_msg.String) { got <- m.Data })
	if err != nil {
		t.Fatal(err)
	}
	// A raw DDS writer sends a string whose length runs past the end.
	tp, err := c.Participant().Topic("rt/text", std_msgs_msg.String_TypeInfo.DDSName)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Participant().NewWriter(tp, dds.QoS{History: dds.KeepLast, Depth: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	waitGraph(t, c, "raw writer match", func() bool { k, _ := sub.PublisherCount(); return k == 1 })
	if err := w.Write([]byte{0, 1, 0, 0, 0xff, 0xff, 0, 0, 'x'}); err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]byte{0, 1, 0, 0, 3, 0, 0, 0, 'o', 'k', 0, 0}); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "ok" {
			t.Fatalf("got %q", s)
		}
	case <-time.After(failAfter):
		t.Fatal("good sample after a bad one not delivered")
	}
	if sub.Malformed() != 1 {
		t.Errorf("Malformed = %d, want 1", sub.Malformed())
	}
}

func TestNodeNamesFromArgs(t *testing.T) {
	domainArgs := testenv.Domain(t)
	t.Parallel()
	c := newTestContext(t, domainArgs, "--ros-args", "-r", "orig:__node:=renamed", "-r", "__ns:=/robot", "-r", "chatter:=/remapped", "--log-level", "debug")
	n := mustNode(t, c, "orig", "/ignored")
	if n.Name() != "renamed" || n.Namespace() != "/robot" || n.FullyQualifiedName() != "/robot/renamed" || n.LoggerName() != "robot.renamed" {
		t.Errorf("node = %s %s %s %s", n.Name(), n.Namespace(), n.FullyQualifiedName(), n.LoggerName())
	}
	got, err := n.ResolveTopicName("chatter")
	if err != nil || got != "/remapped" {
		t.Errorf("ResolveTopicName(chatter) = %q, %v", got, err)
	}
	got, err = n.ResolveServiceName("~/srv")
	if err != nil || got != "/robot/renamed/srv" {
		t.Errorf("ResolveServiceName(~/srv) = %q, %v", got, err)
	}
	if _, err := c.NewNode("bad-name", ""); err == nil {
		t.Error("invalid node name accepted")
	}
	if _, err := NewPublisher[std_msgs_msg.String](n, "bad topic", QoSDefault); err == nil {
		t.Error("invalid topic name accepted")
	}
	if _, err := n.NewTimer(0, func() {}); err == nil {
		t.Error("zero timer period accepted")
	}
	if _, err := NewPublisher[std_msgs_msg.String](n, "x", QoS{Depth: -3}); err == nil {
		t.Error("negative depth accepted")
	}
}

func TestNewContextRejectsBadArgs(t *testing.T) {
	if _, err := NewContext(ContextOptions{Args: []string{"--ros-args", "--what"}, Getenv: testEnv, NoSignals: true, LogOutput: io.Discard}); err == nil {
		t.Error("unknown ROS argument accepted")
	}
	bad := uint32(500)
	if _, err := NewContext(ContextOptions{DomainID: &bad, Getenv: testEnv, NoSignals: true, LogOutput: io.Discard}); err == nil {
		t.Error("domain 500 accepted")
	}
}
