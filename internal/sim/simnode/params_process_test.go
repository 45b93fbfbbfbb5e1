package simnode

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/lifecycle"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
)

// TestMain lets the test binary stand in for diff_drive_sim: started with
// SIMNODE_TEST_EXEC=1 it runs the node.
func TestMain(m *testing.M) {
	if os.Getenv("SIMNODE_TEST_EXEC") != "" {
		if err := lifecycle.Run(context.Background(), os.Args[1:], DriveNodeName, SetupDiffDrive); err != nil {
			fmt.Fprintln(os.Stderr, "diff_drive_sim:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testenv.Main(m))
}

// TestLiveParams_DiffDrive_Process: `fsmnodes param set` lowers the turn
// rate limit of a running diff_drive_sim; the simulated robot turns at the
// new limit from the next step (its /odom twist), and bad values are
// refused with the reason.
func TestLiveParams_DiffDrive_Process(t *testing.T) {
	domain := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	testenv.Start(t, "diff_drive_sim", append(testenv.Env(domain), "SIMNODE_TEST_EXEC=1"), os.Args[0])

	n, ctx := rostest.Node(t, domain, "sim_params_test")
	var mu sync.Mutex
	var turn float64
	if _, err := ros.NewSubscription(n, "/odom", ros.QoSDefault, func(m *nav_msgs_msg.Odometry) {
		mu.Lock()
		turn = m.Twist.Twist.Angular.Z
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	cmdVel, err := ros.NewPublisher[geometry_msgs_msg.Twist](n, "/cmd_vel", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	// Turn in place far faster than allowed (no wall is ever hit).
	go func() {
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
				_ = cmdVel.Publish(&geometry_msgs_msg.Twist{Angular: geometry_msgs_msg.Vector3{Z: 10}})
			}
		}
	}()
	turnRate := func() float64 { mu.Lock(); defer mu.Unlock(); return turn }
	testenv.WaitFor(t, 30*time.Second, "turning at the default 1.5 rad/s", func() bool { return math.Abs(turnRate()-1.5) < 1e-9 })

	// Refused sets, independent of each other: all at once.
	refused := []struct{ name, value, reason string }{
		{"max_angular_velocity", "-0.5", "outside the floating point range"},
		{"max_angular_velocity", "0.0", "must be above 0"},
		{"max_angular_velocity", ".nan", "NaN"},
		{"max_angular_velocity", "fast", "type"},
		{"start_x", "1.0", "read-only"},
	}
	var sets [][]string
	for _, c := range refused {
		sets = append(sets, []string{"param", "set", "/diff_drive_sim", c.name, c.value})
	}
	for i, r := range testenv.CLIAll(t, domain, sets...) {
		if c := refused[i]; r.OK || !strings.Contains(r.Stderr, c.reason) {
			t.Errorf("%s %s: ok=%v %q, want refused with %q", c.name, c.value, r.OK, r.Stderr, c.reason)
		}
	}
	if out, _, ok := testenv.CLI(t, domain, "param", "set", "/diff_drive_sim", "max_angular_velocity", "0.3"); !ok || !strings.Contains(out, "successful") {
		t.Fatalf("max_angular_velocity 0.3 refused: %q", out)
	}
	testenv.WaitFor(t, 30*time.Second, "turning at the new 0.3 rad/s", func() bool { return math.Abs(turnRate()-0.3) < 1e-9 })
}
