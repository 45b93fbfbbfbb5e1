// Package joy reads Linux joysticks through the /dev/input/js* event
// interface and turns them into what a sensor_msgs/Joy message carries,
// with the parameters, defaults and timing of ROS 2's joy_linux driver
// (deadzone, autorepeat, coalescing of axis events, sticky buttons,
// default_trig_val, reopening an unplugged device); and it maps joystick
// state onto velocity commands the way teleop_twist_joy does (an enable
// button, per-axis scales, an optional turbo button).
//
// The package has no ROS imports; internal/joy/joynode adapts it for the
// joy and joy_teleop executables.
package joy

import (
	"encoding/binary"
	"errors"
	"fmt"
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

// Encode returns the 8-byte record of e (used to make test streams and
// fake devices).
func (e Event) Encode() []byte {
	b := make([]byte, EventSize)
	binary.LittleEndian.PutUint32(b[0:4], e.TimeMs)
	binary.LittleEndian.PutUint16(b[4:6], uint16(e.Value))
	b[6], b[7] = e.Type, e.Number
	return b
}

// State is the joystick state in sensor_msgs/Joy terms: axes in [-1, 1],
// buttons 0 or 1.
type State struct {
	Axes    []float32
	Buttons []int32
}

// Clone returns a deep copy of s.
func (s State) Clone() State {
	return State{Axes: append([]float32(nil), s.Axes...), Buttons: append([]int32(nil), s.Buttons...)}
}
