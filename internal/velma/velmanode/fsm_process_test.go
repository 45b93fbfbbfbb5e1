package velmanode

import (
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
	t.Parallel() // a domain of its own
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
