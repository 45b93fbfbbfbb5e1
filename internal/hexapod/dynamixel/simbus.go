package dynamixel

import (
	"fmt"
	"io"
	"sync"
)

// Fault is a misbehaviour the simulated bus can inject for one servo.
type Fault int

// Faults of SimBus.
const (
	FaultNone        Fault = iota
	FaultBadChecksum       // answer with a corrupted checksum
	FaultSilent            // never answer (the driver times out)
	FaultOverload          // answer with the overload error bit set
)

// SimBus simulates AX-12A servos on a protocol 1.0 bus. Serve reads
// instruction packets from the host side of a port (for example the master
// of a pseudo-terminal) and answers like the servos would: PING, READ, WRITE
// and SYNC_WRITE on a 50-byte control table per servo, a checksum-error
// status for a corrupted instruction, an instruction-error status for an
// unknown one, and no answer to broadcasts. With torque enabled a written
// goal position becomes the present position at once.
//
// Its methods are safe for concurrent use with Serve.
type SimBus struct {
	mu       sync.Mutex
	tables   map[byte]*[50]byte
	faults   map[byte]Fault
	received [][]byte
}

// NewSimBus returns a bus with servos at the given ids, each at present
// position 512 with torque off.
func NewSimBus(ids ...byte) *SimBus {
	b := &SimBus{tables: map[byte]*[50]byte{}, faults: map[byte]Fault{}}
	for _, id := range ids {
		t := new([50]byte)
		t[3] = id
		t[AddrPresentPosition], t[AddrPresentPosition+1] = 0x00, 0x02
		t[AddrGoalPosition], t[AddrGoalPosition+1] = 0x00, 0x02
		b.tables[id] = t
	}
	return b
}

// SetFault injects a fault for servo id.
func (b *SimBus) SetFault(id byte, f Fault) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.faults[id] = f
}

// SetPresent sets the present position of servo id.
func (b *SimBus) SetPresent(id byte, tick int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t := b.tables[id]; t != nil {
		t[AddrPresentPosition], t[AddrPresentPosition+1] = byte(tick), byte(tick>>8)
	}
}

// Byte returns one control-table byte of servo id (0 for an unknown id).
func (b *SimBus) Byte(id, addr byte) byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t := b.tables[id]; t != nil && int(addr) < len(t) {
		return t[addr]
	}
	return 0
}

// Word returns a two-byte little-endian control-table value of servo id.
func (b *SimBus) Word(id, addr byte) int {
	return int(b.Byte(id, addr)) | int(b.Byte(id, addr+1))<<8
}

// Received returns copies of all instruction packets received so far and
// forgets them.
func (b *SimBus) Received() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.received
	b.received = nil
	return r
}

// Serve answers instruction packets read from rw until reading fails (for
// example when the port is closed); it returns that error.
func (b *SimBus) Serve(rw io.ReadWriter) error {
	var buf []byte
	tmp := make([]byte, 256)
	for {
		n, err := rw.Read(tmp)
		buf = append(buf, tmp[:n]...)
		for {
			var p []byte
			p, buf = cutInstruction(buf)
			if p == nil {
				break
			}
			if reply := b.handle(p); reply != nil {
				if _, werr := rw.Write(reply); werr != nil {
					return fmt.Errorf("simbus: write status: %w", werr)
				}
			}
		}
		if err != nil {
			return err
		}
	}
}

// cutInstruction returns the next complete packet in buf and the rest.
func cutInstruction(buf []byte) (p, rest []byte) {
	for len(buf) >= 2 && !(buf[0] == 0xFF && buf[1] == 0xFF && (len(buf) < 3 || buf[2] != 0xFF)) {
		buf = buf[1:]
	}
	if len(buf) < 4 {
		return nil, buf
	}
	n := int(buf[3]) + 4
	if len(buf) < n {
		return nil, buf
	}
	return buf[:n:n], buf[n:]
}

func (b *SimBus) handle(p []byte) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.received = append(b.received, append([]byte(nil), p...))
	id := p[2]
	if len(p) < 6 {
		return nil
	}
	okSum := Checksum(p[2:len(p)-1]) == p[len(p)-1]
	inst, params := p[4], p[5:len(p)-1]
	if id == BroadcastID {
		if okSum && inst == InstSyncWrite && len(params) >= 2 {
			addr, l := params[0], int(params[1])
			for rest := params[2:]; len(rest) >= l+1; rest = rest[l+1:] {
				b.write(rest[0], addr, rest[1:l+1])
			}
		}
		return nil
	}
	t := b.tables[id]
	if t == nil {
		return nil
	}
	switch b.faults[id] {
	case FaultSilent:
		return nil
	}
	var errBits byte
	var out []byte
	switch {
	case !okSum:
		errBits = 0x10
	case inst == InstPing:
	case inst == InstRead && len(params) == 2 && int(params[0])+int(params[1]) <= len(t):
		out = append(out, t[params[0]:int(params[0])+int(params[1])]...)
	case inst == InstWrite && len(params) >= 2 && int(params[0])+len(params)-1 <= len(t):
		b.write(id, params[0], params[1:])
	default:
		errBits = 0x40
	}
	if b.faults[id] == FaultOverload {
		errBits |= 0x20
	}
	reply, _ := Instruction(id, errBits, out...) // same layout, ERROR in place of INSTRUCTION
	if b.faults[id] == FaultBadChecksum {
		reply[len(reply)-1] ^= 0x5A
	}
	return reply
}

// write stores data into the control table of id; the caller holds mu.
func (b *SimBus) write(id, addr byte, data []byte) {
	t := b.tables[id]
	if t == nil || int(addr)+len(data) > len(t) {
		return
	}
	copy(t[addr:], data)
	if t[AddrTorqueEnable] == 1 {
		t[AddrPresentPosition], t[AddrPresentPosition+1] = t[AddrGoalPosition], t[AddrGoalPosition+1]
	}
}
