package ros2

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/lifecycle"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	lifecycle_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/lifecycle_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
)

// The real `ros2 lifecycle` drives our managed nodes: diff_drive_sim and
// motion_control (hexapod_controller) started with autostart:=false. It
// finds them (nodes), reads their state (get), lists the transitions from
// the current state and the whole graph (list, list -a), and takes the
// simulator through configure, activate, deactivate, cleanup and shutdown
// (set, by label and by id) while the simulator publishes odometry only
// when active; from finalized nothing is left. ros2 service call sends a
// ChangeState with an unknown label (success False) and reads the
// available states; `fsmnodes lifecycle list -a` prints what ros2 prints.
func TestLifecycleDrivenByROS2(t *testing.T) {
	d := newDom(t)
	env := d.ours()
	d.start("diff_drive_sim", env, ours("diff_drive_sim"), "--ros-args", "-p", "autostart:=false")
	d.start("motion_control", env, ours("motion_control"), "--ros-args", "-p", "autostart:=false")
	c := d.context()
	var odoms atomic.Int64
	n, err := c.NewNode("lifecycle_observer", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewSubscription(n, "/odom", ros.QoSDefault, func(*nav_msgs_msg.Odometry) { odoms.Add(1) }); err != nil {
		t.Fatal(err)
	}
	waitGraph(t, c, "the two managed nodes' change_state services", func() bool {
		names := map[string]bool{}
		for _, s := range c.ServiceNamesAndTypes() {
			names[s.Name] = true
		}
		return names["/diff_drive_sim/change_state"] && names["/hexapod_controller/change_state"]
	})
	const sim, hex = "/diff_drive_sim", "/hexapod_controller"
	nd := []string{"--no-daemon", "--spin-time", "3"}
	with := func(argv ...string) ros2Cmd { return ros2Cmd{Argv: append(argv, nd...)} }
	lc := func(argv ...string) ros2Cmd { return with(append([]string{"lifecycle"}, argv...)...) }
	res := d.ros2(
		lc("nodes").in(0),
		lc("get", sim).in(1),
		lc("list", sim).in(2),
		lc("list", hex, "-a").in(3),
		ros2Cmd{Argv: []string{"service", "call", sim + "/change_state", "lifecycle_msgs/srv/ChangeState", "{transition: {label: bogus}}"}}.in(0),
		ros2Cmd{Argv: []string{"service", "call", hex + "/get_available_states", "lifecycle_msgs/srv/GetAvailableStates"}}.in(1),
		lc("get").in(2),
		with("topic", "info", "-v", sim+"/transition_event").in(3),
	)
	for _, r := range res {
		if !r.ok() {
			t.Errorf("failed: %v", r)
		}
	}
	if got := res[0].Stdout; got != sim+"\n"+hex+"\n" {
		t.Errorf("ros2 lifecycle nodes: %q", got)
	}
	if got := res[1].Stdout; got != "unconfigured [1]\n" {
		t.Errorf("ros2 lifecycle get: %q", got)
	}
	if got, want := res[2].Stdout, "- configure [1]\n\tStart: unconfigured\n\tGoal: configuring\n- shutdown [5]\n\tStart: unconfigured\n\tGoal: shuttingdown\n"; got != want {
		t.Errorf("ros2 lifecycle list:\n%s\nwant\n%s", got, want)
	}
	if got := res[3].Stdout; strings.Count(got, "- ") != 25 || !strings.Contains(got, "- transition_error [62]\n\tStart: errorprocessing\n\tGoal: finalized\n") {
		t.Errorf("ros2 lifecycle list -a:\n%s", got)
	}
	// (the combined output: Cyclone may add a line on stderr)
	var ours []string
	for _, l := range strings.SplitAfter(d.fsmnodes("lifecycle", "list", hex, "-a"), "\n") {
		if strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "\t") {
			ours = append(ours, l)
		}
	}
	if strings.Join(ours, "") != res[3].Stdout {
		t.Errorf("fsmnodes lifecycle list -a differs from ros2's:\n%s", strings.Join(ours, ""))
	}
	mustContain(t, "change_state with an unknown label", res[4].Stdout, "success=False")
	mustContain(t, "get_available_states", res[5].Stdout, "label='unknown'", "label='unconfigured'", "label='errorprocessing'")
	if got := res[6].Stdout; got != sim+": unconfigured [1]\n"+hex+": unconfigured [1]\n" {
		t.Errorf("ros2 lifecycle get (every node): %q", got)
	}
	mustContain(t, "ros2 topic info -v transition_event", res[7].Stdout, "lifecycle_msgs/msg/TransitionEvent", "RELIABLE", "VOLATILE")
	if n := odoms.Load(); n != 0 {
		t.Errorf("%d odometry messages from the unconfigured simulator", n)
	}

	// every transition of the simulator, by label and by id
	steps := []struct{ transition, state string }{
		{"configure", "inactive [2]"}, {"activate", "active [3]"}, {"4", "inactive [2]"}, // deactivate by id
		{"cleanup", "unconfigured [1]"}, {"1", "inactive [2]"}, {"activate", "active [3]"}, {"shutdown", "finalized [4]"},
	}
	var cmds []ros2Cmd
	for _, s := range steps {
		cmds = append(cmds, lc("set", sim, s.transition), lc("get", sim))
	}
	cmds = append(cmds, lc("set", sim, "configure"), // nothing from finalized
		lc("set", hex, "configure").in(1), lc("set", hex, "activate").in(1), lc("get", hex).in(1))
	res = d.ros2(cmds...)
	for i, s := range steps {
		set, get := res[2*i], res[2*i+1]
		if !set.ok() || set.Stdout != "Transitioning successful\n" {
			t.Errorf("set %s: %v", s.transition, set)
		}
		if get.Stdout != s.state+"\n" {
			t.Errorf("after %s: %v, want %s", s.transition, get, s.state)
		}
	}
	last := res[2*len(steps)]
	if last.ok() || !strings.Contains(fmt.Sprint(last.RC), "Unknown transition requested, available ones are:") {
		t.Errorf("set configure from finalized: %v", last)
	}
	if r := res[len(res)-1]; r.Stdout != "active [3]\n" {
		t.Errorf("hexapod_controller after configure and activate: %v", r)
	}
	if odoms.Load() == 0 {
		t.Error("no odometry while the simulator was active")
	}
	t.Logf("%d odometry messages while active", odoms.Load())
}

