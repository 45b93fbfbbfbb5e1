package simtest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
)

// TestScanMapper_MapsWhatTheSimulatorSees: scan_mapper, fed by the built-in
// simulator's /scan and /odom and robot_state_publisher's base_footprint →
// laser, builds a map (here remapped to scan_map) that agrees with the
// simulator's own map of what its lidar has seen, while the robot turns
// and drives.
func TestScanMapper_MapsWhatTheSimulatorSees(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	urdf, err := os.ReadFile(filepath.Join("..", "..", "urdf", "diffbot.urdf"))
	if err != nil {
		t.Fatal(err)
	}
	testenv.Start(t, "diff_drive_sim", testenv.Env(domain), testenv.Executable(t, "nodes/diff_drive_sim"))
	testenv.Start(t, "robot_state_publisher", testenv.Env(domain), testenv.Executable(t, "nodes/robot_state_publisher"),
		"--ros-args", "-p", "robot_description:="+string(urdf))
	testenv.Start(t, "scan_mapper", testenv.Env(domain), testenv.Executable(t, "nodes/scan_mapper"),
		"--ros-args", "-r", "map:=scan_map", "-p", "publish_map_to_odom:=false", "-p", "map_rate:=4.0")
	n := newNode(t, domain, "scan_mapper_test")
	var truth, built testenv.Latest[nav_msgs_msg.OccupancyGrid]
	for topic, l := range map[string]*testenv.Latest[nav_msgs_msg.OccupancyGrid]{"/map": &truth, "/scan_map": &built} {
		if _, err := ros.NewSubscription(n, topic, ros.QoSLatched, func(m *nav_msgs_msg.OccupancyGrid) { l.Set(m, "") }); err != nil {
			t.Fatal(err)
		}
	}
	cmd, err := ros.NewPublisher[geometry_msgs_msg.Twist](n, "/cmd_vel", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	// agreement: of the cells the simulator has seen, the fraction the
	// mapper has seen too, and of those the fraction it classes alike
	// (free or occupied, with a wall's neighbours counting as the wall: a
	// beam's end falls in either cell)
	compare := func() (covered, agree float64) {
		a, b := truth.Get(), built.Get()
		if a == nil || b == nil || a.Info.Width != b.Info.Width || a.Info.Height != b.Info.Height {
			return 0, 0
		}
		w, h := int(a.Info.Width), int(a.Info.Height)
		at := func(d []int8, x, y int) int8 {
			if x < 0 || y < 0 || x >= w || y >= h {
				return -1
			}
			return d[y*w+x]
		}
		var seen, both, same int
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				want, got := at(a.Data, x, y), at(b.Data, x, y)
				if want < 0 {
					continue
				}
				seen++
				if got < 0 {
					continue
				}
				both++
				ok := want == got
				for dy := -1; dy <= 1 && !ok; dy++ {
					for dx := -1; dx <= 1 && !ok; dx++ {
						ok = at(a.Data, x+dx, y+dy) == got && got == 100
					}
				}
				if ok {
					same++
				}
			}
		}
		if seen == 0 || both == 0 {
			return 0, 0
		}
		return float64(both) / float64(seen), float64(same) / float64(both)
	}
	drive := func() {
		_ = cmd.Publish(&geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 0.1}, Angular: geometry_msgs_msg.Vector3{Z: 0.6}})
	}
	// First a turn and a half on a small circle (10 s at 0.6 rad/s), so the
	// map holds scans from every heading: a scan placed at a wrong heading
	// would smear the walls.
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		drive()
	}
	var covered, agree float64
	testenv.WaitFor(t, 60*time.Second, "the mapper's map to cover 90% of the simulator's, 99% alike", func() bool {
		drive()
		covered, agree = compare()
		return covered > 0.9 && agree > 0.99
	})
	t.Logf("scan_map covers %.0f%% of the cells the simulator's lidar has seen and agrees on %.1f%% of them", 100*covered, 100*agree)
}
