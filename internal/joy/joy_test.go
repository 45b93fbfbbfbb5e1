package joy

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// loadStream reads a recorded event stream written as hex, one event a line.
func loadStream(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []byte
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		b, err := hex.DecodeString(strings.ReplaceAll(line, " ", ""))
		if err != nil || len(b) != EventSize {
			t.Fatalf("bad line %q: %v", line, err)
		}
		out = append(out, b...)
	}
	return out
}

func TestParseEventRoundTrip(t *testing.T) {
	e := Event{TimeMs: 123456, Value: -32767, Type: EventAxis, Number: 3}
	got, err := ParseEvent(e.Encode())
	if err != nil || got != e {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := ParseEvent(make([]byte, 7)); !errors.Is(err, ErrShortEvent) {
		t.Fatalf("short record: %v", err)
	}
}

func TestRecordedSession(t *testing.T) {
	d, err := NewDevice(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var states []State
	var urg []Urgency
	err = ReadEvents(bytes.NewReader(loadStream(t, "testdata/xbox_session.hex")), func(e Event) {
		urg = append(urg, d.Apply(e))
		states = append(states, d.State())
	})
	if !errors.Is(err, io.EOF) {
		t.Fatalf("ReadEvents: %v", err)
	}
	// 4 initial-state events (publish soon), button down (now), stick up,
	// a push inside the deadzone, half left (soon), button up (now).
	wantUrg := []Urgency{Soon, Soon, Soon, Soon, Now, Soon, Soon, Soon, Now}
	if !reflect.DeepEqual(urg, wantUrg) {
		t.Fatalf("urgencies %v, want %v", urg, wantUrg)
	}
	if s := states[3]; !reflect.DeepEqual(s, State{Axes: []float32{0, 0}, Buttons: []int32{0, 0}}) {
		t.Errorf("after the initial events: %+v", s)
	}
	if states[4].Buttons[0] != 1 {
		t.Errorf("enable not pressed: %+v", states[4])
	}
	if a := states[5].Axes[1]; a != 1 {
		t.Errorf("stick up: axis 1 = %v, want 1", a)
	}
	if a := states[6].Axes[0]; a != 0 {
		t.Errorf("push inside the deadzone: axis 0 = %v, want 0", a)
	}
	want := -(16384 - 0.05*32767) / (32767 - 0.05*32767)
	if a := float64(states[7].Axes[0]); math.Abs(a-want) > 1e-6 {
		t.Errorf("half left: axis 0 = %v, want %v", a, want)
	}
	if states[8].Buttons[0] != 0 {
		t.Errorf("enable still pressed: %+v", states[8])
	}

	tel, _ := NewTeleop(DefaultTeleop())
	type cmd struct {
		lin, ang float64
		pub      bool
	}
	var got []cmd
	for _, s := range states[4:] {
		l, a, p := tel.Update(s)
		got = append(got, cmd{l, a, p})
	}
	if !got[1].pub || got[1].lin != 0.5 {
		t.Errorf("full forward with enable: %+v, want linear 0.5", got[1])
	}
	if !got[3].pub || math.Abs(got[3].ang-want*0.5) > 1e-6 {
		t.Errorf("turn: %+v", got[3])
	}
	if !got[4].pub || got[4].lin != 0 || got[4].ang != 0 {
		t.Errorf("release must publish one zero command: %+v", got[4])
	}
	if _, _, p := tel.Update(states[8]); p {
		t.Error("published again after the zero command")
	}
}

func TestDeviceApply(t *testing.T) {
	press := func(n uint8, v int16) Event { return Event{Type: EventButton, Number: n, Value: v} }
	axis := func(n uint8, v int16) Event { return Event{Type: EventAxis, Number: n, Value: v} }
	initAxis := func(n uint8, v int16) Event { return Event{Type: EventAxis | EventInit, Number: n, Value: v} }
	initButton := func(n uint8, v int16) Event { return Event{Type: EventButton | EventInit, Number: n, Value: v} }
	cases := map[string]struct {
		cfg     func(*Config)
		events  []Event
		want    State
		urgency []Urgency
		dropped int
	}{
		"button press and release": {
			events: []Event{press(2, 1), press(2, 0)}, want: State{Buttons: []int32{0, 0, 0}}, urgency: []Urgency{Now, Now}},
		"button value other than 1 counts as pressed": {
			events: []Event{press(0, 7)}, want: State{Buttons: []int32{1}}, urgency: []Urgency{Now}},
		"initial button state is published soon": {
			events: []Event{initButton(1, 1)}, want: State{Buttons: []int32{0, 1}}, urgency: []Urgency{Soon}},
		"sticky buttons toggle on press only": {
			cfg:    func(c *Config) { c.StickyButtons = true },
			events: []Event{press(0, 1), press(0, 0), press(1, 1), press(1, 0), press(1, 1), press(1, 0)},
			want:   State{Buttons: []int32{1, 0}}, urgency: []Urgency{Now, Now, Now, Now, Now, Now}},
		"axis full up and full down": {
			cfg:    func(c *Config) { c.Deadzone = 0 },
			events: []Event{axis(0, -32767), axis(1, 32767)}, want: State{Axes: []float32{1, -1}}, urgency: []Urgency{Soon, Soon}},
		"axis -32768 is clamped to 1": {
			cfg:    func(c *Config) { c.Deadzone = 0.3 },
			events: []Event{axis(0, -32768)}, want: State{Axes: []float32{1}}, urgency: []Urgency{Soon}},
		"axis inside the deadzone reads zero": {
			cfg:    func(c *Config) { c.Deadzone = 0.3 },
			events: []Event{axis(0, 9000), axis(1, -9830)}, want: State{Axes: []float32{0, 0}}, urgency: []Urgency{Soon, Soon}},
		"initial axis values are ignored by default": {
			events: []Event{initAxis(2, -32767)}, want: State{Axes: []float32{0, 0, 0}}, urgency: []Urgency{Soon}},
		"default_trig_val uses initial axis values": {
			cfg:    func(c *Config) { c.DefaultTrigVal = true; c.Deadzone = 0 },
			events: []Event{initAxis(0, 32767)}, want: State{Axes: []float32{-1}}, urgency: []Urgency{Soon}},
		"unknown type and out-of-range number are dropped": {
			events: []Event{{Type: 0x07}, axis(200, 5), press(MaxControls, 1)}, urgency: []Urgency{Ignore, Ignore, Ignore}, dropped: 3},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			if c.cfg != nil {
				c.cfg(&cfg)
			}
			d, err := NewDevice(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var urg []Urgency
			for _, e := range c.events {
				urg = append(urg, d.Apply(e))
			}
			if !reflect.DeepEqual(urg, c.urgency) {
				t.Errorf("urgencies %v, want %v", urg, c.urgency)
			}
			if got := d.State(); !reflect.DeepEqual(got, c.want) {
				t.Errorf("state %+v, want %+v", got, c.want)
			}
			if d.Dropped != c.dropped {
				t.Errorf("dropped %d, want %d", d.Dropped, c.dropped)
			}
			d.Reset()
			if got := d.State(); len(got.Axes)+len(got.Buttons) != 0 {
				t.Errorf("state after Reset: %+v", got)
			}
		})
	}
}

func TestConfigSanitize(t *testing.T) {
	cases := map[string]struct {
		in, want Config
		warnings []string // substrings, one per warning
	}{
		"defaults": {in: DefaultConfig(), want: DefaultConfig()},
		"raw deadzone": {in: Config{Deadzone: 3276.7}, want: Config{Deadzone: 0.1},
			warnings: []string{"raw axis units"}},
		"deadzone above 0.9": {in: Config{Deadzone: 0.95}, want: Config{Deadzone: 0.9}, warnings: []string{"greater than 0.9"}},
		"negative values": {in: Config{Deadzone: -1, AutorepeatRate: -5, CoalesceInterval: -time.Second},
			want: Config{}, warnings: []string{"deadzone -1 less than 0", "autorepeat_rate -5 less than 0", "coalesce_interval -1 s less than 0"}},
		"autorepeat faster than coalescing allows": {in: Config{AutorepeatRate: 200, CoalesceInterval: 10 * time.Millisecond},
			want: Config{AutorepeatRate: 200, CoalesceInterval: 10 * time.Millisecond}, warnings: []string{"does not make sense"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, warn, err := c.in.Sanitize()
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got.Deadzone-c.want.Deadzone) > 1e-12 || got.AutorepeatRate != c.want.AutorepeatRate ||
				got.CoalesceInterval != c.want.CoalesceInterval {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			if len(warn) != len(c.warnings) {
				t.Fatalf("warnings %q, want %d", warn, len(c.warnings))
			}
			for i, w := range c.warnings {
				if !strings.Contains(warn[i], w) {
					t.Errorf("warning %q does not mention %q", warn[i], w)
				}
			}
		})
	}
	for _, bad := range []Config{{Deadzone: math.NaN()}, {AutorepeatRate: math.Inf(1)}} {
		if _, _, err := bad.Sanitize(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
		if _, err := NewDevice(bad); err == nil {
			t.Errorf("NewDevice(%+v) accepted", bad)
		}
	}
}

func TestScheduler(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type step struct {
		ms  int
		ev  Urgency // event at ms (Ignore: none)
		pub bool    // a message is due at ms (after the event)
	}
	cases := map[string]struct {
		cfg   Config
		steps []step
	}{
		"button at once, then autorepeat every 50 ms": {
			cfg: Config{AutorepeatRate: 20, CoalesceInterval: time.Millisecond},
			steps: []step{{0, Ignore, false}, {10, Now, true}, {59, Ignore, false}, {60, Ignore, true},
				{109, Ignore, false}, {110, Ignore, true}},
		},
		"no autorepeat: nothing without events": {
			cfg:   Config{CoalesceInterval: time.Millisecond},
			steps: []step{{0, Ignore, false}, {5000, Ignore, false}, {5001, Now, true}, {9000, Ignore, false}},
		},
		"axis events coalesce from the first one": {
			cfg:   Config{CoalesceInterval: 20 * time.Millisecond},
			steps: []step{{0, Soon, false}, {10, Soon, false}, {19, Soon, false}, {20, Ignore, true}, {30, Ignore, false}},
		},
		"a button cuts the coalesce wait short": {
			cfg:   Config{CoalesceInterval: 20 * time.Millisecond},
			steps: []step{{0, Soon, false}, {5, Now, true}, {25, Ignore, false}},
		},
		"autorepeat restarts after every message": {
			cfg:   Config{AutorepeatRate: 10, CoalesceInterval: time.Millisecond},
			steps: []step{{50, Soon, false}, {51, Ignore, true}, {150, Ignore, false}, {151, Ignore, true}, {251, Ignore, true}},
		},
		"dropped events change nothing": {
			cfg:   Config{CoalesceInterval: time.Millisecond},
			steps: []step{{0, Ignore, false}, {10, Ignore, false}},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s := NewScheduler(c.cfg)
			s.Reset(t0)
			for _, st := range c.steps {
				s.Event(st.ev, at(st.ms))
				if got := s.Due(at(st.ms)); got != st.pub {
					next, ok := s.Next()
					t.Fatalf("at %d ms: due %v, want %v (next %v, %v)", st.ms, got, st.pub, next.Sub(t0), ok)
				}
				if st.pub {
					s.Published(at(st.ms))
				}
			}
		})
	}
}

func TestTruncatedStream(t *testing.T) {
	var got []Event
	b := append(Event{Type: EventButton, Value: 1}.Encode(), 1, 2, 3)
	if err := ReadEvents(bytes.NewReader(b), func(e Event) { got = append(got, e) }); !errors.Is(err, ErrShortEvent) {
		t.Fatalf("err = %v, want ErrShortEvent", err)
	}
	if len(got) != 1 || got[0].Value != 1 {
		t.Fatalf("complete event before the truncation was lost: %+v", got)
	}
}

func TestTeleopRejectsBadConfig(t *testing.T) {
	if _, err := NewTeleop(TeleopConfig{ScaleLinearX: math.NaN()}); err == nil {
		t.Fatal("NaN scale accepted")
	}
}

func TestTeleopWithoutEnableButton(t *testing.T) {
	cfg := DefaultTeleop()
	cfg.RequireEnableButton = false
	tel, _ := NewTeleop(cfg)
	l, a, p := tel.Update(State{Axes: []float32{0.5, -1}})
	if !p || l != -0.5 || a != 0.25 {
		t.Fatalf("got %v %v %v", l, a, p)
	}
	// Missing axes read as zero rather than panicking.
	if l, a, p := tel.Update(State{}); !p || l != 0 || a != 0 {
		t.Fatalf("empty state: %v %v %v", l, a, p)
	}
}

func FuzzReadEvents(f *testing.F) {
	f.Add(loadStream(f, "testdata/xbox_session.hex"), 0.05, false, false)
	f.Add([]byte{1, 2, 3}, 0.3, true, true)
	f.Fuzz(func(t *testing.T, b []byte, deadzone float64, sticky, trig bool) {
		d, err := NewDevice(Config{Deadzone: deadzone, StickyButtons: sticky, DefaultTrigVal: trig})
		if err != nil {
			return // NaN or Inf deadzone: rejected
		}
		_ = ReadEvents(bytes.NewReader(b), func(e Event) {
			d.Apply(e)
			s := d.State()
			for _, a := range s.Axes {
				if a < -1 || a > 1 || math.IsNaN(float64(a)) {
					t.Fatalf("axis %v out of range", a)
				}
			}
			for _, v := range s.Buttons {
				if v != 0 && v != 1 {
					t.Fatalf("button %v", v)
				}
			}
			if len(s.Axes) > MaxControls || len(s.Buttons) > MaxControls {
				t.Fatalf("%d axes, %d buttons", len(s.Axes), len(s.Buttons))
			}
		})
	})
}

func TestTeleop_SetConfig(t *testing.T) {
	tel, err := NewTeleop(DefaultTeleop())
	if err != nil {
		t.Fatal(err)
	}
	fwd := State{Axes: []float32{0, 1}, Buttons: []int32{1}}
	bad := DefaultTeleop()
	bad.ScaleLinearX = math.Inf(1)
	if err := tel.SetConfig(bad); err == nil {
		t.Fatal("infinite scale accepted")
	}
	if l, _, _ := tel.Update(fwd); l != 0.5 {
		t.Errorf("after a refused change: linear %v, want the old 0.5", l)
	}
	c := DefaultTeleop()
	c.ScaleLinearX = 0.2
	if err := tel.SetConfig(c); err != nil {
		t.Fatal(err)
	}
	if l, _, _ := tel.Update(fwd); l != 0.2 {
		t.Errorf("after the change: linear %v, want 0.2", l)
	}
}
