package simtest

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	rosgraph_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rosgraph_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// rsm_sim.launch.xml use_sim_time:=true runs the whole built-in simulation
// on diff_drive_sim's /clock: RSM boots to Idle, the odometry is stamped
// with the simulator's time, and exploration drives the robot.
func TestSimTime_LaunchBuiltInSimulationOnSimTime(t *testing.T) {
	if testing.Short() {
		t.Skip("launches the whole simulation")
	}
	t.Parallel()
	domain := testenv.Domain(t)
	testenv.Launch(t, domain, "launch/rsm_sim.launch.xml", "use_sim_time:=true", "waypoints_file:=")
	n := newNode(t, domain, "simtime_launch_test")
	var clock atomic.Int64 // latest /clock, ns
	if _, err := ros.NewSubscription(n, "/clock", ros.QoSClock, func(m *rosgraph_msgs_msg.Clock) {
		clock.Store(int64(m.Clock.Sec)*int64(time.Second) + int64(m.Clock.Nanosec))
	}); err != nil {
		t.Fatal(err)
	}
	var odom testenv.Latest[nav_msgs_msg.Odometry]
	if _, err := ros.NewSubscription(n, "/odom", ros.QoSDefault, func(m *nav_msgs_msg.Odometry) { odom.Set(m, "") }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stateCli, err := ros.NewClient(n, "/rsm/stateInfo", std_srvs_srv.Trigger)
	if err != nil {
		t.Fatal(err)
	}
	if err := stateCli.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	state := func() string {
		r, err := stateCli.Call(ctx, &std_srvs_srv.Trigger_Request{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Message
	}
	testenv.WaitFor(t, 60*time.Second, "RSM in Idle on sim time", func() bool { return state() == "Idle" })
	testenv.WaitFor(t, 30*time.Second, "odometry", func() bool { return odom.Get() != nil })
	o := odom.Get()
	stamp := float64(o.Header.Stamp.Sec) + float64(o.Header.Stamp.Nanosec)/1e9
	if now := float64(clock.Load()) / 1e9; stamp <= 0 || stamp > now+1 || now > 1e6 {
		t.Fatalf("odometry stamped %.3f s with /clock at %.3f s: want the simulator's time (from 0)", stamp, now)
	}
	x0, y0 := o.Pose.Pose.Position.X, o.Pose.Pose.Position.Y

	// AUTONOMOUS, so that the mux forwards the navigator's commands.
	modeCli, err := ros.NewClient(n, "/rsm/setOperationMode", rsm_msgs_srv.SetOperationMode)
	if err != nil {
		t.Fatal(err)
	}
	if err := modeCli.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := modeCli.Call(ctx, &rsm_msgs_srv.SetOperationMode_Request{
		OperationMode: rsm_msgs_msg.OperationMode{Mode: rsm_msgs_msg.OperationMode_AUTONOMOUS}}); err != nil || !r.Success {
		t.Fatalf("setOperationMode AUTONOMOUS: %+v, %v", r, err)
	}
	explore, err := ros.NewClient(n, "/rsm/startStopExploration", std_srvs_srv.SetBool)
	if err != nil {
		t.Fatal(err)
	}
	if err := explore.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := explore.Call(ctx, &std_srvs_srv.SetBool_Request{Data: true}); err != nil || !r.Success {
		t.Fatalf("startStopExploration: %+v, %v", r, err)
	}
	testenv.WaitFor(t, 90*time.Second, "the robot exploring (1 m from the start)", func() bool {
		p := odom.Get().Pose.Pose.Position
		return math.Hypot(p.X-x0, p.Y-y0) > 1
	})
}
