package velmanode

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/velma"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// lifecycleSet runs `fsmnodes lifecycle set node transition` and checks
// the node's state afterwards with `fsmnodes lifecycle get`.
func lifecycleSet(t *testing.T, domain uint32, node, transition, wantState string) {
	t.Helper()
	if out, errOut, ok := testenv.CLI(t, domain, "lifecycle", "set", node, transition); !ok || strings.TrimSpace(out) != "Transitioning successful" {
		t.Fatalf("lifecycle set %s %s: ok=%v %q %q", node, transition, ok, out, errOut)
	}
	if out, _, ok := testenv.CLI(t, domain, "lifecycle", "get", node); !ok || strings.TrimSpace(out) != wantState {
		t.Fatalf("%s after %s: %q, want %q", node, transition, out, wantState)
	}
}

// TestLifecycle_BridgeEffectors_Process: velma_bridge started with
// autostart:=false keeps its simulated effectors off: ve_body never
// becomes transparent and the motors cannot be enabled. Activated, the
// effectors answer and ve_body goes transp; deactivated, they stop and
// ve_body falls back to idle; activated again it recovers.
func TestLifecycle_BridgeEffectors_Process(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process DDS test")
	}
	t.Parallel()     // a domain of its own
	testenv.Heavy(t) // Velma's 500 Hz loops in processes of their own
	domain := testenv.Domain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin := testenv.Executable(t, "nodes/velma_bridge")
	testenv.Start(t, "velma_bridge", testenv.Env(domain), bin, "--ros-args", "--params-file", "../../../params/velma.yaml",
		"-p", "autostart:=false")
	rc := newCtx(t, domain)
	n, err := rc.NewNode("velma_lifecycle_observer", "")
	if err != nil {
		t.Fatal(err)
	}
	var body latest[string]
	if err := sub(n, "/velma_core/ve_body/state", ros.QoSLatched, func(m *std_msgs_msg.String) { body.set(m.Data) }); err != nil {
		t.Fatal(err)
	}
	go func() { _ = rc.Spin(ctx) }()
	transp := func() bool { v, _ := body.get(); return strings.HasPrefix(v, "transp") }
	waitFor(t, ctx, "ve_body's state", func() bool { _, k := body.get(); return k > 0 })
	if out, _, ok := testenv.CLI(t, domain, "lifecycle", "get", "/velma_core"); !ok || strings.TrimSpace(out) != "unconfigured [1]" {
		t.Fatalf("velma_core: %q, want unconfigured", out)
	}
	time.Sleep(time.Second) // 500 iterations without effector status
	if transp() {
		t.Fatalf("ve_body transparent with the effectors off (states %v)", body.history())
	}
	lifecycleSet(t, domain, "/velma_core", "configure", "inactive [2]")
	time.Sleep(500 * time.Millisecond)
	if transp() {
		t.Fatalf("ve_body transparent with the node inactive (states %v)", body.history())
	}
	lifecycleSet(t, domain, "/velma_core", "activate", "active [3]")
	waitFor(t, ctx, "ve_body transp once the effectors answer", transp)
	lifecycleSet(t, domain, "/velma_core", "deactivate", "inactive [2]")
	waitFor(t, ctx, "ve_body idle without the effectors", func() bool { v, _ := body.get(); return v == "idle" })
	lifecycleSet(t, domain, "/velma_core", "activate", "active [3]")
	waitFor(t, ctx, "ve_body transp again", transp)
	t.Logf("ve_body states: %v", body.history())
}

