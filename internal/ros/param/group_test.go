package param

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// band is a configuration with a check across its fields.
type band struct {
	Low, High float64
	Hold      time.Duration
	Label     string
}

func (b band) Validate() error {
	if b.Low >= b.High {
		return fmt.Errorf("low %v must be below high %v", b.Low, b.High)
	}
	return nil
}

func declareBand(d *Declarer) *Group[band] {
	return DeclareGroup(d, band{Low: 1, High: 2, Hold: time.Second, Label: "a"}, band.Validate,
		Field("band.low", func(b *band) *float64 { return &b.Low }, Descriptor{FloatRange: Floats(0, 100)}),
		Field("band.high", func(b *band) *float64 { return &b.High }, Descriptor{FloatRange: Floats(0, 100)}),
		DurationField("band.hold", func(b *band) *time.Duration { return &b.Hold }, Descriptor{}),
		Field("band.label", func(b *band) *string { return &b.Label }, Descriptor{}))
}

func TestGroup_StartUp(t *testing.T) {
	cases := []struct {
		name      string
		overrides map[string]any
		want      band
		err       string // "" = none
	}{
		{"defaults", nil, band{1, 2, time.Second, "a"}, ""},
		{"overrides", map[string]any{"band.high": 50.0, "band.hold": 0.25, "band.label": "b"}, band{1, 50, 250 * time.Millisecond, "b"}, ""},
		// each override alone would be refused, together they are valid:
		// the whole configuration is checked once, after all of them
		{"overrides checked together", map[string]any{"band.low": 10.0, "band.high": 20.0}, band{10, 20, time.Second, "a"}, ""},
		{"refused by Validate", map[string]any{"band.low": 3.0},
			band{1, 2, time.Second, "a"}, "node /n: parameters band.low, band.high, band.hold, band.label: low 3 must be below high 2"},
		{"refused by the range", map[string]any{"band.high": 500.0}, band{1, 2, time.Second, "a"}, "band.high"},
		{"negative duration", map[string]any{"band.hold": -1.0}, band{1, 2, time.Second, "a"}, "band.hold"},
		{"wrong type", map[string]any{"band.label": int64(3)}, band{1, 2, time.Second, "a"}, "band.label"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, _ := newTestDeclarer(t, c.overrides)
			g := declareBand(d)
			err := d.Err()
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("Err = %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("Err = %v, want one with %q", err, c.err)
			}
			if got := g.Get(); got != c.want {
				t.Errorf("Get = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestGroup_LiveChanges(t *testing.T) {
	d, s := newTestDeclarer(t, nil)
	g := declareBand(d)
	Declare(d, "other", 1.0, Descriptor{}, nil)
	liveOther := DeclareLive(d, "live_other", 1.0, Descriptor{}, nil)
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	if _, ok := g.Changed(); ok {
		t.Fatal("Changed before any set")
	}
	set := func(ps ...Parameter) error { return s.SetAtomically(ps) }
	p := func(name string, v any) Parameter {
		x, err := FromAny(v)
		if err != nil {
			t.Fatal(err)
		}
		return Parameter{Name: name, Value: x}
	}
	steps := []struct {
		name    string
		set     []Parameter
		refused string // "" = accepted
		want    band
		changed bool
	}{
		{"one field", []Parameter{p("band.high", 5.0)}, "", band{1, 5, time.Second, "a"}, true},
		{"refused by Validate", []Parameter{p("band.low", 6.0)}, "low 6 must be below high 5", band{1, 5, time.Second, "a"}, false},
		{"refused by the range", []Parameter{p("band.low", -1.0)}, "band.low", band{1, 5, time.Second, "a"}, false},
		{"two fields at once, valid only together", []Parameter{p("band.low", 7.0), p("band.high", 8.0)}, "", band{7, 8, time.Second, "a"}, true},
		{"a duration", []Parameter{p("band.hold", 0.5)}, "", band{7, 8, 500 * time.Millisecond, "a"}, true},
		{"a string", []Parameter{p("band.label", "z")}, "", band{7, 8, 500 * time.Millisecond, "z"}, true},
		{"another live parameter", []Parameter{p("live_other", 2.0)}, "", band{7, 8, 500 * time.Millisecond, "z"}, false},
		{"a group field with another parameter, refused", []Parameter{p("band.low", 9.0), p("other", 2.0)}, "read-only", band{7, 8, 500 * time.Millisecond, "z"}, false},
	}
	for _, st := range steps {
		err := set(st.set...)
		switch {
		case st.refused == "" && err != nil:
			t.Fatalf("%s: set = %v", st.name, err)
		case st.refused != "" && (err == nil || !strings.Contains(err.Error(), st.refused)):
			t.Fatalf("%s: set = %v, want refused with %q", st.name, err, st.refused)
		}
		// the change is visible when the set returns
		if got := g.Get(); got != st.want {
			t.Fatalf("%s: Get = %+v, want %+v", st.name, got, st.want)
		}
		got, changed := g.Changed()
		if changed != st.changed || got != st.want {
			t.Fatalf("%s: Changed = %+v, %v; want %+v, %v", st.name, got, changed, st.want, st.changed)
		}
		if _, again := g.Changed(); again {
			t.Fatalf("%s: Changed twice for one set", st.name)
		}
	}
	if liveOther.Get() != 2 {
		t.Errorf("live_other = %v", liveOther.Get())
	}
}

func TestGroup_AfterAFailedDeclarationHoldsTheDefault(t *testing.T) {
	d, s := newTestDeclarer(t, nil)
	d.Fail(errors.New("earlier"))
	g := declareBand(d)
	if g.Get() != (band{1, 2, time.Second, "a"}) || s.Has("band.low") {
		t.Fatalf("Get = %+v, declared %v; want the default, nothing declared", g.Get(), s.Has("band.low"))
	}
	d2, _ := newTestDeclarer(t, nil)
	DeclareGroup(d2, band{}, nil, Field("x", func(b *band) *float64 { return &b.Low }, Descriptor{ReadOnly: true}))
	if err := d2.Err(); err == nil || !strings.Contains(err.Error(), "cannot be read-only") {
		t.Fatalf("read-only field: Err = %v", err)
	}
}

func TestNewGroup_HoldsItsValue(t *testing.T) {
	g := NewGroup(band{Low: 3})
	if c, ok := g.Changed(); ok || c.Low != 3 || g.Get().Low != 3 {
		t.Fatalf("NewGroup: %+v %v", c, ok)
	}
}
