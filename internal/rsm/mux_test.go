package rsm

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/geom"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newTestMux(t *testing.T, joystick bool) *Mux {
	t.Helper()
	m, err := NewMux(MuxConfig{TeleopIdle: 500 * time.Millisecond, JoystickUsed: joystick})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func lin(x float64) Twist { return Twist{Linear: geom.Vec3{X: x}} }

func TestMux_Output_ByModeAndEStop(t *testing.T) {
	auto, tele := lin(0.5), lin(0.7)
	tests := []struct {
		name string
		op   OperationMode
		want Twist
	}{
		{"STOPPED → zero", OperationMode{Mode: ModeStopped}, Twist{}},
		{"AUTONOMOUS → autonomy", OperationMode{Mode: ModeAutonomous}, auto},
		{"TELEOPERATION → teleop", OperationMode{Mode: ModeTeleoperation}, tele},
		{"e-stop + AUTONOMOUS → zero", OperationMode{EmergencyStop: true, Mode: ModeAutonomous}, Twist{}},
		{"e-stop + TELEOPERATION → zero", OperationMode{EmergencyStop: true, Mode: ModeTeleoperation}, Twist{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestMux(t, false)
			_ = m.OnAutonomy(auto, t0)
			_ = m.OnTeleop(tele, t0) // switches to TELEOPERATION; overridden next
			if r := m.SetOperationMode(tt.op); !r.Success || r.Message != "Operation mode set" {
				t.Fatalf("SetOperationMode = %+v", r)
			}
			got, op := m.Tick(t0)
			if got != tt.want || op != tt.op {
				t.Errorf("Tick = %v, %+v; want %v, %+v", got, op, tt.want, tt.op)
			}
		})
	}
}

func TestMux_InitialState_StoppedNoEStop(t *testing.T) {
	m := newTestMux(t, false)
	_ = m.OnAutonomy(lin(1), t0)
	if tw, op := m.Tick(t0); !tw.IsZero() || op != (OperationMode{}) {
		t.Errorf("Tick = %v, %+v; want zero, STOPPED without e-stop", tw, op)
	}
}

func TestMux_SetOperationMode_UnknownRejected(t *testing.T) {
	m := newTestMux(t, false)
	r := m.SetOperationMode(OperationMode{Mode: 3})
	if r.Success || r.Message == "" {
		t.Errorf("reply = %+v, want failure with reason", r)
	}
	if m.OperationMode() != (OperationMode{}) {
		t.Errorf("mode changed to %+v", m.OperationMode())
	}
}

func TestMux_Teleop_SwitchesAndTimesOutToStopped(t *testing.T) {
	m := newTestMux(t, false)
	m.SetOperationMode(OperationMode{Mode: ModeAutonomous})
	if err := m.OnTeleop(Twist{}, t0); err != nil {
		t.Fatal(err)
	}
	if m.OperationMode().Mode != ModeAutonomous {
		t.Fatal("zero teleop command switched mode")
	}
	_ = m.OnTeleop(Twist{Angular: geom.Vec3{Z: 0.3}}, t0)
	if m.OperationMode().Mode != ModeTeleoperation {
		t.Fatal("non-zero teleop command did not switch to TELEOPERATION")
	}
	// Zero messages keep teleoperation alive while in TELEOPERATION.
	_ = m.OnTeleop(Twist{}, t0.Add(400*time.Millisecond))
	if _, op := m.Tick(t0.Add(800 * time.Millisecond)); op.Mode != ModeTeleoperation {
		t.Fatalf("timed out although a message came 400 ms later: %+v", op)
	}
	tw, op := m.Tick(t0.Add(900 * time.Millisecond))
	if op.Mode != ModeStopped || !tw.IsZero() {
		t.Errorf("after silence: %v, %+v; want zero, STOPPED", tw, op)
	}
	m.SetOperationMode(OperationMode{Mode: ModeTeleoperation})
	if tw, _ := m.Tick(t0.Add(time.Second)); !tw.IsZero() {
		t.Errorf("teleop command not zeroed on timeout: %v", tw)
	}
}

func TestMux_Teleop_IgnoredDuringEStop(t *testing.T) {
	m := newTestMux(t, false)
	m.SetOperationMode(OperationMode{EmergencyStop: true})
	_ = m.OnTeleop(lin(1), t0)
	if m.OperationMode() != (OperationMode{EmergencyStop: true}) {
		t.Errorf("mode = %+v", m.OperationMode())
	}
	m.SetOperationMode(OperationMode{Mode: ModeStopped})
	m.SetOperationMode(OperationMode{Mode: ModeTeleoperation})
	if tw, _ := m.Tick(t0); !tw.IsZero() {
		t.Errorf("command from e-stop time forwarded: %v", tw)
	}
}

