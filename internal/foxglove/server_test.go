package foxglove

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// fakeBackend records what the server asks of it. Like a DDS topic it
// delivers what publish sends to every subscription of the channel, and a
// subscription of a channel with a latched message gets that message at
// once, from within Subscribe, as a transient-local reader does.
type fakeBackend struct {
	mu         sync.Mutex
	sinks      map[uint32][]*Sink
	subscribes map[uint32]int
	stops      map[uint32]int
	latched    map[string][]byte   // topic -> message every new subscription gets
	published  map[string][][]byte // topic -> payloads
	closedPubs []string
	params     map[string]any
	setErr     error
	call       func(ctx context.Context, svc Service, req []byte) ([]byte, error)
}

func newFakeBackend() *fakeBackend {
	return &fakeBackend{sinks: map[uint32][]*Sink{}, subscribes: map[uint32]int{}, stops: map[uint32]int{},
		latched: map[string][]byte{}, published: map[string][][]byte{}, params: map[string]any{}}
}

func (b *fakeBackend) Subscribe(ch Channel, sink Sink) (func(), error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ch.Topic == "/fails" {
		return nil, errors.New("no such topic today")
	}
	entry := &sink
	b.sinks[ch.ID] = append(b.sinks[ch.ID], entry)
	b.subscribes[ch.ID]++
	if m, ok := b.latched[ch.Topic]; ok {
		sink(1, m)
	}
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.sinks[ch.ID] = slices.DeleteFunc(b.sinks[ch.ID], func(e *Sink) bool { return e == entry })
		b.stops[ch.ID]++
	}, nil
}

// publish delivers a message of channel id to every subscription.
func (b *fakeBackend) publish(id uint32, ts uint64, payload []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, sink := range b.sinks[id] {
		(*sink)(ts, payload)
	}
}

// subscribed returns the number of live subscriptions of channel id.
func (b *fakeBackend) subscribed(id uint32) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.sinks[id])
}

type fakePub struct {
	b     *fakeBackend
	topic string
}

func (p *fakePub) Publish(payload []byte) error {
	if bytes.Equal(payload, []byte("bad")) {
		return errors.New("malformed message")
	}
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	p.b.published[p.topic] = append(p.b.published[p.topic], slices.Clone(payload))
	return nil
}

func (p *fakePub) Close() error {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	p.b.closedPubs = append(p.b.closedPubs, p.topic)
	return nil
}

func (b *fakeBackend) ClientAdvertise(ch ClientChannel) (ClientPublisher, error) {
	if ch.SchemaName == "unknown/msg/Type" {
		return nil, errors.New("unknown message type")
	}
	return &fakePub{b: b, topic: ch.Topic}, nil
}

func (b *fakeBackend) CallService(ctx context.Context, svc Service, enc string, req []byte) ([]byte, error) {
	return b.call(ctx, svc, req)
}

func (b *fakeBackend) GetParameters(_ context.Context, names []string) ([]Parameter, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Parameter
	if len(names) == 0 {
		for n := range b.params {
			names = append(names, n)
		}
		slices.Sort(names)
	}
	for _, n := range names {
		if v, ok := b.params[n]; ok {
			out = append(out, Parameter{Name: n, Value: v})
		}
	}
	return out, nil
}

func (b *fakeBackend) SetParameters(_ context.Context, ps []Parameter) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.setErr != nil {
		return b.setErr
	}
	for _, p := range ps {
		if p.Value == nil {
			delete(b.params, p.Name)
		} else {
			b.params[p.Name] = p.Value
		}
	}
	return nil
}

func allCaps() []string {
	return []string{CapClientPublish, CapParameters, CapParametersSubscribe, CapServices, CapConnectionGraph}
}

type harness struct {
	t   *testing.T
	srv *Server
	b   *fakeBackend
	url string
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	b := newFakeBackend()
	if opts.Capabilities == nil {
		opts.Capabilities = allCaps()
	}
	if opts.SupportedEncodings == nil {
		opts.SupportedEncodings = []string{"cdr"}
	}
	srv := New(b, opts)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		hs.Close()
	})
	return &harness{t: t, srv: srv, b: b, url: "ws" + strings.TrimPrefix(hs.URL, "http")}
}

// testClient is a protocol client that collects what the server sends.
type testClient struct {
	t    *testing.T
	conn *websocket.Conn
	text chan map[string]any
	bin  chan []byte
}

func (h *harness) dial() *testClient {
	h.t.Helper()
	c, _ := h.dialOffering(Subprotocol)
	return c
}

