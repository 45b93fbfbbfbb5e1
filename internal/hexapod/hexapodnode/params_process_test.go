package hexapodnode

import (
	"context"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/hexapod"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/testenv/rostest"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// TestSettings_LiveValidation: a set of a live parameter is checked against
// the whole controller configuration and refused with the reason; a
// read-only one names why it is fixed.
func TestSettings_LiveValidation(t *testing.T) {
	d, store := declarer(t, nil)
	s, err := LoadSettings(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		v      param.Value
		reason string
	}{
		{"LEG_LIFT_HEIGHT", param.DoubleValue(0.5), "SubSteps"},
		{"LEG_LIFT_HEIGHT", param.DoubleValue(math.NaN()), "NaN"},
		{"gait.distance_per_step", param.DoubleValue(0), "DistancePerStep must be positive"},
		{"gait.dphi_max_standing", param.DoubleValue(math.Inf(1)), "DphiMaxStanding"},
		{"gait.distance_per_step", param.StringValue("fast"), "type double"},
		{"pose_pitch_gain", param.DoubleValue(math.Inf(-1)), "PitchGain"},
		{"joy.timeout", param.DoubleValue(0), "must be above 0 s"},
		{"joy.timeout", param.DoubleValue(61), "outside the floating point range"},
		{"max_linear_velocity", param.DoubleValue(-1), "outside the floating point range"},
		{"rate", param.DoubleValue(50), "a new rate would change all speeds"},
		{"servo.driver", param.StringValue("dynamixel"), "the servo bus is opened at start-up"},
	} {
		r := store.Set([]param.Parameter{{Name: c.name, Value: c.v}})[0]
		if r.Successful || !strings.Contains(r.Reason, c.reason) {
			t.Errorf("set %s = %v: %+v, want refused with %q", c.name, c.v, r, c.reason)
		}
	}
	if got := s.Live.Get(); got.Controller != s.Controller.Tuning() {
		t.Errorf("refused sets changed the tuning: %+v", got)
	}
	for _, r := range store.Set([]param.Parameter{
		{Name: "gait.distance_per_step", Value: param.DoubleValue(0.0015)},
		{Name: "cmd_vel_timeout", Value: param.DoubleValue(2)},
		{Name: "max_angular_velocity", Value: param.DoubleValue(0.5)},
	}) {
		if !r.Successful {
			t.Fatalf("valid set refused: %s", r.Reason)
		}
	}
	tu := s.Live.Get()
	if tu.Controller.DistancePerStep != 0.0015 || tu.CmdVelTimeout != 2*time.Second || tu.Limits.Angular != 0.5 {
		t.Errorf("tunables after the sets: %+v", tu)
	}
	a, err := NewAdapter(s, nil, &logRec{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SetTunables(tu); err != nil {
		t.Fatal(err)
	}
	if got := a.ctrl.Config().Gait.MaxLinearSpeed(); math.Abs(got-0.0015/math.Sqrt2*100) > 1e-12 {
		t.Errorf("controller max speed %v after the change", got)
	}
	bad := tu
	bad.JoyTimeout = 0
	if err := a.SetTunables(bad); err == nil {
		t.Error("zero joy timeout accepted by the adapter")
	}
}

// TestLiveParams_Hexapod_Process: `fsmnodes param set` halves the walking
// speed (gait.distance_per_step) of a running motion_control process; the
// body's travel per tick, read from joint_states, follows from the next
// step. A bad value is refused with the reason.
func TestLiveParams_Hexapod_Process(t *testing.T) {
	domain := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process DDS test; skipped with -short")
	}
	startMotionControl(t, domain)
	n, ctx := rostest.Node(t, domain, "hexapod_params_test")
	geo := hexapod.DefaultGeometry()
	var mu sync.Mutex
	var state string
	var steps []float64 // body travel per tick while walking
	var prev *[hexapod.NumLegs]geom.Vec3
	if _, err := ros.NewSubscription(n, "/hexapod_controller/state", ros.QoSLatched, func(m *std_msgs_msg.String) {
		mu.Lock()
		state = m.Data
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewSubscription(n, "/joint_states", ros.QoSDefault, func(m *sensor_msgs_msg.JointState) {
		if len(m.Position) != hexapod.NumJoints {
			return
		}
		var j hexapod.Joints
		copy(j[:], m.Position)
		var feet [hexapod.NumLegs]geom.Vec3
		for i := range feet {
			feet[i] = geo.LegFK(i, j.Leg(i), hexapod.Pose{})
		}
		mu.Lock()
		defer mu.Unlock()
		if prev != nil {
			if s, ok := stanceTravel(*prev, feet); ok {
				steps = append(steps, s)
			}
		}
		prev = &feet
	}); err != nil {
		t.Fatal(err)
	}
	cmdVel, err := ros.NewPublisher[geometry_msgs_msg.Twist](n, "/cmd_vel", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	call := func(srv string) {
		t.Helper()
		c, err := ros.NewClient(n, "/hexapod_controller/"+srv, std_srvs_srv.Trigger)
		if err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, 30*time.Second, srv+" server", c.ServiceIsReady)
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		defer ccancel()
		if r, err := c.Call(cctx, &std_srvs_srv.Trigger_Request{}); err != nil || !r.Success {
			t.Fatalf("%s: %+v %v", srv, r, err)
		}
	}
	call("start_stop")
	call("stand_up")
	testenv.WaitFor(t, 30*time.Second, "Walking", func() bool { mu.Lock(); defer mu.Unlock(); return state == "Walking" })
	// Drive forward faster than the gait can: it walks at its top speed,
	// distance_per_step/√2 per tick.
	go func() {
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
				_ = cmdVel.Publish(&geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 1}})
			}
		}
	}()
	// median travel of the last 40 ticks with feet down
	travel := func() float64 {
		mu.Lock()
		defer mu.Unlock()
		if len(steps) < 40 {
			return 0
		}
		last := slices.Clone(steps[len(steps)-40:])
		slices.Sort(last)
		return last[20]
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 0.1*want }
	testenv.WaitFor(t, 30*time.Second, "walking at the default top speed (0.003/√2 m per tick)", func() bool {
		return near(travel(), 0.003/math.Sqrt2)
	})
	t.Logf("travel per tick at gait.distance_per_step 0.003: %.5f m", travel())

	refused := testenv.CLIAll(t, domain, // independent: both at once
		[]string{"param", "set", "/hexapod_controller", "gait.distance_per_step", "0.0"},
		[]string{"param", "set", "/hexapod_controller", "rate", "50.0"})
	if r := refused[0]; r.OK || !strings.Contains(r.Stderr, "DistancePerStep must be positive") {
		t.Errorf("distance_per_step 0: ok=%v %q, want refused with the reason", r.OK, r.Stderr)
	}
	if r := refused[1]; r.OK || !strings.Contains(r.Stderr, "read-only") {
		t.Errorf("rate 50: ok=%v %q, want refused as read-only", r.OK, r.Stderr)
	}
	if out, _, ok := testenv.CLI(t, domain, "param", "set", "/hexapod_controller", "gait.distance_per_step", "0.0015"); !ok ||
		!strings.Contains(out, "Set parameter successful") {
		t.Fatalf("param set gait.distance_per_step 0.0015 refused: %q", out)
	}
	mu.Lock()
	steps = nil
	mu.Unlock()
	testenv.WaitFor(t, 30*time.Second, "walking at the new top speed (0.0015/√2 m per tick)", func() bool {
		return near(travel(), 0.0015/math.Sqrt2)
	})
	t.Logf("travel per tick at gait.distance_per_step 0.0015: %.5f m", travel())
}