// TestMux_EStop_LocksOperationMode: while the e-stop is on, the mode cannot
// be changed without releasing it, and a release always lands in STOPPED
// (docs/rsm.md#robotcontrolmuxnode). success=true means the requested
// state is in effect.
func TestMux_EStop_LocksOperationMode(t *testing.T) {
	stopped, auto, tele := ModeStopped, ModeAutonomous, ModeTeleoperation
	tests := []struct {
		name    string
		before  OperationMode // reached with a plain setOperationMode before
		req     OperationMode
		success bool
		message string // substring of the reply
		after   OperationMode
	}{
		{"no e-stop: set as given", OperationMode{Mode: stopped}, OperationMode{Mode: auto},
			true, "Operation mode set", OperationMode{Mode: auto}},
		{"press from AUTONOMOUS with STOPPED (GUI toggle)", OperationMode{Mode: auto}, OperationMode{EmergencyStop: true, Mode: stopped},
			true, "Operation mode set", OperationMode{EmergencyStop: true, Mode: stopped}},
		{"press keeping AUTONOMOUS: e-stop in effect, mode kept as given", OperationMode{Mode: auto},
			OperationMode{EmergencyStop: true, Mode: auto}, true, "Operation mode set", OperationMode{EmergencyStop: true, Mode: auto}},
		{"e-stop on, same mode again", OperationMode{EmergencyStop: true, Mode: stopped}, OperationMode{EmergencyStop: true, Mode: stopped},
			true, "Operation mode set", OperationMode{EmergencyStop: true, Mode: stopped}},
		{"e-stop on, AUTONOMOUS without release: refused", OperationMode{EmergencyStop: true, Mode: stopped},
			OperationMode{EmergencyStop: true, Mode: auto}, false, "Emergency stop is on: operation mode stays STOPPED",
			OperationMode{EmergencyStop: true, Mode: stopped}},
		{"e-stop on, TELEOPERATION without release: refused", OperationMode{EmergencyStop: true, Mode: stopped},
			OperationMode{EmergencyStop: true, Mode: tele}, false, "release the emergency stop first",
			OperationMode{EmergencyStop: true, Mode: stopped}},
		{"e-stop on in AUTONOMOUS, STOPPED without release: allowed (the safe way)", OperationMode{EmergencyStop: true, Mode: auto},
			OperationMode{EmergencyStop: true, Mode: stopped}, true, "Operation mode set",
			OperationMode{EmergencyStop: true, Mode: stopped}},
		{"e-stop on in AUTONOMOUS, AUTONOMOUS again: no change", OperationMode{EmergencyStop: true, Mode: auto},
			OperationMode{EmergencyStop: true, Mode: auto}, true, "Operation mode set",
			OperationMode{EmergencyStop: true, Mode: auto}},
		{"release with STOPPED", OperationMode{EmergencyStop: true, Mode: stopped}, OperationMode{Mode: stopped},
			true, "Operation mode set", OperationMode{Mode: stopped}},
		{"release asking for AUTONOMOUS: released to STOPPED, answered false", OperationMode{EmergencyStop: true, Mode: stopped},
			OperationMode{Mode: auto}, false, "Emergency stop released; operation mode is STOPPED, not AUTONOMOUS",
			OperationMode{Mode: stopped}},
		{"release of an e-stop pressed in AUTONOMOUS: STOPPED", OperationMode{EmergencyStop: true, Mode: auto},
			OperationMode{Mode: stopped}, true, "Operation mode set", OperationMode{Mode: stopped}},
		{"release asking for TELEOPERATION: STOPPED", OperationMode{EmergencyStop: true, Mode: tele},
			OperationMode{Mode: tele}, false, "not TELEOPERATION", OperationMode{Mode: stopped}},
		{"e-stop on, unknown mode: refused", OperationMode{EmergencyStop: true, Mode: stopped}, OperationMode{Mode: 7},
			false, "Unknown operation mode 7", OperationMode{EmergencyStop: true, Mode: stopped}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestMux(t, false)
			_ = m.OnAutonomy(lin(0.5), t0)
			if r := m.SetOperationMode(tt.before); !r.Success || m.OperationMode() != tt.before {
				t.Fatalf("set-up %+v: %+v, mode %+v", tt.before, r, m.OperationMode())
			}
			r := m.SetOperationMode(tt.req)
			if r.Success != tt.success || !strings.Contains(r.Message, tt.message) {
				t.Errorf("reply = %+v, want success %v with %q", r, tt.success, tt.message)
			}
			tw, op := m.Tick(t0)
			if op != tt.after {
				t.Errorf("operation mode = %+v, want %+v", op, tt.after)
			}
			if want := tt.after == (OperationMode{Mode: auto}); !tw.IsZero() != want {
				t.Errorf("output %v with %+v", tw, op)
			}
		})
	}
}

