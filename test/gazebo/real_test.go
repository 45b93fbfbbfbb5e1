package gazebo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	rosgraph_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rosgraph_msgs/msg"
)

// The real Gazebo tests run `ros2 launch` (Humble) of this package's
// Gazebo launch files against the Gazebo Fortress that
// scripts/gazebo-peer.sh builds into /opt/gz-fortress (`make gazebo-peer`,
// about 75 minutes, never started by CI). Without it they skip, saying so
// on stderr. `make gazebo-test` runs them; .ci/run does when the build is
// there. A test's Gazebo runs in its own transport partition
// (IGN_PARTITION) beside its own DDS domain.

// gazeboEnvVar names another Gazebo Fortress setup script than
// /opt/gz-fortress/env.sh; gazeboRunVar=1 runs the tests (make
// gazebo-test sets it), which take minutes, so make test's unit run skips
// them.
const (
	gazeboEnvVar = "FSMNODES_GAZEBO_ENV"
	gazeboRunVar = "FSMNODES_GAZEBO_TESTS"
)

// needGazebo returns the setup script of the Gazebo Fortress build, or
// skips the test loudly.
func needGazebo(t *testing.T) string {
	t.Helper()
	env := os.Getenv(gazeboEnvVar)
	if env == "" {
		env = "/opt/gz-fortress/env.sh"
	}
	if _, err := os.Stat(env); err != nil {
		why := fmt.Sprintf("no Gazebo Fortress build (%s missing): build it with `make gazebo-peer` (about 75 minutes) or set %s", env, gazeboEnvVar)
		fmt.Fprintf(os.Stderr, "SKIP %s: %s\n", t.Name(), why)
		t.Skip(why)
	}
	if os.Getenv(gazeboRunVar) == "" {
		why := fmt.Sprintf("Gazebo Fortress is built (%s), but its tests take minutes: they run with `make gazebo-test` (%s=1)", env, gazeboRunVar)
		fmt.Fprintf(os.Stderr, "SKIP %s: %s\n", t.Name(), why)
		t.Skip(why)
	}
	return env
}

// gzSim is one `ros2 launch` of a Gazebo launch file in its own DDS domain
// and Gazebo partition.
type gzSim struct {
	t         *testing.T
	setup     string // Gazebo's env.sh
	domain    uint32
	partition string
	env       []string
	launch    *testenv.Process
	node      *ros.Node
	clock     testenv.Latest[rosgraph_msgs_msg.Clock]
}

