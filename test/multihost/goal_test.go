package multihost

import (
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// leaseURI gives a process's participant a DDS lease of its own: how long
// the other side waits, without hearing from it, before it forgets it.
func leaseURI(d string) string {
	return "CYCLONEDDS_URI=<CycloneDDS><Domain><Discovery><LeaseDuration>" + d + "</LeaseDuration></Discovery></Domain></CycloneDDS>"
}

// TestRemoteGoalLinkDrop sends a slow Velma head trajectory from the
// operator station (our CLI's action send_goal) and breaks the link while
// it runs. The goal's server aborts it and stops the head where it is when
// its client is lost: the CLI sends a heartbeat every 100 ms and the
// server aborts a goal whose client sent none for 1 s
// (ros.ActionServerOptions.ClientTimeout), whatever the client's lease.
// Measured with the CLI's own 2 s lease (cli.CLILease) and with Cyclone's
// default 10 s (CYCLONEDDS_URI), which before the heartbeats took 2.6 s
// and 10.6 s (action.ClientWatch waited for the lease); the figures are
// logged (docs/multihost.md); the head must stop short of its goal.
func TestRemoteGoalLinkDrop(t *testing.T) {
	needNetns(t)
	for _, lease := range []string{"", "10s"} {
		name := "cli-lease"
		if lease != "" {
			name = "client-lease-" + lease
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testenv.Heavy(t) // Velma's loop on the robot
			net := NewNet(t, "robot", "operator")
			robot, op := net.Host("robot"), net.Host("operator")
			domain := testenv.Domain(t)
			bin := testenv.ExecutableDir(t, "cmd/fsmnodes", "nodes/...")
			probe := testenv.Executable(t, "test/multihost/mhprobe")
			root, err := testenv.ModuleRoot()
			if err != nil {
				t.Fatal(err)
			}
			var opVars []string
			if lease != "" {
				opVars = append(opVars, leaseURI(lease))
			}
			robotEnv, opEnv := robot.Env(domain), op.Env(domain, opVars...)
			cli := filepath.Join(bin, "fsmnodes")
			robot.Start(t, "velma", robotEnv, cli, "launch", filepath.Join(root, "launch/velma.launch.xml"), "processes:=false",
				"--bin-dir", bin, "--share-dir", root)
			pan := robot.Start(t, "head-observer", robotEnv, probe, "joint", "/joint_states", "head_pan_joint")
			const action = "/velma_core/head_spline_trajectory_action_joint"
			const typ = "control_msgs/action/FollowJointTrajectory"
			var last []byte
			defer func() {
				if t.Failed() {
					t.Logf("last send_goal output:\n%s", last)
				}
			}()
			// Velma's cs takes head goals in relax with its motors enabled and
			// homed (docs/velma.md); each call is repeated until it succeeds.
			for _, srv := range []string{"motors/enable", "motors/hp/home", "motors/ht/home", "relax"} {
				testenv.WaitFor(t, 90*time.Second, "Velma's "+srv, func() bool {
					out, _ := op.Command(opEnv, cli, "service", "call", "/velma_core/"+srv, "std_srvs/srv/Trigger").CombinedOutput()
					last = out
					return strings.Contains(string(out), "success=True")
				})
			}
			testenv.WaitFor(t, 60*time.Second, "a first head goal from the operator to succeed", func() bool {
				out, _ := op.Command(opEnv, cli, "action", "send_goal", action, typ,
					"{trajectory: {joint_names: [head_pan_joint, head_tilt_joint], points: [{positions: [0.0, 0.0], time_from_start: {sec: 1}}]}}").
					CombinedOutput()
				last = out
				return strings.Contains(string(out), "SUCCEEDED")
			})
			// The slow goal: the head pans 1.2 rad in 30 s.
			goal := op.Start(t, "slow-goal", opEnv, cli, "action", "send_goal", action, typ,
				"{trajectory: {joint_names: [head_pan_joint, head_tilt_joint], points: [{positions: [1.2, 0.0], time_from_start: {sec: 30}}]}}")
			goal.WaitOutput(t, 30*time.Second, regexp.MustCompile(`Goal accepted`))
			moving := firstAfter(t, pan, "joint", time.Now(), 10*time.Second, "the head to pan", func(s sample) bool { return s.x > 0.05 })
			tDown := time.Now()
			op.LinkDown()
			stopped := stillAfter(t, pan, tDown, 30*time.Second, "the head to stop after the link dropped")
			final := samples(pan, "joint")
			t.Logf("FIGURE time to safe, operator's Velma head goal, link down, %s: the head stopped %.2f s after the link dropped "+
				"(at %.3f rad; it was at %.3f rad when the drop began; a lost client is noticed 1 s after its last heartbeat)",
				name, stopped.at.Sub(tDown).Seconds(), final[len(final)-1].x, moving.x)
			if final[len(final)-1].x > 1.1 {
				t.Errorf("the head went on to its goal (%.3f rad) with the operator cut off", final[len(final)-1].x)
			}
		})
	}
}

// stillAfter waits until the joint observer p shows the joint still after
// from (no change of more than 1 mrad over 300 ms) and returns the sample
// where it stopped.
func stillAfter(t *testing.T, p *testenv.Process, from time.Time, limit time.Duration, what string) sample {
	t.Helper()
	var stopped sample
	testenv.WaitFor(t, limit, what, func() bool {
		ss := samples(p, "joint")
		for i, s := range ss {
			if !s.at.After(from) {
				continue
			}
			for _, u := range ss[i:] {
				if u.at.Sub(s.at) >= 300*time.Millisecond {
					if math.Abs(u.x-s.x) < 1e-3 {
						stopped = s
						return true
					}
					break
				}
			}
		}
		return false
	})
	return stopped
}