func TestMux_Timer_NotFiringAfterModeChangedAway(t *testing.T) {
	m := newTestMux(t, false)
	_ = m.OnTeleop(lin(1), t0)
	m.SetOperationMode(OperationMode{Mode: ModeAutonomous})
	if _, op := m.Tick(t0.Add(time.Second)); op.Mode != ModeAutonomous {
		t.Errorf("teleop timer overrode AUTONOMOUS: %+v", op)
	}
}

func TestMux_Joystick_EdgeDetection(t *testing.T) {
	tests := []struct {
		name       string
		prev, next Joy
		want       Mode
	}{
		{"axis grew > 0.05", Joy{Axes: []float32{0.1, 0}}, Joy{Axes: []float32{0.2, 0}}, ModeTeleoperation},
		{"negative axis grew", Joy{Axes: []float32{0, -0.1}}, Joy{Axes: []float32{0, -0.2}}, ModeTeleoperation},
		{"axis grew ≤ 0.05", Joy{Axes: []float32{0.1}}, Joy{Axes: []float32{0.14}}, ModeStopped},
		{"axis released", Joy{Axes: []float32{0.9}}, Joy{Axes: []float32{0}}, ModeStopped},
		{"button 0→1", Joy{Buttons: []int32{0, 0}}, Joy{Buttons: []int32{0, 1}}, ModeTeleoperation},
		{"button held", Joy{Buttons: []int32{1}}, Joy{Buttons: []int32{1}}, ModeStopped},
		{"size changed", Joy{Axes: []float32{0}}, Joy{Axes: []float32{1, 1}}, ModeStopped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestMux(t, true)
			_ = m.OnJoy(tt.prev, t0)
			if err := m.OnJoy(tt.next, t0); err != nil {
				t.Fatal(err)
			}
			if got := m.OperationMode().Mode; got != tt.want {
				t.Errorf("mode = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMux_Joystick_FirstMessageNoSwitch_TimerRestartsInTeleop(t *testing.T) {
	m := newTestMux(t, true)
	_ = m.OnJoy(Joy{Axes: []float32{1}}, t0)
	if m.OperationMode().Mode != ModeStopped {
		t.Fatal("first Joy message switched mode")
	}
	_ = m.OnJoy(Joy{Buttons: nil, Axes: []float32{0}}, t0)
	_ = m.OnJoy(Joy{Axes: []float32{0.5}}, t0)
	_ = m.OnJoy(Joy{Axes: []float32{0.5}}, t0.Add(400*time.Millisecond))
	if _, op := m.Tick(t0.Add(800 * time.Millisecond)); op.Mode != ModeTeleoperation {
		t.Errorf("joystick messages did not keep teleoperation alive: %+v", op)
	}
}

// FIX: joystick_used=false means the joystick never switches modes.
func TestMux_JoystickNotUsed_Ignored(t *testing.T) {
	m := newTestMux(t, false)
	_ = m.OnJoy(Joy{Buttons: []int32{0}}, t0)
	_ = m.OnJoy(Joy{Buttons: []int32{1}}, t0)
	if m.OperationMode().Mode != ModeStopped {
		t.Errorf("joystick used although joystick_used=false: %+v", m.OperationMode())
	}
}

func TestMux_NonFinite_ZeroOutput_LoggedOncePerBurstAtMostEveryInterval(t *testing.T) {
	m := newTestMux(t, true)
	m.SetOperationMode(OperationMode{Mode: ModeAutonomous})
	_ = m.OnAutonomy(lin(1), t0)
	bad := []Twist{lin(math.NaN()), {Angular: geom.Vec3{Z: math.Inf(1)}}, {Linear: geom.Vec3{Y: math.Inf(-1)}}}
	var errs int
	for _, b := range bad {
		if err := m.OnAutonomy(b, t0); err != nil {
			errs++
		}
		if tw, _ := m.Tick(t0); !tw.IsZero() {
			t.Fatalf("output after bad command = %v, want zero", tw)
		}
	}
	if errs != 1 {
		t.Errorf("errors in burst = %d, want 1", errs)
	}
	if err := m.OnAutonomy(lin(0.5), t0); err != nil {
		t.Fatal(err)
	}
	if tw, _ := m.Tick(t0); tw != lin(0.5) {
		t.Errorf("good command after burst = %v", tw)
	}
	if err := m.OnAutonomy(lin(math.NaN()), t0.Add(time.Second)); err != nil {
		t.Errorf("new burst 1 s after the last report reported: %v", err)
	}
	if err := m.OnAutonomy(lin(math.NaN()), t0.Add(cmdvel.ReportInterval)); err == nil {
		t.Error("burst still going on after the report interval not reported")
	}
	// Teleop: rejected, zero, no mode switch.
	m.SetOperationMode(OperationMode{Mode: ModeStopped})
	if err := m.OnTeleop(lin(math.NaN()), t0); err == nil {
		t.Error("NaN teleop not reported")
	}
	if m.OperationMode().Mode != ModeStopped {
		t.Error("NaN teleop switched mode")
	}
	if err := m.OnJoy(Joy{Axes: []float32{float32(math.NaN())}}, t0); err == nil {
		t.Error("NaN joy axis not reported")
	}
	if m.Rejections() != 7 {
		t.Errorf("rejections = %d, want 7", m.Rejections())
	}
}

func TestNewMux_Defaults(t *testing.T) {
	m, err := NewMux(MuxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	m.SetOperationMode(OperationMode{Mode: ModeStopped})
	_ = m.OnTeleop(lin(1), t0)
	if _, op := m.Tick(t0.Add(499 * time.Millisecond)); op.Mode != ModeTeleoperation {
		t.Error("default idle timer shorter than 0.5 s")
	}
	if _, op := m.Tick(t0.Add(500 * time.Millisecond)); op.Mode != ModeStopped {
		t.Error("default idle timer longer than 0.5 s")
	}
	if _, err := NewMux(MuxConfig{TeleopIdle: -time.Second}); err == nil {
		t.Error("negative timer accepted")
	}
}

func TestNewMux_InitialMode(t *testing.T) {
	m, err := NewMux(MuxConfig{Initial: OperationMode{Mode: ModeAutonomous}})
	if err != nil {
		t.Fatal(err)
	}
	_ = m.OnAutonomy(lin(0.2), t0)
	if tw, op := m.Tick(t0); tw != lin(0.2) || op.Mode != ModeAutonomous {
		t.Errorf("Tick = %v, %+v; want autonomy forwarded", tw, op)
	}
	if _, err := NewMux(MuxConfig{Initial: OperationMode{Mode: 9}}); !errors.Is(err, ErrUnknownMode) {
		t.Errorf("mode 9: err = %v", err)
	}
}

// Issue 13: linear.x = 1e308 was forwarded unchanged and switched to
// TELEOPERATION; every input is clamped to the limits now.
func TestMux_AbsurdFiniteCommands_Clamped(t *testing.T) {
	huge := Twist{Linear: geom.Vec3{X: 1e308, Y: -5}, Angular: geom.Vec3{Z: -1e300}}
	want := Twist{Linear: geom.Vec3{X: 1, Y: -1}, Angular: geom.Vec3{Z: -2}}
	tests := []struct {
		name  string
		feed  func(m *Mux) error
		mode  Mode
		start Mode
	}{
		{"autonomy in AUTONOMOUS", func(m *Mux) error { return m.OnAutonomy(huge, t0) }, ModeAutonomous, ModeAutonomous},
		{"teleop switches to TELEOPERATION, clamped", func(m *Mux) error { return m.OnTeleop(huge, t0) }, ModeTeleoperation, ModeStopped},
		{"teleop in AUTONOMOUS", func(m *Mux) error { return m.OnTeleop(huge, t0) }, ModeTeleoperation, ModeAutonomous},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestMux(t, false)
			m.SetOperationMode(OperationMode{Mode: tt.start})
			err := tt.feed(m)
			if err == nil || !strings.Contains(err.Error(), "clamped: linear.x = 1e+308 beyond max_linear_velocity 1") {
				t.Errorf("report %v, want the clamp named", err)
			}
			tw, op := m.Tick(t0)
			if tw != want || op.Mode != tt.mode {
				t.Errorf("Tick = %v, %v; want %v, %v", tw, op.Mode, want, tt.mode)
			}
			if m.Clamps() != 1 || m.Rejections() != 0 {
				t.Errorf("clamps %d rejections %d, want 1 0", m.Clamps(), m.Rejections())
			}
			// said once, counted every time
			if err := tt.feed(m); err != nil {
				t.Errorf("second clamped command reported again: %v", err)
			}
			if m.Clamps() != 2 {
				t.Errorf("clamps %d, want 2", m.Clamps())
			}
		})
	}
}

func TestMux_Limits_Configured(t *testing.T) {
	m, err := NewMux(MuxConfig{Limits: cmdvel.Limits{Linear: 0.3, Angular: 0.4}, Initial: OperationMode{Mode: ModeAutonomous}})
	if err != nil {
		t.Fatal(err)
	}
	_ = m.OnAutonomy(Twist{Linear: geom.Vec3{X: -0.31}, Angular: geom.Vec3{Z: 0.39}}, t0)
	if tw, _ := m.Tick(t0); tw != (Twist{Linear: geom.Vec3{X: -0.3}, Angular: geom.Vec3{Z: 0.39}}) {
		t.Errorf("Tick = %v", tw)
	}
	if _, err := NewMux(MuxConfig{Limits: cmdvel.Limits{Linear: -1, Angular: 1}}); err == nil {
		t.Error("negative max_linear_velocity accepted")
	}
}

// Issue 13: a dead autonomy source left the mux repeating its last command
// forever. A non-zero autonomy command now expires after
// AutonomyTimeout; in AUTONOMOUS the mux falls back to STOPPED.
func TestMux_AutonomySilence(t *testing.T) {
	ms := time.Millisecond
	type ev struct {
		at   time.Duration
		cmd  *Twist         // autonomy command received at at
		op   *OperationMode // setOperationMode at at
		want Twist          // Tick output at at
		mode Mode
	}
	v := lin(0.4)
	zero := Twist{}
	auto := &OperationMode{Mode: ModeAutonomous}
	estop := &OperationMode{EmergencyStop: true, Mode: ModeAutonomous}
	noEstop := &OperationMode{Mode: ModeAutonomous}
	tests := []struct {
		name      string
		timeout   time.Duration
		evs       []ev
		warns     int
		fallbacks uint64
	}{
		{"fresh commands keep AUTONOMOUS", 0, []ev{
			{0, &v, auto, v, ModeAutonomous}, {500 * ms, &v, nil, v, ModeAutonomous},
			{1400 * ms, &v, nil, v, ModeAutonomous}, {2300 * ms, nil, nil, v, ModeAutonomous},
		}, 0, 0},
		{"a moving source that goes silent: STOPPED after the default 2 s", 0, []ev{
			{0, &v, auto, v, ModeAutonomous}, {1999 * ms, nil, nil, v, ModeAutonomous},
			{2000 * ms, nil, nil, zero, ModeStopped}, {5 * time.Second, nil, nil, zero, ModeStopped},
		}, 1, 1},
		{"a stopped source may stay silent (between navigation goals)", 0, []ev{
			{0, &v, auto, v, ModeAutonomous}, {100 * ms, &zero, nil, zero, ModeAutonomous},
			{time.Minute, nil, nil, zero, ModeAutonomous}, {time.Minute + ms, &v, nil, v, ModeAutonomous},
		}, 0, 0},
		{"after the fallback a returning source is not obeyed until AUTONOMOUS is selected", 0, []ev{
			{0, &v, auto, v, ModeAutonomous}, {2500 * ms, nil, nil, zero, ModeStopped},
			{2600 * ms, &v, nil, zero, ModeStopped}, {2700 * ms, &v, auto, v, ModeAutonomous},
		}, 1, 1},
		// The release lands in STOPPED (the e-stop lock), so the stale
		// command is dropped without a fallback from AUTONOMOUS to warn of.
		{"a stale command is not resumed after an e-stop", 0, []ev{
			{0, &v, auto, v, ModeAutonomous}, {100 * ms, nil, estop, zero, ModeAutonomous},
			{3 * time.Second, nil, noEstop, zero, ModeStopped}, {3100 * ms, nil, auto, zero, ModeAutonomous},
		}, 0, 1},
		{"configured timeout", 200 * ms, []ev{
			{0, &v, auto, v, ModeAutonomous}, {199 * ms, nil, nil, v, ModeAutonomous}, {200 * ms, nil, nil, zero, ModeStopped},
		}, 1, 1},
		{"disabled (negative): the original's behaviour", -1, []ev{
			{0, &v, auto, v, ModeAutonomous}, {time.Hour, nil, nil, v, ModeAutonomous},
		}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &recLog{}
			m, err := NewMux(MuxConfig{AutonomyTimeout: tt.timeout, Log: log})
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range tt.evs {
				now := t0.Add(e.at)
				if e.op != nil {
					m.SetOperationMode(*e.op)
				}
				if e.cmd != nil {
					_ = m.OnAutonomy(*e.cmd, now)
				}
				tw, op := m.Tick(now)
				if tw != e.want || op.Mode != e.mode {
					t.Errorf("event %d at %v: Tick = %v, %v; want %v, %v", i, e.at, tw, op.Mode, e.want, e.mode)
				}
			}
			if len(log.warns) != tt.warns || m.Fallbacks() != tt.fallbacks {
				t.Errorf("warnings %q, fallbacks %d; want %d warnings, %d fallbacks", log.warns, m.Fallbacks(), tt.warns, tt.fallbacks)
			}
			for _, w := range log.warns {
				if !strings.Contains(w, "falling back to STOPPED") {
					t.Errorf("warning %q does not say what happened", w)
				}
			}
		})
	}
}

func TestMux_SetTuning(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tests := []struct {
		name string
		tune MuxTuning
		// after a teleop command at t0 and the tuning change at t0+100ms
		stoppedAt  time.Duration // first Tick offset that reads STOPPED
		clampedLin float64       // a 5 m/s autonomy command after the change
		wantErr    string
	}{
		{"longer idle timer extends the running timer", MuxTuning{TeleopIdle: ms(2000)}, ms(2000), DefaultMaxLinearVelocity, ""},
		{"shorter idle timer expires at the next tick", MuxTuning{TeleopIdle: ms(50)}, ms(100), DefaultMaxLinearVelocity, ""},
		{"lower linear limit clamps the next command", MuxTuning{Limits: cmdvel.Limits{Linear: 0.3, Angular: 1}}, ms(500), 0.3, ""},
		{"negative idle refused", MuxTuning{TeleopIdle: -ms(1)}, ms(500), DefaultMaxLinearVelocity, "must be positive"},
		{"NaN limit refused", MuxTuning{Limits: cmdvel.Limits{Linear: math.NaN(), Angular: 1}}, ms(500), DefaultMaxLinearVelocity, "max_linear_velocity"},
		{"zero angular limit refused", MuxTuning{Limits: cmdvel.Limits{Linear: 1, Angular: 0}}, ms(500), DefaultMaxLinearVelocity, "max_angular_velocity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestMux(t, false)
			_ = m.OnTeleop(lin(0.2), t0)
			before := m.Tuning()
			err := m.SetTuning(tt.tune)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("SetTuning = %v, want %q", err, tt.wantErr)
				}
				if m.Tuning() != before {
					t.Errorf("refused tuning changed %+v to %+v", before, m.Tuning())
				}
			} else if err != nil {
				t.Fatal(err)
			}
			for at := ms(100); at <= ms(3000); at += ms(50) {
				if _, op := m.Tick(t0.Add(at)); op.Mode == ModeStopped {
					if at != tt.stoppedAt {
						t.Errorf("STOPPED at +%v, want +%v", at, tt.stoppedAt)
					}
					break
				}
			}
			m.SetOperationMode(OperationMode{Mode: ModeAutonomous})
			_ = m.OnAutonomy(lin(5), t0.Add(ms(3100)))
			if tw, _ := m.Tick(t0.Add(ms(3100))); tw.Linear.X != tt.clampedLin {
				t.Errorf("5 m/s command gives %v, want %v", tw.Linear.X, tt.clampedLin)
			}
		})
	}
}

func TestMux_SetTuning_AutonomyTimeout(t *testing.T) {
	m := newTestMux(t, false)
	m.SetOperationMode(OperationMode{Mode: ModeAutonomous})
	_ = m.OnAutonomy(lin(0.5), t0)
	if err := m.SetTuning(MuxTuning{AutonomyTimeout: 100 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if _, op := m.Tick(t0.Add(150 * time.Millisecond)); op.Mode != ModeStopped {
		t.Errorf("mode %v after 150 ms of silence with a 100 ms timeout, want STOPPED", op.Mode)
	}
}
