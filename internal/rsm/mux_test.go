package rsm

import (
	"errors"
	"math"
	"testing"
	"time"
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

func lin(x float64) Twist { return Twist{Linear: Vec3{X: x}} }

func TestMux_Output_ByModeAndEStop(t *testing.T) {
	auto, tele := lin(1), lin(2)
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
			_ = m.OnAutonomy(auto)
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
	_ = m.OnAutonomy(lin(1))
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
	_ = m.OnTeleop(Twist{Angular: Vec3{Z: 0.3}}, t0)
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
	m.SetOperationMode(OperationMode{Mode: ModeTeleoperation})
	if tw, _ := m.Tick(t0); !tw.IsZero() {
		t.Errorf("command from e-stop time forwarded: %v", tw)
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

func TestMux_NonFinite_ZeroOutput_LoggedOncePerBurst(t *testing.T) {
	m := newTestMux(t, true)
	m.SetOperationMode(OperationMode{Mode: ModeAutonomous})
	_ = m.OnAutonomy(lin(1))
	bad := []Twist{lin(math.NaN()), {Angular: Vec3{Z: math.Inf(1)}}, {Linear: Vec3{Y: math.Inf(-1)}}}
	var errs int
	for _, b := range bad {
		if err := m.OnAutonomy(b); err != nil {
			errs++
		}
		if tw, _ := m.Tick(t0); !tw.IsZero() {
			t.Fatalf("output after bad command = %v, want zero", tw)
		}
	}
	if errs != 1 {
		t.Errorf("errors in burst = %d, want 1", errs)
	}
	if err := m.OnAutonomy(lin(0.5)); err != nil {
		t.Fatal(err)
	}
	if tw, _ := m.Tick(t0); tw != lin(0.5) {
		t.Errorf("good command after burst = %v", tw)
	}
	if err := m.OnAutonomy(lin(math.NaN())); err == nil {
		t.Error("new burst not reported")
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
	if m.Rejections() != 6 {
		t.Errorf("rejections = %d, want 6", m.Rejections())
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
	_ = m.OnAutonomy(lin(0.2))
	if tw, op := m.Tick(t0); tw != lin(0.2) || op.Mode != ModeAutonomous {
		t.Errorf("Tick = %v, %+v; want autonomy forwarded", tw, op)
	}
	if _, err := NewMux(MuxConfig{Initial: OperationMode{Mode: 9}}); !errors.Is(err, ErrUnknownMode) {
		t.Errorf("mode 9: err = %v", err)
	}
}
