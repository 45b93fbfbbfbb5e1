package foxglove

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// observed returns a logger that records its lines.
func observed() (*zap.SugaredLogger, *observer.ObservedLogs) {
	core, logs := observer.New(zap.DebugLevel)
	return zap.New(core).Sugar(), logs
}

// handshake sends a WebSocket upgrade with the given Host and Origin
// (none when empty) and returns the HTTP status.
func handshake(t *testing.T, wsURL, host, origin string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	opts := &websocket.DialOptions{Subprotocols: []string{Subprotocol}, HTTPHeader: h, Host: host}
	conn, resp, err := websocket.Dial(ctx, wsURL, opts)
	if err == nil {
		conn.CloseNow()
		return resp.StatusCode
	}
	if resp == nil {
		t.Fatalf("dial with Host %q Origin %q: %v", host, origin, err)
	}
	return resp.StatusCode
}

// A browser lets any page open a WebSocket to the bridge; the bridge lets
// in its own page, the allowed origins and non-browser clients (no
// Origin), and refuses the rest with 403, also when a DNS-rebinding Host
// makes Origin and Host agree.
func TestOriginCheck(t *testing.T) {
	log, logs := observed()
	// LogInterval longer than any run, so the line count does not depend
	// on the machine's speed.
	h := newHarness(t, Options{Logger: log, AllowedOrigins: []string{"https://app.foxglove.dev"}, OwnHosts: []string{"robot.lan"},
		LogInterval: time.Hour})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(h.url, "ws://"))
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{"", "", http.StatusSwitchingProtocols},                                              // Foxglove desktop, our CLI, scripts
		{"127.0.0.1:" + port, "http://127.0.0.1:" + port, http.StatusSwitchingProtocols},     // our page
		{"localhost:" + port, "http://localhost:" + port, http.StatusSwitchingProtocols},     // our page by name
		{"[::1]:" + port, "http://[::1]:" + port, http.StatusSwitchingProtocols},             // our page on IPv6
		{"robot.lan:" + port, "http://robot.lan:" + port, http.StatusSwitchingProtocols},     // a configured name
		{"127.0.0.1:" + port, "https://app.foxglove.dev", http.StatusSwitchingProtocols},     // allowed
		{"127.0.0.1:" + port, "https://APP.foxglove.dev", http.StatusSwitchingProtocols},     // case-insensitive
		{"127.0.0.1:" + port, "http://evil.example", http.StatusForbidden},                   // a foreign page
		{"127.0.0.1:" + port, "http://127.0.0.1:1", http.StatusForbidden},                    // another local port
		{"evil.example:" + port, "http://evil.example:" + port, http.StatusForbidden},        // DNS rebinding
		{"127.0.0.1:" + port, "null", http.StatusForbidden},                                  // sandboxed iframe
		{"127.0.0.1:" + port, "https://app.foxglove.dev.evil.example", http.StatusForbidden}, // not a prefix match
		{"127.0.0.1:" + port, "http://127.0.0.1:" + port + "/x", http.StatusForbidden},       // not an origin
		{"127.0.0.1:" + port, "ftp://127.0.0.1:" + port, http.StatusForbidden},               // not a web origin
		{"localhost.evil.example:" + port, "http://localhost.evil.example:" + port, http.StatusForbidden},
	} {
		if got := handshake(t, h.url, tc.host, tc.origin); got != tc.want {
			t.Errorf("Host %q Origin %q: HTTP %d, want %d", tc.host, tc.origin, got, tc.want)
		}
	}
	st := h.srv.Stats()
	if st.OriginRefused != 8 {
		t.Errorf("OriginRefused = %d, want 8", st.OriginRefused)
	}
	// The same origin again and again: logged once, then at most once per
	// LogInterval.
	before := logs.FilterMessageSnippet("refused a WebSocket").Len()
	for range 200 {
		if got := handshake(t, h.url, "", "http://evil.example"); got != http.StatusForbidden {
			t.Fatalf("HTTP %d, want 403", got)
		}
	}
	if n := logs.FilterMessageSnippet("refused a WebSocket").Len() - before; n > 1 {
		t.Errorf("200 refusals of one origin wrote %d log lines, want at most 1", n)
	}
	if got := h.srv.Stats().OriginRefused; got != 208 {
		t.Errorf("OriginRefused = %d, want 208", got)
	}
}

