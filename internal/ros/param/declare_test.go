package param

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

func newTestDeclarer(t *testing.T, overrides map[string]any) (*Declarer, *Store) {
	t.Helper()
	ov := map[string]Value{}
	for k, v := range overrides {
		x, err := FromAny(v)
		if err != nil {
			t.Fatal(err)
		}
		ov[k] = x
	}
	s := NewStore(StoreOptions{Overrides: ov})
	return NewDeclarer(s, func(err error) error { return fmt.Errorf("node /n: %w", err) }), s
}

func TestDeclare_ReadOnlyWithReason(t *testing.T) {
	d, s := newTestDeclarer(t, map[string]any{"topic": "other"})
	got := Declare(d, "topic", "cmd_vel", ReadOnly("output topic", "the publisher is created at start-up"), nil)
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	if got != "other" {
		t.Errorf("value %q, want the override", got)
	}
	desc, _ := s.Describe([]string{"topic"})
	if !desc[0].ReadOnly || !strings.Contains(desc[0].Description, "the publisher is created at start-up") {
		t.Errorf("descriptor %+v: want read-only with the reason in the description", desc[0])
	}
	err := s.SetValue("topic", StringValue("x"))
	if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "the publisher is created at start-up") {
		t.Errorf("set = %v, want read-only with the reason", err)
	}
	// A plain descriptor is made read-only too.
	Declare(d, "plain", int64(3), Descriptor{Description: "x"}, nil)
	if err := s.SetValue("plain", IntegerValue(4)); !errors.Is(err, ErrReadOnly) {
		t.Errorf("set plain = %v, want read-only", err)
	}
}

func TestDeclare_KeepsFirstError(t *testing.T) {
	d, s := newTestDeclarer(t, map[string]any{"rate": -1.0, "n": "text"})
	rate := Declare(d, "rate", 10.0, Descriptor{}, Positive)
	if rate != 10 {
		t.Errorf("failed declaration returns %v, want the default", rate)
	}
	n := Declare(d, "n", int64(2), Descriptor{}, nil) // skipped
	if n != 2 || s.Has("n") {
		t.Errorf("declaration after an error: value %v, declared %v; want skipped", n, s.Has("n"))
	}
	l := DeclareLive(d, "gain", 1.0, Descriptor{}, nil)
	if l.Get() != 1 || s.Has("gain") {
		t.Errorf("live after an error: %v, declared %v", l.Get(), s.Has("gain"))
	}
	err := d.Err()
	if err == nil || !strings.Contains(err.Error(), "node /n") || !strings.Contains(err.Error(), "rate") ||
		!strings.Contains(err.Error(), "above 0") {
		t.Errorf("Err = %v, want the node, the parameter and the reason", err)
	}
	d.Fail(errors.New("later"))
	if strings.Contains(d.Err().Error(), "later") {
		t.Error("Fail replaced the first error")
	}
}

func TestDeclare_OverrideOfWrongType(t *testing.T) {
	d, _ := newTestDeclarer(t, map[string]any{"n": "text"})
	Declare(d, "n", int64(2), Descriptor{}, nil)
	if err := d.Err(); !errors.Is(err, ErrWrongType) {
		t.Errorf("Err = %v, want ErrWrongType", err)
	}
}

