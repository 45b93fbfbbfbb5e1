package param

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// Declarer declares the parameters of one node in a row and keeps the
// first error, so that a node's setup reads as a list of declarations
// followed by one check of Err. It is the one way every node of this
// project declares its parameters:
//
//	d := ros.NewDeclarer(node)
//	topic := param.Declare(d, "cmd_vel_topic", "cmd_vel",
//		param.ReadOnly("multiplexed Twist output", "the publisher is created at start-up"), nil)
//	idle := param.DeclareLiveDuration(d, "teleoperation_idle_timer", 500*time.Millisecond,
//		param.Descriptor{Description: "seconds without teleoperation input until STOPPED"}, nil)
//	if err := d.Err(); err != nil {
//		return err
//	}
//	... every cycle: timeout := idle.Get()
//
// Read-only parameters (Declare) are fixed at start-up by their default,
// --params-file and -p; a later set is refused with the reason given to
// ReadOnly. Live parameters (DeclareLive) may be set while the node runs:
// each change is checked (type, range and NaN by the store, then the
// parameter's own check) and refused with the reason as the
// SetParametersResult reason, or accepted and visible through Live.Get
// before the set call returns, so the node's next cycle uses it.
//
// After a failed declaration the following ones are skipped (they return
// their defaults and a Live holding the default).
type Declarer struct {
	store *Store
	wrap  func(error) error
	err   error
}

// NewDeclarer returns a Declarer over s. wrap, if not nil, adds what the
// caller knows (which node) to every error the Declarer returns; the
// errors name the parameter themselves.
func NewDeclarer(s *Store, wrap func(error) error) *Declarer {
	return &Declarer{store: s, wrap: wrap}
}

// Store returns the store the parameters are declared on.
func (d *Declarer) Store() *Store { return d.store }

// Err returns the first error of the declarations so far (nil if none).
func (d *Declarer) Err() error { return d.err }

// Fail records err (a check across several parameters, say) unless an
// error is recorded already.
func (d *Declarer) Fail(err error) {
	if d.err == nil && err != nil {
		if d.wrap != nil {
			err = d.wrap(err)
		}
		d.err = err
	}
}

// ReadOnly returns the descriptor of a parameter that cannot change while
// the node runs: description says what it is and why says why it is fixed
// (e.g. "the subscription is created at start-up"). `ros2 param describe`
// shows both, and a refused set names the reason.
func ReadOnly(description, why string) Descriptor {
	return Descriptor{Description: description + " (read-only: " + why + ")", ReadOnly: true, ReadOnlyReason: why}
}

// Floats returns a closed floating point range from..to, for
// Descriptor.FloatRange.
func Floats(from, to float64) *FloatRange { return &FloatRange{From: from, To: to} }

// Ints returns a closed integer range from..to, for Descriptor.IntegerRange.
func Ints(from, to int64) *IntegerRange { return &IntegerRange{From: from, To: to} }

// Declare declares a read-only parameter with default def and returns its
// effective value. desc is usually ReadOnly(...); a descriptor without
// ReadOnly is made read-only ("read once at start-up"). check, if not nil,
// validates the effective value (its error text explains what is wrong).
func Declare[T Kind](d *Declarer, name string, def T, desc Descriptor, check func(T) error) T {
	if !desc.ReadOnly {
		desc.ReadOnly = true
		if desc.ReadOnlyReason == "" {
			desc.ReadOnlyReason = "read once at start-up"
		}
	}
	v, _ := declare(d, name, def, desc, func(x T) (T, error) {
		if check != nil {
			if err := check(x); err != nil {
				return x, err
			}
		}
		return x, nil
	})
	return v
}

// DeclareDuration declares a read-only double parameter holding seconds
// (the ROS convention for durations) and returns it as a Duration. Without
// a range in desc, negative values are refused.
func DeclareDuration(d *Declarer, name string, def time.Duration, desc Descriptor, check func(time.Duration) error) time.Duration {
	if !desc.ReadOnly {
		desc.ReadOnly = true
		if desc.ReadOnlyReason == "" {
			desc.ReadOnlyReason = "read once at start-up"
		}
	}
	v, _ := declare(d, name, def.Seconds(), secondsRange(desc), durationConv(check))
	return v
}

// DeclareLive declares a parameter that may be set while the node runs and
// returns the Live holding its current value. check, if not nil, validates
// the value at start-up and every proposed change after the store's own
// checks (type, range, NaN); its error text is the rejection reason.
func DeclareLive[T Kind](d *Declarer, name string, def T, desc Descriptor, check func(T) error) *Live[T] {
	return declareLive(d, name, def, desc, func(x T) (T, error) {
		if check != nil {
			if err := check(x); err != nil {
				return x, err
			}
		}
		return x, nil
	})
}

// DeclareLiveDuration is DeclareLive for a double parameter holding seconds,
// read as a Duration. Without a range in desc, negative values are refused.
func DeclareLiveDuration(d *Declarer, name string, def time.Duration, desc Descriptor, check func(time.Duration) error) *Live[time.Duration] {
	return declareLive(d, name, def.Seconds(), secondsRange(desc), durationConv(check))
}

func secondsRange(desc Descriptor) Descriptor {
	if desc.FloatRange == nil && desc.IntegerRange == nil {
		desc.FloatRange = &FloatRange{From: 0, To: math.Inf(1)}
	}
	return desc
}

