package simnode

import (
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
)

// TestLifecycle_DiffDrive_Process: a diff_drive_sim started with
// autostart:=false is driven through its transitions with `fsmnodes
// lifecycle` while cmd_vel asks it to drive on all the time. Unconfigured
// and inactive it publishes no odometry and does not move: after a
// deactivation it resumes at the pose where it stopped; cleanup and a new
// configure put it back at its start pose.
func TestLifecycle_DiffDrive_Process(t *testing.T) {
	domain := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	testenv.Start(t, "diff_drive_sim", append(testenv.Env(domain), "SIMNODE_TEST_EXEC=1"), os.Args[0],
		"--ros-args", "-p", "autostart:=false")

	n, ctx := rostest.Node(t, domain, "sim_lifecycle_test")
	var mu sync.Mutex
	var xs []float64 // every odometry x, in order
	if _, err := ros.NewSubscription(n, "/odom", ros.QoSDefault, func(m *nav_msgs_msg.Odometry) {
		mu.Lock()
		xs = append(xs, m.Pose.Pose.Position.X)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	cmdVel, err := ros.NewPublisher[geometry_msgs_msg.Twist](n, "/cmd_vel", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	go func() { // drive forward at 0.2 m/s all the time
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
				_ = cmdVel.Publish(&geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 0.2}})
			}
		}
	}()
	read := func() (int, float64) {
		mu.Lock()
		defer mu.Unlock()
		if len(xs) == 0 {
			return 0, 0
		}
		return len(xs), xs[len(xs)-1]
	}
	// after returns the first x received after the first c messages.
	after := func(c int) float64 {
		t.Helper()
		testenv.WaitFor(t, 30*time.Second, "odometry", func() bool { n, _ := read(); return n > c })
		mu.Lock()
		defer mu.Unlock()
		return xs[c]
	}
	set := func(transition, wantState string) {
		t.Helper()
		if out, errOut, ok := testenv.CLI(t, domain, "lifecycle", "set", "/diff_drive_sim", transition); !ok || strings.TrimSpace(out) != "Transitioning successful" {
			t.Fatalf("lifecycle set %s: ok=%v %q %q", transition, ok, out, errOut)
		}
		if out, _, ok := testenv.CLI(t, domain, "lifecycle", "get", "/diff_drive_sim"); !ok || strings.TrimSpace(out) != wantState {
			t.Fatalf("after %s: state %q, want %q", transition, out, wantState)
		}
	}
	silent := func(when string) {
		t.Helper()
		c0, _ := read()
		time.Sleep(600 * time.Millisecond) // 30 steps of the 50 Hz simulation
		if c, _ := read(); c != c0 {
			t.Fatalf("%s: %d odometry messages", when, c-c0)
		}
	}
	// moving waits for the robot to pass x > from+d.
	moving := func(when string, from, d float64) float64 {
		t.Helper()
		testenv.WaitFor(t, 30*time.Second, when+": the robot drives", func() bool { _, x := read(); return x > from+d })
		_, x := read()
		return x
	}
	silent("unconfigured")
	set("configure", "inactive [2]")
	silent("inactive")
	set("activate", "active [3]")
	moving("active", 0, 0.1)
	set("deactivate", "inactive [2]")
	time.Sleep(100 * time.Millisecond) // a step in flight may still arrive
	c0, stoppedAt := read()
	silent("deactivated")
	set("activate", "active [3]")
	// the first odometry after the reactivation: where it stopped, not
	// where the commands sent meanwhile would have taken it
	if resumed := after(c0); math.Abs(resumed-stoppedAt) > 0.01 {
		t.Fatalf("resumed at x=%.3f, stopped at x=%.3f: the inactive world moved", resumed, stoppedAt)
	}
	moving("active again", stoppedAt, 0.1)
	set("deactivate", "inactive [2]")
	set("cleanup", "unconfigured [1]")
	set("configure", "inactive [2]")
	c0, _ = read()
	set("activate", "active [3]")
	if restart := after(c0); restart > 0.01 {
		t.Fatalf("after cleanup and configure the robot is at x=%.3f, want its start pose (0)", restart)
	}
	set("shutdown", "finalized [4]")
	time.Sleep(100 * time.Millisecond)
	silent("finalized")
}
