package rsmnode

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	"github.com/fsmnodes/fsmnodes/internal/viz"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	visualization_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/visualization_msgs/msg"
)

// TestWaypointMarkers_Process starts service_provider, sets three
// waypoints (one visited, one unreachable), and only then subscribes to
// rsm/waypoint_markers, as an RViz started late would: the transient-local
// array is there, DELETEALL first, arrows coloured by state. The CLI's
// `topic echo --once` sees it too. Removing a waypoint republishes a
// shorter array.
func TestWaypointMarkers_Process(t *testing.T) {
	domain := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	t.Parallel() // a domain of its own
	cli := testenv.Executable(t, "cmd/fsmnodes")
	start(t, domain, "service_provider")

	n, nodeCtx := rostest.Node(t, domain, "waypoint_markers_test")
	ctx, cancel := context.WithTimeout(nodeCtx, 2*waitLimit)
	t.Cleanup(cancel)
	addWp, _ := ros.NewClient(n, "/rsm/addWaypoint", rsm_msgs_srv.AddWaypoint)
	visited, _ := ros.NewClient(n, "/rsm/waypointVisited", rsm_msgs_srv.WaypointVisited)
	unreachable, _ := ros.NewClient(n, "/rsm/waypointUnreachable", rsm_msgs_srv.WaypointUnreachable)
	remove, _ := ros.NewClient(n, "/rsm/removeWaypoint", rsm_msgs_srv.RemoveWaypoint)
	waitServices(t, ctx, addWp, visited, unreachable, remove)
	ok := func(success bool, msg string, err error) {
		t.Helper()
		if err != nil || !success {
			t.Fatalf("service call: %v %q", err, msg)
		}
	}
	for _, x := range []float64{2, 4, 5} {
		r, err := addWp.Call(ctx, &rsm_msgs_srv.AddWaypoint_Request{Position: -1, Waypoint: rsm_msgs_msg.Waypoint{
			Pose: geometry_msgs_msg.Pose{Position: geometry_msgs_msg.Point{X: x, Y: 0.5}, Orientation: geometry_msgs_msg.Quaternion{W: 1}}}})
		ok(r != nil && r.Success, "addWaypoint", err)
	}
	rv, err := visited.Call(ctx, &rsm_msgs_srv.WaypointVisited_Request{Position: 0})
	ok(rv != nil && rv.Success, "waypointVisited", err)
	ru, err := unreachable.Call(ctx, &rsm_msgs_srv.WaypointUnreachable_Request{Position: 2})
	ok(ru != nil && ru.Success, "waypointUnreachable", err)

	// A late subscriber: what it gets first must be the current array.
	// Make sure the node has published it before subscribing: watch the
	// waypoints topic for the three states.
	arrays := &recorder[*visualization_msgs_msg.MarkerArray]{}
	wps := &recorder[*rsm_msgs_msg.WaypointArray]{}
	if _, err := ros.NewSubscription(n, "/rsm/waypoints", ros.QoSDefault, func(m *rsm_msgs_msg.WaypointArray) { wps.add(m) }); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, waitLimit, "the waypoints with their states", func() bool {
		all := wps.get()
		if len(all) == 0 {
			return false
		}
		w := all[len(all)-1].Waypoints
		return len(w) == 3 && w[0].Visited && w[2].Unreachable
	})
	// The node publishes the markers in the same cycle as the waypoints,
	// just before them, and only on change: from here on the array is the
	// latched one and nothing new.
	if _, err := ros.NewSubscription(n, "/rsm/waypoint_markers", ros.QoSLatched, func(m *visualization_msgs_msg.MarkerArray) { arrays.add(m) }); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, waitLimit, "the latched marker array", func() bool { return len(arrays.get()) > 0 })
	first := arrays.get()[0]
	checkMarkers(t, first, []string{"green", "blue", "red"})

	// The CLI, as a user types it.
	cctx, ccancel := context.WithTimeout(ctx, waitLimit)
	defer ccancel()
	echo := exec.CommandContext(cctx, cli, "topic", "echo", "/rsm/waypoint_markers", "--once")
	echo.Env = testenv.Env(domain)
	out, err := echo.CombinedOutput()
	if err != nil {
		t.Fatalf("fsmnodes topic echo: %v\n%s", err, out)
	}
	for _, want := range []string{"action: 3", "ns: waypoints", "ns: waypoint_numbers", "text: '2'", "frame_id: map"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("topic echo output lacks %q:\n%s", want, out)
		}
	}

	// Remove the middle waypoint: the array shrinks, numbers follow.
	arrays.clear()
	rr, err := remove.Call(ctx, &rsm_msgs_srv.RemoveWaypoint_Request{Position: 1})
	ok(rr != nil && rr.Success, "removeWaypoint", err)
	testenv.WaitFor(t, waitLimit, "the array after the removal", func() bool {
		for _, a := range arrays.get() {
			if len(a.Markers) == 5 {
				return true
			}
		}
		return false
	})
	for _, a := range arrays.get() {
		if len(a.Markers) == 5 {
			checkMarkers(t, a, []string{"green", "red"})
		}
	}
}

// checkMarkers checks a waypoint marker array: DELETEALL, then an arrow and
// a number per waypoint, the arrows in the given colours.
func checkMarkers(t *testing.T, a *visualization_msgs_msg.MarkerArray, colors []string) {
	t.Helper()
	named := map[string]std_msgs_msg.ColorRGBA{}
	for name, c := range map[string]viz.Color{
		"blue": rsm.WaypointPendingColor, "green": rsm.WaypointVisitedColor, "red": rsm.WaypointUnreachableColor,
	} {
		named[name] = std_msgs_msg.ColorRGBA{R: c.R, G: c.G, B: c.B, A: c.A}
	}
	if len(a.Markers) != 1+2*len(colors) {
		t.Fatalf("%d markers, want %d", len(a.Markers), 1+2*len(colors))
	}
	if a.Markers[0].Action != visualization_msgs_msg.Marker_DELETEALL {
		t.Fatalf("first marker action %d, want DELETEALL", a.Markers[0].Action)
	}
	for i, c := range colors {
		arrow, text := a.Markers[1+2*i], a.Markers[2+2*i]
		if arrow.Type != visualization_msgs_msg.Marker_ARROW || arrow.Ns != "waypoints" || arrow.Id != int32(i) || arrow.Color != named[c] ||
			arrow.Header.FrameId != "map" {
			t.Errorf("waypoint %d arrow: type %d ns %q id %d colour %+v frame %q, want %s", i, arrow.Type, arrow.Ns, arrow.Id, arrow.Color, arrow.Header.FrameId, c)
		}
		if text.Type != visualization_msgs_msg.Marker_TEXT_VIEW_FACING || text.Text != string(rune('0'+i)) {
			t.Errorf("waypoint %d number: type %d text %q", i, text.Type, text.Text)
		}
	}
}
