package dashboard

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// fsmDocImages are the screenshots of the State machines panel that
// -update-docs-img writes to docs/img for the README.
var fsmDocImages = map[string]string{
	"fsm-hexapod":  "dashboard-fsm-hexapod.png",
	"fsm-mux":      "dashboard-fsm-mux.png",
	"fsm-rsm":      "dashboard-fsm-rsm.png",
	"fsm-velma":    "dashboard-fsm-velma.png",
	"fsm-velma-cs": "dashboard-fsm-velma-cs.png",
}

// TestFSMPanelInChromium drives the "State machines" view in headless
// Chromium against motion_control, robot_control_mux, rsmNode (with
// rsm_boot) and velma_bridge behind foxglove_bridge: the node list comes from the …/fsm/graph
// topics, each machine's graph is laid out and drawn as SVG in the page
// (no request leaves the bridge's origin), the current state is
// highlighted, a transition made over DDS (start_stop, an e-stop) lights
// its edge up and enters the history with its cause, and ve_body's
// thousand changes a second show as its current state.
func TestFSMPanelInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts nodes, the bridge and a browser")
	}
	chrome := findChromium(t)
	bin := testenv.ExecutableDir(t, "cmd/fsmnodes", "nodes/...")
	domain := testenv.Domain(t)
	env := testenv.Env(domain)
	port := freePort(t)
	testenv.Start(t, "motion_control", env, filepath.Join(bin, "motion_control"))
	testenv.Start(t, "robot_control_mux", env, filepath.Join(bin, "robot_control_mux"))
	testenv.Start(t, "state_interface", env, filepath.Join(bin, "state_interface"))
	testenv.Start(t, "rsm_boot", env, filepath.Join(bin, "rsm_boot"))
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	testenv.Start(t, "velma_bridge", env, filepath.Join(bin, "velma_bridge"), "--ros-args", "--params-file", filepath.Join(root, "params", "velma.yaml"))
	testenv.Start(t, "foxglove_bridge", env, filepath.Join(bin, "foxglove_bridge"), "--ros-args", "-p", fmt.Sprintf("port:=%d", port))

	d := domain
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &d, NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "test: "}})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = rc.Spin(ctx) }()
	n, err := rc.NewNode("fsm_dashboard_test", "")
	if err != nil {
		t.Fatal(err)
	}

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromiumOptions(t, chrome, 1440, 1000)...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	defer cancelBrowser()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	var mu sync.Mutex
	var consoleErrors, requests []string
	chromedp.ListenTarget(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			consoleErrors = append(consoleErrors, e.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError {
				consoleErrors = append(consoleErrors, fmt.Sprint(e.Args))
			}
		case *network.EventRequestWillBeSent:
			requests = append(requests, e.Request.URL)
		}
	})
	if err := chromedp.Run(bctx, network.Enable()); err != nil {
		t.Fatalf("start %s: %v", chrome, err)
	}
	b := &browser{t: t, ctx: bctx, base: base, dir: screenshotDir(t), shot: map[string][]byte{}}
	waitListening(t, port)
	b.open("view=fsm")
	pick := func(node string) {
		t.Helper()
		b.waitText("#fsm-node", node+" in the node list", 60*time.Second, func(s string) bool { return strings.Contains(s, node) })
		var ok bool
		b.eval(fmt.Sprintf(`(() => { const s = document.getElementById('fsm-node'); s.value = %q; s.dispatchEvent(new Event('change')); return s.value === %q; })()`, node, node), &ok)
		if !ok {
			t.Fatalf("cannot select %s", node)
		}
	}
	active := func(machine string) string {
		var s string
		b.eval(fmt.Sprintf(`(document.querySelector('svg[data-machine=%q] g.fsm-state.active') || {getAttribute: () => ''}).getAttribute('data-state')`, machine), &s)
		return s
	}
	waitActive := func(machine, what string, ok func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !ok(active(machine)) {
			if time.Now().After(deadline) {
				t.Logf("page state: %s", b.diagnose())
				t.Fatalf("timed out waiting for %s (active %s state %q)", what, machine, active(machine))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	count := func(sel string) int {
		var n int
		b.eval(fmt.Sprintf(`document.querySelectorAll(%q).length`, sel), &n)
		return n
	}
	// countIs waits (a failure bound) for sel to match want elements: the
	// page redraws a graph when its node's graph message arrives again.
	countIs := func(sel string, want int) int {
		t.Helper()
		got := count(sel)
		for deadline := time.Now().Add(15 * time.Second); got != want && time.Now().Before(deadline); got = count(sel) {
			time.Sleep(200 * time.Millisecond)
		}
		return got
	}
	call := func(srv string, req any) {
		t.Helper()
		cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
		defer ccancel()
		switch r := req.(type) {
		case *std_srvs_srv.Trigger_Request:
			c, err := ros.NewClient(n, srv, std_srvs_srv.Trigger)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.WaitForService(cctx); err != nil {
				t.Fatal(err)
			}
			if resp, err := c.Call(cctx, r); err != nil || !resp.Success {
				t.Fatalf("%s: %v %v", srv, resp, err)
			}
		case *rsm_msgs_srv.SetOperationMode_Request:
			c, err := ros.NewClient(n, srv, rsm_msgs_srv.SetOperationMode)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.WaitForService(cctx); err != nil {
				t.Fatal(err)
			}
			if resp, err := c.Call(cctx, r); err != nil || !resp.Success {
				t.Fatalf("%s: %v %v", srv, resp, err)
			}
		}
	}

	{ // hexapod
		pick("/hexapod_controller")
		waitActive("motion", "Idle highlighted", func(s string) bool { return s == "Idle" })
		waitActive("lifecycle", "active highlighted", func(s string) bool { return s == "active" })
		if got := countIs(`svg[data-machine="motion"] g.fsm-state`, 6); got != 6 {
			t.Errorf("motion graph: %d states drawn, want 6", got)
		}
		if got := countIs(`svg[data-machine="motion"] path.fsm-edge`, 9); got != 9 {
			t.Errorf("motion graph: %d edges drawn, want 9", got)
		}
		if got := countIs(`svg[data-machine="lifecycle"] path.fsm-edge`, 23); got != 23 { // 25 edges, 2 pairs with two guards
			t.Errorf("lifecycle graph: %d edges drawn, want 23", got)
		}
		// The page has the node's status (the newest transition when it
		// subscribed): what comes after it is new and lights up.
		b.waitText(`.fsm-current[data-machine="motion"]`, "motion's status", 10*time.Second, func(s string) bool {
			return strings.Contains(s, "transitions")
		})
		// The transition lights its edge up for 1.5 s. Under load a poll
		// of the page can take longer than that, so the page records every
		// edge that gets lit, from before the call.
		var armed bool
		b.eval(`(() => {
			window.fsmLit = [];
			new MutationObserver(ms => {
				for (const m of ms) {
					const el = m.target;
					if (el.matches && el.matches('svg[data-machine="motion"] path.fsm-edge.fired')) {
						window.fsmLit.push(el.dataset.from + ' -> ' + el.dataset.to);
					}
				}
			}).observe(document.querySelector('#panel-fsm'), {subtree: true, attributes: true, attributeFilter: ['class']});
			return true;
		})()`, &armed)
		call("/hexapod_controller/start_stop", &std_srvs_srv.Trigger_Request{})
		waitActive("motion", "Sitting highlighted", func(s string) bool { return s == "Sitting" })
		var lit []string
		for end := time.Now().Add(10 * time.Second); !slices.Contains(lit, "Idle -> Sitting") && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			b.eval(`window.fsmLit`, &lit)
		}
		if !armed || !slices.Contains(lit, "Idle -> Sitting") {
			t.Errorf("the Idle → Sitting edge did not light up (edges lit: %q)", lit)
		}
		b.waitText("#fsm-history li", "the transition in the history", 10*time.Second, func(s string) bool {
			return strings.Contains(s, "motion: Idle → Sitting (start_cmd / torque on)")
		})
		b.screenshot("fsm-hexapod", "#panel-fsm")
	}

	{ // mux e-stop
		pick("/robotControlMuxNode")
		waitActive("operation_mode", "STOPPED highlighted", func(s string) bool { return s == "STOPPED" })
		call("/rsm/setOperationMode", &rsm_msgs_srv.SetOperationMode_Request{OperationMode: rsm_msgs_msg.OperationMode{EmergencyStop: true}})
		waitActive("operation_mode", "E-STOP/STOPPED highlighted", func(s string) bool { return s == "E-STOP/STOPPED" })
		b.waitText("#fsm-history li", "the e-stop in the history", 10*time.Second, func(s string) bool {
			return strings.Contains(s, "operation_mode: STOPPED → E-STOP/STOPPED (setOperationMode (e-stop on))")
		})
		b.screenshot("fsm-mux", "#panel-fsm")
	}

	{ // rsm
		// The mux's e-stop reached RSM as an interrupt; releasing it ends
		// the interrupt.
		pick("/rsmNode")
		waitActive("rsm", "RSM in Emergency Stop", func(s string) bool { return s == "Emergency Stop" })
		if got := countIs(`svg[data-machine="rsm"] g.fsm-state`, 11); got != 11 {
			t.Errorf("rsm graph: %d states drawn, want 11", got)
		}
		b.waitText("#fsm-history", "the interrupt in the history", 10*time.Second, func(s string) bool {
			return strings.Contains(s, "→ Emergency Stop (EMERGENCY_STOP_INTERRUPT)")
		})
		call("/rsm/setOperationMode", &rsm_msgs_srv.SetOperationMode_Request{OperationMode: rsm_msgs_msg.OperationMode{}})
		waitActive("rsm", "RSM back in Idle", func(s string) bool { return s == "Idle" })
		b.waitText("#fsm-history li", "the end of the interrupt in the history", 10*time.Second, func(s string) bool {
			return strings.Contains(s, "rsm: Emergency Stop → Idle (INTERRUPT_END)")
		})
		if got := count(`#fsm-history li.unknown`); got != 0 {
			t.Errorf("%d RSM transitions outside the graph", got)
		}
		b.screenshot("fsm-rsm", "#panel-fsm")
	}

	{ // velma
		pick("/velma_core")
		waitActive("ve_body", "ve_body transparent", func(s string) bool { return strings.HasPrefix(s, "transp") })
		waitActive("cs", "cs safe", func(s string) bool { return s == "safe" })
		b.waitText(`.fsm-current[data-machine="ve_body"]`, "ve_body's transition count", 10*time.Second, func(s string) bool {
			return strings.Contains(s, "transitions") && !strings.Contains(s, "not in graph")
		})
		if got := count(`#fsm-history li.unknown`); got != 0 {
			t.Errorf("%d transitions outside the graph in the history", got)
		}
		b.screenshot("fsm-velma", `section.fsm-machine[data-machine="ve_body"]`)
		b.screenshot("fsm-velma-cs", `section.fsm-machine[data-machine="cs"]`)
	}

	// Nothing but the bridge's own origin was asked for.
	mu.Lock()
	for _, u := range requests {
		if !strings.HasPrefix(u, base+"/") && !strings.HasPrefix(u, "ws://127.0.0.1:") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page fetched %s", u)
		}
	}
	t.Logf("%d requests, all to %s", len(requests), base)
	for _, e := range consoleErrors {
		t.Errorf("browser console error: %s", e)
	}
	mu.Unlock()
	if *updateDocs {
		for name, file := range fsmDocImages {
			small, err := compactPNG(b.shot[name])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "docs", "img", file), small, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("docs/img/%s: %d kB", file, len(small)/1024)
		}
	}
}
