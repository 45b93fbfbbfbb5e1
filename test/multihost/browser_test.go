package multihost

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"golang.org/x/sys/unix"
)

// findChromium returns the browser to run on the operator host. Without
// one the test is skipped, except under CI, whose .ci/run installs
// Debian's chromium.
func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium not found; CI must install it (Debian package chromium, see .ci/run)")
	}
	fmt.Fprintf(os.Stderr, "SKIP %s: no chromium (Debian package chromium, or CHROMIUM=/path)\n", t.Name())
	t.Skip("no chromium found")
	return ""
}

// inNetns runs f on an OS thread that has entered the host's network
// namespace, so that the sockets f opens belong to the host (the
// namespace a socket is made in is its for good). The thread goes back to
// the test's own namespace afterwards; if it cannot, it stays locked and
// ends with f's goroutine, so no other goroutine ever runs in the host.
func (h *Host) inNetns(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer own.Close()
		target, err := os.Open("/run/netns/" + h.NS)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("setns %s: %w", h.NS, err)
			return
		}
		ferr := f()
		if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns back from %s: %w", h.NS, err) // the thread dies locked
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// startBrowser runs headless Chromium on host h (its network namespace:
// the browser reaches only what the host reaches) and returns a chromedp
// context that drives it. The test talks to the browser's DevTools
// endpoint on the host's own loopback, through a socket opened inside the
// host (inNetns); nothing listens in the test's namespace. trustSPKI is
// the base64 SHA-256 of a certificate's public key the browser accepts
// (the bridge's self-signed one). The browser is closed when t ends.
func startBrowser(t *testing.T, h *Host, trustSPKI string) context.Context {
	t.Helper()
	chrome := findChromium(t)
	env := h.Env(0, "HOME="+t.TempDir())
	p := h.Start(t, "chromium", env, chrome, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--no-default-browser-check", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--mute-audio", "--hide-scrollbars", "--window-size=1440,1000",
		// A page the browser deems in the background gets no animation
		// frames (the dashboard draws its map in them) and throttled
		// timers: never throttle the test's page.
		"--disable-renderer-backgrounding", "--disable-background-timer-throttling", "--disable-backgrounding-occluded-windows",
		"--ignore-certificate-errors-spki-list="+trustSPKI, "--remote-debugging-port=0", "--user-data-dir="+t.TempDir(), "about:blank")
	m := p.WaitOutput(t, 60*time.Second, regexp.MustCompile(`DevTools listening on (ws://\S+)`))
	actx, cancelAlloc := chromedp.NewRemoteAllocator(context.Background(), m[1], chromedp.NoModifyURL)
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithErrorf(func(format string, args ...any) {
		if msg := fmt.Sprintf(format, args...); !strings.HasPrefix(msg, "could not unmarshal event") {
			t.Logf("chromedp: %s", msg)
		}
	}))
	// The first Run dials the DevTools WebSocket: from inside the host.
	if err := h.inNetns(func() error { return chromedp.Run(bctx) }); err != nil {
		cancelBrowser()
		cancelAlloc()
		t.Fatalf("connect to chromium on %s: %v", h.Name, err)
	}
	// That Run opened a new tab (chromedp 0.16 on a remote browser; 0.13
	// opened a window), which headless Chromium keeps hidden behind its
	// first one: the dashboard's map, drawn in animation frames, stayed
	// empty. Bring it to the front.
	if err := chromedp.Run(bctx, cdppage.BringToFront()); err != nil {
		cancelBrowser()
		cancelAlloc()
		t.Fatalf("bring the test's tab to the front: %v", err)
	}
	// Registered after Start's cleanup, so it runs first: the browser is
	// closed over DevTools and every process of it has gone before Start's
	// cleanup checks that none is left.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bctx, 5*time.Second)
		_ = chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
			return browser.Close().Do(ctx)
		}))
		cancel()
		cancelBrowser()
		cancelAlloc()
		gone := func(d time.Duration) bool {
			for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				if syscall.Kill(-p.Pid(), 0) != nil {
					return true
				}
			}
			return false
		}
		if !gone(5 * time.Second) {
			// Not closed over DevTools (a test that failed midway): the
			// browser's own SIGTERM handling ends its helpers with it.
			_ = syscall.Kill(p.Pid(), syscall.SIGTERM)
			if !gone(10 * time.Second) {
				t.Logf("chromium's processes did not end within 15 s; killed")
				_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
				gone(5 * time.Second)
			}
		}
	})
	return bctx
}

// spkiOf returns the base64 SHA-256 of the public key of the PEM
// certificate in file, as Chromium's --ignore-certificate-errors-spki-list
// takes it.
func spkiOf(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s: no PEM block", file)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	sum := sha256.Sum256(c.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// rssKB is the resident memory of process pid, in kB (0 if gone).
func rssKB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb
		}
	}
	return 0
}

// writeFile writes content to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return p
}