// dialOffering connects offering subprotocols in this order of preference
// and returns the client and the subprotocol the server chose.
func (h *harness) dialOffering(subprotocols ...string) (*testClient, string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, h.url, &websocket.DialOptions{Subprotocols: subprotocols})
	if err != nil {
		h.t.Fatalf("dial: %v", err)
	}
	conn.SetReadLimit(64 << 20)
	c := &testClient{t: h.t, conn: conn, text: make(chan map[string]any, 1000), bin: make(chan []byte, 100000)}
	go func() {
		for {
			typ, data, err := conn.Read(context.Background())
			if err != nil {
				close(c.text)
				close(c.bin)
				return
			}
			if typ == websocket.MessageText {
				var m map[string]any
				if err := json.Unmarshal(data, &m); err != nil {
					panic(fmt.Sprintf("server sent invalid JSON %q: %v", data, err))
				}
				c.text <- m
			} else {
				c.bin <- data
			}
		}
	}()
	h.t.Cleanup(func() { conn.CloseNow() })
	return c, conn.Subprotocol()
}

func (c *testClient) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.conn.Write(context.Background(), websocket.MessageText, b); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

func (c *testClient) sendBinary(b []byte) {
	c.t.Helper()
	if err := c.conn.Write(context.Background(), websocket.MessageBinary, b); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// expect waits for the next text message with op (skipping others).
func (c *testClient) expect(op string) map[string]any {
	c.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m, ok := <-c.text:
			if !ok {
				c.t.Fatalf("connection closed while waiting for %q", op)
			}
			if m["op"] == op {
				return m
			}
		case <-timeout:
			c.t.Fatalf("no %q message within 10 s", op)
		}
	}
}

// expectStatus waits for a status message containing substr.
func (c *testClient) expectStatus(level int, substr string) {
	c.t.Helper()
	for {
		m := c.expect("status")
		if int(m["level"].(float64)) == level && strings.Contains(m["message"].(string), substr) {
			return
		}
	}
}

func (c *testClient) expectBinary() []byte {
	c.t.Helper()
	select {
	case b, ok := <-c.bin:
		if !ok {
			c.t.Fatal("connection closed while waiting for a binary message")
		}
		return b
	case <-time.After(10 * time.Second):
		c.t.Fatal("no binary message within 10 s")
	}
	return nil
}

func channelIDs(m map[string]any) map[string]uint32 {
	out := map[string]uint32{}
	for _, c := range m["channels"].([]any) {
		ch := c.(map[string]any)
		out[ch["topic"].(string)] = uint32(ch["id"].(float64))
	}
	return out
}

func odomInfo(topic string) ChannelInfo {
	return ChannelInfo{Topic: topic, Encoding: "cdr", SchemaName: "nav_msgs/msg/Odometry", Schema: "float64 x", SchemaEncoding: "ros2msg"}
}

func TestServerInfoAdvertiseAndIDReuse(t *testing.T) {
	h := newHarness(t, Options{Metadata: map[string]string{"ROS_DISTRO": "jazzy"},
		TopicWhitelist: mustWhitelist(t, "/odom", "/scan")})
	h.srv.SetChannels([]ChannelInfo{odomInfo("/odom"), odomInfo("/secret")})
	c := h.dial()
	info := c.expect("serverInfo")
	if info["name"] != "foxglove_bridge" || info["sessionId"] == "" {
		t.Errorf("serverInfo = %v", info)
	}
	var caps []string
	for _, x := range info["capabilities"].([]any) {
		caps = append(caps, x.(string))
	}
	if !slices.Equal(caps, allCaps()) {
		t.Errorf("capabilities = %v", caps)
	}
	if enc := info["supportedEncodings"].([]any); len(enc) != 1 || enc[0] != "cdr" {
		t.Errorf("supportedEncodings = %v", enc)
	}
	if md := info["metadata"].(map[string]any); md["ROS_DISTRO"] != "jazzy" {
		t.Errorf("metadata = %v", md)
	}
	first := channelIDs(c.expect("advertise"))
	if _, ok := first["/secret"]; ok || len(first) != 1 {
		t.Fatalf("advertised %v; /secret is not whitelisted", first)
	}
	adv := c.expect("advertiseServices")
	if len(adv["services"].([]any)) != 0 {
		t.Errorf("services = %v", adv)
	}
	// A new topic is advertised, a vanished one unadvertised.
	h.srv.SetChannels([]ChannelInfo{odomInfo("/scan")})
	un := c.expect("unadvertise")
	if ids := un["channelIds"].([]any); len(ids) != 1 || uint32(ids[0].(float64)) != first["/odom"] {
		t.Errorf("unadvertise = %v, want [%d]", un, first["/odom"])
	}
	scan := channelIDs(c.expect("advertise"))["/scan"]
	if scan == first["/odom"] {
		t.Errorf("/scan got the id of /odom")
	}
	// /odom comes back with the same schema: same id (the spec allows it).
	h.srv.SetChannels([]ChannelInfo{odomInfo("/scan"), odomInfo("/odom")})
	if got := channelIDs(c.expect("advertise")); got["/odom"] != first["/odom"] || len(got) != 1 {
		t.Errorf("re-advertised %v, want /odom with id %d", got, first["/odom"])
	}
	// Same topic, new schema: a new id.
	changed := odomInfo("/odom")
	changed.Schema = "float64 y"
	h.srv.SetChannels([]ChannelInfo{odomInfo("/scan"), changed})
	c.expect("unadvertise")
	if got := channelIDs(c.expect("advertise")); got["/odom"] == first["/odom"] {
		t.Errorf("a changed schema kept id %d", got["/odom"])
	}
}

