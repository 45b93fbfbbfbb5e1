package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// TestStartupError_NamesProgramNodeAndParameterOnce checks the shape of
// the message a node prints when it cannot start: each layer adds only
// what it knows — main the program, ros.Run/NewNode/the Declarer the
// node (once, with its namespace), the parameter store the parameter and
// where the bad value came from.
func TestStartupError_NamesProgramNodeAndParameterOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	domain := testenv.Domain(t)
	const wrongInt = `declare "%s": wrong parameter type: -p %s gives 5 of type integer but the parameter is of type %s`
	cases := []struct {
		exe, node, param, typ string
		ns                    string
	}{
		// a parameter of the node's setup (the Declarer)
		{"velma_core_ve_body", "velma_core_ve_body", "period", "double", ""},
		{"velma_core_cs", "velma_core_cs", "period", "double", "/r1"},
		{"velma_sim", "velma_sim", "period", "double", ""},
		{"velma_task_cs_ros_interface", "velma_core", "buffers", "string", ""},
		{"velma_bridge", "velma_core", "period", "double", "/r2"},
		{"robot_control_mux", "robotControlMuxNode", "cmd_vel_topic", "string", ""},
		// a parameter every node declares when it is created (NewNode)
		{"motion_control", "hexapod_controller", "use_sim_time", "bool", ""},
		{"diff_drive_sim", "diff_drive_sim", "use_sim_time", "bool", "/r3"},
	}
	for _, c := range cases {
		t.Run(c.exe, func(t *testing.T) {
			args := []string{"--ros-args", "-p", c.param + ":=5"}
			if c.ns != "" {
				args = append(args, "-r", "__ns:="+c.ns)
			}
			p := testenv.Start(t, c.exe, testenv.Env(domain), testenv.Executable(t, "nodes/"+c.exe), args...)
			var err error
			testenv.WaitFor(t, 60*time.Second, c.exe+" to exit", func() bool {
				var done bool
				done, err = p.Exited()
				return done
			})
			if err == nil {
				t.Fatalf("%s started with -p %s:=5; want a failing exit", c.exe, c.param)
			}
			lines := strings.Split(strings.TrimSpace(p.Output()), "\n")
			got := lines[len(lines)-1]
			want := c.exe + ": node " + c.ns + "/" + c.node + ": " + fmt.Sprintf(wrongInt, c.param, c.param, c.typ)
			if got != want {
				t.Errorf("last line\n got %s\nwant %s", got, want)
			}
		})
	}
}