// stanceTravel is how far the feet on the ground in both a and b moved in
// the body frame (their mean), i.e. the body's travel in one tick.
func stanceTravel(a, b [hexapod.NumLegs]geom.Vec3) (float64, bool) {
	ground := math.Inf(1)
	for i := range a {
		ground = math.Min(ground, math.Min(a[i].Z, b[i].Z))
	}
	sum, n := 0.0, 0
	for i := range a {
		if a[i].Z < ground+1e-4 && b[i].Z < ground+1e-4 {
			sum += math.Hypot(b[i].X-a[i].X, b[i].Y-a[i].Y)
			n++
		}
	}
	if n < 3 {
		return 0, false
	}
	return sum / float64(n), true
}

// TestParamsFile_LiveTagsMatchDescriptors: every entry of params/hexapod.yaml
// says [live] or [read-only], as the declared descriptor does.
func TestParamsFile_LiveTagsMatchDescriptors(t *testing.T) {
	b, err := os.ReadFile("../../../params/hexapod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, store := declarer(t, nil)
	if _, err := LoadSettings(d); err != nil {
		t.Fatal(err)
	}
	type level struct {
		indent int
		key    string
	}
	var stack []level
	seen := 0
	for i, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		// A commented-out entry ("# name: value  # [tag]", left out so that
		// a launch argument can set it) counts as an entry.
		if after, ok := strings.CutPrefix(trimmed, "# "); ok && (strings.Contains(after, "[live]") || strings.Contains(after, "[read-only]")) {
			if k, _, ok := strings.Cut(after, ":"); ok && !strings.ContainsAny(k, " (") {
				trimmed = after
			}
		}
		key, rest, ok := strings.Cut(trimmed, ":")
		if !ok || trimmed == "" || strings.HasPrefix(trimmed, "#") || indent < 4 {
			continue // comments, the node and ros__parameters keys
		}
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		value, comment, _ := strings.Cut(rest, "#")
		if strings.TrimSpace(value) == "" {
			stack = append(stack, level{indent, key})
			continue
		}
		name := key
		for j := len(stack) - 1; j >= 0; j-- {
			name = stack[j].key + "." + name
		}
		desc, err := store.Describe([]string{name})
		if err != nil {
			t.Errorf("line %d: %s is not declared: %v", i+1, name, err)
			continue
		}
		seen++
		live, ro := strings.Contains(comment, "[live]"), strings.Contains(comment, "[read-only]")
		if live == ro || live == desc[0].ReadOnly {
			t.Errorf("line %d: %s is tagged live=%v read-only=%v but declared read-only=%v", i+1, name, live, ro, desc[0].ReadOnly)
		}
	}
	if seen != len(store.Names()) {
		t.Errorf("%d entries in the file, %d parameters declared", seen, len(store.Names()))
	}
}