func mustWhitelist(t *testing.T, p ...string) []*regexp.Regexp {
	t.Helper()
	wl, err := CompileWhitelist(p)
	if err != nil {
		t.Fatal(err)
	}
	return wl
}

func TestCompileWhitelist_FullMatch(t *testing.T) {
	wl := mustWhitelist(t, "/diffbot/.*", "/odom")
	for name, want := range map[string]bool{"/diffbot/odom": true, "/odom": true, "/odom2": false, "/x/diffbot/a": false} {
		if got := allowed(wl, name); got != want {
			t.Errorf("allowed(%q) = %v, want %v", name, got, want)
		}
	}
	if _, err := CompileWhitelist([]string{"("}); err == nil {
		t.Error("a broken pattern compiled")
	}
}

func parseMessageData(t *testing.T, b []byte) (subID uint32, ts uint64, payload []byte) {
	t.Helper()
	if len(b) < 13 || b[0] != OpMessageData {
		t.Fatalf("not a messageData frame: % x", b[:min(len(b), 16)])
	}
	return binary.LittleEndian.Uint32(b[1:5]), binary.LittleEndian.Uint64(b[5:13]), b[13:]
}

func TestSubscribeMessageDataAndStopped(t *testing.T) {
	h := newHarness(t, Options{})
	h.srv.SetChannels([]ChannelInfo{odomInfo("/odom"), odomInfo("/fails")})
	a, b := h.dial(), h.dial()
	ids := channelIDs(a.expect("advertise"))
	b.expect("advertise")
	odom := ids["/odom"]
	a.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 7, "channelId": odom}}})
	b.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 3, "channelId": odom}}})
	waitFor(t, "both subscriptions", func() bool {
		st := h.srv.Stats()
		return len(st.Clients) == 2 && st.Clients[0].Subscriptions == 1 && st.Clients[1].Subscriptions == 1
	})
	h.b.mu.Lock()
	if n := h.b.subscribes[odom]; n != 2 {
		t.Errorf("backend subscribed %d times for two clients, want one each", n)
	}
	h.b.mu.Unlock()
	payload := []byte{0, 1, 0, 0, 42, 43}
	h.b.publish(odom, 123456789, payload)
	for name, c := range map[string]*testClient{"a": a, "b": b} {
		sub, ts, got := parseMessageData(t, c.expectBinary())
		want := map[string]uint32{"a": 7, "b": 3}[name]
		if sub != want || ts != 123456789 || !bytes.Equal(got, payload) {
			t.Errorf("client %s got sub %d ts %d payload % x", name, sub, ts, got)
		}
	}
	// Errors: reused id, unknown channel, second subscription of a channel,
	// backend failure.
	a.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 7, "channelId": odom}}})
	a.expectStatus(StatusError, "already used")
	a.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 8, "channelId": 999}}})
	a.expectStatus(StatusWarning, "not available")
	a.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 9, "channelId": odom}}})
	a.expectStatus(StatusError, "already subscribed")
	a.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 10, "channelId": ids["/fails"]}}})
	a.expectStatus(StatusError, "no such topic today")
	a.send(map[string]any{"op": "unsubscribe", "subscriptionIds": []any{55}})
	a.expectStatus(StatusWarning, "did not exist")

	// A client's backend subscription ends with its subscription: b leaves
	// by unsubscribing, a by disconnecting.
	b.send(map[string]any{"op": "unsubscribe", "subscriptionIds": []any{3}})
	waitFor(t, "b unsubscribed", func() bool { return h.srv.Stats().Clients[1].Subscriptions+h.srv.Stats().Clients[0].Subscriptions == 1 })
	h.b.mu.Lock()
	if h.b.stops[odom] != 1 {
		t.Errorf("%d backend subscriptions stopped after b unsubscribed, want b's", h.b.stops[odom])
	}
	h.b.mu.Unlock()
	h.b.publish(odom, 5, payload)
	if sub, _, _ := parseMessageData(t, a.expectBinary()); sub != 7 {
		t.Errorf("a's subscription %d after b left, want 7", sub)
	}
	a.conn.Close(websocket.StatusNormalClosure, "")
	waitFor(t, "backend subscription stopped", func() bool {
		h.b.mu.Lock()
		defer h.b.mu.Unlock()
		return h.b.stops[odom] == 2
	})
	// A channel that disappears while subscribed stops its subscription.
	b.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 4, "channelId": odom}}})
	waitFor(t, "resubscribed", func() bool {
		h.b.mu.Lock()
		defer h.b.mu.Unlock()
		return h.b.subscribes[odom] == 3
	})
	h.srv.SetChannels(nil)
	waitFor(t, "stopped on unadvertise", func() bool {
		h.b.mu.Lock()
		defer h.b.mu.Unlock()
		return h.b.stops[odom] == 3 && len(h.b.sinks[odom]) == 0
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestLatchedMessageReachesEveryClient: a transient-local topic's latched
// message (a map, a robot description) reaches every client that
// subscribes, the first one (whose backend subscription delivers it at
// once, while the server is still recording the subscription) and one that
// comes later to a channel already subscribed, as with foxglove_bridge,
// which gives every client a subscription of its own.
func TestLatchedMessageReachesEveryClient(t *testing.T) {
	h := newHarness(t, Options{})
	latched := []byte{0, 1, 0, 0, 7, 7, 7}
	h.b.latched["/map"] = latched
	h.srv.SetChannels([]ChannelInfo{odomInfo("/map")})
	for i, name := range []string{"first", "second", "third"} {
		c := h.dial()
		id := channelIDs(c.expect("advertise"))["/map"]
		c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 10 + i, "channelId": id}}})
		sub, _, got := parseMessageData(t, c.expectBinary())
		if sub != uint32(10+i) || !bytes.Equal(got, latched) {
			t.Fatalf("%s client got subscription %d payload % x, want %d and the latched message", name, sub, got, 10+i)
		}
	}
}

