package rosbridge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fsmnodes/fsmnodes/internal/foxglove"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/msgs"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const wait = 20 * time.Second

func newContext(t *testing.T, domain uint32) *ros.Context {
	t.Helper()
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true, LogOutput: testenv.LogWriter{T: t}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = rc.Spin(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		rc.Close()
	})
	return rc
}

func newNode(t *testing.T, rc *ros.Context, name, ns string) *ros.Node {
	t.Helper()
	n, err := rc.NewNode(name, ns)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// startBridge runs a Bridge with a Server that has no clients; the tests
// call the Backend methods directly and look at what the Server was told.
func startBridge(t *testing.T, rc *ros.Context, cfg Config) (*Bridge, *foxglove.Server) {
	t.Helper()
	n := newNode(t, rc, NodeName, "")
	cfg.Registry = msgs.Registry()
	b, err := New(n, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := foxglove.New(b, foxglove.Options{Capabilities: AllCapabilities, SupportedEncodings: []string{Encoding}})
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.Start(ctx, srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		srv.Close()
		b.Close()
	})
	return b, srv
}

func channel(srv *foxglove.Server, topic string) (foxglove.Channel, bool) {
	for _, c := range srv.Channels() {
		if c.Topic == topic {
			return c, true
		}
	}
	return foxglove.Channel{}, false
}

func service(srv *foxglove.Server, name string) (foxglove.Service, bool) {
	for _, s := range srv.Services() {
		if s.Name == name {
			return s, true
		}
	}
	return foxglove.Service{}, false
}

// An unknown type: a real ROS type name this build has no definition for.
var unknownType = &rosidl.TypeInfo{
	Name:    "fake_msgs/msg/Thing",
	DDSName: "fake_msgs::msg::dds_::Thing_",
	New:     func() rosidl.Message { return &std_msgs_msg.String{} },
}

func TestChannelsFollowTheGraph(t *testing.T) {
	domain := testenv.Domain(t)
	peer := newContext(t, domain)
	bridgeCtx := newContext(t, domain)
	_, srv := startBridge(t, bridgeCtx, Config{})
	pn := newNode(t, peer, "talker", "/ns")
	visible, err := ros.NewPublisher[std_msgs_msg.String](pn, "chatter", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewPublisher[std_msgs_msg.String](pn, "_hidden/chatter", ros.QoSDefault); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewDynamicPublisher(pn, "thing", unknownType, ros.QoSDefault); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewService(pn, "reset", std_srvs_srv.Trigger, func(ctx context.Context, req *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
		return &std_srvs_srv.Trigger_Response{Success: true, Message: "done"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, "/ns/chatter and /ns/reset offered", func() bool {
		_, c := channel(srv, "/ns/chatter")
		_, s := service(srv, "/ns/reset")
		return c && s
	})
	ch, _ := channel(srv, "/ns/chatter")
	if ch.Encoding != "cdr" || ch.SchemaEncoding != "ros2msg" || ch.SchemaName != "std_msgs/msg/String" ||
		ch.Schema != std_msgs_msg.String_TypeInfo.Definition {
		t.Errorf("channel %+v", ch)
	}
	sv, _ := service(srv, "/ns/reset")
	if sv.Type != "std_srvs/srv/Trigger" || sv.Request.SchemaName != "std_srvs/srv/Trigger_Request" ||
		!strings.Contains(sv.Response.Schema, "string message") || sv.RequestSchema != sv.Request.Schema {
		t.Errorf("service %+v", sv)
	}
	for _, c := range srv.Channels() {
		if strings.Contains(c.Topic, "_hidden") || c.Topic == "/ns/thing" {
			t.Errorf("offered %s (%s)", c.Topic, c.SchemaName)
		}
	}
	// A topic whose last endpoint leaves is withdrawn.
	if err := visible.Close(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, "/ns/chatter withdrawn", func() bool {
		_, c := channel(srv, "/ns/chatter")
		return !c
	})
}

func TestIncludeHidden(t *testing.T) {
	domain := testenv.Domain(t)
	peer := newContext(t, domain)
	_, srv := startBridge(t, newContext(t, domain), Config{IncludeHidden: true})
	pn := newNode(t, peer, "talker", "")
	if _, err := ros.NewPublisher[std_msgs_msg.String](pn, "_hidden/chatter", ros.QoSDefault); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, "the hidden topic offered", func() bool {
		_, c := channel(srv, "/_hidden/chatter")
		return c
	})
}

// Subscribe forwards the wire bytes; a transient-local publisher's latched
// sample arrives because the bridge's QoS follows the publisher.
func TestSubscribeRawAndLatched(t *testing.T) {
	domain := testenv.Domain(t)
	peer := newContext(t, domain)
	b, srv := startBridge(t, newContext(t, domain), Config{})
	pn := newNode(t, peer, "latcher", "")
	pub, err := ros.NewPublisher[std_msgs_msg.String](pn, "latched", ros.QoSLatched)
	if err != nil {
		t.Fatal(err)
	}
	msg := &std_msgs_msg.String{Data: "state: ready"}
	if err := pub.Publish(msg); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, "/latched offered", func() bool {
		_, c := channel(srv, "/latched")
		return c
	})
	ch, _ := channel(srv, "/latched")
	if q := b.qosFor("/latched"); q.Durability != ros.DurabilityTransientLocal || q.Depth != 1 {
		t.Errorf("QoS for a latched topic: %+v", q)
	}
	got := make(chan []byte, 4)
	stop, err := b.Subscribe(ch, func(ts uint64, payload []byte) {
		if time.Since(time.Unix(0, int64(ts))) > time.Minute {
			t.Errorf("receive time %d", ts)
		}
		got <- payload
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	select {
	case p := <-got:
		var back std_msgs_msg.String
		if err := rosidl.Unmarshal(p, &back); err != nil || back.Data != msg.Data {
			t.Errorf("payload decodes to %q, %v", back.Data, err)
		}
	case <-time.After(wait):
		t.Fatal("the latched sample did not arrive")
	}
}

type twistSink struct {
	mu  sync.Mutex
	got []*geometry_msgs_msg.Twist
}

func (s *twistSink) add(m *geometry_msgs_msg.Twist) {
	s.mu.Lock()
	s.got = append(s.got, m)
	s.mu.Unlock()
}

func (s *twistSink) n() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got)
}

func TestClientPublishChecksTypeAndPayload(t *testing.T) {
	domain := testenv.Domain(t)
	peer := newContext(t, domain)
	b, _ := startBridge(t, newContext(t, domain), Config{})
	pn := newNode(t, peer, "listener", "")
	var sink twistSink
	if _, err := ros.NewSubscription(pn, "cmd_vel", ros.QoSDefault, sink.add); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewPublisher[std_msgs_msg.String](pn, "words", ros.QoSDefault); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, "the peer's topics in the bridge's graph", func() bool {
		return len(b.rc.SubscriptionsInfo("/cmd_vel")) == 1 && len(b.rc.PublishersInfo("/words")) == 1
	})
	for _, tc := range []struct {
		ch   foxglove.ClientChannel
		want string
	}{
		{foxglove.ClientChannel{Topic: "/x", Encoding: "json", SchemaName: "geometry_msgs/msg/Twist"}, "not supported"},
		{foxglove.ClientChannel{Topic: "/x", Encoding: "cdr", SchemaName: "fake_msgs/msg/Thing"}, "unknown message type"},
		{foxglove.ClientChannel{Topic: "/words", Encoding: "cdr", SchemaName: "geometry_msgs/msg/Twist"}, "already carries type std_msgs/msg/String"},
	} {
		if _, err := b.ClientAdvertise(tc.ch); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("advertise %+v: %v, want %q", tc.ch, err, tc.want)
		}
	}
	pub, err := b.ClientAdvertise(foxglove.ClientChannel{Topic: "/cmd_vel", Encoding: "cdr", SchemaName: "geometry_msgs/Twist"})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	twist := &geometry_msgs_msg.Twist{}
	twist.Linear.X, twist.Angular.Z = 0.3, -0.2
	good := rosidl.Marshal(twist, nil)
	if err := pub.Publish(good[:len(good)-9]); err == nil || !strings.Contains(err.Error(), "malformed geometry_msgs/msg/Twist") {
		t.Errorf("a truncated Twist: %v", err)
	}
	if err := pub.Publish([]byte{1, 2}); err == nil {
		t.Error("two bytes were published")
	}
	testenv.WaitFor(t, wait, "a Twist through the bridge", func() bool {
		_ = pub.Publish(good)
		return sink.n() > 0
	})
	sink.mu.Lock()
	defer sink.mu.Unlock()
	for _, m := range sink.got {
		if !reflect.DeepEqual(m, twist) {
			t.Errorf("received %+v, want %+v (only the good message may arrive)", m, twist)
		}
	}
}

