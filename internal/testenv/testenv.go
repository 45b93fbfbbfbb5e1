// Package testenv holds the set-up shared by test binaries that start ROS 2
// nodes, in-process or as child processes.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// WithLogDir runs m with ROS_LOG_DIR pointing at a fresh temporary
// directory, so the log file every node writes (as rcl_logging does) lands
// there instead of in ~/.ros/log; child processes inherit the variable. The
// directory is removed afterwards. It returns m.Run's exit code.
func WithLogDir(m *testing.M) int {
	dir, err := os.MkdirTemp("", "fsmnodes-test-logs-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Setenv("ROS_LOG_DIR", dir); err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	return m.Run()
}