// A client that stops reading must cost bounded memory and never block
// the publisher; a live client beside it still gets the stream.
func TestStalledClientDropsOldestLiveClientServed(t *testing.T) {
	const limit = 200_000
	h := newHarness(t, Options{SendBufferLimit: limit, SendQueueLength: 64})
	h.srv.SetChannels([]ChannelInfo{odomInfo("/map")})
	live := h.dial()
	id := channelIDs(live.expect("advertise"))["/map"]
	// The stalled client: a raw connection that subscribes and never reads.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stalled, _, err := websocket.Dial(ctx, h.url, &websocket.DialOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.CloseNow()
	sub, _ := json.Marshal(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 1, "channelId": id}}})
	if err := stalled.Write(ctx, websocket.MessageText, sub); err != nil {
		t.Fatal(err)
	}
	live.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 2, "channelId": id}}})
	waitFor(t, "two subscribers", func() bool {
		st := h.srv.Stats()
		return len(st.Clients) == 2 && st.Clients[0].Subscriptions == 1 && st.Clients[1].Subscriptions == 1
	})
	const n = 600
	payload := make([]byte, 50_000) // 30 MB in total, far beyond socket buffers
	received := make(chan uint32, 1)
	go func() {
		var last uint32
		for last != n-1 {
			b, ok := <-live.bin
			if !ok {
				return
			}
			_, _, p := parseMessageData(t, b)
			last = binary.LittleEndian.Uint32(p)
		}
		received <- last
	}()
	for i := 0; i < n; i++ {
		p := slices.Clone(payload)
		binary.LittleEndian.PutUint32(p, uint32(i))
		h.b.publish(id, uint64(i), p)
		if i%50 == 0 {
			time.Sleep(time.Millisecond) // let the live client keep up
		}
		for _, c := range h.srv.Stats().Clients {
			if c.QueuedBytes > limit+len(payload) {
				t.Fatalf("client %s holds %d bytes, limit %d", c.Addr, c.QueuedBytes, limit)
			}
		}
	}
	select {
	case <-received:
	case <-time.After(20 * time.Second):
		t.Fatal("the live client did not receive the last message")
	}
	st := h.srv.Stats()
	var stalledDrops uint64
	for _, c := range st.Clients {
		stalledDrops = max(stalledDrops, c.Dropped)
	}
	if stalledDrops == 0 || st.Dropped < stalledDrops {
		t.Errorf("stats %+v: the stalled client should have dropped messages", st)
	}
	t.Logf("stats: %+v", st)
}

