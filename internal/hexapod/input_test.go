package hexapod

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func joyMsg(stamp float64, buttons ...int32) Joy {
	b := make([]int32, 11)
	copy(b, buttons)
	return Joy{Stamp: stamp, Axes: make([]float32, 8), Buttons: b}
}

func TestJoystick_ButtonEdgesWithDebounce(t *testing.T) {
	js, err := NewJoystick(DefaultJoyMapping(), DefaultGaitConfig())
	if err != nil {
		t.Fatal(err)
	}
	press := func(btn int) []int32 {
		b := make([]int32, 8)
		b[btn] = 1
		return b
	}
	steps := []struct {
		name  string
		stamp float64
		btns  []int32
		want  []Command
	}{
		{"StartPressed", 10.0, press(7), []Command{CmdStartStop}},
		{"StartHeld_NoRepeat", 10.05, press(7), nil},
		{"StartReleased", 10.1, nil, nil},
		{"StartBounceWithinOneSecond_Debounced", 10.3, press(7), nil},
		{"StartReleasedAgain", 10.4, nil, nil},
		{"StartPressedAfterDebounce", 11.5, press(7), []Command{CmdStartStop}},
		{"StartStillHeld", 12.7, press(7), nil},
		{"Released", 12.75, nil, nil},
		{"APressed", 12.8, press(0), []Command{CmdStandUp}},
		{"ReleasedA", 12.85, nil, nil},
		{"APressedAgainTooSoon_Debounced", 13.5, press(0), nil},
		{"ReleasedA2", 13.6, nil, nil},
		{"APressedAfterOneSecond", 13.81, press(0), []Command{CmdStandUp}},
		{"StartPressedAgain", 13.9, press(7), []Command{CmdStartStop}},
		{"AllReleased", 13.95, nil, nil},
		{"BAndXTogether", 14.0, []int32{0, 1, 1}, []Command{CmdSitDown, CmdStandWalk}},
	}
	for _, s := range steps {
		m := joyMsg(s.stamp, s.btns...)
		cmds, _, err := js.Update(m)
		if err != nil || !reflect.DeepEqual(cmds, s.want) {
			t.Fatalf("%s: commands %v, %v; want %v", s.name, cmds, err, s.want)
		}
	}
}

func TestJoystick_AxesToVelocityAndBadInput(t *testing.T) {
	gait := DefaultGaitConfig()
	js, _ := NewJoystick(DefaultJoyMapping(), gait)
	m := joyMsg(1)
	m.Axes[1], m.Axes[0], m.Axes[3] = 1, -0.5, 0.25
	_, v, err := js.Update(m)
	if err != nil {
		t.Fatal(err)
	}
	want := Velocity{X: gait.MaxLinearSpeed(), Y: -0.5 * gait.MaxLinearSpeed(), Yaw: 0.25}
	if math.Abs(v.X-want.X) > 1e-9 || math.Abs(v.Y-want.Y) > 1e-9 || math.Abs(v.Yaw-want.Yaw) > 1e-9 {
		t.Fatalf("velocity %+v, want %+v", v, want)
	}
	// short arrays read as centred / released
	if cmds, v, err := js.Update(Joy{Stamp: 2, Axes: []float32{0.5}}); err != nil || cmds != nil || v.X != 0 || v.Yaw != 0 {
		t.Fatalf("short message: %v %+v %v", cmds, v, err)
	}
	m = joyMsg(3, 0, 0, 0, 0, 0, 0, 0, 1)
	m.Axes[1] = float32(math.NaN())
	cmds, v, err := js.Update(m)
	if err == nil || !strings.Contains(err.Error(), "finite") || v != (Velocity{}) {
		t.Fatalf("NaN axis: %+v, %v", v, err)
	}
	if len(cmds) != 1 || cmds[0] != CmdStartStop {
		t.Fatalf("buttons of a message with a NaN axis: %v", cmds)
	}
	if _, _, err := js.Update(joyMsg(math.Inf(1), 1)); err == nil {
		t.Fatal("Inf stamp accepted")
	}
}

func TestJoystick_RaspberryPiAxisMapping(t *testing.T) {
	m := DefaultJoyMapping()
	m.AngularZ = 2
	js, _ := NewJoystick(m, DefaultGaitConfig())
	msg := joyMsg(1)
	msg.Axes[2], msg.Axes[3] = -1, 0.7
	if _, v, _ := js.Update(msg); v.Yaw != -1 {
		t.Fatalf("yaw %v, want -1 from axis 2", v.Yaw)
	}
	bad := DefaultJoyMapping()
	bad.StartStop = -1
	if _, err := NewJoystick(bad, DefaultGaitConfig()); err == nil {
		t.Fatal("negative index accepted")
	}
}