func durationConv(check func(time.Duration) error) func(float64) (time.Duration, error) {
	return func(sec float64) (time.Duration, error) {
		if math.IsNaN(sec) || math.Abs(sec) > float64(math.MaxInt64)/1e9 {
			return 0, fmt.Errorf("%g s does not fit a duration", sec)
		}
		dur := time.Duration(math.Round(sec * 1e9))
		if check != nil {
			if err := check(dur); err != nil {
				return dur, err
			}
		}
		return dur, nil
	}
}

// declare declares name on the store and converts (and checks) its
// effective value. On error it records it and returns conv(def)'s value.
func declare[P Kind, T any](d *Declarer, name string, def P, desc Descriptor, conv func(P) (T, error)) (T, bool) {
	fallback, _ := conv(def)
	if d.err != nil {
		return fallback, false
	}
	if desc.Type == TypeNotSet {
		desc.Type = TypeOf[P]()
	}
	v, err := d.store.Declare(name, Of(def), desc)
	if err != nil {
		d.Fail(err)
		return fallback, false
	}
	p, err := As[P](v)
	if err != nil {
		d.Fail(fmt.Errorf("parameter %s: %w", name, err))
		return fallback, false
	}
	out, err := conv(p)
	if err != nil {
		d.Fail(fmt.Errorf("parameter %s = %s: %w", name, v, err))
		return fallback, false
	}
	return out, true
}

func declareLive[P Kind, T any](d *Declarer, name string, def P, desc Descriptor, conv func(P) (T, error)) *Live[T] {
	if desc.ReadOnly {
		d.Fail(fmt.Errorf("parameter %s: a live parameter cannot be read-only", name))
	}
	v, ok := declare(d, name, def, desc, conv)
	l := &Live[T]{name: name}
	l.v.Store(&v)
	if !ok {
		return l
	}
	// The validator refuses a change the conversion refuses; the watcher
	// publishes an accepted one. Both run under the store's change lock, so
	// Get returns the new value before the set call returns.
	d.store.OnSet(func(proposed []Parameter) error {
		for _, p := range proposed {
			if p.Name != name || !p.Value.IsSet() {
				continue
			}
			x, err := As[P](p.Value)
			if err != nil {
				return fmt.Errorf("parameter %s: %w", name, err)
			}
			if _, err := conv(x); err != nil {
				return fmt.Errorf("parameter %s = %s: %w", name, p.Value, err)
			}
		}
		return nil
	})
	d.store.OnChange(func(ev Event) {
		for _, p := range ev.Changed {
			if p.Name != name {
				continue
			}
			x, err := As[P](p.Value)
			if err != nil {
				continue // refused by the validator; unreachable
			}
			y, err := conv(x)
			if err != nil {
				continue
			}
			l.v.Store(&y)
			l.ver.Add(1)
		}
	})
	return l
}

// Live is the current value of a parameter that may be set while the node
// runs. Get is safe from any goroutine: a node reads it at every cycle (or
// checks Changed) and hands the value to its behaviour there, so the
// behaviour never sees a change in the middle of a cycle.
type Live[T any] struct {
	name string
	v    atomic.Pointer[T]
	ver  atomic.Uint64
}

// NewLive returns a Live holding v that no parameter changes (for tests and
// for code run without a node).
func NewLive[T any](name string, v T) *Live[T] {
	l := &Live[T]{name: name}
	l.v.Store(&v)
	return l
}

// Name returns the parameter name.
func (l *Live[T]) Name() string { return l.name }

// Get returns the current value.
func (l *Live[T]) Get() T { return *l.v.Load() }

// Changed returns the current value and whether it changed since the
// version in *seen (0 is the declared value), and stores the current
// version in *seen. A loop keeps its own seen to rebuild what depends on
// the value (a timer period, a guard) only when it changes.
func (l *Live[T]) Changed(seen *uint64) (T, bool) {
	ver := l.ver.Load()
	v := l.Get()
	if ver == *seen {
		return v, false
	}
	*seen = ver
	return v, true
}

// ErrNotFinite is returned by the checks of this package for NaN and
// infinite values.
var ErrNotFinite = errors.New("not a finite number")

// Positive is a check for DeclareLive[float64]: the value must be finite
// and above zero.
func Positive(x float64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return ErrNotFinite
	}
	if x <= 0 {
		return errors.New("must be above 0")
	}
	return nil
}

// Frequency is a check for a rate in Hz from which a timer period is
// derived: the value must be finite, above zero, and low enough that the
// period, one second divided by it, is at least a nanosecond (a period that
// rounds to 0 would stop the timer and the node).
func Frequency(hz float64) error {
	if err := Positive(hz); err != nil {
		return err
	}
	if Period(hz) <= 0 {
		return fmt.Errorf("%g Hz is a period of %g s, which rounds to 0 ns", hz, 1/hz)
	}
	return nil
}

// Period returns the timer period of a rate in Hz, rounded down to the
// nanosecond; 0 for a rate Frequency refuses.
func Period(hz float64) time.Duration {
	if !(hz > 0) || math.IsInf(hz, 1) {
		return 0
	}
	return time.Duration(float64(time.Second) / hz)
}