func TestClientPublish(t *testing.T) {
	h := newHarness(t, Options{ClientTopicWhitelist: mustWhitelist(t, "/cmd_vel", "/goal")})
	c := h.dial()
	c.expect("advertiseServices")
	c.send(map[string]any{"op": "advertise", "channels": []any{
		map[string]any{"id": 1, "topic": "/cmd_vel", "encoding": "cdr", "schemaName": "geometry_msgs/msg/Twist"},
		map[string]any{"id": 2, "topic": "/goal", "encoding": "json", "schemaName": "geometry_msgs/msg/PoseStamped"},
		map[string]any{"id": 3, "topic": "/forbidden", "encoding": "cdr", "schemaName": "std_msgs/msg/String"},
		map[string]any{"id": 4, "topic": "/goal", "encoding": "cdr", "schemaName": "unknown/msg/Type"},
	}})
	c.expectStatus(StatusError, `encoding "json" is not supported`)
	c.expectStatus(StatusError, "client_topic_whitelist")
	c.expectStatus(StatusError, "unknown message type")
	frame := append([]byte{OpClientMessageData, 1, 0, 0, 0}, 0, 1, 0, 0, 9)
	c.sendBinary(frame)
	waitFor(t, "published", func() bool {
		h.b.mu.Lock()
		defer h.b.mu.Unlock()
		return len(h.b.published["/cmd_vel"]) == 1
	})
	if got := h.b.published["/cmd_vel"][0]; !bytes.Equal(got, []byte{0, 1, 0, 0, 9}) {
		t.Errorf("published % x", got)
	}
	c.sendBinary([]byte{OpClientMessageData, 2, 0, 0, 0, 1})
	c.expectStatus(StatusError, "not advertised")
	c.sendBinary(append([]byte{OpClientMessageData, 1, 0, 0, 0}, "bad"...))
	c.expectStatus(StatusError, "malformed message")
	c.send(map[string]any{"op": "advertise", "channels": []any{
		map[string]any{"id": 1, "topic": "/cmd_vel", "encoding": "cdr", "schemaName": "geometry_msgs/msg/Twist"}}})
	c.expectStatus(StatusError, "already advertised")
	c.send(map[string]any{"op": "unadvertise", "channelIds": []any{1}})
	waitFor(t, "publisher closed", func() bool {
		h.b.mu.Lock()
		defer h.b.mu.Unlock()
		return slices.Equal(h.b.closedPubs, []string{"/cmd_vel"})
	})
	c.send(map[string]any{"op": "unadvertise", "channelIds": []any{1}})
	c.expectStatus(StatusWarning, "was not advertised")
	c.sendBinary([]byte{0x07, 1})
	c.expectStatus(StatusWarning, "unrecognized client opcode")
	c.sendBinary([]byte{OpClientMessageData, 1})
	c.expectStatus(StatusError, "shorter than its 5-byte header")
}

func TestClientPublishWithoutCapability(t *testing.T) {
	h := newHarness(t, Options{Capabilities: []string{CapServices}})
	c := h.dial()
	c.expect("advertiseServices")
	c.send(map[string]any{"op": "advertise", "channels": []any{
		map[string]any{"id": 1, "topic": "/cmd_vel", "encoding": "cdr", "schemaName": "geometry_msgs/msg/Twist"}}})
	c.expectStatus(StatusError, `"clientPublish" capability`)
	c.send(map[string]any{"op": "getParameters", "parameterNames": []any{}})
	c.expectStatus(StatusError, `"parameters" capability`)
}

func serviceInfo(name string) ServiceInfo {
	s := MessageSchema{Encoding: "cdr", SchemaEncoding: "ros2msg", SchemaName: "std_srvs/srv/SetBool_Request", Schema: "bool data"}
	r := MessageSchema{Encoding: "cdr", SchemaEncoding: "ros2msg", SchemaName: "std_srvs/srv/SetBool_Response", Schema: "bool success\nstring message"}
	return ServiceInfo{Name: name, Type: "std_srvs/srv/SetBool", Request: s, Response: r}
}

func callFrame(serviceID, callID uint32, enc string, payload []byte) []byte {
	b := []byte{OpServiceCallRequest}
	b = binary.LittleEndian.AppendUint32(b, serviceID)
	b = binary.LittleEndian.AppendUint32(b, callID)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(enc)))
	b = append(b, enc...)
	return append(b, payload...)
}