// TestDeclareLive_Validation covers what a remote set can get wrong: every
// refusal leaves the value alone and says why.
func TestDeclareLive_Validation(t *testing.T) {
	d, s := newTestDeclarer(t, nil)
	speed := DeclareLive(d, "speed", 0.5, Descriptor{Description: "m/s", FloatRange: Floats(0, 2)}, nil)
	idle := DeclareLiveDuration(d, "idle", 500*time.Millisecond, Descriptor{}, func(d time.Duration) error {
		if d == 0 {
			return errors.New("0 would stop teleoperation at once")
		}
		return nil
	})
	steps := DeclareLive(d, "steps", int64(4), Descriptor{IntegerRange: Ints(1, 10)}, func(n int64) error {
		if n%2 != 0 {
			return errors.New("must be even")
		}
		return nil
	})
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		v    Value
		want string // in the reason
	}{
		{"speed", DoubleValue(math.NaN()), "NaN"},
		{"speed", DoubleValue(3), "outside the floating point range [0, 2]"},
		{"speed", DoubleValue(-0.1), "outside the floating point range"},
		{"speed", DoubleValue(math.Inf(1)), "outside the floating point range"},
		{"speed", StringValue("fast"), "type double"},
		{"speed", IntegerValue(1), "type double"},
		{"idle", DoubleValue(-1), "outside the floating point range"},
		{"idle", DoubleValue(0), "0 would stop teleoperation at once"},
		{"idle", DoubleValue(1e300), "does not fit a duration"},
		{"idle", DoubleValue(math.NaN()), "NaN"},
		{"steps", IntegerValue(11), "outside the integer range [1, 10]"},
		{"steps", IntegerValue(3), "must be even"},
		{"steps", DoubleValue(4), "type integer"},
	} {
		r := s.Set([]Parameter{{Name: c.name, Value: c.v}})[0]
		if r.Successful || !strings.Contains(r.Reason, c.want) {
			t.Errorf("set %s = %v: %+v, want refused with %q", c.name, c.v, r, c.want)
		}
	}
	if speed.Get() != 0.5 || idle.Get() != 500*time.Millisecond || steps.Get() != 4 {
		t.Errorf("refused sets changed values: %v %v %v", speed.Get(), idle.Get(), steps.Get())
	}
	var seen uint64
	if _, ch := speed.Changed(&seen); ch {
		t.Error("Changed before any change")
	}
	for _, r := range s.Set([]Parameter{
		{Name: "speed", Value: DoubleValue(1.5)},
		{Name: "idle", Value: DoubleValue(2.25)},
		{Name: "steps", Value: IntegerValue(10)},
	}) {
		if !r.Successful {
			t.Fatalf("valid set refused: %s", r.Reason)
		}
	}
	// Visible as soon as the set returned.
	if speed.Get() != 1.5 || idle.Get() != 2250*time.Millisecond || steps.Get() != 10 {
		t.Errorf("after set: %v %v %v", speed.Get(), idle.Get(), steps.Get())
	}
	if v, ch := speed.Changed(&seen); !ch || v != 1.5 {
		t.Errorf("Changed = %v, %v; want 1.5, true", v, ch)
	}
	if _, ch := speed.Changed(&seen); ch {
		t.Error("Changed twice for one change")
	}
	// An atomic batch with one bad value changes nothing.
	err := s.SetAtomically([]Parameter{{Name: "speed", Value: DoubleValue(1)}, {Name: "steps", Value: IntegerValue(5)}})
	if err == nil || speed.Get() != 1.5 {
		t.Errorf("atomic batch with a bad value: %v, speed %v", err, speed.Get())
	}
}

func TestDeclareLive_StartupValueChecked(t *testing.T) {
	d, _ := newTestDeclarer(t, map[string]any{"idle": -2.0})
	DeclareLiveDuration(d, "idle", time.Second, Descriptor{}, nil)
	if err := d.Err(); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("Err = %v, want the negative override refused", err)
	}
	d, _ = newTestDeclarer(t, nil)
	DeclareLive(d, "x", 1.0, Descriptor{ReadOnly: true}, nil)
	if d.Err() == nil {
		t.Error("a read-only live parameter was accepted")
	}
}

// TestLive_ConcurrentReads is meant for -race: a loop reads while sets land.
func TestLive_ConcurrentReads(t *testing.T) {
	d, s := newTestDeclarer(t, nil)
	l := DeclareLive(d, "gain", 1.0, Descriptor{FloatRange: Floats(0, 1000)}, nil)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		var seen uint64
		for {
			select {
			case <-stop:
				return
			default:
			}
			if v, _ := l.Changed(&seen); v < 1 || v > 100 {
				t.Errorf("read %v, never set", v)
				return
			}
		}
	}()
	for i := 1; i <= 100; i++ {
		if err := s.SetValue("gain", DoubleValue(float64(i))); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if l.Get() != 100 {
		t.Errorf("final %v", l.Get())
	}
}

// TestFrequency_PeriodNeverZero: Frequency, the check of every rate
// from which a timer period is derived, refuses a rate whose period rounds
// to 0 ns with that reason, and non-finite or non-positive rates.
func TestFrequency_PeriodNeverZero(t *testing.T) {
	for _, c := range []struct {
		hz     float64
		reason string // "" accepted
	}{
		{20, ""}, {1e9, ""}, {1e-3, ""},
		{2e9, "rounds to 0 ns"}, {1e307, "rounds to 0 ns"},
		{0, "above 0"}, {-1, "above 0"},
		{math.Inf(1), "finite"}, {math.NaN(), "finite"},
	} {
		err := Frequency(c.hz)
		if c.reason == "" && err != nil || c.reason != "" && (err == nil || !strings.Contains(err.Error(), c.reason)) {
			t.Errorf("Frequency(%g) = %v, want %q", c.hz, err, c.reason)
		}
		if err == nil && Period(c.hz) <= 0 {
			t.Errorf("Period(%g) = %v for an accepted rate", c.hz, Period(c.hz))
		}
	}
}
