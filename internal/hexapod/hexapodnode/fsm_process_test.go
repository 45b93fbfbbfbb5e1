package hexapodnode

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// TestFSM_Hexapod_Process reads a motion_control process's state machines
// with `fsmnodes fsm`: list shows both machines in their states, show the
// motion graph with its guards and bounds, watch the history (the
// lifecycle's autostart, start_stop's Idle -> Sitting with its guard), a
// deactivate/activate restarts the motion FSM (Sitting -> Idle, in the
// contract), and dot renders the graph.
func TestFSM_Hexapod_Process(t *testing.T) {
	domain := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	startMotionControl(t, domain)
	cli := func(args ...string) string {
		t.Helper()
		out, errOut, ok := testenv.CLI(t, domain, args...)
		if !ok {
			t.Fatalf("fsmnodes %s: %s%s", strings.Join(args, " "), out, errOut)
		}
		return out
	}
	if out := cli("fsm", "list"); out != "/hexapod_controller  lifecycle: active, motion: Idle\n" {
		t.Errorf("fsm list:\n%s", out)
	}
	cli("service", "call", "/hexapod_controller/start_stop", "std_srvs/srv/Trigger")
	testenv.WaitFor(t, 60*time.Second, "motion in Sitting", func() bool {
		return strings.Contains(cli("fsm", "list"), "motion: Sitting")
	})
	show := cli("fsm", "show", "/hexapod_controller", "motion")
	for _, want := range []string{
		"machine: motion\ninitial: Idle\ncurrent: Sitting\n",
		"last transition: Idle -> Sitting (start_cmd / torque on), transitions 1, not in graph 0, dwell overruns 0",
		"  * Sitting\n", "    Standing_up  (at most 2.86s)\n", "transitions (9):\n",
		"    Walking -> Sitting_down: !stand_up_cmd && gait standing\n",
	} {
		if !strings.Contains(show, want) {
			t.Errorf("fsm show lacks %q:\n%s", want, show)
		}
	}
	watch := cli("fsm", "watch", "/hexapod_controller", "--count", "6")
	for i, want := range []string{
		`lifecycle: \[start\] -> unconfigured \(start\) after 0\.000s #0`,
		`motion: \[start\] -> Idle \(start\) after 0\.000s #0`,
		`lifecycle: unconfigured -> configuring \(configure\) after \d+\.\d{3}s #1`,
		`lifecycle: configuring -> inactive \(transition_success\) after \d+\.\d{3}s #2`,
		`lifecycle: inactive -> activating \(activate\) after \d+\.\d{3}s #3`,
		`lifecycle: activating -> active \(transition_success\) after \d+\.\d{3}s #4`,
	} {
		lines := strings.Split(strings.TrimSpace(watch), "\n")
		if i >= len(lines) || !regexp.MustCompile(`^\d+\.\d{3} `+want+`$`).MatchString(lines[i]) {
			t.Errorf("fsm watch line %d: want %s in\n%s", i, want, watch)
		}
	}
	if w := cli("fsm", "watch", "/hexapod_controller", "motion", "--count", "2"); !regexp.MustCompile(
		`\d+\.\d{3} motion: Idle -> Sitting \(start_cmd / torque on\) after \d+\.\d{3}s #1\n$`).MatchString(w) {
		t.Errorf("fsm watch motion:\n%s", w)
	}
	// A fresh controller on activation: Sitting -> Idle, in the contract.
	cli("lifecycle", "set", "/hexapod_controller", "deactivate")
	cli("lifecycle", "set", "/hexapod_controller", "activate")
	testenv.WaitFor(t, 60*time.Second, "motion back in Idle", func() bool {
		return strings.Contains(cli("fsm", "list"), "lifecycle: active, motion: Idle")
	})
	if w := cli("fsm", "watch", "/hexapod_controller", "motion", "--count", "3"); !strings.Contains(w,
		"motion: Sitting -> Idle (activate (a fresh controller))") || strings.Contains(w, "NOT IN GRAPH") {
		t.Errorf("fsm watch after re-activation:\n%s", w)
	}
	dot := cli("fsm", "dot", "/hexapod_controller", "motion")
	for _, want := range []string{`digraph "motion" {`, `"Idle" [label="Idle", peripheries=2];`,
		`"Idle" -> "Sitting" [label="start_cmd / torque on"];`} {
		if !strings.Contains(dot, want) {
			t.Errorf("fsm dot lacks %s:\n%s", want, dot)
		}
	}
	if _, errOut, ok := testenv.CLI(t, domain, "fsm", "show", "/hexapod_controller", "gait"); ok ||
		!strings.Contains(errOut, `/hexapod_controller has no machine "gait" (it has: lifecycle, motion)`) {
		t.Errorf("fsm show of an unknown machine: ok %v, %s", ok, errOut)
	}
}
