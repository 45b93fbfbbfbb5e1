package foxglove

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"
)

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
