package dashboard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// foreignPage is what an attacker's site serves: it opens a WebSocket to
// the bridge, as any page may, and records whether it opened.
const foreignPage = `<!doctype html><title>elsewhere</title><script>
window.result = 'pending';
const ws = new WebSocket(%q, ['foxglove.sdk.v1', 'foxglove.websocket.v1']);
ws.onopen = () => { window.result = 'open'; };
ws.onerror = () => { if (window.result === 'pending') window.result = 'refused'; };
ws.onclose = () => { if (window.result === 'pending') window.result = 'refused'; };
</script>`

// A page from another origin cannot use the bridge, neither from another
// local port nor through DNS rebinding (a foreign name resolving to the
// bridge's address); the bridge's own page still connects; an origin in
// allowed_origins may; and over a raw WebSocket with the bridge's default
// parameters a client cannot publish on a robot's cmd_vel output or set a
// safety parameter. A bridge on a non-loopback address prints a token: the
// page opened with it works, with a wrong one it does not. Issue 24.
func TestForeignOriginRefusedInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the bridge and a browser")
	}
	chrome := findChromium(t)
	domain := testenv.Domain(t)
	env := append(os.Environ(), fmt.Sprintf("ROS_DOMAIN_ID=%d", domain))
	bridge := testenv.Executable(t, "nodes/foxglove_bridge")

	// The attacker's site: a tiny HTTP server on 127.0.0.1, another port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	foreignOrigin := "http://" + ln.Addr().String()
	port := freePort(t)
	allowingPort := freePort(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/attack", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, foreignPage, "ws://127.0.0.1:"+r.URL.Query().Get("port")+"/")
	})
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()

	bridgeLog := testenv.Start(t, "foxglove_bridge", env, bridge, "--ros-args", "-p", fmt.Sprintf("port:=%d", port))
	testenv.Start(t, "foxglove_bridge_allowing", env, bridge, "--ros-args", "-r", "__node:=foxglove_bridge_allowing",
		"-p", fmt.Sprintf("port:=%d", allowingPort), "-p", fmt.Sprintf(`allowed_origins:=["%s"]`, foreignOrigin))
	// A bridge on all interfaces wants a token, printed at start, and
	// serves TLS with a self-signed certificate kept under ROS_HOME.
	openPort := freePort(t)
	openHome := t.TempDir()
	openBridge := testenv.Start(t, "foxglove_bridge_open", append(env, "ROS_HOME="+openHome), bridge, "--ros-args", "-r", "__node:=foxglove_bridge_open",
		"-p", fmt.Sprintf("port:=%d", openPort), "-p", "address:=0.0.0.0")
	token := openBridge.WaitOutput(t, 60*time.Second, regexp.MustCompile(`open https://.*/#token=([0-9a-f]{32})`))[1]
	for _, p := range []int{port, allowingPort, openPort} {
		waitListening(t, p)
	}

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromiumOptions(t, chrome, 1280, 800,
		// DNS rebinding: the attacker's name resolves to the bridge's address.
		chromedp.Flag("host-resolver-rules", "MAP rebind.example 127.0.0.1"),
		// The open bridge's self-signed certificate (the operator accepts
		// it once, after comparing the printed fingerprint).
		chromedp.Flag("ignore-certificate-errors", true))...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	defer cancelBrowser()
	if err := chromedp.Run(bctx); err != nil {
		t.Fatalf("start %s: %v", chrome, err)
	}
	b := &browser{t: t, ctx: bctx, base: fmt.Sprintf("http://127.0.0.1:%d", port), dir: t.TempDir(), shot: map[string][]byte{}}

	result := func(url string) string {
		b.run("navigate to "+url, chromedp.Navigate(url))
		var r string
		deadline := time.Now().Add(30 * time.Second)
		for {
			b.eval(`window.result || 'pending'`, &r)
			if r != "pending" || time.Now().After(deadline) {
				return r
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if r := result(fmt.Sprintf("%s/attack?port=%d", foreignOrigin, port)); r != "refused" {
		t.Errorf("a page from %s opening ws://127.0.0.1:%d: %s, want refused", foreignOrigin, port, r)
	}
	if r := result(fmt.Sprintf("%s/attack?port=%d", foreignOrigin, allowingPort)); r != "open" {
		t.Errorf("a page from %s, listed in allowed_origins: %s, want open", foreignOrigin, r)
	}

	// The bridge's own page, as the operator opens it, connects.
	b.open("")
	// The same page reached by a rebound name: Origin and Host agree, but
	// the name is not the bridge's.
	b.run("navigate to the rebound name", chromedp.Navigate(fmt.Sprintf("http://rebind.example:%d/", port)))
	time.Sleep(3 * time.Second) // a failure bound for a connection that must not happen
	if s := b.text("#conn .conn-text"); strings.HasPrefix(s, "connected") {
		t.Errorf("the page at http://rebind.example:%d (DNS rebinding) connected: %q", port, s)
	}
	testenv.WaitFor(t, 10*time.Second, "the refusals logged", func() bool {
		return strings.Contains(bridgeLog.Output(), "refused a WebSocket connection")
	})

	// The token: the page opened with it connects; with a wrong one (or
	// none) it does not, and the raw client's wrong token gets 401.
	b.base = fmt.Sprintf("https://127.0.0.1:%d", openPort)
	b.open("token=" + token)
	// (about:blank between: a change of the hash alone keeps the page.)
	b.run("navigate with a wrong token", chromedp.Navigate("about:blank"),
		chromedp.Navigate(fmt.Sprintf("https://127.0.0.1:%d/#token=%s", openPort, strings.Repeat("0", 32))))
	time.Sleep(3 * time.Second) // a failure bound for a connection that must not happen
	if s := b.text("#conn .conn-text"); strings.HasPrefix(s, "connected") {
		t.Errorf("the page with a wrong token connected: %q", s)
	}
	// A raw client that trusts the bridge's certificate (read from its
	// ROS_HOME, as an operator copies it): plain ws:// gets no WebSocket;
	// wss:// with a wrong token gets 401.
	pool := x509.NewCertPool()
	if pem, err := os.ReadFile(filepath.Join(openHome, "foxglove_bridge", "cert.pem")); err != nil || !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("the open bridge's certificate in ROS_HOME: %v", err)
	}
	trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if c, _, err := websocket.Dial(context.Background(), fmt.Sprintf("ws://127.0.0.1:%d/?token=%s", openPort, token),
		&websocket.DialOptions{Subprotocols: []string{"foxglove.sdk.v1"}}); err == nil {
		c.CloseNow()
		t.Error("a plain ws:// client of the bridge on 0.0.0.0 connected, want TLS only")
	}
	if _, resp, err := websocket.Dial(context.Background(), fmt.Sprintf("wss://127.0.0.1:%d/?token=wrong", openPort),
		&websocket.DialOptions{HTTPClient: trusting, Subprotocols: []string{"foxglove.sdk.v1"}}); err == nil || resp == nil ||
		(resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusTooManyRequests) {
		t.Errorf("a raw client with a wrong token: %v, want 401 or 429 (after the page's failures)", err)
	}
	for _, line := range strings.Split(openBridge.Output(), "\n") {
		if strings.Contains(line, token) && strings.Contains(line, "] [") {
			t.Errorf("the token is in a log line (these go to /rosout too): %s", line)
		}
	}

	// A raw client with no Origin (not a browser) is let in, but the
	// default parameters keep it off a robot's output and its safety
	// parameters.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, fmt.Sprintf("ws://127.0.0.1:%d/", port), &websocket.DialOptions{Subprotocols: []string{"foxglove.sdk.v1"}})
	if err != nil {
		t.Fatalf("a client without Origin: %v", err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 20) // the advertisements of the graph
	send := func(v any) {
		data, _ := json.Marshal(v)
		if err := conn.Write(ctx, websocket.MessageText, data); err != nil {
			t.Fatal(err)
		}
	}
	send(map[string]any{"op": "advertise", "channels": []any{
		map[string]any{"id": 1, "topic": "/diffbot/cmd_vel", "encoding": "cdr", "schemaName": "geometry_msgs/msg/Twist"},
		map[string]any{"id": 2, "topic": "/diffbot/teleoperation/cmd_vel", "encoding": "cdr", "schemaName": "geometry_msgs/msg/Twist"},
	}})
	send(map[string]any{"op": "setParameters", "parameters": []any{
		map[string]any{"name": "/diffbot/robotControlMuxNode.teleoperation_idle_timer", "value": 3600.0},
	}})
	want := map[string]bool{"/diffbot/cmd_vel is refused by client_publish_denylist": false,
		"teleoperation_idle_timer is a safety parameter": false}
	for missing := len(want); missing > 0; {
		_, data, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for the refusals %v: %v", want, err)
		}
		var m map[string]any
		if json.Unmarshal(data, &m) != nil || m["op"] != "status" {
			continue
		}
		msg, _ := m["message"].(string)
		if strings.HasPrefix(msg, "channel 2") {
			t.Errorf("the mux input was refused: %s", msg)
		}
		for w, seen := range want {
			if !seen && strings.Contains(msg, w) {
				want[w] = true
				missing--
			}
		}
	}
}
