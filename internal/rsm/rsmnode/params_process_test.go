package rsmnode

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rcl_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
)

// TestLiveParams_Mux_Process: `fsmnodes param set` changes the running
// robot_control_mux process — teleoperation_idle_timer (longer, then
// shorter while a timer runs) and max_linear_velocity take effect at the
// next cycle, /parameter_events carries the change — and bad values
// (range, NaN, type, read-only) are refused with the reason.
func TestLiveParams_Mux_Process(t *testing.T) {
	domain := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	t.Parallel()                          // a domain of its own
	testenv.Executable(t, "cmd/fsmnodes") // build before the clock matters
	start(t, domain, "robot_control_mux")

	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "test: "}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	n, err := rc.NewNode("rsm_params_test", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	modes := &recorder[rsm_msgs_msg.OperationMode]{}
	cmdVel := &recorder[geometry_msgs_msg.Twist]{}
	events := &recorder[rcl_interfaces_msg.ParameterEvent]{}
	if _, err := ros.NewSubscription(n, "/rsm/operationMode", ros.QoSDefault, func(m *rsm_msgs_msg.OperationMode) { modes.add(*m) }); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewSubscription(n, "/cmd_vel", ros.QoSDefault, func(m *geometry_msgs_msg.Twist) { cmdVel.add(*m) }); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewSubscription(n, "/parameter_events", ros.QoSParameterEvents, func(m *rcl_interfaces_msg.ParameterEvent) {
		events.add(*m)
	}); err != nil {
		t.Fatal(err)
	}
	teleop, err := ros.NewPublisher[geometry_msgs_msg.Twist](n, "/teleoperation/cmd_vel", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = rc.Spin(ctx) }()

	lastMode := func() (int8, bool) {
		all := modes.get()
		if len(all) == 0 {
			return 0, false
		}
		return int8(all[len(all)-1].Mode), true
	}
	const teleMode, stopped = int8(rsm_msgs_msg.OperationMode_TELEOPERATION), int8(rsm_msgs_msg.OperationMode_STOPPED)
	testenv.WaitFor(t, waitLimit, "the mux publishing and hearing us", func() bool {
		_, ok := lastMode()
		subs, err := teleop.SubscriptionCount()
		return ok && err == nil && subs > 0
	})
	drive := func(x float64) {
		t.Helper()
		if err := teleop.Publish(&geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: x}}); err != nil {
			t.Fatal(err)
		}
	}

	// Refused sets answer successful=false with the reason and change
	// nothing (tried all at once: each is independent of the others).
	refused := []struct{ name, value, reason string }{
		{"teleoperation_idle_timer", "-1.0", "outside the floating point range"},
		{"teleoperation_idle_timer", "0.0", "must be above 0 s"},
		{"teleoperation_idle_timer", ".nan", "NaN"},
		{"teleoperation_idle_timer", "soon", "type"},
		{"max_linear_velocity", "0.0", "must be above 0"},
		// Issue 25: 1e308 passed [0, 1000] (the tolerance overflowed to +Inf).
		{"max_linear_velocity", "1e308", "outside the floating point range"},
		{"max_angular_velocity", "1e307", "outside the floating point range"},
		{"max_linear_velocity", ".inf", "outside the floating point range"},
		{"update_frequency", "1e308", "outside the floating point range"},
		{"cmd_vel_topic", "other", "read-only"},
	}
	var sets [][]string
	for _, c := range refused {
		sets = append(sets, []string{"param", "set", "/robotControlMuxNode", c.name, c.value})
	}
	for i, r := range testenv.CLIAll(t, domain, sets...) {
		c := refused[i]
		if r.OK || !strings.Contains(r.Stderr, "Setting parameter failed") || !strings.Contains(r.Stderr, c.reason) {
			t.Errorf("param set %s %s: ok=%v stderr %q; want refused with %q", c.name, c.value, r.OK, r.Stderr, c.reason)
		}
	}
	if out, _, _ := testenv.CLI(t, domain, "param", "get", "/robotControlMuxNode", "teleoperation_idle_timer"); !strings.Contains(out, "0.5") {
		t.Errorf("teleoperation_idle_timer after refused sets: %q, want 0.5", out)
	}

	// A longer idle timer: TELEOPERATION holds well past the old 0.5 s.
	if out, _, ok := testenv.CLI(t, domain, "param", "set", "/robotControlMuxNode", "teleoperation_idle_timer", "30.0"); !ok ||
		!strings.Contains(out, "Set parameter successful") {
		t.Fatalf("param set teleoperation_idle_timer 30.0: %q", out)
	}
	testenv.WaitFor(t, waitLimit, "/parameter_events with teleoperation_idle_timer = 30.0", func() bool {
		for _, e := range events.get() {
			for _, p := range e.ChangedParameters {
				if e.Node == "/robotControlMuxNode" && p.Name == "teleoperation_idle_timer" && p.Value.DoubleValue == 30 {
					return true
				}
			}
		}
		return false
	})
	drive(0.1)
	testenv.WaitFor(t, waitLimit, "TELEOPERATION", func() bool { m, _ := lastMode(); return m == teleMode })
	modes.clear()
	// 40 cycles at 20 Hz = 2 s of silence, four times the old timer.
	testenv.WaitFor(t, waitLimit, "40 cycles after the last teleoperation command", func() bool { return len(modes.get()) >= 40 })
	for i, m := range modes.get() {
		if int8(m.Mode) != teleMode {
			t.Fatalf("cycle %d after the command: mode %d; the new 30 s idle timer should hold TELEOPERATION", i, m.Mode)
		}
	}

	// Lower speed limit: the next command is clamped to it.
	if _, _, ok := testenv.CLI(t, domain, "param", "set", "/robotControlMuxNode", "max_linear_velocity", "0.25"); !ok {
		t.Fatal("param set max_linear_velocity 0.25 refused")
	}
	cmdVel.clear()
	drive(0.9)
	testenv.WaitFor(t, waitLimit, "cmd_vel clamped to 0.25", func() bool {
		for _, m := range cmdVel.get() {
			if m.Linear.X == 0.25 {
				return true
			}
			if m.Linear.X > 0.25 {
				t.Fatalf("cmd_vel %v above the new max_linear_velocity 0.25", m.Linear.X)
			}
		}
		return false
	})

	// A shorter idle timer ends the running one at the next cycle.
	if _, _, ok := testenv.CLI(t, domain, "param", "set", "/robotControlMuxNode", "teleoperation_idle_timer", "0.2"); !ok {
		t.Fatal("param set teleoperation_idle_timer 0.2 refused")
	}
	testenv.WaitFor(t, waitLimit, "STOPPED after the idle timer was shortened", func() bool {
		m, _ := lastMode()
		return m == stopped
	})

	// update_frequency: a faster cycle shows in the operationMode rate.
	if _, _, ok := testenv.CLI(t, domain, "param", "set", "/robotControlMuxNode", "update_frequency", "100.0"); !ok {
		t.Fatal("param set update_frequency 100.0 refused")
	}
	modes.clear()
	t0 := time.Now()
	testenv.WaitFor(t, waitLimit, "100 operationMode messages", func() bool { return len(modes.get()) >= 100 })
	// A figure, not an assertion (a loaded machine skips ticks).
	t.Logf("100 cycles after update_frequency 20 → 100 Hz took %v (5 s at 20 Hz)", time.Since(t0))
}
