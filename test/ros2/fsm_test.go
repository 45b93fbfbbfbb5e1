package ros2

import (
	"strings"
	"testing"
)

// The real ros2 CLI reads the FSM introspection of our nodes (fsm_msgs,
// built by build-peer.sh): `ros2 interface show` knows the types; `ros2
// topic echo` prints the latched ~/fsm/graph of motion_control (its
// lifecycle and motion machines, with guards, the initial state and the
// dwell bounds) and of robotControlMuxNode, and, after real `ros2 service
// call`s (start_stop; an e-stop through /rsm/setOperationMode), the
// ~/fsm/transition history with the changes those calls made and their
// causes and counters.
func TestFSMIntrospectionEcho(t *testing.T) {
	d := newDom(t)
	env := d.ours()
	d.start("motion_control", env, ours("motion_control"))
	d.start("robot_control_mux", env, ours("robot_control_mux"))
	const hex, mux = "/hexapod_controller", "/robotControlMuxNode"
	c := d.context()
	waitGraph(t, c, "the two nodes' ~/fsm topics", func() bool {
		names := map[string]bool{}
		for _, tp := range c.TopicNamesAndTypes() {
			names[tp.Name] = true
		}
		return names[hex+"/fsm/graph"] && names[hex+"/fsm/transition"] && names[mux+"/fsm/graph"] && names[mux+"/fsm/transition"]
	})
	echo := func(topic string, timeout float64) ros2Cmd {
		// ros2 topic echo adapts its QoS to the transient-local publishers
		// and so gets what they keep; --qos-depth asks for the history.
		return ros2Cmd{Argv: []string{"topic", "echo", "--qos-durability", "transient_local", "--qos-reliability", "reliable",
			"--qos-depth", "100", topic}, Timeout: timeout}
	}
	res := d.ros2(
		ros2Cmd{Argv: []string{"interface", "show", "fsm_msgs/msg/Transition"}}.in(0),
		ros2Cmd{Argv: []string{"topic", "echo", "--once", "--qos-durability", "transient_local", "--qos-reliability", "reliable", hex + "/fsm/graph", "fsm_msgs/msg/Graph"}, Timeout: 60}.in(0),
		ros2Cmd{Argv: []string{"topic", "echo", "--once", "--qos-durability", "transient_local", "--qos-reliability", "reliable", mux + "/fsm/graph", "fsm_msgs/msg/Graph"}, Timeout: 60}.in(1),
		ros2Cmd{Argv: []string{"service", "call", hex + "/start_stop", "std_srvs/srv/Trigger"}}.in(2),
		ros2Cmd{Argv: []string{"service", "call", "/rsm/setOperationMode", "rsm_msgs/srv/SetOperationMode",
			"{operation_mode: {emergency_stop: true, mode: 0}}"}}.in(3),
		echo(hex+"/fsm/transition", 20).in(2), // ros2 starts in 1-2 s quiet, much later under make test
		echo(mux+"/fsm/transition", 20).in(3),
	)
	for i, r := range res {
		if i >= 5 { // stopped with Ctrl-C
			continue
		}
		if !r.ok() {
			t.Errorf("failed: %v", r)
		}
	}
	mustContain(t, "ros2 interface show", res[0].Stdout, "string from_state", "string cause", "uint64 unknown_transitions",
		"builtin_interfaces/Time stamp")
	mustContain(t, "ros2 topic echo hexapod graph", res[1].Stdout,
		"name: lifecycle", "initial_state: unconfigured", "guard: transition_success", "max_dwell: 10.0",
		"name: motion", "initial_state: Idle", "from_state: Idle", "to_state: Sitting", "guard: start_cmd / torque on",
		"name: Standing_up", "max_dwell: 2.86")
	mustContain(t, "ros2 topic echo mux graph", res[2].Stdout,
		"name: operation_mode", "initial_state: STOPPED", "name: E-STOP/STOPPED", "guard: setOperationMode (e-stop on)",
		"guard: autonomy_cmd_vel_timeout")
	mustContain(t, "ros2 service call start_stop", res[3].Stdout, "success=True")
	mustContain(t, "ros2 service call setOperationMode", res[4].Stdout, "success=True")
	// The history: the lifecycle's autostart, then start_stop's change.
	hexTr := res[5].Stdout
	mustContain(t, "ros2 topic echo hexapod transitions", hexTr,
		"machine: lifecycle\nfrom_state: unconfigured\nto_state: configuring\ncause: configure\nin_graph: true",
		"machine: lifecycle\nfrom_state: activating\nto_state: active\ncause: transition_success",
		"machine: motion\nfrom_state: Idle\nto_state: Sitting\ncause: start_cmd / torque on\nin_graph: true",
		"unknown_transitions: 0")
	mustContain(t, "ros2 topic echo mux transitions", res[6].Stdout,
		"machine: operation_mode\nfrom_state: ''\nto_state: STOPPED\ncause: start",
		"machine: operation_mode\nfrom_state: STOPPED\nto_state: E-STOP/STOPPED\ncause: setOperationMode (e-stop on)\nin_graph: true",
		"sequence: 1\nedge_count: 1")
	if strings.Contains(hexTr+res[6].Stdout, "in_graph: false") {
		t.Errorf("a transition not in the graph:\n%s\n%s", hexTr, res[6].Stdout)
	}
}