// cycloneLine matches a line Cyclone DDS writes on stderr (e.g. that lo is
// not multicast-capable), which the combined output of our CLI may hold.
var cycloneLine = regexp.MustCompile(`^\d+\.\d+ \[\d+\] `)

// lifecycleCLI runs `fsmnodes lifecycle args...` and returns its output
// without Cyclone's lines, and whether it exited 0.
func (d *dom) lifecycleCLI(args ...string) (string, bool) {
	d.t.Helper()
	out, err := d.runErr(d.ours(), append([]string{ours("fsmnodes"), "lifecycle"}, args...)...)
	var keep []string
	for _, l := range strings.SplitAfter(out, "\n") {
		if l != "" && !cycloneLine.MatchString(l) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, ""), err == nil
}

// Our `fsmnodes lifecycle` drives a real managed node (rclpy's
// rclpy.lifecycle.Node, on rcl_lifecycle): it finds the node, reads its
// state, prints its transition graph as `ros2 lifecycle list -a` does, and
// takes it through configure, activate, deactivate, cleanup, a configure
// whose callback fails ("Transitioning failed", status 0) and shutdown;
// from finalized it lists nothing. Our subscription decodes every
// ~/transition_event rcl publishes, in order.
func TestFsmnodesLifecycleDrivesRclpy(t *testing.T) {
	d := newDom(t)
	py := d.start("rclpy lifecycle node", d.rosEnv(), "/usr/bin/python3", filepath.Join(peer.repo, "test/ros2/testdata/lifecycle_node.py"), "lc_py")
	py.waitLine("ready")
	c := d.context()
	n, err := c.NewNode("transition_listener", "")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []string
	sub, err := ros.NewSubscription(n, "/lc_py/transition_event", lifecycle.QoSTransitionEvent, func(m *lifecycle_msgs_msg.TransitionEvent) {
		mu.Lock()
		events = append(events, m.StartState.Label+"->"+m.GoalState.Label)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	waitGraph(t, c, "the rclpy node's transition_event matched", func() bool { k, _ := sub.PublisherCount(); return k > 0 })

	expect := func(want string, args ...string) {
		t.Helper()
		if got, ok := d.lifecycleCLI(args...); !ok || got != want {
			t.Errorf("fsmnodes lifecycle %v: ok=%v %q, want %q", args, ok, got, want)
		}
	}
	expect("/lc_py\n", "nodes")
	expect("unconfigured [1]\n", "get", "/lc_py")
	graph := d.ros2One("lifecycle", "list", "/lc_py", "-a", "--no-daemon", "--spin-time", "3")
	if strings.Count(graph, "- ") != 25 {
		t.Fatalf("ros2 lifecycle list -a of the rclpy node:\n%s", graph)
	}
	expect(graph, "list", "/lc_py", "-a")
	for _, s := range []struct{ transition, line, state string }{
		{"configure", "configure", "inactive [2]"}, {"activate", "activate", "active [3]"},
		{"deactivate", "deactivate", "inactive [2]"}, {"2", "cleanup", "unconfigured [1]"},
	} {
		expect("Transitioning successful\n", "set", "/lc_py", s.transition)
		py.waitLine(s.line)
		expect(s.state+"\n", "get", "/lc_py")
	}
	expect("Transitioning failed\n", "set", "/lc_py", "configure") // the callback fails (stderr, status 0)
	expect("unconfigured [1]\n", "get", "/lc_py")
	expect("Transitioning successful\n", "set", "/lc_py", "shutdown")
	py.waitLine("shutdown")
	expect("/lc_py: finalized [4]\n", "get")
	if out, ok := d.lifecycleCLI("set", "/lc_py", "activate"); ok || out != "Unknown transition requested, available ones are:\n" {
		t.Errorf("set activate from finalized: ok=%v %q", ok, out)
	}
	want := []string{"unconfigured->configuring", "configuring->inactive", "inactive->activating", "activating->active",
		"active->deactivating", "deactivating->inactive", "inactive->cleaningup", "cleaningup->unconfigured",
		"unconfigured->configuring", "configuring->unconfigured", "unconfigured->shuttingdown", "shuttingdown->finalized"}
	waitGraph(t, c, "every transition event", func() bool { mu.Lock(); defer mu.Unlock(); return len(events) >= len(want) })
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(events, " ") != strings.Join(want, " ") {
		t.Errorf("transition events:\n%v\nwant\n%v", events, want)
	}
}

// `ros2 launch fsmnodes hexapod.launch.xml autostart:=false` (ROS 2's own
// launch, from the colcon overlay) hands the argument to the managed
// controller: it waits unconfigured, publishing no joint_states, until
// `ros2 lifecycle set` configures and activates it. The default launch
// starts it active.
func TestLifecycleLaunchArgumentByROS2Launch(t *testing.T) {
	d := newDom(t)
	if peer.colconErr != nil {
		t.Fatal(peer.colconErr)
	}
	env, err := sourceEnv(d.rosEnv(), filepath.Join(peer.ws, "install", "setup.bash"))
	if err != nil {
		t.Fatal(err)
	}
	d.start("ros2 launch", env, "ros2", "launch", "fsmnodes", "hexapod.launch.xml", "joystick:=false", "autostart:=false")
	c := d.context()
	n, err := c.NewNode("joint_listener", "")
	if err != nil {
		t.Fatal(err)
	}
	var joints atomic.Int64
	if _, err := ros.NewSubscription(n, "/joint_states", ros.QoSDefault, func(*sensor_msgs_msg.JointState) { joints.Add(1) }); err != nil {
		t.Fatal(err)
	}
	waitGraph(t, c, "hexapod_controller's change_state", func() bool {
		for _, s := range c.ServiceNamesAndTypes() {
			if s.Name == "/hexapod_controller/change_state" {
				return true
			}
		}
		return false
	})
	nd := []string{"--no-daemon", "--spin-time", "3"}
	lc := func(argv ...string) ros2Cmd {
		return ros2Cmd{Argv: append(append([]string{"lifecycle"}, argv...), nd...)}
	}
	res := d.ros2(lc("get", "/hexapod_controller"), ros2Cmd{Argv: []string{"param", "get", "/hexapod_controller", "autostart"}})
	if res[0].Stdout != "unconfigured [1]\n" {
		t.Errorf("after ros2 launch ... autostart:=false: %v", res[0])
	}
	mustContain(t, "ros2 param get autostart", res[1].Stdout, "Boolean value is: False")
	if k := joints.Load(); k != 0 { // seconds of the node's life, unconfigured
		t.Errorf("%d joint_states from the unconfigured controller", k)
	}
	res = d.ros2(lc("set", "/hexapod_controller", "configure"), lc("set", "/hexapod_controller", "activate"), lc("get", "/hexapod_controller"))
	for _, r := range res[:2] {
		if r.Stdout != "Transitioning successful\n" {
			t.Errorf("%v", r)
		}
	}
	if res[2].Stdout != "active [3]\n" {
		t.Errorf("after configure and activate: %v", res[2])
	}
	testenv.WaitFor(t, deadline, "joint_states once active", func() bool { return joints.Load() > 10 })
}
