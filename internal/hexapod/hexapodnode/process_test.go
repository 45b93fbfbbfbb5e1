package hexapodnode

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// TestMain lets the test binary stand in for motion_control: started with
// HEXAPOD_TEST_EXEC=1 it runs the node (so the process test needs no build
// of its own).
func TestMain(m *testing.M) {
	if os.Getenv("HEXAPOD_TEST_EXEC") != "" {
		if err := Run(context.Background(), os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "motion_control:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testenv.Main(m))
}

// startMotionControl starts this test binary as a motion_control process
// (TestMain) in domain, with args after its name (--ros-args ...).
func startMotionControl(t *testing.T, domain uint32, args ...string) *testenv.Process {
	t.Helper()
	return testenv.Start(t, "motion_control", append(testenv.Env(domain), "HEXAPOD_TEST_EXEC=1"), os.Args[0], args...)
}