// The default lists keep a client off a robot's velocity output and its
// safety parameters, and let the dashboard's publications and harmless
// parameters through.
func TestClientPolicyDefaults(t *testing.T) {
	h := newHarness(t, Options{
		ClientPublishDenylist:  mustWhitelist(t, DefaultClientPublishDenylist...),
		ClientPublishAllowlist: mustWhitelist(t, DefaultClientPublishAllowlist...),
		ParamSetDenylist:       mustWhitelist(t, DefaultClientParamSetDenylist...),
	})
	var counted atomic.Int64
	h.srv.opts.OnCount = func(name string) {
		if name == CountRequestRefused {
			counted.Add(1)
		}
	}
	c := h.dial()
	c.expect("advertiseServices")
	topics := map[string]bool{
		"/diffbot/cmd_vel":               false,
		"diffbot/cmd_vel":                false, // relative, resolved by the backend
		"/cmd_vel":                       false,
		"~/cmd_vel":                      false,
		"/diffbot/teleoperation/cmd_vel": true,
		"/diffbot/autonomy/cmd_vel":      true,
		"/hexapod/cmd_vel":               true,
		"/diffbot/rsm/simpleGoal":        true,
		"/joy":                           true,
	}
	var chans []any
	id := 0
	ids := map[int]string{}
	for topic := range topics {
		id++
		ids[id] = topic
		chans = append(chans, map[string]any{"id": id, "topic": topic, "encoding": "cdr", "schemaName": "geometry_msgs/msg/Twist"})
	}
	c.send(map[string]any{"op": "advertise", "channels": chans})
	refusals := 0
	for _, ok := range topics {
		if !ok {
			refusals++
		}
	}
	for range refusals {
		c.expectStatus(StatusError, "client_publish_denylist")
	}
	for id := range ids {
		c.sendBinary([]byte{OpClientMessageData, byte(id), 0, 0, 0, 0, 1, 0, 0})
	}
	waitFor(t, "the permitted publications", func() bool {
		h.b.mu.Lock()
		defer h.b.mu.Unlock()
		for topic, ok := range topics {
			if ok && len(h.b.published[topic]) == 0 {
				return false
			}
		}
		return true
	})
	h.b.mu.Lock()
	for topic, ok := range topics {
		if !ok && len(h.b.published[topic]) > 0 {
			t.Errorf("a client published on %s", topic)
		}
	}
	h.b.mu.Unlock()

	h.b.mu.Lock()
	for _, n := range []string{"/diffbot/robotControlMuxNode.teleoperation_idle_timer", "/diffbot/robotControlMuxNode.max_linear_velocity",
		"/diffbot/robotControlMuxNode.max_angular_velocity", "/sim.use_sim_time", "/velma.max_joint_speed", "/diffbot/rsm.exploration_goal_tolerance"} {
		h.b.params[n] = 1.0
	}
	h.b.mu.Unlock()
	c.send(map[string]any{"op": "setParameters", "id": "s1", "parameters": []any{
		map[string]any{"name": "/diffbot/robotControlMuxNode.teleoperation_idle_timer", "value": 3600.0},
		map[string]any{"name": "/diffbot/robotControlMuxNode.max_linear_velocity", "value": 1000.0},
		map[string]any{"name": "/diffbot/robotControlMuxNode.max_angular_velocity", "value": 1000.0},
		map[string]any{"name": "/sim.use_sim_time", "value": false},
		map[string]any{"name": "/velma.max_joint_speed"}, // unset
		map[string]any{"name": "/diffbot/rsm.exploration_goal_tolerance", "value": 0.5},
	}})
	for range 5 {
		c.expectStatus(StatusError, "client_param_set_denylist")
	}
	vals := c.expect("parameterValues")
	if got := vals["parameters"].([]any); len(got) != 1 || got[0].(map[string]any)["name"] != "/diffbot/rsm.exploration_goal_tolerance" {
		t.Errorf("values read back = %v, want only the harmless one", got)
	}
	h.b.mu.Lock()
	for n, v := range h.b.params {
		want := 1.0
		if n == "/diffbot/rsm.exploration_goal_tolerance" {
			want = 0.5
		}
		if v != want {
			t.Errorf("%s = %v, want %v", n, v, want)
		}
	}
	h.b.mu.Unlock()

	// Calling set_parameters directly would bypass the list.
	h.b.call = func(context.Context, Service, []byte) ([]byte, error) { return []byte{0, 1, 0, 0}, nil }
	h.srv.SetServices([]ServiceInfo{serviceInfo("/diffbot/robotControlMuxNode/set_parameters")})
	svc := c.expect("advertiseServices")["services"].([]any)[0].(map[string]any)
	c.sendBinary(callFrame(uint32(svc["id"].(float64)), 7, "cdr", []byte{0, 1, 0, 0}))
	if f := c.expect("serviceCallFailure"); !strings.Contains(f["message"].(string), "client_param_set_denylist") {
		t.Errorf("set_parameters call: %v", f)
	}
	if got := counted.Load(); got != int64(refusals+5+1) {
		t.Errorf("%d refusals counted, want %d", got, refusals+5+1)
	}
}

