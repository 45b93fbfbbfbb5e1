package joy

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"testing"
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
	d, _ := NewDevice(0.05)
	var states []State
	err := d.ReadEvents(bytes.NewReader(loadStream(t, "testdata/xbox_session.hex")), func(s State) { states = append(states, s) })
	if !errors.Is(err, io.EOF) {
		t.Fatalf("ReadEvents: %v", err)
	}
	// Init events leave everything zero and change nothing; then button
	// down, axis 1 up, axis 0 half left, button up (the deadzone push is
	// no change).
	if len(states) != 4 {
		t.Fatalf("%d state changes, want 4: %+v", len(states), states)
	}
	if states[0].Buttons[0] != 1 {
		t.Errorf("enable not pressed: %+v", states[0])
	}
	if a := states[1].Axes[1]; a != 1 {
		t.Errorf("stick up: axis 1 = %v, want 1", a)
	}
	want := -(16384 - 0.05*32767) / (32767 - 0.05*32767)
	if a := float64(states[2].Axes[0]); math.Abs(a-want) > 1e-6 {
		t.Errorf("half left: axis 0 = %v, want %v", a, want)
	}
	if states[3].Buttons[0] != 0 {
		t.Errorf("enable still pressed: %+v", states[3])
	}

	tel, _ := NewTeleop(DefaultTeleop())
	type cmd struct {
		lin, ang float64
		pub      bool
	}
	var got []cmd
	for _, s := range states {
		l, a, p := tel.Update(s)
		got = append(got, cmd{l, a, p})
	}
	if !got[1].pub || got[1].lin != 0.5 {
		t.Errorf("full forward with enable: %+v, want linear 0.5", got[1])
	}
	if !got[2].pub || math.Abs(got[2].ang-want*0.5) > 1e-6 {
		t.Errorf("turn: %+v", got[2])
	}
	if !got[3].pub || got[3].lin != 0 || got[3].ang != 0 {
		t.Errorf("release must publish one zero command: %+v", got[3])
	}
	if _, _, p := tel.Update(states[3]); p {
		t.Error("published again after the zero command")
	}
}

func TestTruncatedStream(t *testing.T) {
	d, _ := NewDevice(0)
	b := append(Event{Type: EventButton, Value: 1}.Encode(), 1, 2, 3)
	if err := d.ReadEvents(bytes.NewReader(b), nil); !errors.Is(err, ErrShortEvent) {
		t.Fatalf("err = %v, want ErrShortEvent", err)
	}
	if d.State().Buttons[0] != 1 {
		t.Fatal("complete event before the truncation was lost")
	}
}

func TestBadEventsDroppedAndCounted(t *testing.T) {
	d, _ := NewDevice(0)
	d.Apply(Event{Type: 0x07, Number: 0})
	d.Apply(Event{Type: EventAxis, Number: 200})
	if d.Dropped != 2 || len(d.State().Axes) != 0 {
		t.Fatalf("dropped %d, state %+v", d.Dropped, d.State())
	}
	if _, err := NewDevice(1.5); err == nil {
		t.Fatal("deadzone 1.5 accepted")
	}
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
	f.Add(loadStream(f, "testdata/xbox_session.hex"))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, _ := NewDevice(0.05)
		_ = d.ReadEvents(bytes.NewReader(b), func(s State) {
			for _, a := range s.Axes {
				if a < -1 || a > 1 || math.IsNaN(float64(a)) {
					t.Fatalf("axis %v out of range", a)
				}
			}
		})
	})
}