func TestCallService(t *testing.T) {
	domain := testenv.Domain(t)
	peer := newContext(t, domain)
	b, srv := startBridge(t, newContext(t, domain), Config{})
	pn := newNode(t, peer, "motor", "")
	if _, err := ros.NewService(pn, "enable", std_srvs_srv.SetBool, func(ctx context.Context, req *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
		return &std_srvs_srv.SetBool_Response{Success: req.Data, Message: "enabled"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, "/enable offered", func() bool {
		_, ok := service(srv, "/enable")
		return ok
	})
	sv, _ := service(srv, "/enable")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	resp, err := b.CallService(ctx, sv, "cdr", rosidl.Marshal(&std_srvs_srv.SetBool_Request{Data: true}, nil))
	if err != nil {
		t.Fatal(err)
	}
	var r std_srvs_srv.SetBool_Response
	if err := rosidl.Unmarshal(resp, &r); err != nil || !r.Success || r.Message != "enabled" {
		t.Errorf("response %+v, %v", r, err)
	}
	if _, err := b.CallService(ctx, sv, "cdr", []byte{0, 1, 0}); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Errorf("malformed request: %v", err)
	}
	if _, err := b.CallService(ctx, sv, "json", nil); err == nil {
		t.Error("a json request was accepted")
	}
	gone := sv
	gone.Name = "/nobody"
	short, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	if _, err := b.CallService(short, gone, "cdr", rosidl.Marshal(&std_srvs_srv.SetBool_Request{}, nil)); err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("call of a missing service: %v", err)
	}
}

