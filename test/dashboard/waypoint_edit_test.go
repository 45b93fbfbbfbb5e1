package dashboard

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
)

// Waypoint editing on the map, as the original's RViz waypoint markers
// allowed: in "Edit waypoints" mode a waypoint dragged with the mouse moves
// (rsm/moveWaypoint), a click selects it and the bar below the map changes
// its routine (rsm/setWaypointRoutine) or removes it (rsm/removeWaypoint).
// Each edit is checked with the service provider's own answer to
// rsm/getWaypoints.
func TestDashboardWaypointEditing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the demo, the bridge and a browser")
	}
	chrome := findChromium(t)
	domain := testenv.Domain(t)
	port := freePort(t)
	// a waypoints file of its own ($ROS_HOME/fsmnodes/diffbot/waypoints.yaml):
	// the other tests of the package leave waypoints in theirs
	t.Setenv("ROS_HOME", t.TempDir())
	testenv.LaunchDemo(t, domain, fmt.Sprintf("foxglove_port:=%d", port))

	d := domain
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &d, NoSignals: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	go func() { _ = rc.Spin(context.Background()) }()
	n, err := rc.NewNode("dashboard_waypoint_edit_test", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	get, err := ros.NewClient(n, "/diffbot/rsm/getWaypoints", rsm_msgs_srv.GetWaypoints)
	if err != nil {
		t.Fatal(err)
	}
	defer get.Close()
	add, err := ros.NewClient(n, "/diffbot/rsm/addWaypoint", rsm_msgs_srv.AddWaypoint)
	if err != nil {
		t.Fatal(err)
	}
	defer add.Close()
	for _, c := range []interface{ WaitForService(context.Context) error }{get, add} {
		if err := c.WaitForService(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// the service provider's waypoints, as it answers rsm/getWaypoints
	waypoints := func() []rsm_msgs_msg.Waypoint {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		r, err := get.Call(cctx, &rsm_msgs_srv.GetWaypoints_Request{})
		if err != nil {
			t.Fatalf("rsm/getWaypoints: %v", err)
		}
		return r.WaypointArray.Waypoints
	}
	waitWaypoints := func(what string, ok func([]rsm_msgs_msg.Waypoint) bool) []rsm_msgs_msg.Waypoint {
		t.Helper()
		var w []rsm_msgs_msg.Waypoint
		testenv.WaitFor(t, 20*time.Second, what+" (rsm/getWaypoints)", func() bool { w = waypoints(); return ok(w) })
		return w
	}

	// Two waypoints to edit, added the way any client adds them.
	start := [][2]float64{{2.0, 0.5}, {3.5, 1.5}}
	yaw0 := 0.6
	for _, p := range start {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		r, err := add.Call(cctx, &rsm_msgs_srv.AddWaypoint_Request{Position: -1, Waypoint: rsm_msgs_msg.Waypoint{
			Pose: geometry_msgs_msg.Pose{Position: geometry_msgs_msg.Point{X: p[0], Y: p[1]},
				Orientation: geometry_msgs_msg.Quaternion{Z: math.Sin(yaw0 / 2), W: math.Cos(yaw0 / 2)}}}})
		cancel()
		if err != nil || !r.Success {
			t.Fatalf("rsm/addWaypoint %v: %v %+v", p, err, r)
		}
	}
	if w := waypoints(); len(w) != 2 {
		t.Fatalf("the demo holds %d waypoints after adding two to a fresh waypoints file, want 2", len(w))
	}

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromiumOptions(t, chrome, 1440, 1000)...)
	defer cancelAlloc()
	// chromedp's errors about CDP events it cannot decode are noise here.
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	defer cancelBrowser()
	// exceptions thrown in the page fail the test
	var jsMu sync.Mutex
	var jsErrors []string
	chromedp.ListenTarget(bctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			jsMu.Lock()
			jsErrors = append(jsErrors, e.ExceptionDetails.Error())
			jsMu.Unlock()
		}
	})
	defer func() {
		jsMu.Lock()
		defer jsMu.Unlock()
		for _, e := range jsErrors {
			t.Errorf("JavaScript exception in the page: %s", e)
		}
	}()
	if err := chromedp.Run(bctx); err != nil {
		t.Fatalf("start %s: %v", chrome, err)
	}
	b := &browser{t: t, ctx: bctx, base: fmt.Sprintf("http://127.0.0.1:%d", port), dir: screenshotDir(t), shot: map[string][]byte{}}
	waitListening(t, port)
	b.open("ns=/diffbot&view=robot")
	b.waitText("#rsm-state", "RSM to finish booting", 60*time.Second, func(s string) bool { return s == "Idle" })
	b.waitText(".map-panel .map-status", "the map to be drawn", 30*time.Second, func(s string) bool { return strings.Contains(s, "120×80") })
	const mapView = `window.fsmDashboard.views.find((v) => v.worldToClient)`
	b.waitText("body", "the page to hold both waypoints", 20*time.Second, func(string) bool {
		var k int
		b.eval(mapView+`.waypoints ? `+mapView+`.waypoints.waypoints.length : 0`, &k)
		return k == 2
	})
	b.waitText("#rsm-routine", "the routines the service provider offers", 20*time.Second, func(s string) bool { return strings.Contains(s, "Reversing") })
	client := func(x, y float64) (float64, float64) {
		var pt struct{ X, Y float64 }
		b.eval(fmt.Sprintf(`%s.worldToClient(%v, %v)`, mapView, x, y), &pt)
		return pt.X, pt.Y
	}
	b.run("edit-waypoints mode", chromedp.Click(`label:has(#map-mode-edit)`, chromedp.ByQuery))

	// Drag waypoint 1 with the mouse, in steps as a hand does.
	to := [2]float64{2.6, -0.4}
	x0, y0 := client(start[0][0], start[0][1])
	x1, y1 := client(to[0], to[1])
	drag := []chromedp.Action{input.DispatchMouseEvent(input.MousePressed, x0, y0).WithButton(input.Left).WithClickCount(1)}
	for i := 1; i <= 10; i++ {
		f := float64(i) / 10
		drag = append(drag, input.DispatchMouseEvent(input.MouseMoved, x0+f*(x1-x0), y0+f*(y1-y0)).WithButton(input.Left).WithButtons(1))
	}
	drag = append(drag, input.DispatchMouseEvent(input.MouseReleased, x1, y1).WithButton(input.Left).WithClickCount(1))
	b.run("drag waypoint 1", drag...)
	w := waitWaypoints("waypoint 1 moved", func(w []rsm_msgs_msg.Waypoint) bool {
		return len(w) == 2 && math.Hypot(w[0].Pose.Position.X-start[0][0], w[0].Pose.Position.Y-start[0][1]) > 0.5
	})
	// One screen pixel is 1/scale metres; the fitted map has > 50 px/m.
	if p := w[0].Pose.Position; math.Hypot(p.X-to[0], p.Y-to[1]) > 0.05 {
		t.Errorf("waypoint 1 moved to (%.3f, %.3f), dragged to %v", p.X, p.Y, to)
	}
	if q := w[0].Pose.Orientation; math.Abs(2*math.Atan2(q.Z, q.W)-yaw0) > 1e-6 {
		t.Errorf("moving waypoint 1 changed its heading to %.3f rad, want %.3f", 2*math.Atan2(q.Z, q.W), yaw0)
	}
	if p := w[1].Pose.Position; p.X != start[1][0] || p.Y != start[1][1] {
		t.Errorf("waypoint 2 at (%.3f, %.3f) after moving waypoint 1, want %v", p.X, p.Y, start[1])
	}

	// Click waypoint 2: the bar offers its routine and Remove.
	x2, y2 := client(start[1][0], start[1][1])
	b.run("click waypoint 2", chromedp.MouseClickXY(x2, y2))
	b.waitText("#map-wp-title", "the editor bar for waypoint 2", 10*time.Second, func(s string) bool { return strings.HasPrefix(s, "Waypoint 2") })
	b.waitText("#map-wp-routine", "the routines in the editor bar", 10*time.Second, func(s string) bool { return strings.Contains(s, "Reversing") })
	// choose the routine as a user does: the select's value changes and it
	// fires change
	var ok bool
	b.eval(`(() => { const s = document.querySelector('#map-wp-routine'); s.focus(); s.value = 'Reversing'; s.dispatchEvent(new Event('change', { bubbles: true })); s.blur(); return true; })()`, &ok)
	w = waitWaypoints("waypoint 2's routine set", func(w []rsm_msgs_msg.Waypoint) bool { return len(w) == 2 && w[1].Routine == "Reversing" })
	if w[0].Routine != "" {
		t.Errorf("waypoint 1 got routine %q, only waypoint 2's was changed", w[0].Routine)
	}
	b.waitText("#rsm-waypoint-table tbody", "the list to show the routine", 10*time.Second, func(s string) bool { return strings.Contains(s, "Reversing") })
	b.screenshot("rsm-map-edit", "#panel-map")

	// Back to none, then remove waypoint 1 (the moved one) from its bar.
	b.eval(`(() => { const s = document.querySelector('#map-wp-routine'); s.value = ''; s.dispatchEvent(new Event('change', { bubbles: true })); return true; })()`, &ok)
	waitWaypoints("waypoint 2's routine cleared", func(w []rsm_msgs_msg.Waypoint) bool { return len(w) == 2 && w[1].Routine == "" })
	x1, y1 = client(to[0], to[1])
	b.run("click waypoint 1", chromedp.MouseClickXY(x1, y1))
	b.waitText("#map-wp-title", "the editor bar for waypoint 1", 10*time.Second, func(s string) bool { return strings.HasPrefix(s, "Waypoint 1") })
	b.run("remove it", chromedp.Click("#map-wp-remove", chromedp.ByQuery))
	w = waitWaypoints("waypoint 1 removed", func(w []rsm_msgs_msg.Waypoint) bool { return len(w) == 1 })
	if p := w[0].Pose.Position; p.X != start[1][0] || p.Y != start[1][1] {
		t.Errorf("the remaining waypoint is at (%.3f, %.3f), want the untouched one at %v", p.X, p.Y, start[1])
	}
	var hidden bool
	b.eval(`document.querySelector('#map-wp-editor').hidden`, &hidden)
	if !hidden {
		t.Errorf("the editor bar still shows a removed waypoint")
	}
	if *updateDocs {
		root, err := testenv.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		small, err := compactPNG(b.shot["rsm-map-edit"])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "docs", "img", "dashboard-map-edit.png"), small, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("docs/img/dashboard-map-edit.png: %d kB", len(small)/1024)
	}
}
