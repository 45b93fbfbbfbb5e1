package robotstatenode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/launch"
	"github.com/fsmnodes/fsmnodes/internal/urdf"
)

// Every robot's launch file starts robot_state_publisher with its URDF read
// by $(command 'cat ...') and TF remapped into the robot's namespace.
func TestLaunchFiles_StartRobotStatePublisher(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir() // the loader resolves the executables; stand-ins will do
	nodes, _ := filepath.Glob(filepath.Join(root, "nodes", "*"))
	for _, n := range nodes {
		if err := os.WriteFile(filepath.Join(bin, filepath.Base(n)), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	type rsp struct{ ns, urdf string }
	cases := []struct {
		file string
		want []rsp
	}{
		{"hexapod.launch.xml", []rsp{{"", "hexapod.urdf"}}},
		{"velma.launch.xml", []rsp{{"", "velma.urdf"}}},
		{"rsm_sim.launch.xml", []rsp{{"", "diffbot.urdf"}}},
		{"demo.launch.xml", []rsp{{"/diffbot", "diffbot.urdf"}, {"/hexapod", "hexapod.urdf"}, {"/velma", "velma.urdf"}}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			d, err := launch.Load(filepath.Join(root, "launch", c.file), launch.Options{ShareDir: root, BinDir: bin,
				LookupEnv: func(string) (string, bool) { return "", false }})
			if err != nil {
				t.Fatal(err)
			}
			var got []rsp
			for _, p := range d.Processes {
				remaps := map[string]string{}
				for _, r := range p.Remaps {
					remaps[r[0]] = r[1]
				}
				// every node of a robot (the demo's root-level tools aside)
				robotNode := c.file != "demo.launch.xml" || p.Namespace != ""
				if robotNode && (remaps["/tf"] != "tf" || remaps["/tf_static"] != "tf_static") {
					t.Errorf("%s: %s does not remap /tf and /tf_static into its namespace: %v", c.file, p.Label, p.Remaps)
				}
				if p.Executable != "robot_state_publisher" {
					continue
				}
				if p.Name != Name {
					t.Errorf("node name %q", p.Name)
				}
				var desc string
				for _, ps := range p.Params {
					for _, v := range ps.Inline {
						if v.Name == "robot_description" {
							desc, _ = v.Value.(string)
						}
					}
				}
				m, err := urdf.Parse([]byte(desc))
				if err != nil {
					t.Fatalf("%s: robot_description: %v", c.file, err)
				}
				file := map[string]string{"hexapod": "hexapod.urdf", "velma": "velma.urdf", "fsmbot": "diffbot.urdf"}[m.Name]
				got = append(got, rsp{p.Namespace, file})
			}
			if len(got) != len(c.want) {
				t.Fatalf("robot_state_publishers %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("robot_state_publishers %v, want %v", got, c.want)
				}
			}
		})
	}
}
