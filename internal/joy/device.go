package joy

import (
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// Config holds the joy_linux parameters that shape what is published and
// when. DefaultConfig gives joy_linux's defaults.
type Config struct {
	// Deadzone (deadzone) is the fraction of an axis' half range around
	// the centre that reads as zero; the rest is rescaled to reach ±1.
	Deadzone float64
	// AutorepeatRate (autorepeat_rate, Hz) republishes an unchanged state
	// at this rate; 0 disables it.
	AutorepeatRate float64
	// CoalesceInterval (coalesce_interval, seconds on the node) is how
	// long axis events are gathered before their message goes out.
	CoalesceInterval time.Duration
	// StickyButtons (sticky_buttons) makes every press toggle its button.
	StickyButtons bool
	// DefaultTrigVal (default_trig_val) uses the axis values of the
	// initial-state events; otherwise axes read 0 until first moved.
	DefaultTrigVal bool
}

// DefaultConfig returns joy_linux's defaults: deadzone 0.05, autorepeat
// 20 Hz, coalesce interval 1 ms, no sticky buttons, no default trigger
// values.
func DefaultConfig() Config {
	return Config{Deadzone: 0.05, AutorepeatRate: 20, CoalesceInterval: time.Millisecond}
}

// Sanitize returns c corrected as joy_linux corrects its parameters, with
// one warning per correction: a deadzone >= 1 is taken as raw units and
// divided by 32767, one above 0.9 becomes 0.9, a negative deadzone,
// autorepeat rate or coalesce interval becomes 0, and an autorepeat rate
// above 1/coalesce_interval is reported. A NaN or infinite value is an
// error.
func (c Config) Sanitize() (Config, []string, error) {
	if !finite(c.Deadzone) || !finite(c.AutorepeatRate) {
		return c, nil, fmt.Errorf("joy: deadzone %v and autorepeat_rate %v must be finite", c.Deadzone, c.AutorepeatRate)
	}
	if c.AutorepeatRate > 0 && time.Duration(float64(time.Second)/c.AutorepeatRate) <= 0 {
		return c, nil, fmt.Errorf("joy: autorepeat_rate %g Hz is a period of %g s, which rounds to 0 ns", c.AutorepeatRate, 1/c.AutorepeatRate)
	}
	var warn []string
	if c.CoalesceInterval > 0 && c.AutorepeatRate > 1/c.CoalesceInterval.Seconds() {
		warn = append(warn, fmt.Sprintf("autorepeat_rate (%g Hz) > 1/coalesce_interval (%g Hz) does not make sense; "+
			"messages come at most every coalesce_interval", c.AutorepeatRate, 1/c.CoalesceInterval.Seconds()))
	}
	if c.Deadzone >= 1 {
		warn = append(warn, fmt.Sprintf("deadzone %g >= 1 is read as raw axis units (old semantics) and divided by 32767; "+
			"give it as a fraction of the axis range [-1, 1]", c.Deadzone))
		c.Deadzone /= 32767
	}
	if c.Deadzone > 0.9 {
		warn = append(warn, fmt.Sprintf("deadzone %g greater than 0.9, using 0.9", c.Deadzone))
		c.Deadzone = 0.9
	}
	if c.Deadzone < 0 {
		warn = append(warn, fmt.Sprintf("deadzone %g less than 0, using 0", c.Deadzone))
		c.Deadzone = 0
	}
	if c.AutorepeatRate < 0 {
		warn = append(warn, fmt.Sprintf("autorepeat_rate %g less than 0, using 0 (off)", c.AutorepeatRate))
		c.AutorepeatRate = 0
	}
	if c.CoalesceInterval < 0 {
		warn = append(warn, fmt.Sprintf("coalesce_interval %g s less than 0, using 0", c.CoalesceInterval.Seconds()))
		c.CoalesceInterval = 0
	}
	return c, warn, nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// MaxControls bounds axis and button numbers; the kernel uses uint8 numbers
// but real pads have a few dozen at most.
const MaxControls = 64

// Urgency says when an event's new state should be published.
type Urgency int

// Urgencies, as joy_linux decides them.
const (
	// Ignore: the event was dropped (malformed or out of range).
	Ignore Urgency = iota
	// Soon: an axis or initial-state event; publish after the coalesce
	// interval so that the other events of the same motion join it.
	Soon
	// Now: a button event; publish at once so no press is missed.
	Now
)

// Device keeps the state of one joystick as events arrive. The zero state
// (no axes, no buttons) is what a freshly opened device starts from.
type Device struct {
	cfg   Config
	state State
	// Dropped counts events that were malformed or out of range.
	Dropped int
}

// NewDevice returns a device for cfg, after Sanitize (whose warnings it
// drops; the node logs them).
func NewDevice(cfg Config) (*Device, error) {
	c, _, err := cfg.Sanitize()
	if err != nil {
		return nil, err
	}
	return &Device{cfg: c}, nil
}

// Reset forgets the state, as when the device is reopened.
func (d *Device) Reset() { d.state = State{} }

// Apply updates the state with one event and says when to publish it.
// Buttons read 1 while pressed (with sticky buttons: each press toggles).
// Axes are scaled to [-1, 1] outside the deadzone, sign flipped so that
// up and right are positive; the values of initial-state axis events are
// used only with DefaultTrigVal (the arrays grow either way).
func (d *Device) Apply(e Event) Urgency {
	if int(e.Number) >= MaxControls {
		d.Dropped++
		return Ignore
	}
	init := e.Type&EventInit != 0
	switch e.Type &^ EventInit {
	case EventButton:
		for len(d.state.Buttons) <= int(e.Number) {
			d.state.Buttons = append(d.state.Buttons, 0)
		}
		switch {
		case d.cfg.StickyButtons:
			if e.Value == 1 {
				d.state.Buttons[e.Number] = 1 - d.state.Buttons[e.Number]
			}
		case e.Value != 0:
			d.state.Buttons[e.Number] = 1
		default:
			d.state.Buttons[e.Number] = 0
		}
		if init {
			return Soon
		}
		return Now
	case EventAxis:
		for len(d.state.Axes) <= int(e.Number) {
			d.state.Axes = append(d.state.Axes, 0)
		}
		if d.cfg.DefaultTrigVal || !init {
			d.state.Axes[e.Number] = d.scaleAxis(e.Value)
		}
		return Soon
	default:
		d.Dropped++
		return Ignore
	}
}

// scaleAxis maps a raw value to [-1, 1] with the deadzone removed and the
// sign flipped (pushing a stick up or right gives a positive value), as
// joy_linux does; -32768 would give slightly more than 1 and is clamped.
func (d *Device) scaleAxis(raw int16) float32 {
	const full = 32767.0
	dz := full * d.cfg.Deadzone
	v := float64(raw)
	switch {
	case v > dz:
		v -= dz
	case v < -dz:
		v += dz
	default:
		v = 0
	}
	out := -v / (full - dz)
	return float32(math.Max(-1, math.Min(1, out)))
}

// State returns a copy of the current state.
func (d *Device) State() State { return d.state.Clone() }

// ReadEvents decodes records from r and calls onEvent for each until r
// fails or returns io.EOF (returned as io.EOF). A trailing partial record
// is reported as ErrShortEvent.
func ReadEvents(r io.Reader, onEvent func(Event)) error {
	buf := make([]byte, EventSize*16)
	pending := 0
	for {
		n, err := r.Read(buf[pending:])
		pending += n
		k := 0
		for ; pending-k >= EventSize; k += EventSize {
			e, _ := ParseEvent(buf[k : k+EventSize])
			onEvent(e)
		}
		copy(buf, buf[k:pending])
		pending -= k
		if err != nil {
			if errors.Is(err, io.EOF) {
				if pending != 0 {
					return fmt.Errorf("%w: %d trailing bytes", ErrShortEvent, pending)
				}
				return io.EOF
			}
			return fmt.Errorf("joy: read: %w", err)
		}
	}
}
