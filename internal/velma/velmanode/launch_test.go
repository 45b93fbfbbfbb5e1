package velmanode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/launch"
)

// launch/velma.launch.xml starts velma_bridge as velma_core with
// params/velma.yaml.
func TestLaunchFile_StartsBridgeWithParams(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir() // the loader resolves the executable; a stand-in will do
	for _, exe := range []string{"velma_bridge", "robot_state_publisher"} {
		if err := os.WriteFile(filepath.Join(bin, exe), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	d, err := launch.Load(filepath.Join(root, "launch", "velma.launch.xml"),
		launch.Options{ShareDir: root, BinDir: bin, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	// the file also starts robot_state_publisher (internal/rsp/rspnode tests it)
	if len(d.Processes) != 2 || d.Processes[1].Executable != "robot_state_publisher" {
		t.Fatalf("%d processes", len(d.Processes))
	}
	p := d.Processes[0]
	if p.Package != "fsmnodes" || p.Executable != "velma_bridge" || p.Name != NodeName {
		t.Fatalf("process %+v", p)
	}
	if len(p.Params) != 1 || p.Params[0].File != filepath.Join(root, "params", "velma.yaml") {
		t.Fatalf("params %+v", p.Params)
	}
}
