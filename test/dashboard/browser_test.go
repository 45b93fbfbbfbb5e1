// Package dashboard drives the built-in dashboard in a real headless
// Chromium, served by a real foxglove_bridge process beside the demo nodes
// (simulated diffbot with RSM, hexapod, Velma), and checks over DDS that the
// clicks did what they show: e-stop, a waypoint added by clicking the map
// and visited, teleoperation from the arrow keys, the hexapod standing up.
// Every panel is saved as a PNG (see screenshotDir); with -update-docs-img
// the small copies in docs/img are rewritten.
package dashboard

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
)

var updateDocs = flag.Bool("update-docs-img", false, "also write the panel screenshots to docs/img (for the README)")

// TestMain runs the tests in the project's test environment (localhost
// discovery, node logs in a temporary directory).
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// findChromium returns the browser to drive. Without one the test is
// skipped with the reason, except under CI (CI set), where .ci/run installs
// Debian's chromium and its absence is a failure.
func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium not found; CI must install it (Debian package chromium, see .ci/run)")
	}
	t.Skip("SKIPPED: no chromium found (install the Debian package chromium, or set CHROMIUM=/path/to/chrome): browser tests of the dashboard not run")
	return ""
}

// browserStartLimit bounds Chromium's start-up, until it prints its
// DevTools address. chromedp's default (20 s) was too short under make
// test's load: a browser that starts slowly is not what these tests test.
const browserStartLimit = 90 * time.Second

// chromiumOptions are the allocator options of every browser these tests
// start: headless, without the background services of a desktop browser,
// a fresh profile, a window of w×h, and the extra options of the test.
func chromiumOptions(t *testing.T, chrome string, w, h int, extra ...chromedp.ExecAllocatorOption) []chromedp.ExecAllocatorOption {
	return append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), // containers often have a tiny /dev/shm
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(w, h),
		chromedp.WSURLReadTimeout(browserStartLimit),
	}, extra...)
}

// screenshotDir is where the panel screenshots go: DASHBOARD_SCREENSHOTS if
// set, else go test's -outputdir, else a fixed directory under the system
// temporary directory. It is kept after the test and logged.
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("DASHBOARD_SCREENSHOTS")
	if dir == "" {
		if f := flag.Lookup("test.outputdir"); f != nil && f.Value.String() != "" {
			dir = filepath.Join(f.Value.String(), "dashboard-screenshots")
		} else {
			dir = filepath.Join(os.TempDir(), "fsmnodes-dashboard-screenshots")
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitListening waits for a bridge to accept connections on port (the
// page and the WebSocket are served there).
func waitListening(t *testing.T, port int) {
	t.Helper()
	testenv.WaitFor(t, 60*time.Second, "the bridge to listen", func() bool {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// browser wraps a chromedp context with the helpers the steps use.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
	dir  string
	shot map[string][]byte
}

func (b *browser) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// text returns the text of the first element matching sel ("" if none).
func (b *browser) text(sel string) string {
	var s string
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, sel), &s)); err != nil {
		return "(error: " + err.Error() + ")"
	}
	return s
}

func (b *browser) eval(expr string, out any) {
	b.t.Helper()
	b.run("evaluate "+expr, chromedp.Evaluate(expr, out, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
		return p.WithAwaitPromise(true)
	}))
}

// waitText waits until sel's text satisfies ok. On a timeout it logs what
// the page's protocol client knows, to tell a page bug from a graph that
// lacks the data.
//
// A timed-out wait also says how often the page was read and how long the
// slowest read took: a page starved of CPU (make test runs many packages
// side by side on two cores) answers late rather than wrongly.
func (b *browser) waitText(sel, what string, timeout time.Duration, ok func(string) bool) {
	b.t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	var reads int
	var slowest time.Duration
	var last string
	for {
		t0 := time.Now()
		last = b.text(sel)
		reads++
		slowest = max(slowest, time.Since(t0))
		if ok(last) {
			return
		}
		if time.Now().After(deadline) {
			b.t.Logf("page state: %s", b.diagnose())
			b.t.Fatalf("timed out after %v waiting for %s (%s: %d reads, slowest %v, last %q, now %q)",
				timeout, what, sel, reads, slowest.Round(time.Millisecond), last, b.text(sel))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// texts returns the text of every element matching sel.
func (b *browser) texts(sel string) []string {
	var out []string
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`[...document.querySelectorAll(%q)].map((e) => e.textContent)`, sel), &out)); err != nil {
		return []string{"(error: " + err.Error() + ")"}
	}
	return out
}

// waitService waits until the page's protocol client knows the service
// name (the bridge advertised it), so that a click calling it is not
// refused as "not available".
func (b *browser) waitService(name string, timeout time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var ok bool
		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		err := chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`!!(window.fsmDashboard && window.fsmDashboard.bridge.services.has(%q))`, name), &ok))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("timed out after %v waiting for the page to know service %s (last error %v); page state: %s", timeout, name, err, b.diagnose())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// diagnose returns the page's view of the bridge: connection, counts of
// channels and services, and every subscription the page wants with the
// channel it is subscribed to (null: not advertised or not subscribed).
func (b *browser) diagnose() string {
	var s string
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	err := chromedp.Run(ctx, chromedp.Evaluate(`(() => {
		const br = window.fsmDashboard && window.fsmDashboard.bridge;
		if (!br) return 'no fsmDashboard';
		return JSON.stringify({
			connected: br.connected, url: br.url, channels: br.channels.size, services: br.services.size,
			stats: br.stats, hash: location.hash,
			wanted: [...br.wanted.values()].map((w) => [w.topic, w.channelId]),
		});
	})()`, &s))
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return s
}