// TestCallServiceThatAppearsLater: a call may wait for its service to
// appear. A graph refresh in the meantime used to close the call's client
// (the bridge forgets clients of services that are not in the graph), and
// the call failed with "ros: closed" instead of reaching the service (seen
// in CI as TestCallService's missing-service case failing with "ros:
// closed" instead of its deadline).
func TestCallServiceThatAppearsLater(t *testing.T) {
	domain := testenv.Domain(t)
	peer := newContext(t, domain)
	b, _ := startBridge(t, newContext(t, domain), Config{})
	sv := foxglove.Service{ServiceInfo: foxglove.ServiceInfo{Name: "/late", Type: "std_srvs/srv/SetBool"}}
	type result struct {
		resp []byte
		err  error
	}
	done := make(chan result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	go func() {
		resp, err := b.CallService(ctx, sv, "cdr", rosidl.Marshal(&std_srvs_srv.SetBool_Request{Data: true}, nil))
		done <- result{resp, err}
	}()
	// While the call waits, the bridge refreshes its graph (as on any
	// graph change), in which /late does not exist yet.
	testenv.WaitFor(t, wait, "the call's client", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.clients) == 1
	})
	for i := 0; i < 3; i++ {
		b.Refresh()
	}
	pn := newNode(t, peer, "late_server", "")
	if _, err := ros.NewService(pn, "/late", std_srvs_srv.SetBool, func(ctx context.Context, req *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
		return &std_srvs_srv.SetBool_Response{Success: req.Data, Message: "late"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("call of a service that appeared during the call: %v", r.err)
	}
	var resp std_srvs_srv.SetBool_Response
	if err := rosidl.Unmarshal(r.resp, &resp); err != nil || !resp.Success || resp.Message != "late" {
		t.Errorf("response %+v, %v", resp, err)
	}
}

func TestParametersAcrossNodes(t *testing.T) {
	domain := testenv.Domain(t)
	peer := newContext(t, domain)
	b, _ := startBridge(t, newContext(t, domain), Config{})
	a := newNode(t, peer, "a", "/ns")
	if _, err := ros.DeclareParam(a, "gain", 1.5, ros.ParamDescriptor{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.DeclareParam(a, "names", []string{"x", "y"}, ros.ParamDescriptor{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.DeclareParam(a, "fixed", int64(3), ros.ParamDescriptor{ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	c := newNode(t, peer, "c", "")
	if _, err := ros.DeclareParam(c, "on", true, ros.ParamDescriptor{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	get := func(names ...string) map[string]any {
		ps, err := b.GetParameters(ctx, names)
		if err != nil {
			t.Fatalf("GetParameters(%v): %v", names, err)
		}
		out := map[string]any{}
		for _, p := range ps {
			out[p.Name] = p.Value
		}
		return out
	}
	testenv.WaitFor(t, wait, "both nodes' parameter services", func() bool {
		return len(b.paramNodes()) >= 2
	})
	all := get()
	for name, want := range map[string]any{"/ns/a.gain": 1.5, "/ns/a.names": []string{"x", "y"}, "/ns/a.fixed": int64(3), "/c.on": true} {
		if !reflect.DeepEqual(all[name], want) {
			t.Errorf("%s = %#v, want %#v", name, all[name], want)
		}
	}
	for name := range all {
		if strings.HasPrefix(name, "/foxglove_bridge.") {
			t.Errorf("the bridge lists its own parameter %s", name)
		}
	}
	if got := get("/ns/a.gain", "/ns/a.nothing"); len(got) != 1 || got["/ns/a.gain"] != 1.5 {
		t.Errorf("named get: %v", got)
	}
	err := b.SetParameters(ctx, []foxglove.Parameter{
		{Name: "/ns/a.gain", Value: 2.5},
		{Name: "/ns/a.names", Value: foxglove.EmptyArray{}},
		{Name: "/ns/a.fixed", Value: int64(4)},
		{Name: "/c.on", Value: false},
		{Name: "no_node_here", Value: true},
	})
	if err == nil || !strings.Contains(err.Error(), "/ns/a.fixed") || !strings.Contains(err.Error(), "no_node_here") {
		t.Errorf("set: %v; want errors naming /ns/a.fixed and no_node_here", err)
	}
	got := get("/ns/a.gain", "/ns/a.names", "/ns/a.fixed", "/c.on")
	want := map[string]any{"/ns/a.gain": 2.5, "/ns/a.names": []string{}, "/ns/a.fixed": int64(3), "/c.on": false}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after set: %#v, want %#v", got, want)
	}
}

// Changes seen on /parameter_events reach the server as /node.param.
func TestParameterEventsForwarded(t *testing.T) {
	domain := testenv.Domain(t)
	peer := newContext(t, domain)
	_, srv := startBridge(t, newContext(t, domain), Config{})
	n := newNode(t, peer, "tuned", "")
	if _, err := ros.DeclareParam(n, "rate", 10.0, ros.ParamDescriptor{}); err != nil {
		t.Fatal(err)
	}
	// A client that watches /tuned.rate, through the real server.
	events := watchParams(t, srv, "/tuned.rate")
	testenv.WaitFor(t, wait, "the update of /tuned.rate", func() bool {
		_ = n.SetParameter("rate", 20.0)
		select {
		case p := <-events:
			return p.Name == "/tuned.rate" && p.Value == 20.0
		default:
			return false
		}
	})
}

// A raw subscription dropped nothing in these tests, and the bridge
// offers its own counters topic.
func TestDiagnosticsOffered(t *testing.T) {
	domain := testenv.Domain(t)
	_, srv := startBridge(t, newContext(t, domain), Config{DiagnosticsPeriod: 100 * time.Millisecond})
	testenv.WaitFor(t, wait, "/diagnostics offered", func() bool {
		c, ok := channel(srv, "/diagnostics")
		return ok && c.SchemaName == "diagnostic_msgs/msg/DiagnosticArray"
	})
}

// watchParams connects a WebSocket client to srv that subscribes to the
// named parameters and returns the updates it receives.
func watchParams(t *testing.T, srv *foxglove.Server, names ...string) <-chan foxglove.Parameter {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), &websocket.DialOptions{Subprotocols: []string{foxglove.Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	conn.SetReadLimit(64 << 20)
	req, _ := json.Marshal(map[string]any{"op": "subscribeParameterUpdates", "parameterNames": names})
	if err := conn.Write(ctx, websocket.MessageText, req); err != nil {
		t.Fatal(err)
	}
	out := make(chan foxglove.Parameter, 100)
	go func() {
		for {
			typ, data, err := conn.Read(ctx)
			if err != nil {
				return
			}
			var m struct {
				Op         string               `json:"op"`
				Parameters []foxglove.Parameter `json:"parameters"`
			}
			if typ == websocket.MessageText && json.Unmarshal(data, &m) == nil && m.Op == "parameterValues" {
				for _, p := range m.Parameters {
					out <- p
				}
			}
		}
	}()
	return out
}
