// Package joy reads Linux joysticks through the /dev/input/js* event
// interface and turns their state into what a sensor_msgs/Joy message
// carries, and maps joystick state onto velocity commands the way
// teleop_twist_joy does (an enable button, per-axis scales, an optional
// turbo button).
//
// The package has no ROS imports; nodes/joy and nodes/joy_teleop adapt it.
package joy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Event types of the Linux joystick API (linux/joystick.h).
const (
	EventButton = 0x01
	EventAxis   = 0x02
	EventInit   = 0x80 // or-ed into the type for the synthetic initial-state events
)

// EventSize is the size of one struct js_event.
const EventSize = 8

// Event is one struct js_event: a timestamp in milliseconds, a value, a
// type and the axis or button number.
type Event struct {
	TimeMs uint32
	Value  int16
	Type   uint8
	Number uint8
}

// ErrShortEvent reports a truncated event record.
var ErrShortEvent = errors.New("joy: short event record")

// ParseEvent decodes one 8-byte js_event (native little-endian layout).
func ParseEvent(b []byte) (Event, error) {
	if len(b) < EventSize {
		return Event{}, fmt.Errorf("%w: %d bytes", ErrShortEvent, len(b))
	}
	return Event{
		TimeMs: binary.LittleEndian.Uint32(b[0:4]),
		Value:  int16(binary.LittleEndian.Uint16(b[4:6])),
		Type:   b[6],
		Number: b[7],
	}, nil
}

// Encode returns the 8-byte record of e (used to make test streams).
func (e Event) Encode() []byte {
	b := make([]byte, EventSize)
	binary.LittleEndian.PutUint32(b[0:4], e.TimeMs)
	binary.LittleEndian.PutUint16(b[4:6], uint16(e.Value))
	b[6], b[7] = e.Type, e.Number
	return b
}

// MaxControls bounds axis and button numbers; the kernel uses uint8 numbers
// but real pads have a few dozen at most.
const MaxControls = 64

// State is the current joystick state in sensor_msgs/Joy terms.
type State struct {
	Axes    []float32
	Buttons []int32
}

// Device keeps the state of one joystick as events arrive.
type Device struct {
	deadzone float64
	state    State
	// Dropped counts events that were malformed or out of range.
	Dropped int
}

// NewDevice returns a device with the given deadzone (0 ≤ dz < 1, as the
// joy_linux "deadzone" parameter; default 0.05).
func NewDevice(deadzone float64) (*Device, error) {
	if !(deadzone >= 0 && deadzone < 1) {
		return nil, fmt.Errorf("joy: deadzone %v must be in [0, 1)", deadzone)
	}
	return &Device{deadzone: deadzone}, nil
}

// Apply updates the state with one event and reports whether the state
// changed in a way worth publishing.
func (d *Device) Apply(e Event) bool {
	if int(e.Number) >= MaxControls {
		d.Dropped++
		return false
	}
	switch e.Type &^ EventInit {
	case EventButton:
		for len(d.state.Buttons) <= int(e.Number) {
			d.state.Buttons = append(d.state.Buttons, 0)
		}
		v := int32(0)
		if e.Value != 0 {
			v = 1
		}
		changed := d.state.Buttons[e.Number] != v
		d.state.Buttons[e.Number] = v
		return changed
	case EventAxis:
		for len(d.state.Axes) <= int(e.Number) {
			d.state.Axes = append(d.state.Axes, 0)
		}
		v := d.scaleAxis(e.Value)
		changed := d.state.Axes[e.Number] != v
		d.state.Axes[e.Number] = v
		return changed
	default:
		d.Dropped++
		return false
	}
}

// scaleAxis maps a raw value to [-1, 1] with the deadzone removed and the
// sign flipped (pushing a stick up or right gives a positive value), as
// joy_linux does.
func (d *Device) scaleAxis(raw int16) float32 {
	const full = 32767.0
	dz := full * d.deadzone
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
func (d *Device) State() State {
	return State{Axes: append([]float32(nil), d.state.Axes...), Buttons: append([]int32(nil), d.state.Buttons...)}
}

// ReadEvents reads records from r and applies them until r fails or
// returns io.EOF; onChange is called after every event that changed the
// state. A trailing partial record is reported as ErrShortEvent.
func (d *Device) ReadEvents(r io.Reader, onChange func(State)) error {
	buf := make([]byte, EventSize*16)
	pending := 0
	for {
		n, err := r.Read(buf[pending:])
		pending += n
		k := 0
		for ; pending-k >= EventSize; k += EventSize {
			e, _ := ParseEvent(buf[k : k+EventSize])
			if d.Apply(e) && onChange != nil {
				onChange(d.State())
			}
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
