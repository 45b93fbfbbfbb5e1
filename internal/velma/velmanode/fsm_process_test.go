package velmanode

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// TestFSM_Bridge_Process reads velma_core's machines with `fsmnodes fsm`:
// ve_body runs from idle to its transparent pair once the effectors answer
// (lifecycle active), falls back to idle without them (deactivate), and
// every change of ve_body, cs and the lifecycle, 500 iterations a second
// of them, is an edge of the published graph: no counter of changes outside
// the graph grows, and the repeated flips are counted, not published.
func TestFSM_Bridge_Process(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process DDS test")
	}
	t.Parallel()     // a domain of its own
	testenv.Heavy(t) // Velma's 500 Hz loops in processes of their own
	domain := testenv.Domain(t)
	bin := testenv.Executable(t, "nodes/velma_bridge")
	testenv.Start(t, "velma_bridge", testenv.Env(domain), bin, "--ros-args", "--params-file", "../../../params/velma.yaml")
	cli := func(args ...string) string {
		t.Helper()
		out, errOut, ok := testenv.CLI(t, domain, args...)
		if !ok {
			t.Fatalf("fsmnodes %s: %s%s", strings.Join(args, " "), out, errOut)
		}
		return out
	}
	transp := regexp.MustCompile(`lifecycle: active, ve_body: transp(_st)?, cs: safe\n$`)
	testenv.WaitFor(t, time.Minute, "ve_body transparent", func() bool { return transp.MatchString(cli("fsm", "list")) })
	time.Sleep(2 * time.Second) // 1000 iterations of flips
	show := cli("fsm", "show", "/velma_core", "ve_body")
	last := regexp.MustCompile(`last transition: \S+ -> \S+ \(.*\), transitions (\d+), not in graph 0, dwell overruns \d+, not published (\d+)\n`)
	m := last.FindStringSubmatch(show)
	if m == nil {
		t.Fatalf("fsm show ve_body:\n%s", show)
	}
	if len(m[1]) < 3 || len(m[2]) < 3 { // at least 100 transitions, most of them counted only
		t.Errorf("ve_body: %s transitions, %s not published; want the flips counted:\n%s", m[1], m[2], show)
	}
	cli("lifecycle", "set", "/velma_core", "deactivate")
	testenv.WaitFor(t, time.Minute, "ve_body idle", func() bool { return strings.Contains(cli("fsm", "list"), "ve_body: idle") })
	watch := cli("fsm", "watch", "/velma_core", "--count", "12")
	if strings.Contains(watch, "NOT IN GRAPH") || strings.Contains(watch, "not in graph") {
		t.Errorf("a change outside the graph:\n%s", watch)
	}
	for _, want := range []string{"ve_body: [start] -> idle (start)", "cs: [start] -> idle (start)",
		"ve_body: idle -> safe_st (TRUE)", "ve_body: safe_st -> safe (TRUE)"} {
		if !strings.Contains(watch, want) {
			t.Errorf("fsm watch lacks %q:\n%s", want, watch)
		}
	}
	for _, machine := range []string{"ve_body", "cs", "lifecycle"} {
		if s := cli("fsm", "show", "/velma_core", machine); strings.Contains(s, "last transition") && !strings.Contains(s, "not in graph 0,") {
			t.Errorf("%s counted changes outside its graph:\n%s", machine, s)
		}
	}
}

// TestFSM_FourProcesses_Launch starts launch/velma.launch.xml's four-process
// layout with `fsmnodes launch` and reads its machines with `fsmnodes fsm`:
// velma_core_ve_body publishes ve_body's graph and runs from idle to its
// transparent pair, velma_core_cs publishes cs's and moves to relax when
// the ROS interface (velma_core, another process) is asked to, velma_sim
// its lifecycle; every change is an edge of the published graph.
func TestFSM_FourProcesses_Launch(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process DDS test")
	}
	t.Parallel() // a domain of its own
	domain := testenv.Domain(t)
	bufs, err := os.MkdirTemp("/dev/shm", "velma-fsm-")
	if err != nil {
		bufs = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(bufs) })
	}
	testenv.Launch(t, domain, "launch/velma.launch.xml", "timeout:=0.01", "buffers:="+bufs+"/velma")
	cli := func(args ...string) string {
		t.Helper()
		out, errOut, ok := testenv.CLI(t, domain, args...)
		if !ok {
			t.Fatalf("fsmnodes %s: %s%s", strings.Join(args, " "), out, errOut)
		}
		return out
	}
	nodes := regexp.MustCompile(`^/velma_core_cs  cs: \S+\n/velma_core_ve_body  ve_body: \S+\n/velma_sim  lifecycle: active\n$`)
	testenv.WaitFor(t, 90*time.Second, "fsm list: cs, ve_body, velma_sim active and nothing else", func() bool {
		return nodes.MatchString(cli("fsm", "list"))
	})
	show := cli("fsm", "show", "/velma_core_ve_body")
	for _, want := range []string{"machine: ve_body\ninitial: idle\n", "transitions (12):\n",
		"    safe_st_ok -> transp: recvCommand ∧ allCmdOk ∧ cmdExitSafeState ∧ safeItPassed500\n"} {
		if !strings.Contains(show, want) {
			t.Errorf("fsm show /velma_core_ve_body lacks %q:\n%s", want, show)
		}
	}
	// every transition as it comes, from the kept history on
	fsmnodes := testenv.Executable(t, "cmd/fsmnodes")
	csWatch := testenv.Start(t, "fsm watch cs", testenv.Env(domain), fsmnodes, "fsm", "watch", "/velma_core_cs")
	bodyWatch := testenv.Start(t, "fsm watch ve_body", testenv.Env(domain), fsmnodes, "fsm", "watch", "/velma_core_ve_body")
	for _, re := range []string{`ve_body: \[start\] -> idle \(start\)`, `ve_body: idle -> safe_st \(TRUE\)`, `ve_body: safe_st_ok -> transp \(recvCommand`} {
		bodyWatch.WaitOutput(t, 60*time.Second, regexp.MustCompile(re))
	}
	csWatch.WaitOutput(t, 60*time.Second, regexp.MustCompile(`cs: \[start\] -> idle \(start\)`))
	csWatch.WaitOutput(t, 60*time.Second, regexp.MustCompile(`cs: idle -> safe \(TRUE, once τ_idle`))
	// cs, in its own process, takes relax once the ROS interface passes it
	// on (with the motors enabled and homed)
	for _, srv := range []string{"motors/enable", "motors/hp/home", "motors/ht/home", "relax"} {
		testenv.WaitFor(t, 90*time.Second, "velma_core/"+srv+" to succeed", func() bool {
			out, _, _ := testenv.CLI(t, domain, "service", "call", "/velma_core/"+srv, "std_srvs/srv/Trigger")
			return strings.Contains(out, "success=True")
		})
	}
	csWatch.WaitOutput(t, 60*time.Second, regexp.MustCompile(`cs: safe -> relax \(¬IN_ERROR ∧ recvRelaxCmd\)`))
	for _, w := range []*testenv.Process{csWatch, bodyWatch} {
		if out := w.Output(); strings.Contains(out, "NOT IN GRAPH") || strings.Contains(out, "not in graph") {
			t.Errorf("a change outside the graph:\n%s", out)
		}
	}
	for _, nm := range [][2]string{{"/velma_core_ve_body", "ve_body"}, {"/velma_core_cs", "cs"}} {
		if s := cli("fsm", "show", nm[0], nm[1]); !strings.Contains(s, "not in graph 0,") {
			t.Errorf("%s counted changes outside its graph:\n%s", nm[1], s)
		}
	}
}
