package foxglove

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

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
