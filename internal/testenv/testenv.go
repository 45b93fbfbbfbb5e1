// Package testenv is the one harness of test binaries that start ROS 2
// nodes, in-process or as child processes:
//
//   - Main scrubs the ROS environment of the test run, points ROS_LOG_DIR at
//     a temporary directory and cleans up after the tests;
//   - Domain reserves a DDS domain no other test on the machine holds;
//   - Executable gives a built executable of the module, built once;
//   - WaitFor waits on a condition, LogWriter sends output to t.Log.
//
// A test package's TestMain is usually just
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// scrubbed are the variables of the caller's environment that would change
// which peers a test hears or how they speak; Main removes them so a test
// run behaves the same on every machine. Tests that need one set it on
// their child processes or in ContextOptions.Getenv.
var scrubbed = []string{"ROS_DOMAIN_ID", "ROS_STATIC_PEERS", "ROS_LOCALHOST_ONLY", "ROS_DISTRO", "CYCLONEDDS_URI", "RMW_IMPLEMENTATION",
	"ROS_SECURITY_ENABLE", "ROS_SECURITY_STRATEGY", "ROS_SECURITY_KEYSTORE", "ROS_SECURITY_ENCLAVE_OVERRIDE"}

// Main runs m in the test environment of this project and returns its exit
// code:
//   - discovery stays on this host (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST,
//     inherited by child processes), so parallel runs on other machines of a
//     CI subnet never hear our domains; the variables in scrubbed are unset;
//   - ROS_LOG_DIR and ROS_HOME are fresh temporary directories, so the log
//     file every node writes (as rcl_logging does) lands there instead of in
//     ~/.ros/log, and state nodes keep under $ROS_HOME (the RSM waypoints of
//     the launch files) never touches, or is read from, the user's ~/.ros;
//   - afterwards these directories and the executables Executable built are
//     removed.
func Main(m *testing.M) int {
	for _, k := range scrubbed {
		os.Unsetenv(k)
	}
	os.Setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
	defer removeBuilds()
	return WithLogDir(m)
}

// WithLogDir runs m with ROS_LOG_DIR and ROS_HOME pointing at fresh
// temporary directories, removed afterwards, and returns m.Run's exit
// code. Main does this and more; WithLogDir is for packages that must keep
// the caller's other ROS variables.
func WithLogDir(m *testing.M) int {
	dir, err := os.MkdirTemp("", "fsmnodes-test-logs-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	home, err := os.MkdirTemp("", "fsmnodes-test-ros-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	defer os.RemoveAll(home)
	for k, v := range map[string]string{"ROS_LOG_DIR": dir, "ROS_HOME": home} {
		if err := os.Setenv(k, v); err != nil {
			fmt.Fprintln(os.Stderr, "testenv:", err)
			return 1
		}
	}
	return m.Run()
}
