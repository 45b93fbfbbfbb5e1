package ros2

import (
	"os"
	"path/filepath"
	"testing"
)

// Velma's four processes, started by the real `ros2 launch fsmnodes
// velma.launch.xml`, publish their machines as velma_bridge does: the
// real `ros2 topic echo` prints ve_body's graph from /velma_core_ve_body
// and cs's from /velma_core_cs (fsm_msgs, built by build-peer.sh), and
// each one's current state on ~/fsm/status.
func TestVelmaFourProcessesPublishTheirMachines(t *testing.T) {
	d := newDom(t)
	if peer.colconErr != nil {
		t.Fatal(peer.colconErr)
	}
	env, err := sourceEnv(d.rosEnv(), filepath.Join(peer.ws, "install", "setup.bash"))
	if err != nil {
		t.Fatal(err)
	}
	bufs, err := os.MkdirTemp("/dev/shm", "velma-fsm-ros2-")
	if err != nil {
		bufs = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(bufs) })
	}
	d.start("ros2 launch", env, "ros2", "launch", "fsmnodes", "velma.launch.xml", "buffers:="+bufs+"/velma", "timeout:=0.01")
	c := d.context()
	waitGraph(t, c, "the machines of ve_body and cs", func() bool {
		names := map[string]bool{}
		for _, tp := range c.TopicNamesAndTypes() {
			names[tp.Name] = true
		}
		return names["/velma_core_ve_body/fsm/graph"] && names["/velma_core_cs/fsm/graph"] && names["/velma_core_cs/fsm/status"]
	})
	latched := func(topic, typ string) ros2Cmd {
		return ros2Cmd{Argv: []string{"topic", "echo", "--once", "--qos-durability", "transient_local", "--qos-reliability", "reliable", topic, typ}, Timeout: 60}
	}
	res := d.ros2(
		latched("/velma_core_ve_body/fsm/graph", "fsm_msgs/msg/Graph").in(0),
		latched("/velma_core_cs/fsm/graph", "fsm_msgs/msg/Graph").in(1),
		latched("/velma_core_cs/fsm/status", "fsm_msgs/msg/Status").in(2),
	)
	for _, r := range res {
		if !r.ok() {
			t.Errorf("failed: %v", r)
		}
	}
	mustContain(t, "ros2 topic echo ve_body's graph", res[0].Stdout, "name: ve_body", "initial_state: idle",
		"from_state: safe_st_ok", "to_state: transp", "guard: recvCommand ∧ allCmdOk ∧ cmdExitSafeState ∧ safeItPassed500",
		"name: transp_st", "max_dwell: 0.1")
	mustContain(t, "ros2 topic echo cs's graph", res[1].Stdout, "name: cs", "initial_state: idle",
		"to_state: relax", "guard: ¬IN_ERROR ∧ recvRelaxCmd")
	mustContain(t, "ros2 topic echo cs's status", res[2].Stdout, "machine: cs", "in_graph: true")
}