func TestVelocityInput_TimeoutNaNAndPriority(t *testing.T) {
	t0 := time.Unix(1000, 0)
	in := VelocityInput{Timeout: 500 * time.Millisecond}
	if v := in.At(t0); v != (Velocity{}) {
		t.Fatalf("no command yet: %+v", v)
	}
	fwd := Velocity{X: 0.1}
	if err := in.SetCmdVel(fwd, t0); err != nil {
		t.Fatal(err)
	}
	if v := in.At(t0.Add(500 * time.Millisecond)); v != fwd {
		t.Fatalf("at the timeout: %+v", v)
	}
	if v := in.At(t0.Add(501 * time.Millisecond)); v != (Velocity{}) {
		t.Fatalf("after the timeout: %+v", v)
	}
	err := in.SetCmdVel(Velocity{X: math.NaN()}, t0.Add(time.Second))
	if err == nil || !strings.Contains(err.Error(), "linear.x") {
		t.Fatalf("NaN cmd_vel: %v", err)
	}
	if err := in.SetCmdVel(Velocity{Yaw: math.Inf(-1)}, t0); err == nil {
		t.Fatal("Inf cmd_vel accepted")
	}
	in.SetCmdVel(fwd, t0.Add(2*time.Second))
	in.SetJoy(Velocity{}, t0.Add(2*time.Second))
	if v := in.At(t0.Add(2 * time.Second)); v != fwd {
		t.Fatalf("centred stick overrode cmd_vel: %+v", v)
	}
	stick := Velocity{Y: 0.05}
	in.SetJoy(stick, t0.Add(2100*time.Millisecond))
	if v := in.At(t0.Add(2200 * time.Millisecond)); v != stick {
		t.Fatalf("stick did not override: %+v", v)
	}
	if v := in.At(t0.Add(2700 * time.Millisecond)); v != (Velocity{}) {
		t.Fatalf("stale stick and cmd_vel: %+v", v)
	}
	if in.SetJoy(Velocity{X: math.NaN()}, t0) == nil {
		t.Fatal("NaN joy velocity accepted")
	}
}

func TestVelocityInput_JoyTimeoutOwnParameter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	stick := Velocity{X: 0.1}
	cases := map[string]struct {
		in       VelocityInput
		holds    time.Duration // the stick is still in force this long after its message
		lapsesAt time.Duration // and zero from here
	}{
		"joy.timeout longer than cmd_vel_timeout":               {VelocityInput{Timeout: 100 * time.Millisecond, JoyTimeout: time.Second}, time.Second, time.Second + time.Millisecond},
		"cmd_vel timeout disabled does not disable the stick's": {VelocityInput{JoyTimeout: 300 * time.Millisecond}, 300 * time.Millisecond, 301 * time.Millisecond},
		"unset joy.timeout is the default":                      {VelocityInput{Timeout: 5 * time.Second}, DefaultJoyTimeout, DefaultJoyTimeout + time.Millisecond},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			in := c.in
			if err := in.SetJoy(stick, t0); err != nil {
				t.Fatal(err)
			}
			if v := in.At(t0.Add(c.holds)); v != stick {
				t.Fatalf("at %v: %+v, want the stick", c.holds, v)
			}
			if v := in.At(t0.Add(c.lapsesAt)); !v.IsZero() {
				t.Fatalf("at %v: %+v, want zero", c.lapsesAt, v)
			}
		})
	}
}

// FuzzJoystickUpdate checks that no Joy message panics the mapper and that
// an accepted velocity is always finite.
func FuzzJoystickUpdate(f *testing.F) {
	f.Add(1.5, float32(0.5), float32(-1), int32(1), int32(0))
	f.Add(math.NaN(), float32(math.Inf(1)), float32(0), int32(-3), int32(7))
	f.Fuzz(func(t *testing.T, stamp float64, a0, a1 float32, b0, b7 int32) {
		js, err := NewJoystick(DefaultJoyMapping(), DefaultGaitConfig())
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 3; k++ {
			_, v, err := js.Update(Joy{Stamp: stamp + float64(k), Axes: []float32{a0, a1, a0, a1},
				Buttons: []int32{b0, b7, b0, 0, 0, 0, 0, b7}})
			if err == nil && v.Validate() != nil {
				t.Fatalf("non-finite velocity %+v accepted", v)
			}
		}
	})
}
