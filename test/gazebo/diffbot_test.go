package gazebo

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/sim"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
	tf2_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/tf2_msgs/msg"
)

// TestGazebo_Diffbot: rsm_gazebo.launch.py under Humble with Gazebo
// Fortress, headless (the lidar renders on Xvfb), mapping with scan_mapper
// (no slam_toolbox here). Every bridged topic flows (/clock, /odom, /tf,
// /scan, /joint_states, and /cmd_vel moves the robot in Gazebo's physics);
// RSM follows three waypoints from the first room through the door into the
// second, on Gazebo's clock; the map covers what the robot saw; pausing
// Gazebo pauses the timers of RSM, the frontier detector and the mapper;
// and a camera spawned above the flat saves a picture of the scene
// (FSMNODES_GAZEBO_SCREENSHOT names a file to copy it to).
func TestGazebo_Diffbot(t *testing.T) {
	s := startSim(t, true, "rsm_gazebo.launch.py", "gz_version:=fortress", "gui:=false", "mapping:=scan_mapper")
	n := s.node
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var odom testenv.Latest[nav_msgs_msg.Odometry]
	var scan testenv.Latest[sensor_msgs_msg.LaserScan]
	var joints testenv.Latest[sensor_msgs_msg.JointState]
	var grid testenv.Latest[nav_msgs_msg.OccupancyGrid]
	var state testenv.Latest[std_msgs_msg.String]
	var mu sync.Mutex
	var odomTF bool
	counts := map[string]int{}
	count := func(topic string) {
		mu.Lock()
		counts[topic]++
		mu.Unlock()
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ros.NewSubscription(n, "/odom", ros.QoSDefault, func(m *nav_msgs_msg.Odometry) { odom.Set(m, "") }))
	must(ros.NewSubscription(n, "/scan", ros.QoSSensorData, func(m *sensor_msgs_msg.LaserScan) { scan.Set(m, "") }))
	must(ros.NewSubscription(n, "/joint_states", ros.QoSDefault, func(m *sensor_msgs_msg.JointState) { joints.Set(m, "") }))
	must(ros.NewSubscription(n, "/map", ros.QoSLatched, func(m *nav_msgs_msg.OccupancyGrid) { grid.Set(m, ""); count("/map") }))
	must(ros.NewSubscription(n, "/rsm/stateInfo", ros.QoSDefault, func(m *std_msgs_msg.String) { state.Set(m, m.Data) }))
	must(ros.NewSubscription(n, "/rsm/explorationMode", ros.QoSDefault, func(*std_msgs_msg.Bool) { count("/rsm/explorationMode") }))
	must(ros.NewSubscription(n, "/rsm/explorationGoals", ros.QoSDefault, func(*geometry_msgs_msg.PoseArray) { count("/rsm/explorationGoals") }))
	must(ros.NewSubscription(n, "/tf", ros.QoSDefault.KeepLast(100), func(m *tf2_msgs_msg.TFMessage) {
		for _, tr := range m.Transforms {
			if tr.Header.FrameId == sim.FrameOdom && tr.ChildFrameId == sim.FrameBase {
				mu.Lock()
				odomTF = true
				mu.Unlock()
			}
		}
	}))
	trigger := func(name string) *std_srvs_srv.Trigger_Response {
		t.Helper()
		return rostest.Call(t, ctx, n, name, std_srvs_srv.Trigger, &std_srvs_srv.Trigger_Request{})
	}
	setBool := func(name string, v bool) *std_srvs_srv.SetBool_Response {
		t.Helper()
		return rostest.Call(t, ctx, n, name, std_srvs_srv.SetBool, &std_srvs_srv.SetBool_Request{Data: v})
	}

	start := time.Now()
	testenv.WaitFor(t, 5*time.Minute, "Gazebo's /clock", func() bool { s.launch.MustRun(t); return s.now() > 0 })
	t.Logf("Gazebo's /clock after %.0f s", time.Since(start).Seconds())
	testenv.WaitFor(t, 3*time.Minute, "the bridged /odom, /scan, /joint_states, odom -> base_footprint on /tf, and /map", func() bool {
		s.launch.MustRun(t)
		mu.Lock()
		tfOK := odomTF
		mu.Unlock()
		return odom.Get() != nil && scan.Get() != nil && joints.Get() != nil && tfOK && grid.Get() != nil
	})
	sc := scan.Get()
	if sc.Header.FrameId != sim.FrameScan || len(sc.Ranges) != sim.DefaultDiffDrive().ScanBeams {
		t.Errorf("/scan in frame %q with %d beams, want %q and %d", sc.Header.FrameId, len(sc.Ranges), sim.FrameScan, sim.DefaultDiffDrive().ScanBeams)
	}
	hits := 0
	for _, r := range sc.Ranges {
		if r >= sc.RangeMin && r < sc.RangeMax {
			hits++
		}
	}
	if hits == 0 {
		t.Errorf("the lidar sees no wall from the start (%d beams, all out of range)", len(sc.Ranges))
	}
	if js := joints.Get(); fmt.Sprint(js.Name) != fmt.Sprint(sim.WheelJoints()) {
		t.Errorf("/joint_states names %v, want %v", js.Name, sim.WheelJoints())
	}
	t.Logf("bridged: /clock at %.1f s, /odom, /tf odom -> base_footprint, /joint_states %v, /scan %d beams with %d returns; /map from scan_mapper",
		s.now(), joints.Get().Name, len(sc.Ranges), hits)
	testenv.WaitFor(t, 2*time.Minute, "RSM in Idle", func() bool { return trigger("/rsm/stateInfo").Message == "Idle" })

	// Waypoints: RSM drives through the door of the first room (x = 3, y 1..2).
	modeCli, err := ros.NewClient(n, "/rsm/setOperationMode", rsm_msgs_srv.SetOperationMode)
	if err != nil {
		t.Fatal(err)
	}
	if err := modeCli.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := modeCli.Call(ctx, &rsm_msgs_srv.SetOperationMode_Request{
		OperationMode: rsm_msgs_msg.OperationMode{Mode: rsm_msgs_msg.OperationMode_AUTONOMOUS}}); err != nil {
		t.Fatal(err)
	}
	add, err := ros.NewClient(n, "/rsm/addWaypoint", rsm_msgs_srv.AddWaypoint)
	if err != nil {
		t.Fatal(err)
	}
	if err := add.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	wps := [][2]float64{{2, 0.5}, {4, 1.5}, {5.5, 4.5}}
	for _, w := range wps {
		req := &rsm_msgs_srv.AddWaypoint_Request{Position: -1}
		req.Waypoint.Pose.Position = geometry_msgs_msg.Point{X: w[0], Y: w[1]}
		req.Waypoint.Pose.Orientation.W = 1
		if r, err := add.Call(ctx, req); err != nil || !r.Success {
			t.Fatalf("addWaypoint %v: %+v %v", w, r, err)
		}
	}
	var reached []string // "i at sim time" in the order reached
	var order []int
	sub, err := ros.NewSubscription(n, "/odom", ros.QoSDefault, func(m *nav_msgs_msg.Odometry) {
		p := m.Pose.Pose.Position
		for i, w := range wps {
			if math.Hypot(p.X-w[0], p.Y-w[1]) < 0.3 {
				mu.Lock()
				if len(order) == 0 || order[len(order)-1] != i {
					order = append(order, i)
					reached = append(reached, fmt.Sprintf("waypoint %d (%.1f, %.1f) at sim %.1f s (wall %.0f s)", i, w[0], w[1], s.now(), time.Since(start).Seconds()))
				}
				mu.Unlock()
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	mark := state.Mark()
	simStart, wallStart := s.now(), time.Now()
	if r := setBool("/rsm/startStopWaypointFollowing", true); !r.Success {
		t.Fatalf("start waypoint following: %+v", r)
	}
	testenv.WaitFor(t, 8*time.Minute, "waypoint following to end in Idle", func() bool {
		s.launch.MustRun(t)
		h := state.Since(mark)
		return len(h) > 1 && h[len(h)-1] == "Idle"
	})
	sub.Close()
	mu.Lock()
	got, log := fmt.Sprint(order), strings.Join(reached, "; ")
	mu.Unlock()
	t.Logf("waypoints: %s; following took %.1f s of sim time, %.0f s of wall time", log, s.now()-simStart, time.Since(wallStart).Seconds())
	if got != "[0 1 2]" {
		t.Errorf("waypoints reached in order %s, want [0 1 2]", got)
	}
	get, err := ros.NewClient(n, "/rsm/getWaypoints", rsm_msgs_srv.GetWaypoints)
	if err != nil {
		t.Fatal(err)
	}
	if err := get.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := get.Call(ctx, &rsm_msgs_srv.GetWaypoints_Request{}); err != nil {
		t.Fatal(err)
	} else {
		for i, w := range r.WaypointArray.Waypoints {
			if !w.Visited || w.Unreachable {
				t.Errorf("waypoint %d: visited=%v unreachable=%v", i, w.Visited, w.Unreachable)
			}
		}
	}

	// The map: what scan_mapper built from Gazebo's lidar, against the flat.
	free, occ, wrong := mapAgainstFlat(grid.Get())
	t.Logf("map after the waypoints: %d free cells, %d occupied (%.1f%% of the flat's free area seen); %d cells disagree with the flat",
		free, occ, 100*float64(free)/float64(flatFree()), wrong)
	if free < flatFree()/5 || wrong > (free+occ)/100 {
		t.Errorf("map: %d free, %d occupied, %d wrong cells (the flat has %d free)\n%s", free, occ, wrong, flatFree(), mapPicture(grid.Get()))
	} else {
		t.Logf("the map ('#' wall, '.' free, 'X' free on a wall, 'o' wall where the flat has none, '+' wall not seen):\n%s", mapPicture(grid.Get()))
	}

	t.Run("pausing Gazebo pauses the nodes' timers", func(t *testing.T) { pauseCheck(t, s, counts, &mu) })
	t.Run("screenshot", func(t *testing.T) { screenshot(t, s) })

	// Exploration on the map scan_mapper builds: RSM drives to the frontier
	// detector's goals. Bounded to a few minutes of wall time (Gazebo runs
	// slower than real time on a busy machine); the map must grow.
	t.Run("exploration", func(t *testing.T) {
		free0, _, _ := mapAgainstFlat(grid.Get())
		mark := state.Mark()
		simStart, wallStart := s.now(), time.Now()
		if r := setBool("/rsm/startStopExploration", true); !r.Success {
			t.Fatalf("start exploration: %+v", r)
		}
		done := false
		for time.Since(wallStart) < 5*time.Minute && !done {
			s.launch.MustRun(t)
			h := state.Since(mark)
			done = len(h) > 1 && h[len(h)-1] == "Idle"
			time.Sleep(time.Second)
		}
		if !done {
			setBool("/rsm/startStopExploration", false)
		}
		goals := 0
		for _, st := range state.Since(mark) {
			if strings.Contains(st, "Navigation") {
				goals++
			}
		}
		free, occ, wrong := mapAgainstFlat(grid.Get())
		t.Logf("exploration (complete: %v) drove to %d goals in %.1f s of sim time, %.0f s of wall time; the map grew from %d to %d free cells (%.0f%% of the flat's), %d occupied, %d disagree with the flat",
			done, goals, s.now()-simStart, time.Since(wallStart).Seconds(), free0, free, 100*float64(free)/float64(flatFree()), occ, wrong)
		if goals < 2 || free < free0+flatFree()/10 || wrong > (free+occ)/100 {
			t.Errorf("exploration: %d goals, free cells %d -> %d, %d wrong\n%s", goals, free0, free, wrong, mapPicture(grid.Get()))
		} else {
			t.Logf("the map after exploration:\n%s", mapPicture(grid.Get()))
		}
	})
}

// flatFree is the number of free cells of the built-in flat.
func flatFree() int {
	n := 0
	for _, c := range sim.DefaultWorld().Cells {
		if c == sim.Free {
			n++
		}
	}
	return n
}

// mapAgainstFlat counts the free and occupied cells of m and those that
// disagree with the built-in flat (free where the flat has a wall, or
// occupied with no wall within a cell).
func mapAgainstFlat(m *nav_msgs_msg.OccupancyGrid) (free, occ, wrong int) {
	w := sim.DefaultWorld()
	if m == nil || int(m.Info.Width) != w.Width || int(m.Info.Height) != w.Height {
		return 0, 0, -1
	}
	for i, v := range m.Data {
		cx, cy := i%w.Width, i/w.Width
		switch {
		case v == 0:
			free++
			if w.At(cx, cy) == sim.Occupied {
				wrong++
			}
		case v >= 50:
			occ++
			near := false
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					near = near || w.At(cx+dx, cy+dy) == sim.Occupied
				}
			}
			if !near {
				wrong++
			}
		}
	}
	return free, occ, wrong
}

// mapPicture draws m against the built-in flat, top row first: '#' a wall
// seen, '.' free, ' ' unknown, 'X' free where the flat has a wall, 'o'
// occupied with no wall within a cell, '+' a wall not seen. A failing map
// check logs it.
func mapPicture(m *nav_msgs_msg.OccupancyGrid) string {
	w := sim.DefaultWorld()
	if m == nil || int(m.Info.Width) != w.Width || int(m.Info.Height) != w.Height {
		return "(no map of the flat's size)"
	}
	var b strings.Builder
	for cy := w.Height - 1; cy >= 0; cy-- {
		for cx := 0; cx < w.Width; cx++ {
			v := m.Data[cy*w.Width+cx]
			wall := w.At(cx, cy) == sim.Occupied
			near := false
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					near = near || w.At(cx+dx, cy+dy) == sim.Occupied
				}
			}
			switch {
			case v == 0 && wall:
				b.WriteByte('X')
			case v == 0:
				b.WriteByte('.')
			case v >= 50 && !near:
				b.WriteByte('o')
			case v >= 50:
				b.WriteByte('#')
			case wall:
				b.WriteByte('+')
			default:
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// pauseCheck pauses Gazebo: /clock stops, and so do the node-clock timers
// of serviceProviderNode (rsm/explorationMode, 20 Hz), frontier_detector
// (rsm/explorationGoals, 1 Hz) and scan_mapper (/map, 1 Hz); they resume
// with the world.
func pauseCheck(t *testing.T, s *gzSim, counts map[string]int, mu *sync.Mutex) {
	topics := []string{"/rsm/explorationMode", "/rsm/explorationGoals", "/map"}
	snapshot := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		c := map[string]int{}
		for _, k := range topics {
			c[k] = counts[k]
		}
		return c
	}
	window := func() (map[string]int, float64) { // messages and sim time over 5 s of wall time
		a, t0 := snapshot(), s.now()
		time.Sleep(5 * time.Second)
		b := snapshot()
		for k := range b {
			b[k] -= a[k]
		}
		return b, s.now() - t0
	}
	running, simRunning := window()
	s.pause(true)
	time.Sleep(time.Second) // what was in flight arrives
	paused, simPaused := window()
	s.pause(false)
	resumed, simResumed := window()
	t.Logf("over 5 s of wall time: running %v (sim +%.2f s), paused %v (sim +%.2f s), resumed %v (sim +%.2f s)",
		running, simRunning, paused, simPaused, resumed, simResumed)
	if simRunning <= 0 || simPaused != 0 || simResumed <= 0 {
		t.Errorf("/clock advanced %.2f, %.2f, %.2f s: want it stopped only while paused", simRunning, simPaused, simResumed)
	}
	for _, k := range topics {
		if running[k] == 0 || resumed[k] == 0 {
			t.Errorf("%s: %d messages running, %d resumed: the check needs both", k, running[k], resumed[k])
		}
		if paused[k] != 0 {
			t.Errorf("%s: %d messages while Gazebo was paused: its node's timer does not follow /clock", k, paused[k])
		}
	}
}

// screenshot spawns a camera above the flat that saves what it sees, and
// waits for a picture.
func screenshot(t *testing.T, s *gzSim) {
	dir := t.TempDir()
	model := fmt.Sprintf(`<?xml version="1.0"?><sdf version="1.9"><model name="scene_camera"><static>true</static>
<link name="link"><sensor name="camera" type="camera">
<camera><horizontal_fov>1.2</horizontal_fov><image><width>1024</width><height>768</height></image>
<clip><near>0.1</near><far>50</far></clip><save enabled="true"><path>%s</path></save></camera>
<always_on>true</always_on><update_rate>2</update_rate><topic>scene_camera</topic></sensor></link></model></sdf>`, dir)
	// The spawner's pose replaces the model's own <pose> (0 when not
	// given: the camera then looked along the floor from the origin).
	s.gz(2*time.Minute, "ros2", "run", "ros_gz_sim", "create", "-world", "fsmnodes_flat", "-name", "scene_camera", "-string", model,
		"-x", "-2.5", "-y", "-3.5", "-z", "6", "-R", "0", "-P", "0.6", "-Y", "0.7")
	// The camera saves <name>_<n>.png from n = 0; the first frames show
	// the scene before it has loaded (a few kB of sky), and the newest may
	// be half written: take the newest complete one with the scene in it.
	var shot string
	testenv.WaitFor(t, 2*time.Minute, "a picture of the scene from the scene camera", func() bool {
		files, _ := filepath.Glob(filepath.Join(dir, "*.png"))
		num := func(f string) int {
			n, _ := strconv.Atoi(strings.TrimSuffix(f[strings.LastIndexByte(f, '_')+1:], ".png"))
			return n
		}
		sort.Slice(files, func(i, j int) bool { return num(files[i]) < num(files[j]) })
		for i := len(files) - 2; i >= 0; i-- {
			if info, err := os.Stat(files[i]); err == nil && info.Size() >= 10000 {
				shot = files[i]
				return true
			}
		}
		return false
	})
	info, err := os.Stat(shot)
	if err != nil || info.Size() < 10000 {
		t.Fatalf("picture %s: %v, %d bytes", shot, err, info.Size())
	}
	if dst := os.Getenv("FSMNODES_GAZEBO_SCREENSHOT"); dst != "" {
		b, err := os.ReadFile(shot)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		shot = dst
	}
	t.Logf("the scene, rendered headless by Gazebo's ogre engine on Xvfb: %s (%d bytes)", shot, info.Size())
}