// open loads the page with the given hash and waits for the bridge
// connection.
func (b *browser) open(hash string) {
	b.t.Helper()
	b.run("navigate", chromedp.Navigate(b.base+"/#"+hash))
	b.waitText("#conn .conn-text", "the page to connect to the bridge", 30*time.Second, func(s string) bool {
		return strings.HasPrefix(s, "connected")
	})
}

// show switches the loaded page to another namespace or view the way a
// link does (location hash), keeping the page and what it collected.
func (b *browser) show(hash string) {
	b.t.Helper()
	var ok bool
	b.eval(fmt.Sprintf(`location.hash = %q, true`, hash), &ok)
	b.waitText("body", "the view "+hash, 10*time.Second, func(string) bool {
		var view string
		b.eval(`document.body.dataset.view || ""`, &view)
		return strings.Contains(hash, "view="+view)
	})
}

// screenshot saves the element sel as name.png.
// pause lets the demo go on for d before a screenshot, for a better
// picture (why). Only the pictures of the docs need it: without
// -update-docs-img it returns at once, since no check depends on it.
func (b *browser) pause(d time.Duration, why string) {
	if *updateDocs {
		b.t.Logf("waiting %v for the picture: %s", d, why)
		time.Sleep(d)
	}
}

func (b *browser) screenshot(name, sel string) {
	b.t.Helper()
	var buf []byte
	b.run("screenshot "+name, chromedp.ScrollIntoView(sel, chromedp.ByQuery), chromedp.Screenshot(sel, &buf, chromedp.ByQuery, chromedp.NodeVisible))
	if _, err := png.Decode(bytes.NewReader(buf)); err != nil {
		b.t.Fatalf("screenshot %s is not a PNG: %v", name, err)
	}
	p := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.shot[name] = buf
	b.t.Logf("screenshot %s (%d kB)", p, len(buf)/1024)
}

// keyEvent dispatches one raw key event (down or up) to the page.
func keyEvent(typ input.KeyType, key string, code int64) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		return input.DispatchKeyEvent(typ).WithKey(key).WithCode(key).WithWindowsVirtualKeyCode(code).Do(ctx)
	})
}

// docImages maps screenshots to the README's images.
var docImages = map[string]string{
	"rsm-control": "dashboard-rsm-control.png",
	"rsm-map":     "dashboard-map.png",
	"hexapod":     "dashboard-hexapod.png",
	"velma":       "dashboard-velma.png",
	"topics":      "dashboard-topics.png",
	"log":         "dashboard-log.png",
}

func writeDocImages(t *testing.T, root string, shots map[string][]byte) {
	for name, file := range docImages {
		buf, ok := shots[name]
		if !ok {
			t.Errorf("no screenshot %s for docs/img/%s", name, file)
			continue
		}
		small, err := compactPNG(buf)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(small) > 150*1024 {
			t.Errorf("screenshot %s is %d kB even with a palette; docs/img takes < 150 kB", name, len(small)/1024)
			continue
		}
		if err := os.WriteFile(filepath.Join(root, "docs", "img", file), small, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("docs/img/%s: %d kB (screenshot %d kB)", file, len(small)/1024, len(buf)/1024)
	}
}

// compactPNG re-encodes a screenshot with a palette of its 256 most
// frequent colours (each other colour maps to its nearest), which keeps UI
// pictures sharp at a fraction of the size, and returns whichever is
// smaller.
func compactPNG(buf []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		return nil, err
	}
	b := img.Bounds()
	counts := map[color.RGBA]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			counts[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	cols := make([]color.RGBA, 0, len(counts))
	for c := range counts {
		cols = append(cols, c)
	}
	sort.Slice(cols, func(i, j int) bool {
		if counts[cols[i]] != counts[cols[j]] {
			return counts[cols[i]] > counts[cols[j]]
		}
		return fmt.Sprint(cols[i]) < fmt.Sprint(cols[j])
	})
	if len(cols) > 256 {
		cols = cols[:256]
	}
	pal := make(color.Palette, len(cols))
	for i, c := range cols {
		pal[i] = c
	}
	out := image.NewPaletted(b, pal)
	index := map[color.RGBA]uint8{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			i, ok := index[c]
			if !ok {
				i = uint8(pal.Index(c))
				index[c] = i
			}
			out.SetColorIndex(x, y, i)
		}
	}
	var w bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&w, out); err != nil {
		return nil, err
	}
	if w.Len() < len(buf) {
		return w.Bytes(), nil
	}
	return buf, nil
}

// releaseEStop releases the diffbot's e-stop over DDS, as the CLI would.
func releaseEStop(t *testing.T, n *ros.Node) {
	c, err := ros.NewClient(n, "/diffbot/rsm/setOperationMode", rsm_msgs_srv.SetOperationMode)
	if err != nil {
		t.Logf("release the e-stop: %v", err)
		return
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if r, err := c.Call(ctx, &rsm_msgs_srv.SetOperationMode_Request{}); err != nil || !r.Success {
		t.Logf("release the e-stop: %+v %v", r, err)
	}
}