// installPrefix makes an ament prefix for this repository as colcon would
// install it: share/fsmnodes is the repository, lib/fsmnodes holds the
// executables.
func installPrefix(t *testing.T) string {
	t.Helper()
	d := shareDir(t)
	bin := testenv.ExecutableDir(t, "cmd/fsmnodes", "nodes/...")
	if err := os.MkdirAll(filepath.Join(d, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(d, "lib", "fsmnodes")); err != nil {
		t.Fatal(err)
	}
	return d
}

// startSim launches file with args under Humble and Gazebo Fortress. With
// display, an Xvfb server runs for Gazebo's rendering (the lidar, the
// camera): Fortress's ogre engine needs an X server.
func startSim(t *testing.T, display bool, file string, args ...string) *gzSim {
	t.Helper()
	s := &gzSim{t: t, setup: needGazebo(t), domain: testenv.Domain(t)}
	s.partition = fmt.Sprintf("fsmnodes_test_%d_%d", s.domain, os.Getpid())
	// Loopback as a Humble user sets it (ROS_LOCALHOST_ONLY: the launched
	// nodes see ROS_DISTRO=humble), with room for more than Cyclone's 10
	// participants on loopback, for the launched nodes and this test's.
	// Gazebo's transport keeps its default interface (its discovery is
	// multicast, which this machine's loopback does not carry); the
	// partition keeps tests apart.
	t.Setenv("ROS_LOCALHOST_ONLY", "1")
	t.Setenv("CYCLONEDDS_URI", "<CycloneDDS><Domain><Discovery><MaxAutoParticipantIndex>60</MaxAutoParticipantIndex></Discovery></Domain></CycloneDDS>")
	s.env = append(testenv.Env(s.domain), "IGN_PARTITION="+s.partition, "RMW_IMPLEMENTATION=rmw_cyclonedds_cpp")
	if display {
		num := 90 + int(s.domain)%100
		testenv.Start(t, "Xvfb", nil, "/usr/bin/Xvfb", fmt.Sprintf(":%d", num), "-screen", "0", "1280x1024x24", "-nolisten", "tcp")
		s.env = append(s.env, fmt.Sprintf("DISPLAY=:%d", num))
		testenv.WaitFor(t, 30*time.Second, "Xvfb", func() bool {
			_, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", num))
			return err == nil
		})
	}
	prefix := installPrefix(t)
	script := fmt.Sprintf(`. %s && export AMENT_PREFIX_PATH=%s:"$AMENT_PREFIX_PATH" && exec ros2 launch fsmnodes %s %s`,
		s.setup, prefix, file, strings.Join(args, " "))
	s.launch = testenv.Start(t, "ros2 launch "+file, s.env, "/bin/bash", "-c", script)
	t.Cleanup(s.checkGazeboGone)

	// The Humble wire dialect, as the launched nodes (ROS_DISTRO=humble).
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &s.domain, Distro: "humble", NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "test: "}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = rc.Spin(ctx) }()
	if s.node, err = rc.NewNode("gazebo_test", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewSubscription(s.node, "/clock", ros.QoSClock, func(m *rosgraph_msgs_msg.Clock) { s.clock.Set(m, "") }); err != nil {
		t.Fatal(err)
	}
	return s
}

// now is Gazebo's simulation time from /clock, seconds (0 before the
// first).
func (s *gzSim) now() float64 {
	c := s.clock.Get()
	if c == nil {
		return 0
	}
	return float64(c.Clock.Sec) + float64(c.Clock.Nanosec)/1e9
}

// gz runs a command (ign, ros2 run ...) in the simulation's environment and
// returns its output; a failure fails the test.
func (s *gzSim) gz(timeout time.Duration, args ...string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/bash", append([]string{"-c", `. "$0" && exec "$@"`, s.setup}, args...)...)
	cmd.Env = s.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		s.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// pause pauses (true) or resumes Gazebo's world through its control
// service.
func (s *gzSim) pause(on bool) {
	s.t.Helper()
	out := s.gz(30*time.Second, "ign", "service", "-s", "/world/fsmnodes_flat/control",
		"--reqtype", "ignition.msgs.WorldControl", "--reptype", "ignition.msgs.Boolean",
		"--timeout", "10000", "--req", "pause: "+strconv.FormatBool(on))
	if !strings.Contains(out, "data: true") {
		s.t.Fatalf("world control pause=%v: %s", on, out)
	}
}

// checkGazeboGone fails the test if a Gazebo process of this test's
// partition outlived `ros2 launch` (which got SIGINT when the test ended):
// SIGINT must end everything, Gazebo included. It runs after the launch's
// own stop (cleanups run last-registered first, and this one was
// registered after the launch).
func (s *gzSim) checkGazeboGone() {
	if s.launch == nil {
		return
	}
	for _, p := range s.launch.Stop() {
		s.t.Error(p)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := s.partitionProcesses()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			s.t.Errorf("processes of Gazebo partition %s outlived ros2 launch's SIGINT: %v", s.partition, left)
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// partitionProcesses lists the processes whose environment holds this
// test's IGN_PARTITION.
func (s *gzSim) partitionProcesses() []int {
	var pids []int
	mark := []byte("IGN_PARTITION=" + s.partition + "\x00")
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(b, mark) {
			pids = append(pids, pid)
		}
	}
	return pids
}
