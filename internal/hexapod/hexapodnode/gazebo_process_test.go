package hexapodnode

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/gazebo"
	"github.com/fsmnodes/fsmnodes/internal/hexapod"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// TestGazeboServoDriver_Process: motion_control with servo.driver gazebo
// sends each joint's target on servos/<joint>/command, moving at the servo
// speed (sitting speed while it rises), and ends, standing, at the angles
// it publishes on joint_states. The test plays Gazebo: it reports the
// targets back on servos/joint_states, plus now and then a report with a
// NaN, which the node drops with a warning.
func TestGazeboServoDriver_Process(t *testing.T) {
	domain := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	startMotionControl(t, domain, "--ros-args", "-p", "servo.driver:=gazebo")
	n, ctx := rostest.Node(t, domain, "gazebo_driver_test")
	names := hexapod.JointNames()
	var mu sync.Mutex
	var state string
	targets := make([][]float64, len(names)) // every target received, per joint
	var commanded []float64                  // last joint_states of the controller
	for i, name := range names {
		i := i
		if _, err := ros.NewSubscription(n, "/"+gazebo.HexapodServoCommand(name), ros.QoSDefault.KeepLast(1000), func(m *std_msgs_msg.Float64) {
			mu.Lock()
			targets[i] = append(targets[i], m.Data)
			mu.Unlock()
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ros.NewSubscription(n, "/hexapod_controller/state", ros.QoSLatched, func(m *std_msgs_msg.String) {
		mu.Lock()
		state = m.Data
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewSubscription(n, "/joint_states", ros.QoSDefault, func(m *sensor_msgs_msg.JointState) {
		mu.Lock()
		commanded = m.Position
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	states, err := ros.NewPublisher[sensor_msgs_msg.JointState](n, "/"+gazebo.HexapodServoStates, ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	// Gazebo's side: the last targets come back as measured, and now and
	// then a broken report.
	go func() {
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		for k := 0; ; k++ {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
			}
			m := sensor_msgs_msg.JointState{Name: names, Position: make([]float64, len(names))}
			mu.Lock()
			for i := range names {
				if l := len(targets[i]); l > 0 {
					m.Position[i] = targets[i][l-1]
				}
			}
			mu.Unlock()
			if k%50 == 25 {
				m.Position[3] = math.NaN()
			}
			_ = states.Publish(&m)
		}
	}()
	call := func(srv string) {
		t.Helper()
		c, err := ros.NewClient(n, "/hexapod_controller/"+srv, std_srvs_srv.Trigger)
		if err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, 30*time.Second, srv+" server", c.ServiceIsReady)
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		defer ccancel()
		if r, err := c.Call(cctx, &std_srvs_srv.Trigger_Request{}); err != nil || !r.Success {
			t.Fatalf("%s: %+v %v", srv, r, err)
		}
	}
	testenv.WaitFor(t, 30*time.Second, "the test's subscriptions matched", func() bool {
		c, err := states.SubscriptionCount()
		return err == nil && c > 0
	})
	call("start_stop")
	call("stand_up")
	testenv.WaitFor(t, 60*time.Second, "Walking (standing still)", func() bool { mu.Lock(); defer mu.Unlock(); return state == "Walking" })
	// standing still: the last targets are the controller's angles
	testenv.WaitFor(t, 30*time.Second, "targets at the standing angles", func() bool {
		mu.Lock()
		defer mu.Unlock()
		if len(commanded) != len(names) {
			return false
		}
		for i := range names {
			l := len(targets[i])
			if l == 0 || math.Abs(targets[i][l-1]-commanded[i]) > 1e-9 {
				return false
			}
		}
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	// The targets moved toward the goals at the servo speed, from Gazebo's
	// start at 0: a joint that ends far from 0 passed through intermediate
	// targets instead of jumping (how many depends on the machine's pace,
	// so only a few are asked for).
	far := 0
	for i, ts := range targets {
		final := ts[len(ts)-1]
		if math.Abs(final) < 0.3 {
			continue
		}
		far++
		between := map[float64]bool{}
		for _, v := range ts {
			if v != 0 && v != final {
				between[v] = true
			}
		}
		if len(between) < 3 {
			t.Errorf("%s went from 0 to %.3f through %d intermediate targets", names[i], final, len(between))
		}
	}
	if far == 0 {
		t.Fatal("no joint stands far from 0: the check proves nothing")
	}
	t.Logf("%d targets per joint until standing; COXA_RR ends at %.3f rad", len(targets[0]), targets[0][len(targets[0])-1])
}
