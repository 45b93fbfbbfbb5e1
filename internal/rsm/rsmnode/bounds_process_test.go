package rsmnode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
)

// TestWaypointBounds_Process (issue 25, finding 3): service_provider with
// max_waypoints 3 and max_routine_length 16 answers a fourth addWaypoint
// and a 17-byte routine with success=false and the bound, keeps three
// waypoints in its file, and publishes the unchanged array on
// rsm/waypoints about once a second instead of at every cycle (100 Hz
// here). A restart with a file of more waypoints than the bound moves the
// file aside and starts empty.
func TestWaypointBounds_Process(t *testing.T) {
	domain := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	t.Parallel() // a domain of its own
	file := filepath.Join(t.TempDir(), "waypoints.yaml")
	p := start(t, domain, "service_provider", "--ros-args", "-p", "waypoints_file:="+file,
		"-p", "max_waypoints:=3", "-p", "max_routine_length:=16", "-p", "update_frequency:=100.0")

	n, nodeCtx := rostest.Node(t, domain, "waypoint_bounds_test")
	ctx, cancel := context.WithTimeout(nodeCtx, 2*waitLimit)
	t.Cleanup(cancel)
	addWp, _ := ros.NewClient(n, "/rsm/addWaypoint", rsm_msgs_srv.AddWaypoint)
	setRoutine, _ := ros.NewClient(n, "/rsm/setWaypointRoutine", rsm_msgs_srv.SetWaypointRoutine)
	waitServices(t, ctx, addWp, setRoutine)
	add := func(x float64, routine string) *rsm_msgs_srv.AddWaypoint_Response {
		t.Helper()
		r, err := addWp.Call(ctx, &rsm_msgs_srv.AddWaypoint_Request{Position: -1, Waypoint: rsm_msgs_msg.Waypoint{Routine: routine,
			Pose: geometry_msgs_msg.Pose{Position: geometry_msgs_msg.Point{X: x}, Orientation: geometry_msgs_msg.Quaternion{W: 1}}}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for x := range 3 {
		if r := add(float64(x), "Reversing"); !r.Success {
			t.Fatalf("addWaypoint %d: %+v", x, r)
		}
	}
	if r := add(9, ""); r.Success || !strings.Contains(r.Message, "max_waypoints") {
		t.Errorf("a fourth addWaypoint with max_waypoints 3: %+v, want refused naming max_waypoints", r)
	}
	long := strings.Repeat("R", 17)
	if r, err := setRoutine.Call(ctx, &rsm_msgs_srv.SetWaypointRoutine_Request{Position: 0, Routine: long}); err != nil || r.Success ||
		!strings.Contains(r.Message, "max_routine_length 16") {
		t.Errorf("setWaypointRoutine with 17 bytes: %+v %v, want refused naming max_routine_length", r, err)
	}
	if got, err := rsm.LoadWaypoints(file); err != nil || len(got.Waypoints) != 3 || got.Waypoints[0].Routine != "Reversing" {
		t.Errorf("the file holds %+v, %v; want the three accepted waypoints", got, err)
	}

	// The array does not change: a few publications in 3 s, not 300.
	wps := &recorder[int]{}
	if _, err := ros.NewSubscription(n, "/rsm/waypoints", ros.QoSDefault, func(m *rsm_msgs_msg.WaypointArray) { wps.add(len(m.Waypoints)) }); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, waitLimit, "a first waypoint array", func() bool { return len(wps.get()) > 0 })
	wps.clear()
	time.Sleep(3 * time.Second)
	if got := len(wps.get()); got < 1 || got > 10 {
		t.Errorf("%d publications of an unchanged array in 3 s at update_frequency 100, want about 3 (one a second)", got)
	}

	// A file beyond the bound (as a restart would find one written with a
	// larger max_waypoints): not loaded, moved aside, said why.
	if problems := p.Stop(); len(problems) > 0 {
		t.Fatalf("stopping service_provider: %v", problems)
	}
	var big rsm.WaypointArray
	for x := range 5 {
		big.Waypoints = append(big.Waypoints, rsm.Waypoint{Pose: rsm.Pose{Position: geom.Vec3{X: float64(x)}, Orientation: geom.Identity}})
	}
	if err := rsm.SaveWaypoints(file, big); err != nil {
		t.Fatal(err)
	}
	p2 := start(t, domain, "service_provider", "--ros-args", "-p", "waypoints_file:="+file, "-p", "max_waypoints:=3")
	testenv.WaitFor(t, waitLimit, "the refusal of the file in the log", func() bool {
		return strings.Contains(p2.Output(), "5 waypoints, more than max_waypoints 3")
	})
	if _, err := os.Stat(file); err == nil {
		t.Error("the file beyond the bound is still in place")
	}
	if moved, _ := filepath.Glob(file + ".corrupt-*"); len(moved) != 1 {
		t.Errorf("moved aside: %v", moved)
	}
}
