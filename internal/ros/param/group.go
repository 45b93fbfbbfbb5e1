package param

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"
)

// Group is live configuration: the parameters of one value of a
// behaviour's configuration type C (a gait's constants, a mux's timers,
// velocity limits), declared from C's fields and checked together by C's
// own validation. It is the one way a node hands live parameters to its
// behaviour:
//
//	limits := param.DeclareGroup(d, cmdvel.Limits{Linear: 1, Angular: 1}, cmdvel.Limits.Validate,
//		param.Field("max_linear_velocity", func(l *cmdvel.Limits) *float64 { return &l.Linear },
//			param.Descriptor{Description: "m/s (live)", FloatRange: param.Floats(0, 1000)}),
//		param.Field("max_angular_velocity", func(l *cmdvel.Limits) *float64 { return &l.Angular },
//			param.Descriptor{Description: "rad/s (live)", FloatRange: param.Floats(0, 1000)}))
//	if err := d.Err(); err != nil {
//		return err
//	}
//	guard, err := cmdvel.NewGuard("cmd_vel", limits.Get())
//	... every cycle:
//	if l, ok := limits.Changed(); ok {
//		guard.SetLimits(l) // valid: the group checked it
//	}
//
// A proposed change (one parameter or several in one set call) is checked
// by the store (type, range, NaN), then the whole configuration with the
// change in it is checked by validate, once; its error text is the
// SetParametersResult reason. An accepted change is in Get before the set
// call returns. The start-up value (defaults, --params-file, -p) is
// checked the same way; a refused one is the Declarer's error.
type Group[C comparable] struct {
	cur  atomic.Pointer[C]
	ver  atomic.Uint64
	seen uint64 // the version Changed returned last
}

// GroupField binds one parameter to a field of C (Field, DurationField).
type GroupField[C comparable] struct {
	name string
	desc Descriptor
	def  func(c *C) Value                // the field's value as a parameter value
	set  func(c *C, v Value) (err error) // stores v into the field
}

// Field binds the parameter name to the field of C that field points to,
// for the parameter types (float64, int64, bool, string and their
// arrays); desc's Type is taken from T.
func Field[C comparable, T Kind](name string, field func(c *C) *T, desc Descriptor) GroupField[C] {
	if desc.Type == TypeNotSet {
		desc.Type = TypeOf[T]()
	}
	return GroupField[C]{name: name, desc: desc,
		def: func(c *C) Value { return Of(*field(c)) },
		set: func(c *C, v Value) error {
			x, err := As[T](v)
			if err != nil {
				return err
			}
			*field(c) = x
			return nil
		}}
}

// DurationField binds a double parameter holding seconds (the ROS
// convention) to a time.Duration field of C. Without a range in desc,
// negative values are refused.
func DurationField[C comparable](name string, field func(c *C) *time.Duration, desc Descriptor) GroupField[C] {
	desc = secondsRange(desc)
	desc.Type = TypeDouble
	return GroupField[C]{name: name, desc: desc,
		def: func(c *C) Value { return Of(field(c).Seconds()) },
		set: func(c *C, v Value) error {
			sec, err := As[float64](v)
			if err != nil {
				return err
			}
			if math.IsNaN(sec) || math.Abs(sec) > float64(math.MaxInt64)/1e9 {
				return fmt.Errorf("%g s does not fit a duration", sec)
			}
			*field(c) = time.Duration(math.Round(sec * 1e9))
			return nil
		}}
}

// DeclareGroup declares the fields' parameters as live parameters with
// the values of def as defaults, and returns the group holding the
// effective configuration. validate (nil: none) is the behaviour's own
// check of a whole configuration; it runs on the start-up value and on
// every proposed change. After a failed declaration the group holds def.
func DeclareGroup[C comparable](d *Declarer, def C, validate func(C) error, fields ...GroupField[C]) *Group[C] {
	g := &Group[C]{}
	g.cur.Store(&def)
	if d.err != nil {
		return g
	}
	cfg := def
	byName := make(map[string]GroupField[C], len(fields))
	names := make([]string, 0, len(fields))
	for _, f := range fields {
		if f.desc.ReadOnly {
			d.Fail(fmt.Errorf("parameter %s: a live parameter cannot be read-only", f.name))
			return g
		}
		v, err := d.store.Declare(f.name, f.def(&def), f.desc)
		if err != nil {
			d.Fail(err)
			return g
		}
		if err := f.set(&cfg, v); err != nil {
			d.Fail(fmt.Errorf("parameter %s = %s: %w", f.name, v, err))
			return g
		}
		byName[f.name] = f
		names = append(names, f.name)
	}
	check := func(c C) error {
		if validate == nil {
			return nil
		}
		return validate(c)
	}
	if err := check(cfg); err != nil {
		d.Fail(fmt.Errorf("parameters %s: %w", strings.Join(names, ", "), err))
		return g
	}
	g.cur.Store(&cfg)
	// apply returns the configuration with the group's parameters among ps
	// applied to the current one, and whether any was.
	apply := func(ps []Parameter) (C, bool, error) {
		c := *g.cur.Load()
		touched := false
		for _, p := range ps {
			f, ok := byName[p.Name]
			if !ok || !p.Value.IsSet() {
				continue
			}
			if err := f.set(&c, p.Value); err != nil {
				return c, true, fmt.Errorf("parameter %s = %s: %w", p.Name, p.Value, err)
			}
			touched = true
		}
		return c, touched, nil
	}
	// The validator refuses a change that makes the configuration
	// invalid; the watcher stores an accepted one. Both run under the
	// store's change lock, so Get returns the new value before the set
	// call returns.
	d.store.OnSet(func(proposed []Parameter) error {
		c, touched, err := apply(proposed)
		if err != nil || !touched {
			return err
		}
		return check(c)
	})
	d.store.OnChange(func(ev Event) {
		c, touched, err := apply(ev.Changed)
		if err != nil || !touched {
			return // refused by the validator; unreachable
		}
		g.cur.Store(&c)
		g.ver.Add(1)
	})
	return g
}

// NewGroup returns a Group holding c that no parameter changes (for tests
// and for code run without a node).
func NewGroup[C comparable](c C) *Group[C] {
	g := &Group[C]{}
	g.cur.Store(&c)
	return g
}

// Get returns the current configuration. It is safe from any goroutine.
func (g *Group[C]) Get() C { return *g.cur.Load() }

// Changed returns the current configuration and whether a set call
// changed it since the last call of Changed. Call it from one goroutine
// (the node's cycle), which then hands the configuration to the behaviour.
func (g *Group[C]) Changed() (C, bool) {
	v := g.ver.Load()
	c := *g.cur.Load()
	if v == g.seen {
		return c, false
	}
	g.seen = v
	return c, true
}
