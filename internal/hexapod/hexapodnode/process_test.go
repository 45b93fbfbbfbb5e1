package hexapodnode

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/ros"
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

// testNode returns a context of the test's own in domain and a node named
// name on it, both closed at the end of the test; the test spins the
// context once its entities exist.
func testNode(t *testing.T, domain uint32, name string) (*ros.Context, *ros.Node) {
	t.Helper()
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "test: "}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	n, err := rc.NewNode(name, "")
	if err != nil {
		t.Fatal(err)
	}
	return rc, n
}
