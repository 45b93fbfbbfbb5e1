package foxglove

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestClientLostAndHeardAgain: a supervised client that answers no ping
// (its link dropped; TCP keeps the connection) is declared lost after
// ClientTimeout: the Session of its requests says so (a backend cancels
// what it started), and what it sends meanwhile — messages, service calls,
// parameter sets, stale when they arrive — is discarded and counted. Once
// it answers a ping sent after it was declared lost it is heard again, and
// what it sends is taken; when it disconnects, its Session is done.
func TestClientLostAndHeardAgain(t *testing.T) {
	h := newHarness(t, Options{ClientTimeout: 400 * time.Millisecond, ClientTopicWhitelist: mustWhitelist(t, "/cmd_vel")})
	sessions := make(chan *Session, 10)
	h.b.call = func(ctx context.Context, svc Service, req []byte) ([]byte, error) {
		sessions <- SessionOf(ctx)
		return []byte("ok"), nil
	}
	h.srv.SetServices([]ServiceInfo{serviceInfo("/set")})
	h.paused = true
	c := h.dial()
	c.send(map[string]any{"op": "advertise", "channels": []any{
		map[string]any{"id": 1, "topic": "/cmd_vel", "encoding": "cdr", "schemaName": "geometry_msgs/msg/Twist"}}})
	published := func() [][]byte {
		h.b.mu.Lock()
		defer h.b.mu.Unlock()
		return slices.Clone(h.b.published["/cmd_vel"])
	}
	c.sendBinary([]byte{OpClientMessageData, 1, 0, 0, 0, 'a'})
	c.sendBinary(callFrame(1, 1, "cdr", nil)) // the only service: id 1
	var sess *Session
	select {
	case sess = <-sessions:
	case <-time.After(10 * time.Second):
		t.Fatal("the service call did not reach the backend")
	}
	if sess == nil || sess.Addr() == "" {
		t.Fatalf("SessionOf(ctx) of a call = %v", sess)
	}
	waitFor(t, "the first message published", func() bool { return len(published()) == 1 })
	select {
	case <-sess.Silent():
		t.Fatal("Silent closed while the client was heard")
	default:
	}
	// The client reads nothing, so it answers no ping: lost.
	select {
	case <-sess.Silent():
	case <-time.After(10 * time.Second):
		t.Fatal("a client answering no ping was not declared lost")
	}
	if st := h.srv.Stats(); len(st.Clients) != 1 || !st.Clients[0].Lost || st.ClientsLost != 1 {
		t.Fatalf("stats of a lost client: %+v", st)
	}
	// What it sends now is stale.
	c.sendBinary([]byte{OpClientMessageData, 1, 0, 0, 0, 's'})
	c.sendBinary(callFrame(1, 2, "cdr", nil))
	c.send(map[string]any{"op": "setParameters", "parameters": []any{map[string]any{"name": "/n.p", "value": 1}}, "id": "x"})
	waitFor(t, "three stale requests discarded", func() bool { return h.srv.Stats().StaleDiscarded == 3 })
	// The link is back: the client reads, answers the pings, is heard.
	c.read()
	f := c.expect("serviceCallFailure")
	if f["callId"].(float64) != 2 || !strings.Contains(f["message"].(string), "stale") {
		t.Errorf("the stale call's answer: %v", f)
	}
	c.expectStatus(StatusError, "setParameters: not set")
	waitFor(t, "the client heard again", func() bool {
		st := h.srv.Stats()
		return len(st.Clients) == 1 && !st.Clients[0].Lost
	})
	select {
	case <-sess.Silent():
		t.Fatal("Silent is closed although the client is heard again")
	default:
	}
	c.sendBinary([]byte{OpClientMessageData, 1, 0, 0, 0, 'f'})
	waitFor(t, "the fresh message published", func() bool { return len(published()) == 2 })
	if got := published(); string(got[0]) != "a" || string(got[1]) != "f" {
		t.Errorf("published %q; the stale message must not be", got)
	}
	if _, ok := h.b.params["/n.p"]; ok {
		t.Error("the stale parameter set was applied")
	}
	c.conn.Close(websocket.StatusNormalClosure, "")
	select {
	case <-sess.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Session.Done not closed after the client disconnected")
	}
}

