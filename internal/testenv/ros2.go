package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// ROS2 is a real ROS 2 installation that tests use as the judge of wire
// claims (ros2 CLI, rclcpp and rclpy peers).
type ROS2 struct {
	// Setup is the script that sets the installation up when sourced.
	Setup string
	// Distro is its ROS_DISTRO ("humble", "jazzy").
	Distro string
}

// ros2Candidates are the setup scripts looked for, in order, when
// FSMNODES_ROS2_SETUP is not set.
var ros2Candidates = []string{
	"/opt/ros2-humble/env.sh",
	"/opt/ros2-jazzy/env.sh",
	"/opt/ros/jazzy/setup.bash",
	"/opt/ros/humble/setup.bash",
}

var ros2Found struct {
	once sync.Once
	r    *ROS2
	why  string
}

// FindROS2 returns the ROS 2 installation named by FSMNODES_ROS2_SETUP (a
// setup script to source) or found at a usual place, or the reason there is
// none.
func FindROS2() (*ROS2, string) {
	f := &ros2Found
	f.once.Do(func() {
		cands := ros2Candidates
		if s := os.Getenv("FSMNODES_ROS2_SETUP"); s != "" {
			cands = []string{s}
		}
		for _, c := range cands {
			if _, err := os.Stat(c); err != nil {
				continue
			}
			out, err := exec.Command("bash", "-c", ". "+shellQuote(c)+" >/dev/null 2>&1 && echo \"$ROS_DISTRO\"").Output()
			distro := strings.TrimSpace(string(out))
			if err != nil || distro == "" {
				f.why = fmt.Sprintf("sourcing %s did not set ROS_DISTRO (%v)", c, err)
				continue
			}
			f.r = &ROS2{Setup: c, Distro: distro}
			return
		}
		if f.why == "" {
			f.why = fmt.Sprintf("no ROS 2 installation (looked for %s; set FSMNODES_ROS2_SETUP to a setup script)", strings.Join(cands, ", "))
		}
	})
	return f.r, f.why
}

// NeedROS2 returns the real ROS 2 installation, or skips the test with a
// message that also goes to stderr, so that it shows without -v.
func NeedROS2(t testing.TB) *ROS2 {
	t.Helper()
	r, why := FindROS2()
	if r == nil {
		fmt.Fprintf(os.Stderr, "SKIP %s: %s\n", t.Name(), why)
		t.Skip(why)
	}
	return r
}

// Command returns a command that runs script (a bash command line) with
// the installation sourced and rmw_cyclonedds_cpp selected.
func (r *ROS2) Command(script string) *exec.Cmd {
	return exec.Command("bash", "-c", ". "+shellQuote(r.Setup)+" && export RMW_IMPLEMENTATION=rmw_cyclonedds_cpp && "+script)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
