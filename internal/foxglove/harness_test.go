package foxglove

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
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
	// paused: dial returns clients that read nothing (and so answer no
	// ping) until their read is called.
	paused bool
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
	hs := httptest.NewUnstartedServer(srv)
	hs.Config.ConnContext = ConnContext
	hs.Start()
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
	if !h.paused {
		c.read()
	}
	h.t.Cleanup(func() { conn.CloseNow() })
	return c, conn.Subprotocol()
}

// read starts reading what the server sends (and answering its pings).
func (c *testClient) read() {
	conn := c.conn
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

func mustWhitelist(t *testing.T, p ...string) []*regexp.Regexp {
	t.Helper()
	wl, err := CompileWhitelist(p)
	if err != nil {
		t.Fatal(err)
	}
	return wl
}

func parseMessageData(t *testing.T, b []byte) (subID uint32, ts uint64, payload []byte) {
	t.Helper()
	if len(b) < 13 || b[0] != OpMessageData {
		t.Fatalf("not a messageData frame: % x", b[:min(len(b), 16)])
	}
	return binary.LittleEndian.Uint32(b[1:5]), binary.LittleEndian.Uint64(b[5:13]), b[13:]
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