// One advertisement of 20,000 channels creates at most the bound of
// publishers, refused beyond it with one status; all are closed when the
// client leaves. Subscriptions are bounded the same way.
func TestClientBounds(t *testing.T) {
	h := newHarness(t, Options{})
	var infos []ChannelInfo
	for i := range 300 {
		infos = append(infos, odomInfo(fmt.Sprintf("/odom%d", i)))
	}
	h.srv.SetChannels(infos)
	c := h.dial()
	adv := c.expect("advertise")
	var chans []any
	for i := range 20000 {
		chans = append(chans, map[string]any{"id": i + 1, "topic": fmt.Sprintf("/t%d", i), "encoding": "cdr", "schemaName": "std_msgs/msg/String"})
	}
	c.send(map[string]any{"op": "advertise", "channels": chans})
	c.expectStatus(StatusError, "may advertise 64 channels; 19936 channels")
	var subs []any
	for i, ch := range adv["channels"].([]any) {
		subs = append(subs, map[string]any{"id": i + 1, "channelId": ch.(map[string]any)["id"]})
	}
	c.send(map[string]any{"op": "subscribe", "subscriptions": subs})
	c.expectStatus(StatusError, "may have 256 subscriptions")
	if st := h.srv.Stats(); len(st.Clients) != 1 || st.Clients[0].Subscriptions != 256 {
		t.Errorf("stats %+v, want one client with 256 subscriptions", st.Clients)
	}
	h.b.mu.Lock()
	total := 0
	for _, n := range h.b.subscribes {
		total += n
	}
	h.b.mu.Unlock()
	if total != 256 {
		t.Errorf("%d backend subscriptions, want 256", total)
	}
	c.conn.Close(websocket.StatusNormalClosure, "")
	waitFor(t, "the client's publishers and subscriptions released", func() bool {
		h.b.mu.Lock()
		defer h.b.mu.Unlock()
		stops := 0
		for _, n := range h.b.stops {
			stops += n
		}
		return len(h.b.closedPubs) == 64 && stops == 256
	})
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	if len(h.b.published) != 0 || len(h.b.closedPubs) != 64 {
		t.Errorf("%d publishers closed, want 64", len(h.b.closedPubs))
	}
}