func TestServiceCalls(t *testing.T) {
	h := newHarness(t, Options{ServiceWhitelist: mustWhitelist(t, "/rsm/.*")})
	h.b.call = func(ctx context.Context, svc Service, req []byte) ([]byte, error) {
		if svc.Name == "/rsm/broken" {
			return nil, errors.New("service is not available")
		}
		return append([]byte("re:"), req...), nil
	}
	h.srv.SetServices([]ServiceInfo{serviceInfo("/rsm/set"), serviceInfo("/rsm/broken"), serviceInfo("/hidden/x")})
	c := h.dial()
	adv := c.expect("advertiseServices")
	ids := map[string]uint32{}
	for _, s := range adv["services"].([]any) {
		sv := s.(map[string]any)
		ids[sv["name"].(string)] = uint32(sv["id"].(float64))
		if sv["requestSchema"] != "bool data" || sv["request"].(map[string]any)["schemaName"] != "std_srvs/srv/SetBool_Request" {
			t.Errorf("service %v lacks its schemas", sv)
		}
	}
	if len(ids) != 2 {
		t.Fatalf("advertised %v; /hidden/x is not whitelisted", ids)
	}
	c.sendBinary(callFrame(ids["/rsm/set"], 77, "cdr", []byte{0, 1, 0, 0, 1}))
	resp := c.expectBinary()
	want := AppendServiceCallResponse(nil, ids["/rsm/set"], 77, "cdr", []byte("re:\x00\x01\x00\x00\x01"))
	if !bytes.Equal(resp, want) {
		t.Errorf("response % x, want % x", resp, want)
	}
	c.sendBinary(callFrame(ids["/rsm/broken"], 78, "cdr", nil))
	f := c.expect("serviceCallFailure")
	if f["callId"].(float64) != 78 || !strings.Contains(f["message"].(string), "not available") {
		t.Errorf("failure = %v", f)
	}
	c.sendBinary(callFrame(999, 79, "cdr", nil))
	if f := c.expect("serviceCallFailure"); !strings.Contains(f["message"].(string), "does not exist") {
		t.Errorf("failure = %v", f)
	}
	c.sendBinary(callFrame(ids["/rsm/set"], 80, "json", nil))
	if f := c.expect("serviceCallFailure"); !strings.Contains(f["message"].(string), "not supported") {
		t.Errorf("failure = %v", f)
	}
	bad := callFrame(ids["/rsm/set"], 81, "cdr", nil)
	binary.LittleEndian.PutUint32(bad[9:], 1000)
	c.sendBinary(bad)
	c.expectStatus(StatusError, "encoding length 1000")
	// Services that vanish are unadvertised.
	h.srv.SetServices([]ServiceInfo{serviceInfo("/rsm/set")})
	un := c.expect("unadvertiseServices")
	if ids2 := un["serviceIds"].([]any); len(ids2) != 1 || uint32(ids2[0].(float64)) != ids["/rsm/broken"] {
		t.Errorf("unadvertiseServices = %v", un)
	}
}

// A client may not pile up calls without bound.
func TestServiceCallsBounded(t *testing.T) {
	h := newHarness(t, Options{MaxPendingCalls: 2})
	release := make(chan struct{})
	h.b.call = func(ctx context.Context, svc Service, req []byte) ([]byte, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return []byte{0, 1, 0, 0}, nil
	}
	h.srv.SetServices([]ServiceInfo{serviceInfo("/slow")})
	c := h.dial()
	adv := c.expect("advertiseServices")
	id := uint32(adv["services"].([]any)[0].(map[string]any)["id"].(float64))
	for i := range 3 {
		c.sendBinary(callFrame(id, uint32(i), "cdr", nil))
	}
	if f := c.expect("serviceCallFailure"); f["callId"].(float64) != 2 || !strings.Contains(f["message"].(string), "already pending") {
		t.Errorf("failure = %v", f)
	}
	close(release)
	for range 2 {
		if b := c.expectBinary(); b[0] != OpServiceCallResponse {
			t.Errorf("got % x", b)
		}
	}
}