// TestClientSupervisionOff: without ClientTimeout a client that answers
// no ping is never lost.
func TestClientSupervisionOff(t *testing.T) {
	h := newHarness(t, Options{ClientTopicWhitelist: mustWhitelist(t, "/cmd_vel")})
	h.paused = true
	c := h.dial()
	c.send(map[string]any{"op": "advertise", "channels": []any{
		map[string]any{"id": 1, "topic": "/cmd_vel", "encoding": "cdr", "schemaName": "geometry_msgs/msg/Twist"}}})
	time.Sleep(500 * time.Millisecond)
	c.sendBinary([]byte{OpClientMessageData, 1, 0, 0, 0, 'a'})
	waitFor(t, "published", func() bool {
		h.b.mu.Lock()
		defer h.b.mu.Unlock()
		return len(h.b.published["/cmd_vel"]) == 1
	})
	if st := h.srv.Stats(); st.ClientsLost != 0 {
		t.Errorf("a client was declared lost without ClientTimeout: %+v", st)
	}
}

// TestSlowReaderNotLost: a client that reads, but slowly, behind a backlog
// answers pings late (each waits behind the data queued before it), yet
// its link is up: TCP's count of acknowledged bytes keeps it heard. A
// busy machine's browser was declared lost this way and its calls
// discarded (a fresh-clone CI run of TestDashboardInChromium).
func TestSlowReaderNotLost(t *testing.T) {
	const timeout = 300 * time.Millisecond
	h := newHarness(t, Options{ClientTimeout: timeout})
	h.srv.SetChannels([]ChannelInfo{odomInfo("/odom")})
	h.paused = true
	c := h.dial()
	// Read slowly by hand: 256 KiB messages, 10 a second.
	var reads atomic.Int64
	go func() {
		for {
			if _, _, err := c.conn.Read(context.Background()); err != nil {
				return
			}
			reads.Add(1)
			time.Sleep(100 * time.Millisecond)
		}
	}()
	waitFor(t, "the channel advertised", func() bool { return reads.Load() >= 2 }) // serverInfo, advertise
	c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 1, "channelId": 1}}})
	waitFor(t, "the subscription", func() bool {
		st := h.srv.Stats()
		return len(st.Clients) == 1 && st.Clients[0].Subscriptions == 1
	})
	payload := make([]byte, 256<<10)
	stop := time.Now().Add(12 * timeout)
	for time.Now().Before(stop) {
		h.b.publish(1, 1, payload)
		time.Sleep(5 * time.Millisecond)
	}
	if st := h.srv.Stats(); st.ClientsLost != 0 {
		t.Fatalf("a client reading %d messages in %v was declared lost %d times", reads.Load(), 12*timeout, st.ClientsLost)
	}
	t.Logf("the slow client read %d messages in %v and stayed heard", reads.Load(), 12*timeout)
}

// TestLostClientHeardAfterStalledPing: a ping waits for the connection
// behind a data frame the client does not read; the library gives up that
// ping after 5 s. Once the client reads again it must still be pinged, and
// so heard again: a fresh-clone CI run's page stayed lost for good after a
// link drop on a saturated link, the ping loop having ended there.
func TestLostClientHeardAfterStalledPing(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the library's 5 s for a control frame")
	}
	h := newHarness(t, Options{ClientTimeout: 400 * time.Millisecond, SendBufferLimit: 256 << 20})
	h.srv.SetChannels([]ChannelInfo{odomInfo("/odom")})
	h.paused = true
	c := h.dial()
	// The client's own reader: it reads while reading is set, counts the
	// binary messages it got, and pauses after the first.
	var reading atomic.Bool
	var bins atomic.Int64
	reading.Store(true)
	go func() {
		for {
			for !reading.Load() {
				time.Sleep(10 * time.Millisecond)
			}
			typ, _, err := c.conn.Read(context.Background())
			if err != nil {
				return
			}
			if typ == websocket.MessageBinary && bins.Add(1) == 1 {
				reading.Store(false) // read nothing more after the first data message
			}
		}
	}()
	waitFor(t, "the channel advertised", func() bool { return len(h.srv.Stats().Clients) == 1 })
	c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 1, "channelId": 1}}})
	waitFor(t, "the subscription", func() bool {
		st := h.srv.Stats()
		return len(st.Clients) == 1 && st.Clients[0].Subscriptions == 1
	})
	// The first message is read (the reader then stops); the second, far
	// larger than the sockets' buffers, holds the connection.
	h.b.publish(1, 1, []byte("x"))
	waitFor(t, "the first message read", func() bool { return bins.Load() == 1 })
	h.b.publish(1, 2, make([]byte, 48<<20))
	waitFor(t, "the client declared lost", func() bool { return h.srv.Stats().ClientsLost == 1 })
	time.Sleep(6 * time.Second) // a ping gives up waiting for the connection
	reading.Store(true)
	waitFor(t, "the client heard again", func() bool {
		st := h.srv.Stats()
		return len(st.Clients) == 1 && !st.Clients[0].Lost
	})
}