// A 70 MB frame is refused while it is read: the connection is closed
// with 1009 and the server allocates a bounded amount for it.
func TestLargeFrameRefusedMemoryBounded(t *testing.T) {
	h := newHarness(t, Options{})
	c := h.dial()
	c.expect("advertiseServices")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w, err := c.conn.Writer(ctx, websocket.MessageBinary)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	chunk[0] = OpClientMessageData
	var werr error
	for i := 0; i < 70 && werr == nil; i++ {
		_, werr = w.Write(chunk)
		chunk[0] = 0
	}
	if werr == nil {
		werr = w.Close()
	}
	waitFor(t, "the connection closed", func() bool {
		select {
		case _, ok := <-c.text:
			return !ok
		default:
			return false
		}
	})
	runtime.ReadMemStats(&after)
	if werr == nil {
		t.Log("the whole frame was written before the server closed")
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %.1f MB while a 70 MB frame was sent and refused", float64(alloc)/1e6)
	if alloc > 40<<20 {
		t.Errorf("allocated %d bytes for a refused 70 MB frame, want under 40 MiB (limit 8 MiB)", alloc)
	}
	// The refusal is counted by the server's read loop, which may end after
	// the client saw the close.
	waitFor(t, "the refused frame counted", func() bool { return h.srv.Stats().RequestsRefused >= 1 })
	if st := h.srv.Stats(); st.RequestsRefused != 1 {
		t.Errorf("RequestsRefused = %d, want 1", st.RequestsRefused)
	}
}

// 50,000 malformed messages are each answered and counted, but write only
// a few log lines.
func TestProtocolErrorsLogThrottled(t *testing.T) {
	log, logs := observed()
	h := newHarness(t, Options{Logger: log, LogInterval: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, h.url, &websocket.DialOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	var statuses atomic.Int64
	readErr := make(chan error, 1)
	go func() {
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				readErr <- err
				return
			}
			var m map[string]any
			if json.Unmarshal(data, &m) == nil && m["op"] == "status" {
				statuses.Add(1)
			}
		}
	}()
	// In batches, reading the answers, so that the client is not
	// disconnected for letting its status messages pile up.
	const n, batch = 50000, 1000
	for sent := batch; sent <= n; sent += batch {
		for range batch {
			if err := conn.Write(ctx, websocket.MessageText, []byte("{")); err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, "the malformed messages answered", func() bool { return statuses.Load() == int64(sent) })
	}
	select {
	case err := <-readErr:
		t.Fatalf("connection ended: %v", err)
	default:
	}
	if st := h.srv.Stats(); st.ClientErrors != n {
		t.Errorf("ClientErrors = %d, want %d", st.ClientErrors, n)
	}
	if lines := logs.FilterMessageSnippet("invalid JSON").Len(); lines != 1 {
		t.Errorf("%d malformed messages wrote %d log lines, want 1 (then one per LogInterval)", n, lines)
	}
}

// With a token, a handshake must carry it (query or Bearer header); an
// address that failed 5 times is refused for a while, right token or not.
func TestTokenRequired(t *testing.T) {
	const token = "0123456789abcdef-token"
	h := newHarness(t, Options{Token: token, LogInterval: time.Hour})
	bearer := func(tok string) int {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, resp, err := websocket.Dial(ctx, h.url, &websocket.DialOptions{Subprotocols: []string{Subprotocol},
			HTTPHeader: http.Header{"Authorization": {"Bearer " + tok}}})
		if err == nil {
			conn.CloseNow()
		}
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name string
		got  int
		want int
	}{
		{"right token in the query", handshake(t, h.url+"/?token="+token, "", ""), http.StatusSwitchingProtocols},
		{"right token as Bearer", bearer(token), http.StatusSwitchingProtocols},
		{"no token", handshake(t, h.url, "", ""), http.StatusUnauthorized},
		{"wrong token", handshake(t, h.url+"/?token=guess", "", ""), http.StatusUnauthorized},
		{"a prefix of the token", handshake(t, h.url+"/?token="+token[:10], "", ""), http.StatusUnauthorized},
		{"wrong Bearer", bearer("guess"), http.StatusUnauthorized},
		{"fifth failure", handshake(t, h.url+"/?token=guess2", "", ""), http.StatusUnauthorized},
		{"right token after 5 failures", handshake(t, h.url+"/?token="+token, "", ""), http.StatusTooManyRequests},
		{"right Origin does not replace the token", handshake(t, h.url, "", ""), http.StatusTooManyRequests},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: HTTP %d, want %d", tc.name, tc.got, tc.want)
		}
	}
	if got := h.srv.Stats().OriginRefused; got != 7 {
		t.Errorf("%d connections refused, want 7", got)
	}
}

// At most MaxClients clients are connected at once; one more is refused
// with 503 and counted, and a place freed by a client that leaves is
// taken by the next.
func TestMaxClients(t *testing.T) {
	h := newHarness(t, Options{MaxClients: 2, LogInterval: time.Hour})
	a := h.dial()
	a.expect("serverInfo")
	b := h.dial()
	b.expect("serverInfo")
	if got := handshake(t, h.url, "", ""); got != http.StatusServiceUnavailable {
		t.Fatalf("a third client: HTTP %d, want 503", got)
	}
	if got := h.srv.Stats().OriginRefused; got != 1 {
		t.Errorf("%d connections refused, want 1", got)
	}
	a.conn.Close(websocket.StatusNormalClosure, "")
	waitFor(t, "the place to be freed", func() bool {
		return handshake(t, h.url, "", "") == http.StatusSwitchingProtocols
	})
}
