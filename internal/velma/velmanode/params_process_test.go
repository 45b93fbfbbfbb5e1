package velmanode

import (
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
	t.Parallel()     // a domain of its own
	testenv.Heavy(t) // Velma's 500 Hz loops in processes of their own
	domain := testenv.Domain(t)
	bin := testenv.Executable(t, "nodes/velma_bridge")
	testenv.Start(t, "velma_bridge", testenv.Env(domain), bin, "--ros-args", "--params-file", "../../../params/velma.yaml")
	testenv.WaitFor(t, 30*time.Second, "velma_core's parameters", func() bool {
		out, _, ok := testenv.CLI(t, domain, "param", "get", "/velma_core", "cs.head_max_velocity")
		return ok && strings.Contains(out, "1.04")
	})
	refused := []struct{ name, value, reason string }{
		{"cs.head_max_velocity", "0.0", "head_max_velocity"},
		{"cs.head_max_velocity", ".inf", "head_max_velocity"}, // issue 25: +Inf was accepted
		{"cs.head_max_velocity", "1e308", "head_max_velocity"},
		{"cs.safe_damping", "3.0", "damping"},
		{"cs.safe_stiffness", ".nan", "NaN"},
		{"cs.safe_stiffness", "stiff", "type"},
		{"period", "0.004", "read-only"},
		{"cs.jnt_stiffness", "[1.0]", "read-only"},
	}
	var sets [][]string
	for _, c := range refused {
		sets = append(sets, []string{"param", "set", "/velma_core", c.name, c.value})
	}
	for i, r := range testenv.CLIAll(t, domain, sets...) { // independent: all at once
		if c := refused[i]; r.OK || !strings.Contains(r.Stderr, c.reason) {
			t.Errorf("param set %s %s: ok=%v %q, want refused with %q", c.name, c.value, r.OK, r.Stderr, c.reason)
		}
	}
	if out, _, ok := testenv.CLI(t, domain, "param", "set", "/velma_core", "cs.head_max_velocity", "0.5"); !ok || !strings.Contains(out, "successful") {
		t.Fatalf("cs.head_max_velocity 0.5 refused: %q", out)
	}
	if out, _, _ := testenv.CLI(t, domain, "param", "get", "/velma_core", "cs.head_max_velocity"); !strings.Contains(out, "0.5") {
		t.Errorf("cs.head_max_velocity after the set: %q", out)
	}
}