func TestParameters(t *testing.T) {
	h := newHarness(t, Options{ParamWhitelist: mustWhitelist(t, "/mux\\..*")})
	h.b.params = map[string]any{"/mux.timer": 0.5, "/mux.joy": true, "/mux.blob": []byte("AB"), "/mux.ids": []int64{1, 2},
		"/secret.key": "x"}
	c := h.dial()
	c.expect("advertiseServices")
	c.send(map[string]any{"op": "getParameters", "parameterNames": []any{}, "id": "all"})
	pv := c.expect("parameterValues")
	if pv["id"] != "all" {
		t.Errorf("id = %v", pv["id"])
	}
	got, _ := json.Marshal(pv["parameters"])
	want := `[{"name":"/mux.blob","type":"byte_array","value":"QUI="},{"name":"/mux.ids","value":[1,2]},` +
		`{"name":"/mux.joy","value":true},{"name":"/mux.timer","type":"float64","value":0.5}]`
	if string(got) != want {
		t.Errorf("parameters\n got %s\nwant %s", got, want)
	}
	c.send(map[string]any{"op": "subscribeParameterUpdates", "parameterNames": []any{"/mux.timer", "/secret.key"}})
	c.send(map[string]any{"op": "setParameters", "id": "s1", "parameters": []any{
		map[string]any{"name": "/mux.timer", "value": 2, "type": "float64"},
		map[string]any{"name": "/secret.key", "value": "y"}}})
	c.expectStatus(StatusWarning, "not in param_whitelist")
	pv = c.expect("parameterValues")
	got, _ = json.Marshal(pv)
	if string(got) != `{"id":"s1","op":"parameterValues","parameters":[{"name":"/mux.timer","type":"float64","value":2}]}` {
		t.Errorf("set reply = %s", got)
	}
	if h.b.params["/secret.key"] != "x" {
		t.Error("a parameter outside the whitelist was set")
	}
	// Updates reach subscribers of the parameter only.
	h.srv.UpdateParameters([]Parameter{{Name: "/mux.joy", Value: false}, {Name: "/mux.timer", Value: 3.5}, {Name: "/secret.key", Value: "z"}})
	pv = c.expect("parameterValues")
	got, _ = json.Marshal(pv["parameters"])
	if string(got) != `[{"name":"/mux.timer","type":"float64","value":3.5}]` || pv["id"] != nil {
		t.Errorf("update = %v", pv)
	}
	c.send(map[string]any{"op": "unsubscribeParameterUpdates", "parameterNames": []any{}})
	c.send(map[string]any{"op": "getParameters", "parameterNames": []any{"/mux.joy"}, "id": "after"})
	pv = c.expect("parameterValues")
	if pv["id"] != "after" {
		t.Errorf("after unsubscribing, got %v", pv)
	}
	// An empty list subscribes to every parameter known now (whitelisted).
	c.send(map[string]any{"op": "subscribeParameterUpdates", "parameterNames": []any{}})
	waitFor(t, "the subscription to all parameters", func() bool {
		h.srv.mu.Lock()
		defer h.srv.mu.Unlock()
		for cl := range h.srv.clients {
			return len(cl.paramSubs) == 4
		}
		return false
	})
	h.srv.UpdateParameters([]Parameter{{Name: "/mux.joy", Value: true}, {Name: "/secret.key", Value: "w"}})
	pv = c.expect("parameterValues")
	got, _ = json.Marshal(pv["parameters"])
	if string(got) != `[{"name":"/mux.joy","value":true}]` {
		t.Errorf("update after subscribing to all: %s", got)
	}
	h.b.mu.Lock()
	h.b.setErr = errors.New("parameter timer: rejected by the node")
	h.b.mu.Unlock()
	c.send(map[string]any{"op": "setParameters", "parameters": []any{map[string]any{"name": "/mux.timer", "value": 1.5}}})
	c.expectStatus(StatusError, "rejected by the node")
	c.send(map[string]any{"op": "setParameters", "parameters": []any{map[string]any{"name": "/mux.timer", "value": map[string]any{"a": 1}}}})
	c.expectStatus(StatusError, "unsupported value")
}

func TestConnectionGraph(t *testing.T) {
	h := newHarness(t, Options{})
	h.srv.SetGraph(Graph{
		Published:  map[string][]string{"/odom": {"/sim", "/sim"}, "/scan": {"/sim"}},
		Subscribed: map[string][]string{"/cmd_vel": {"/sim"}},
		Services:   map[string][]string{"/rsm/set": {"/rsm"}},
	})
	c := h.dial()
	c.expect("advertiseServices")
	c.send(map[string]any{"op": "subscribeConnectionGraph"})
	g := c.expect("connectionGraphUpdate")
	got, _ := json.Marshal(g)
	want := `{"advertisedServices":[{"name":"/rsm/set","providerIds":["/rsm"]}],"op":"connectionGraphUpdate",` +
		`"publishedTopics":[{"name":"/odom","publisherIds":["/sim"]},{"name":"/scan","publisherIds":["/sim"]}],` +
		`"removedServices":[],"removedTopics":[],"subscribedTopics":[{"name":"/cmd_vel","subscriberIds":["/sim"]}]}`
	if string(got) != want {
		t.Errorf("full graph\n got %s\nwant %s", got, want)
	}
	h.srv.SetGraph(Graph{
		Published:  map[string][]string{"/odom": {"/sim", "/other"}},
		Subscribed: map[string][]string{"/cmd_vel": {"/sim"}, "/odom": {"/bridge"}},
	})
	g = c.expect("connectionGraphUpdate")
	got, _ = json.Marshal(g)
	want = `{"advertisedServices":[],"op":"connectionGraphUpdate",` +
		`"publishedTopics":[{"name":"/odom","publisherIds":["/other","/sim"]}],` +
		`"removedServices":["/rsm/set"],"removedTopics":["/scan"],"subscribedTopics":[{"name":"/odom","subscriberIds":["/bridge"]}]}`
	if string(got) != want {
		t.Errorf("diff\n got %s\nwant %s", got, want)
	}
	c.send(map[string]any{"op": "unsubscribeConnectionGraph"})
	c.send(map[string]any{"op": "getParameters", "parameterNames": []any{}, "id": "sync"})
	c.expect("parameterValues") // the unsubscribe has been handled
	h.srv.SetGraph(Graph{})
	c.send(map[string]any{"op": "getParameters", "parameterNames": []any{}, "id": "sync2"})
	for {
		m := <-c.text
		if m["op"] == "connectionGraphUpdate" {
			t.Fatal("update after unsubscribeConnectionGraph")
		}
		if m["op"] == "parameterValues" {
			break
		}
	}
}

