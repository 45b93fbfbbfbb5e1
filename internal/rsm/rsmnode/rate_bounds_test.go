package rsmnode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// TestParamsFile_HugeFrequencyRefused: a parameters file with
// update_frequency 1e307 (or max_linear_velocity 1e308) stops the mux's
// setup with the parameter's name and range, instead of being accepted and
// then ending the node with "period 0s" (issue 25, finding 1).
func TestParamsFile_HugeFrequencyRefused(t *testing.T) {
	domain := testenv.Domain(t)
	for _, c := range []struct{ name, value string }{
		{"update_frequency", "1.0e+307"},
		{"update_frequency", ".inf"},
		{"max_linear_velocity", "1.0e+308"},
	} {
		t.Run(c.name+"="+c.value, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "params.yaml")
			yaml := "/**:\n  ros__parameters:\n    " + c.name + ": " + c.value + "\n"
			if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true,
				Args:      []string{"--ros-args", "--params-file", file},
				LogOutput: testenv.LogWriter{T: t, Prefix: "mux: "}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = rc.Close() })
			n, err := rc.NewNode(MuxNodeName, "")
			if err != nil {
				t.Fatal(err)
			}
			err = SetupMux(context.Background(), n)
			if err == nil || !strings.Contains(err.Error(), c.name) || !strings.Contains(err.Error(), "outside the floating point range") {
				t.Fatalf("SetupMux with %s: %s = %v, want refused for %s with its range", filepath.Base(file), c.name, err, c.name)
			}
		})
	}
}
