package velmanode

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// TestLiveParams_Velma_Process: `fsmnodes param set` on a running
// velma_bridge accepts the live cs tuning (cs.head_max_velocity,
// cs.safe_stiffness, cs.safe_damping; TestRunner_LiveTuning shows the loop
// taking it at the next iteration), refuses values cs refuses with its
// reason, and refuses read-only parameters with theirs; param get reads the
// accepted value back.
func TestLiveParams_Velma_Process(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process DDS test")
	}
	domain := testenv.Domain(t)
	bin := testenv.Executable(t, "nodes/velma_bridge")
	bridge := exec.Command(bin, "--ros-args", "--params-file", "../../../params/velma.yaml")
	bridge.Env = testenv.Env(domain)
	bridge.Stdout = testenv.LogWriter{T: t, Prefix: "velma_bridge: "}
	bridge.Stderr = bridge.Stdout
	if err := bridge.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = bridge.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = bridge.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = bridge.Process.Kill()
			<-done
		}
	})
	testenv.WaitFor(t, 30*time.Second, "velma_core's parameters", func() bool {
		out, _, ok := testenv.CLI(t, domain, "param", "get", "/velma_core", "cs.head_max_velocity")
		return ok && strings.Contains(out, "1.04")
	})
	for _, c := range []struct{ name, value, reason string }{
		{"cs.head_max_velocity", "0.0", "head_max_velocity"},
		{"cs.safe_damping", "3.0", "damping"},
		{"cs.safe_stiffness", ".nan", "NaN"},
		{"cs.safe_stiffness", "stiff", "type"},
		{"period", "0.004", "read-only"},
		{"cs.jnt_stiffness", "[1.0]", "read-only"},
	} {
		if _, stderr, ok := testenv.CLI(t, domain, "param", "set", "/velma_core", c.name, c.value); ok || !strings.Contains(stderr, c.reason) {
			t.Errorf("param set %s %s: ok=%v %q, want refused with %q", c.name, c.value, ok, stderr, c.reason)
		}
	}
	if out, _, ok := testenv.CLI(t, domain, "param", "set", "/velma_core", "cs.head_max_velocity", "0.5"); !ok || !strings.Contains(out, "successful") {
		t.Fatalf("cs.head_max_velocity 0.5 refused: %q", out)
	}
	if out, _, _ := testenv.CLI(t, domain, "param", "get", "/velma_core", "cs.head_max_velocity"); !strings.Contains(out, "0.5") {
		t.Errorf("cs.head_max_velocity after the set: %q", out)
	}
}
