// Package dynamixel drives Robotis Dynamixel AX-12A servos with protocol 1.0
// over a serial port (a U2D2 or USB2AX adapter at 1 Mbaud in the original).
//
// packet.go encodes instruction packets and decodes status packets,
// driver.go maps the hexapod's 18 joint angles onto servo ticks and
// implements hexapod.ServoDriver, serial_linux.go opens a serial port in raw
// mode, and simbus.go is a simulated AX-12A bus used by the tests.
//
// Protocol 1.0 packets are
//
//	instruction: 0xFF 0xFF ID LENGTH INSTRUCTION PARAM... CHECKSUM
//	status:      0xFF 0xFF ID LENGTH ERROR PARAM... CHECKSUM
//
// with LENGTH = number of parameters + 2 and CHECKSUM = ^(ID + LENGTH +
// INSTRUCTION/ERROR + PARAM...) & 0xFF.
package dynamixel

import (
	"errors"
	"fmt"
	"strings"
)

// Instructions of protocol 1.0.
const (
	InstPing      byte = 0x01
	InstRead      byte = 0x02
	InstWrite     byte = 0x03
	InstSyncWrite byte = 0x83
)

// BroadcastID addresses every servo; servos never answer it.
const BroadcastID byte = 0xFE

// AX-12A control table addresses (Robotis standard).
const (
	AddrTorqueEnable    byte = 24
	AddrGoalPosition    byte = 30
	AddrMovingSpeed     byte = 32
	AddrPresentPosition byte = 36
)

// Checksum returns the protocol 1.0 checksum of the bytes between the header
// and the checksum.
func Checksum(body []byte) byte {
	var s byte
	for _, b := range body {
		s += b
	}
	return ^s
}

// Instruction builds an instruction packet. It fails when the packet would
// exceed the one-byte LENGTH field.
func Instruction(id, inst byte, params ...byte) ([]byte, error) {
	if len(params) > 253 {
		return nil, fmt.Errorf("dynamixel: %d parameters do not fit one packet", len(params))
	}
	p := make([]byte, 0, 6+len(params))
	p = append(p, 0xFF, 0xFF, id, byte(len(params)+2), inst)
	p = append(p, params...)
	return append(p, Checksum(p[2:])), nil
}

// SyncWrite builds a SYNC_WRITE packet writing len(data[i]) bytes at addr of
// servo ids[i]; every data slice must have the same length.
func SyncWrite(addr byte, ids []byte, data [][]byte) ([]byte, error) {
	if len(ids) != len(data) || len(ids) == 0 {
		return nil, fmt.Errorf("dynamixel: sync write needs one data slice per id (%d ids, %d data)", len(ids), len(data))
	}
	n := len(data[0])
	params := []byte{addr, byte(n)}
	for i, id := range ids {
		if len(data[i]) != n {
			return nil, fmt.Errorf("dynamixel: sync write data for id %d has %d bytes, want %d", id, len(data[i]), n)
		}
		params = append(params, id)
		params = append(params, data[i]...)
	}
	return Instruction(BroadcastID, InstSyncWrite, params...)
}

// Status is a decoded status packet.
type Status struct {
	ID     byte
	Error  byte // error bits, see StatusError
	Params []byte
}

// ErrChecksum is returned (wrapped) when a status packet has a bad checksum.
var ErrChecksum = errors.New("dynamixel: status packet checksum mismatch")

// ErrTimeout is returned (wrapped) when a servo does not answer in time.
var ErrTimeout = errors.New("dynamixel: no status packet before the timeout")

// StatusError reports the error bits a servo set in its status packet.
type StatusError struct {
	ID   byte
	Bits byte
}

var statusBitNames = [7]string{"input voltage", "angle limit", "overheating", "range", "checksum", "overload", "instruction"}

func (e *StatusError) Error() string {
	var names []string
	for i, n := range statusBitNames {
		if e.Bits&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return fmt.Sprintf("dynamixel: servo %d reports error 0x%02x (%s)", e.ID, e.Bits, strings.Join(names, ", "))
}

// parseStatus decodes a complete status packet (header included).
func parseStatus(p []byte) (Status, error) {
	if len(p) < 6 || p[0] != 0xFF || p[1] != 0xFF || int(p[3])+4 != len(p) {
		return Status{}, fmt.Errorf("dynamixel: malformed status packet % X", p)
	}
	if c := Checksum(p[2 : len(p)-1]); c != p[len(p)-1] {
		return Status{}, fmt.Errorf("%w: id %d got 0x%02X want 0x%02X", ErrChecksum, p[2], p[len(p)-1], c)
	}
	return Status{ID: p[2], Error: p[4], Params: append([]byte(nil), p[5:len(p)-1]...)}, nil
}
