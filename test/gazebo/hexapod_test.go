package gazebo

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/gazebo"
	"github.com/fsmnodes/fsmnodes/internal/hexapod"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// TestGazebo_HexapodWalks: hexapod_gazebo.launch.py under Humble with
// Gazebo Fortress (server only, no display: nothing of the hexapod
// renders). motion_control drives the 18 joints through Gazebo's position
// controllers over ros_gz_bridge and reads them back; standing up lifts
// the body off the floor, pausing Gazebo stops the gait's ticks, walking on
// cmd_vel moves the body forward in Gazebo's world frame (the distance is
// logged against the commanded one), and sitting down lowers it again.
func TestGazebo_HexapodWalks(t *testing.T) {
	s := startSim(t, false, "hexapod_gazebo.launch.py", "gz_version:=fortress", "gui:=false", "x:=0.0", "y:=2.5")
	n := s.node
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var body testenv.Latest[nav_msgs_msg.Odometry]
	var measured testenv.Latest[sensor_msgs_msg.JointState]
	var commanded testenv.Latest[sensor_msgs_msg.JointState]
	var state testenv.Latest[std_msgs_msg.String]
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ros.NewSubscription(n, "/"+gazebo.HexapodOdom, ros.QoSDefault, func(m *nav_msgs_msg.Odometry) { body.Set(m, "") }))
	must(ros.NewSubscription(n, "/"+gazebo.HexapodServoStates, ros.QoSDefault, func(m *sensor_msgs_msg.JointState) { measured.Set(m, "") }))
	var ticks atomic.Int64 // joint_states of the controller: one per gait tick (node clock)
	must(ros.NewSubscription(n, "/joint_states", ros.QoSDefault, func(m *sensor_msgs_msg.JointState) { commanded.Set(m, ""); ticks.Add(1) }))
	must(ros.NewSubscription(n, "/hexapod_controller/state", ros.QoSLatched, func(m *std_msgs_msg.String) { state.Set(m, m.Data) }))
	cmdVel, err := ros.NewPublisher[geometry_msgs_msg.Twist](n, "/cmd_vel", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	call := func(srv string) {
		t.Helper()
		c, err := ros.NewClient(n, "/hexapod_controller/"+srv, std_srvs_srv.Trigger)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.WaitForService(ctx); err != nil {
			t.Fatal(err)
		}
		if r, err := c.Call(ctx, &std_srvs_srv.Trigger_Request{}); err != nil || !r.Success {
			t.Fatalf("%s: %+v %v", srv, r, err)
		}
	}
	pose := func() (x, y, z, yaw float64) {
		p := body.Get().Pose.Pose
		q := p.Orientation
		return p.Position.X, p.Position.Y, p.Position.Z, math.Atan2(2*(q.W*q.Z+q.X*q.Y), 1-2*(q.Y*q.Y+q.Z*q.Z))
	}
	// settled waits until the body moves less than 2 mm in a simulated
	// second, and returns its pose.
	settled := func(what string) (x, y, z, yaw float64) {
		t.Helper()
		var px, py, pz, pt float64
		testenv.WaitFor(t, 3*time.Minute, what, func() bool {
			s.launch.MustRun(t)
			if s.now()-pt < 1 {
				return false
			}
			x, y, z, _ := pose()
			still := math.Abs(x-px)+math.Abs(y-py)+math.Abs(z-pz) < 0.002
			px, py, pz, pt = x, y, z, s.now()
			return still
		})
		return pose()
	}

	start := time.Now()
	testenv.WaitFor(t, 5*time.Minute, "Gazebo's /clock, the body's pose and the measured joints", func() bool {
		s.launch.MustRun(t)
		return s.now() > 0 && body.Get() != nil && measured.Get() != nil
	})
	t.Logf("Gazebo running after %.0f s; %d joints reported by Gazebo", time.Since(start).Seconds(), len(measured.Get().Name))
	_, _, zLying, _ := settled("the hexapod to settle after spawning")

	call("start_stop")
	call("stand_up")
	testenv.WaitFor(t, 2*time.Minute, "Walking", func() bool { return state.Get() != nil && state.Get().Data == "Walking" })
	x0, y0, zStand, yaw0 := settled("the hexapod to stand still")
	t.Logf("body height: lying %.3f m, standing %.3f m", zLying, zStand)
	if zStand < zLying+0.05 {
		t.Fatalf("standing up lifted the body from %.3f to %.3f m only", zLying, zStand)
	}
	// The joints Gazebo measures follow the controller's.
	if m, c := measured.Get(), commanded.Get(); m != nil && c != nil {
		worst := trackingError(m, c)
		t.Logf("standing: largest joint error between motion_control and Gazebo %.3f rad", worst)
		if worst > 0.1 {
			t.Errorf("Gazebo's joints are up to %.3f rad from the controller's while standing", worst)
		}
	}

	// Paused, Gazebo's clock stops the gait's timer: no tick, no joint_states.
	window := func() int64 {
		a := ticks.Load()
		time.Sleep(3 * time.Second)
		return ticks.Load() - a
	}
	running := window()
	s.pause(true)
	time.Sleep(time.Second)
	paused := window()
	s.pause(false)
	resumed := window()
	t.Logf("controller ticks in 3 s of wall time: running %d, Gazebo paused %d, resumed %d", running, paused, resumed)
	if running == 0 || resumed == 0 || paused != 0 {
		t.Errorf("controller ticks running %d, paused %d, resumed %d: want none only while paused", running, paused, resumed)
	}

	// Walk forward at 0.05 m/s for 20 simulated seconds.
	const v, dur = 0.05, 20.0
	simStart, ticks0 := s.now(), ticks.Load()
	for s.now()-simStart < dur {
		s.launch.MustRun(t)
		if err := cmdVel.Publish(&geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: v}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	walked, walkTicks := s.now()-simStart, ticks.Load()-ticks0
	x1, y1, _, yaw1 := settled("the hexapod to stop after cmd_vel ends")
	fwd := (x1-x0)*math.Cos(yaw0) + (y1-y0)*math.Sin(yaw0)
	side := -(x1-x0)*math.Sin(yaw0) + (y1-y0)*math.Cos(yaw0)
	// The gait moves the stance feet v/rate per tick, so it stepped
	// v·ticks/rate: on a loaded machine motion_control may miss ticks of
	// Gazebo's clock, which is a matter of timing, not of the walk, so the
	// check is against what the gait stepped.
	stepped := v * float64(walkTicks) / hexapod.DefaultGaitConfig().Rate
	t.Logf("walked %.3f m forward, %.3f m sideways, turned %.1f° in %.1f s of sim time for %.3f m commanded (%.0f%%); %d gait ticks (%.0f per simulated second) stepped %.3f m (%.0f%% of it walked)",
		fwd, side, (yaw1-yaw0)*180/math.Pi, walked, v*walked, 100*fwd/(v*walked), walkTicks, float64(walkTicks)/walked, stepped, 100*fwd/stepped)
	if fwd < 0.5*stepped || math.Abs(side) > 0.5*fwd {
		t.Errorf("walked %.3f m forward and %.3f m sideways for %.3f m stepped forward (%.3f m commanded)", fwd, side, stepped, v*walked)
	}

	call("sit_down")
	testenv.WaitFor(t, 2*time.Minute, "Sitting", func() bool { return state.Get() != nil && state.Get().Data == "Sitting" })
	_, _, zSit, _ := settled("the hexapod to sit still")
	t.Logf("body height: standing %.3f m, sitting %.3f m", zStand, zSit)
	if zSit > zStand-0.05 {
		t.Errorf("sitting down lowered the body from %.3f to %.3f m only", zStand, zSit)
	}
}

// trackingError is the largest difference between two joint states over
// the hexapod's joints.
func trackingError(a, b *sensor_msgs_msg.JointState) float64 {
	pos := func(js *sensor_msgs_msg.JointState) map[string]float64 {
		m := map[string]float64{}
		for i, n := range js.Name {
			if i < len(js.Position) {
				m[n] = js.Position[i]
			}
		}
		return m
	}
	pa, pb := pos(a), pos(b)
	worst := 0.0
	for _, j := range hexapod.JointNames() {
		va, oka := pa[j]
		vb, okb := pb[j]
		if !oka || !okb {
			return math.Inf(1)
		}
		worst = math.Max(worst, math.Abs(va-vb))
	}
	return worst
}