func TestStaticPageAndSubprotocolRequired(t *testing.T) {
	h := newHarness(t, Options{Static: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "dashboard")
	})})
	resp, err := http.Get("http" + strings.TrimPrefix(h.url, "ws") + "/")
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	if body.String() != "dashboard" {
		t.Errorf("GET / = %q", body.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, h.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = conn.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("a client without the subprotocol got %v, want a policy-violation close", err)
	}
}

// A client that offers only foxglove.sdk.v1 (current Foxglove clients may)
// gets the whole protocol; a client that offers both gets the one it lists
// first.
func TestSubprotocolNegotiation(t *testing.T) {
	h := newHarness(t, Options{})
	h.srv.SetChannels([]ChannelInfo{odomInfo("/odom")})
	for _, tc := range []struct {
		offer []string
		want  string
	}{
		{[]string{SubprotocolSDK}, SubprotocolSDK},
		{[]string{Subprotocol}, Subprotocol},
		{[]string{SubprotocolSDK, Subprotocol}, SubprotocolSDK},
		{[]string{Subprotocol, SubprotocolSDK}, Subprotocol},
		{[]string{"foxglove.websocket.v2", SubprotocolSDK}, SubprotocolSDK},
	} {
		c, got := h.dialOffering(tc.offer...)
		if got != tc.want {
			t.Errorf("offering %q: server chose %q, want %q", tc.offer, got, tc.want)
		}
		if info := c.expect("serverInfo"); info["name"] != "foxglove_bridge" {
			t.Errorf("offering %q: serverInfo = %v", tc.offer, info)
		}
		odom := channelIDs(c.expect("advertise"))["/odom"]
		c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 1, "channelId": odom}}})
		waitFor(t, "the subscription", func() bool {
			for _, cl := range h.srv.Stats().Clients {
				if cl.Subscriptions == 1 {
					return true
				}
			}
			return false
		})
		payload := []byte{0, 1, 0, 0, 7}
		h.b.publish(odom, 42, payload)
		if sub, ts, data := parseMessageData(t, c.expectBinary()); sub != 1 || ts != 42 || !bytes.Equal(data, payload) {
			t.Errorf("offering %q: got sub %d ts %d payload % x", tc.offer, sub, ts, data)
		}
		c.conn.Close(websocket.StatusNormalClosure, "")
		waitFor(t, "the client gone", func() bool { return len(h.srv.Stats().Clients) == 0 })
	}
}

func TestBadJSONAnswered(t *testing.T) {
	h := newHarness(t, Options{})
	c := h.dial()
	c.expect("advertiseServices")
	for _, tc := range []struct {
		msg   string
		level int
		want  string
	}{
		{`{`, StatusError, "invalid JSON"},
		{`{"channels":[]}`, StatusError, `no "op"`},
		{`{"op":"fly"}`, StatusWarning, "unrecognized client opcode"},
		{`{"op":"subscribe","subscriptions":[{"id":-1,"channelId":1}]}`, StatusError, "invalid subscribe"},
		{`{"op":"advertise","channels":[{"id":1,"topic":"","encoding":"cdr","schemaName":"x"}]}`, StatusError, "required"},
	} {
		if err := c.conn.Write(context.Background(), websocket.MessageText, []byte(tc.msg)); err != nil {
			t.Fatal(err)
		}
		c.expectStatus(tc.level, tc.want)
	}
}

func TestServerCloseEndsClients(t *testing.T) {
	h := newHarness(t, Options{})
	h.srv.SetChannels([]ChannelInfo{odomInfo("/odom")})
	c := h.dial()
	id := channelIDs(c.expect("advertise"))["/odom"]
	c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 1, "channelId": id}}})
	waitFor(t, "subscribed", func() bool { return h.b.subscribed(id) > 0 })
	if err := h.srv.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "client closed", func() bool {
		select {
		case _, ok := <-c.text:
			return !ok
		default:
			return false
		}
	})
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	if h.b.stops[id] != 1 {
		t.Errorf("backend subscription not stopped on Close")
	}
}