// TestLifecycle_VelmaSim_Process: velma_sim (with ve_body and cs as their
// own processes) started with autostart:=false answers nothing: ve_body
// reports no effector status (COMM_HW) and commands nothing. Configured
// and activated it answers and ve_body goes transp; deactivated ve_body
// loses the status again; activated again it recovers; cleanup releases
// the buffers and a new configure creates them again.
func TestLifecycle_VelmaSim_Process(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	t.Parallel()     // a domain of its own
	testenv.Heavy(t) // Velma's 500 Hz loops in processes of their own
	domain := testenv.Domain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("/dev/shm", "velma-lc-test-")
	if err != nil {
		dir = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	// The loops under SCHED_FIFO as velma.launch.xml runs them: under the
	// normal scheduler they starve beside make test's real-time demos.
	args := []string{"--ros-args", "--params-file", "../../../params/velma.yaml", "-p", "buffers:=" + dir + "/velma",
		"-p", "ve_body.command_timeout:=0.01", "-p", "ve_body.status_timeout:=0.01", "-p", "rt.priority:=20"}
	env := testenv.Env(domain)
	testenv.Start(t, "velma_sim", env, testenv.Executable(t, "nodes/velma_sim"), append(args, "-p", "autostart:=false")...)
	testenv.Start(t, "velma_core_ve_body", env, testenv.Executable(t, "nodes/velma_core_ve_body"), args...)
	testenv.Start(t, "velma_core_cs", env, testenv.Executable(t, "nodes/velma_core_cs"), args...)
	rc := newCtx(t, domain)
	n, err := rc.NewNode("velma_sim_lifecycle_observer", "")
	if err != nil {
		t.Fatal(err)
	}
	var body latest[diag]
	if err := sub(n, "/velma_core_ve_body/diag", ros.QoSDefault, func(m *diagnostic_msgs_msg.DiagnosticArray) { body.set(diagOf(m)) }); err != nil {
		t.Fatal(err)
	}
	go func() { _ = rc.Spin(ctx) }()
	noStatus := func(d diag) bool {
		ft, _ := strconv.Atoi(d["fault_type"])
		return int32(ft)&velma.FaultCommHW != 0 && d["state"] == "idle"
	}
	wait := func(what string, cond func(diag) bool) diag {
		t.Helper()
		var d diag
		waitFor(t, ctx, what, func() bool { d, _ = body.get(); return d != nil && cond(d) })
		return d
	}
	transp := func(d diag) bool { return strings.HasPrefix(d["state"], "transp") }
	wait("ve_body without effector status (velma_sim unconfigured)", func(d diag) bool { return noStatus(d) && d.u("iteration") > 250 })
	lifecycleSet(t, domain, "/velma_sim", "configure", "inactive [2]")
	d := wait("ve_body running on", func(diag) bool { return true })
	from := d.u("iteration")
	wait("500 more iterations", func(d diag) bool { return d.u("iteration") > from+250 })
	for _, h := range body.history() {
		if transp(h) {
			t.Fatalf("ve_body went %s while velma_sim was not active", h["state"])
		}
	}
	lifecycleSet(t, domain, "/velma_sim", "activate", "active [3]")
	wait("ve_body transp once velma_sim answers", transp)
	lifecycleSet(t, domain, "/velma_sim", "deactivate", "inactive [2]")
	wait("ve_body without effector status (velma_sim inactive)", noStatus)
	lifecycleSet(t, domain, "/velma_sim", "activate", "active [3]")
	wait("ve_body transp again", transp)
	lifecycleSet(t, domain, "/velma_sim", "deactivate", "inactive [2]")
	lifecycleSet(t, domain, "/velma_sim", "cleanup", "unconfigured [1]")
	wait("ve_body without effector status (velma_sim cleaned up)", noStatus)
	lifecycleSet(t, domain, "/velma_sim", "configure", "inactive [2]")
	lifecycleSet(t, domain, "/velma_sim", "activate", "active [3]")
	wait("ve_body transp after a new configuration", transp)
	lifecycleSet(t, domain, "/velma_sim", "shutdown", "finalized [4]")
	wait("ve_body without effector status (velma_sim finalized)", noStatus)
	last, _ := body.get()
	t.Logf("ve_body at iteration %s, %d diag reports", last["iteration"], len(body.history()))
}
