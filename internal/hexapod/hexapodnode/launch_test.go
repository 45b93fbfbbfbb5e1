package hexapodnode

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/launch"
)

// TestLaunchFile_StartsControllerAndJoystick loads launch/hexapod.launch.xml
// with the project's launch loader: the controller with its parameter file,
// and the joystick driver with the original's deadzone and autorepeat on
// joy_dev; joystick:=false leaves the driver out; autostart:=false reaches
// the managed controller as its autostart parameter.
func TestLaunchFile_StartsControllerAndJoystick(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir() // the loader resolves the executables; stand-ins will do
	for _, exe := range []string{"motion_control", "joy", "robot_state_publisher"} {
		if err := os.WriteFile(filepath.Join(bin, exe), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	load := func(args ...[2]string) *launch.Description {
		t.Helper()
		d, err := launch.Load(filepath.Join(root, "launch", "hexapod.launch.xml"),
			launch.Options{ShareDir: root, BinDir: bin, Args: args, LookupEnv: func(string) (string, bool) { return "", false }})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := load([2]string{"joy_dev", "/dev/input/js3"})
	// the file also starts robot_state_publisher (internal/robotstate/robotstatenode tests it)
	if len(d.Processes) != 3 || d.Processes[2].Executable != "robot_state_publisher" {
		t.Fatalf("%d processes, want motion_control, joy and robot_state_publisher", len(d.Processes))
	}
	p := d.Processes[0]
	if p.Package != "fsmnodes" || p.Executable != "motion_control" || p.Name != NodeName || p.Output != "screen" {
		t.Fatalf("process %+v", p)
	}
	// The file, then the launch arguments enable_stamped_cmd_vel and
	// autostart (left out of the file so that they can be set here).
	inline := func(stamped, autostart bool) []launch.ParamValue {
		return []launch.ParamValue{{Name: "enable_stamped_cmd_vel", Value: stamped}, {Name: "autostart", Value: autostart}}
	}
	if len(p.Params) != 2 || p.Params[0].File != filepath.Join(root, "params", "hexapod.yaml") || !reflect.DeepEqual(p.Params[1].Inline, inline(false, true)) {
		t.Fatalf("params %+v", p.Params)
	}
	if p := load([2]string{"enable_stamped_cmd_vel", "true"}).Processes[0]; len(p.Params) != 2 || !reflect.DeepEqual(p.Params[1].Inline, inline(true, true)) {
		t.Fatalf("enable_stamped_cmd_vel:=true: params %+v", p.Params)
	}
	if p := load([2]string{"autostart", "false"}).Processes[0]; len(p.Params) != 2 || !reflect.DeepEqual(p.Params[1].Inline, inline(false, false)) {
		t.Fatalf("autostart:=false: params %+v", p.Params)
	}
	j := d.Processes[1]
	if j.Executable != "joy" || j.Name != "joy_node" || len(j.Params) != 1 {
		t.Fatalf("joystick process %+v", j)
	}
	want := []launch.ParamValue{{Name: "dev", Value: "/dev/input/js3"}, {Name: "deadzone", Value: 0.3}, {Name: "autorepeat_rate", Value: 20.0}}
	if !reflect.DeepEqual(j.Params[0].Inline, want) {
		t.Fatalf("joy parameters %+v, want %+v", j.Params[0].Inline, want)
	}
	if d := load([2]string{"joystick", "false"}); len(d.Processes) != 2 || d.Processes[0].Executable != "motion_control" {
		t.Fatalf("joystick:=false: %+v", d.Processes)
	}
}
