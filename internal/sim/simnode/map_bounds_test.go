package simnode

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
)

// TestGridFromMsg_Bounds: a map of more cells than the bound is refused
// by its width and height, before any cell is looked at.
func TestGridFromMsg_Bounds(t *testing.T) {
	mk := func(w, h uint32, cells int) *nav_msgs_msg.OccupancyGrid {
		m := &nav_msgs_msg.OccupancyGrid{Data: make([]int8, cells)}
		m.Info.Width, m.Info.Height, m.Info.Resolution = w, h, 0.05
		m.Info.Origin.Orientation.W = 1
		return m
	}
	cases := []struct {
		name string
		m    *nav_msgs_msg.OccupancyGrid
		max  int
		want string // "" accepted
	}{
		{"within", mk(100, 100, 10000), 10000, ""},
		{"one cell over", mk(101, 100, 10100), 10000, "map of 101x100 cells, more than max_map_cells 10000"},
		{"6000² claimed, no cells sent", mk(6000, 6000, 0), DefaultMaxMapCells, "more than max_map_cells"},
		{"huge dimensions", mk(1<<31, 1<<31, 0), DefaultMaxMapCells, "more than max_map_cells"},
		{"inconsistent", mk(10, 10, 5), DefaultMaxMapCells, "has 5 cells"},
	}
	for _, c := range cases {
		_, err := gridFromMsg(c.m, c.max)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// rss returns the resident memory of process pid in MiB (0 if unknown).
func rss(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// TestFakeMaps_Refused_Process (issue 25, finding 6): fake 4096² and 6000²
// maps took the navigator and the frontier detector from 22 to about
// 200 MB each. The frontier detector with max_map_cells 1,000,000 refuses
// a 1010×1000 map by its dimensions (maps_rejected) and a 6000² one (36 MB)
// before decoding it (oversized_samples); resident memory is printed.
func TestFakeMaps_Refused_Process(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	domain := testenv.Domain(t)
	bin := testenv.Executable(t, "nodes/frontier_detector")
	p := testenv.Start(t, "frontier_detector", testenv.Env(domain), bin, "--ros-args", "-p", "max_map_cells:=1000000")

	n, _ := rostest.Node(t, domain, "fake_map_test")
	diag := rostest.WatchCounters(t, n, "/frontier_detector")
	counter := diag.Get
	maps, err := ros.NewPublisher[nav_msgs_msg.OccupancyGrid](n, "/map", ros.QoSLatched)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "the frontier detector's /map subscription", func() bool {
		c, err := maps.SubscriptionCount()
		return err == nil && c > 0 && diag.Heard()
	})
	before := rss(p.Pid())
	send := func(w, h uint32) {
		t.Helper()
		m := &nav_msgs_msg.OccupancyGrid{Data: make([]int8, int(w)*int(h))}
		m.Header.FrameId = "map"
		m.Info.Width, m.Info.Height, m.Info.Resolution = w, h, 0.05
		m.Info.Origin.Orientation.W = 1
		if err := maps.Publish(m); err != nil {
			t.Fatal(err)
		}
	}
	send(1010, 1000) // a sample within the size limit (cells + 64 KiB), decoded, refused by its dimensions
	testenv.WaitFor(t, 30*time.Second, "maps_rejected to count the 1010×1000 map", func() bool { return counter(CounterMapsRejected) >= 1 })
	send(6000, 6000)
	testenv.WaitFor(t, 30*time.Second, "oversized_samples to count the 6000² map", func() bool {
		return counter(ros.CounterOversizedSamples) >= 1
	})
	after := rss(p.Pid())
	t.Logf("frontier_detector resident memory: %.0f MiB before the fake maps, %.0f MiB after a 1010×1000 (refused by its dimensions) and a 6000² (36 MB, dropped undecoded)", before, after)
	if !strings.Contains(p.Output(), "map of 1010x1000 cells, more than max_map_cells 1000000") {
		t.Error("the refusal is not logged with its reason")
	}
}
