package velmanode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/launch"
)

func loadVelmaLaunch(t *testing.T, args [][2]string) *launch.Description {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir() // the loader resolves the executable; a stand-in will do
	for _, exe := range []string{"velma_bridge", "robot_state_publisher", "velma_sim", "velma_core_ve_body", "velma_core_cs", "velma_task_cs_ros_interface"} {
		if err := os.WriteFile(filepath.Join(bin, exe), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	d, err := launch.Load(filepath.Join(root, "launch", "velma.launch.xml"),
		launch.Options{ShareDir: root, BinDir: bin, Args: args, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range d.Processes[:len(d.Processes)-1] {
		if p.Package != "fsmnodes" || len(p.Params) == 0 || p.Params[0].File != filepath.Join(root, "params", "velma.yaml") {
			t.Fatalf("process %s: params %+v", p.Executable, p.Params)
		}
	}
	// the file also starts robot_state_publisher (internal/robotstate/robotstatenode tests it)
	if last := d.Processes[len(d.Processes)-1]; last.Executable != "robot_state_publisher" {
		t.Fatalf("last process %s", last.Executable)
	}
	return d
}

// launch/velma.launch.xml starts the four processes of the original, the
// ROS interface as velma_core, all with params/velma.yaml.
func TestLaunchFile_StartsFourProcesses(t *testing.T) {
	d := loadVelmaLaunch(t, nil)
	want := [][2]string{{"velma_sim", SimNodeName}, {"velma_core_ve_body", VeBodyNodeName}, {"velma_core_cs", CSNodeName},
		{"velma_task_cs_ros_interface", NodeName}, {"robot_state_publisher", "robot_state_publisher"}}
	if len(d.Processes) != len(want) {
		t.Fatalf("%d processes, want %d", len(d.Processes), len(want))
	}
	for i, w := range want {
		if p := d.Processes[i]; p.Executable != w[0] || p.Name != w[1] {
			t.Fatalf("process %d: %s as %s, want %s as %s", i, p.Executable, p.Name, w[0], w[1])
		}
	}
}

// processes:=false starts velma_bridge as velma_core (what the demo uses).
func TestLaunchFile_SingleProcess(t *testing.T) {
	d := loadVelmaLaunch(t, [][2]string{{"processes", "false"}})
	if len(d.Processes) != 2 {
		t.Fatalf("%d processes", len(d.Processes))
	}
	if p := d.Processes[0]; p.Executable != "velma_bridge" || p.Name != NodeName {
		t.Fatalf("process %+v", p)
	}
}

// autostart:=false reaches the managed nodes (velma_sim, or velma_bridge
// with processes:=false) as their autostart parameter; the default is true.
func TestLaunchFile_Autostart(t *testing.T) {
	autostart := func(p *launch.Process) (any, bool) {
		for _, ps := range p.Params {
			for _, v := range ps.Inline {
				if v.Name == "autostart" {
					return v.Value, true
				}
			}
		}
		return nil, false
	}
	for _, c := range []struct {
		args [][2]string
		exe  string
		want bool
	}{
		{nil, "velma_sim", true},
		{[][2]string{{"autostart", "false"}}, "velma_sim", false},
		{[][2]string{{"processes", "false"}}, "velma_bridge", true},
		{[][2]string{{"processes", "false"}, {"autostart", "false"}}, "velma_bridge", false},
	} {
		d := loadVelmaLaunch(t, c.args)
		for _, p := range d.Processes {
			v, ok := autostart(p)
			switch {
			case p.Executable == c.exe && (!ok || v != c.want):
				t.Errorf("%v: %s autostart %v (set %v), want %v", c.args, p.Executable, v, ok, c.want)
			case p.Executable != c.exe && ok:
				t.Errorf("%v: %s (not a managed node) gets autostart", c.args, p.Executable)
			}
		}
	}
}
