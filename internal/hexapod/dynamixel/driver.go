package dynamixel

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/hexapod"
)

// Servo describes one joint servo, the original's per-servo parameter
// [NR, ID, Ticks, Center, Max_Degree, Sign, Offset] plus the goal limits of
// its joint type (LIMIT_COXA, LIMIT_FEMUR, LIMIT_TIBIA).
type Servo struct {
	Name      string  // joint name, e.g. COXA_RR
	ID        byte    // bus id
	Ticks     int     // ticks over the full range (1024)
	Center    int     // tick of angle 0 (512)
	MaxDegree float64 // full range in degrees (300)
	Sign      int     // +1 or -1: direction of positive joint angles
	Offset    float64 // joint angle at the centre tick, radians
	Min, Max  int     // goals must lie strictly between these ticks
}

// Tick converts a joint angle to a goal tick:
// Center + round(Sign·(angle − Offset)·Ticks/(MaxDegree·π/180)).
// ok is false for a non-finite angle or a tick not strictly inside
// (Min, Max); the original then left that servo's goal unchanged.
func (s Servo) Tick(angle float64) (tick int, ok bool) {
	if math.IsNaN(angle) || math.IsInf(angle, 0) {
		return 0, false
	}
	v := float64(s.Center) + math.Round(float64(s.Sign)*(angle-s.Offset)*float64(s.Ticks)/(s.MaxDegree*math.Pi/180))
	if !(v > float64(s.Min) && v < float64(s.Max)) {
		return int(math.Max(math.Min(v, 1<<20), -1<<20)), false
	}
	return int(v), true
}

// Angle converts a present-position tick back to a joint angle.
func (s Servo) Angle(tick int) float64 {
	return float64(tick-s.Center)*(s.MaxDegree*math.Pi/180)/float64(s.Ticks)*float64(s.Sign) + s.Offset
}

// Validate checks the servo description.
func (s Servo) Validate() error {
	switch {
	case s.ID >= BroadcastID:
		return fmt.Errorf("servo %s: id %d is reserved", s.Name, s.ID)
	case s.Ticks <= 0 || s.Ticks > 4096:
		return fmt.Errorf("servo %s: ticks %d out of range", s.Name, s.Ticks)
	case !(s.MaxDegree > 0 && s.MaxDegree <= 360):
		return fmt.Errorf("servo %s: max degree %v out of range", s.Name, s.MaxDegree)
	case s.Sign != 1 && s.Sign != -1:
		return fmt.Errorf("servo %s: sign %d must be 1 or -1", s.Name, s.Sign)
	case math.IsNaN(s.Offset) || math.IsInf(s.Offset, 0):
		return fmt.Errorf("servo %s: offset %v is not finite", s.Name, s.Offset)
	case s.Min < 0 || s.Max > s.Ticks-1 || s.Min >= s.Max:
		return fmt.Errorf("servo %s: limits [%d, %d] invalid for %d ticks", s.Name, s.Min, s.Max, s.Ticks)
	case s.Center <= s.Min || s.Center >= s.Max:
		return fmt.Errorf("servo %s: centre %d outside the limits [%d, %d]", s.Name, s.Center, s.Min, s.Max)
	}
	return nil
}

// Config configures a Driver.
type Config struct {
	// Servos maps the 18 joints (joint_states order) to servos.
	Servos [hexapod.NumJoints]Servo
	// Timeout is how long to wait for a status packet (default 20 ms).
	Timeout time.Duration
	// FullSpeed is the moving-speed register value for speed fraction 1
	// (532 in the original).
	FullSpeed int
}

// Default servo IDs and signs of the original, in joint order.
var (
	defaultIDs   = [hexapod.NumJoints]byte{8, 10, 12, 14, 16, 18, 2, 4, 6, 9, 11, 13, 15, 17, 19, 3, 5, 7}
	defaultSigns = [hexapod.NumJoints]int{-1, 1, -1, -1, 1, -1, -1, 1, -1, 1, 1, -1, 1, 1, -1, 1, 1, -1}
	// DefaultLimits are LIMIT_COXA, LIMIT_FEMUR and LIMIT_TIBIA in ticks.
	DefaultLimits = [3][2]int{{227, 796}, {39, 988}, {54, 960}}
)

// DefaultConfig returns the original's servo table (test_params.hpp).
func DefaultConfig() Config {
	var c Config
	for i, name := range hexapod.JointNames() {
		lim := DefaultLimits[i%3]
		c.Servos[i] = Servo{Name: name, ID: defaultIDs[i], Ticks: 1024, Center: 512, MaxDegree: 300,
			Sign: defaultSigns[i], Min: lim[0], Max: lim[1]}
	}
	c.Timeout = 20 * time.Millisecond
	c.FullSpeed = 532
	return c
}

// Validate checks every servo, unique IDs, the timeout and the speed.
func (c Config) Validate() error {
	var errs []error
	seen := map[byte]string{}
	for _, s := range c.Servos {
		if err := s.Validate(); err != nil {
			errs = append(errs, err)
		}
		if other, dup := seen[s.ID]; dup {
			errs = append(errs, fmt.Errorf("servo %s: id %d already used by %s", s.Name, s.ID, other))
		}
		seen[s.ID] = s.Name
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout %v must be positive", c.Timeout))
	}
	if c.FullSpeed <= 0 || c.FullSpeed > 1023 {
		errs = append(errs, fmt.Errorf("full speed %d outside 1..1023", c.FullSpeed))
	}
	return errors.Join(errs...)
}

// LimitError lists the joints whose goal was left unchanged because the
// angle mapped outside the servo's limits (or was not finite).
type LimitError struct {
	Joints []string
}

func (e *LimitError) Error() string {
	return "dynamixel: goal outside the servo limits, left unchanged: " + strings.Join(e.Joints, ", ")
}

// deadliner is implemented by ports that support read timeouts (*os.File
// for serial ports and pseudo-terminals).
type deadliner interface {
	SetReadDeadline(time.Time) error
}

// Driver talks to 18 AX-12A servos over one port. It implements
// hexapod.ServoDriver. It is not safe for concurrent use.
//
// If the port implements SetReadDeadline, status packets are awaited for
// Config.Timeout; otherwise reads block until the servo answers.
type Driver struct {
	port   io.ReadWriter
	cfg    Config
	goals  [hexapod.NumJoints]int
	valid  [hexapod.NumJoints]bool // goal known (read or written)
	torque bool
	rbuf   []byte
	tmp    [64]byte
}

// New returns a driver on port. It does not talk to the servos yet.
func New(port io.ReadWriter, cfg Config) (*Driver, error) {
	if port == nil {
		return nil, errors.New("dynamixel: nil port")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("dynamixel: invalid config: %w", err)
	}
	return &Driver{port: port, cfg: cfg}, nil
}

// Torque reports whether the driver has switched torque on.
func (d *Driver) Torque() bool { return d.torque }

// Ping sends PING to a servo and waits for its status.
func (d *Driver) Ping(id byte) error {
	_, err := d.transact(id, InstPing)
	return err
}

// SetTorque enables or disables torque on every servo with one WRITE per
// servo. Turning on first reads the present positions so that servos whose
// next goal is out of limits hold where they are; if anything fails while
// turning on, all servos are freed again (as the original did).
func (d *Driver) SetTorque(on bool) error {
	if on {
		if d.torque {
			return nil
		}
		var j hexapod.Joints
		if err := d.ReadPositions(&j); err != nil {
			return errors.Join(fmt.Errorf("dynamixel: torque on: %w", err), d.SetTorque(false))
		}
		for _, s := range d.cfg.Servos {
			if _, err := d.transact(s.ID, InstWrite, AddrTorqueEnable, 1); err != nil {
				return errors.Join(fmt.Errorf("dynamixel: torque on %s: %w", s.Name, err), d.SetTorque(false))
			}
		}
		d.torque = true
		return nil
	}
	var errs []error
	for _, s := range d.cfg.Servos {
		if _, err := d.transact(s.ID, InstWrite, AddrTorqueEnable, 0); err != nil {
			errs = append(errs, fmt.Errorf("dynamixel: torque off %s: %w", s.Name, err))
		}
	}
	d.torque = false
	return errors.Join(errs...)
}

// SetSpeed sync-writes the moving speed round(FullSpeed·fraction) to every
// servo; 0 is the AX-12A's unregulated maximum.
func (d *Driver) SetSpeed(fraction float64) error {
	if math.IsNaN(fraction) || fraction < 0 || math.IsInf(fraction, 0) {
		return fmt.Errorf("dynamixel: speed fraction %v must be finite and >= 0", fraction)
	}
	v := int(math.Min(math.Round(float64(d.cfg.FullSpeed)*fraction), 1023))
	ids := make([]byte, 0, hexapod.NumJoints)
	data := make([][]byte, 0, hexapod.NumJoints)
	for _, s := range d.cfg.Servos {
		ids = append(ids, s.ID)
		data = append(data, []byte{byte(v), byte(v >> 8)})
	}
	return d.syncWrite(AddrMovingSpeed, ids, data)
}

// WriteGoals converts the joint angles to ticks and sync-writes the goal
// positions. A joint whose tick is outside its limits keeps its previous
// goal (a servo without a known goal is left out of the packet) and is
// reported in a *LimitError after the packet was sent.
func (d *Driver) WriteGoals(j *hexapod.Joints) error {
	var skipped []string
	ids := make([]byte, 0, hexapod.NumJoints)
	data := make([][]byte, 0, hexapod.NumJoints)
	for i, s := range d.cfg.Servos {
		if t, ok := s.Tick(j[i]); ok {
			d.goals[i], d.valid[i] = t, true
		} else {
			skipped = append(skipped, fmt.Sprintf("%s (%.3f rad -> %d)", s.Name, j[i], t))
		}
		if d.valid[i] {
			ids = append(ids, s.ID)
			data = append(data, []byte{byte(d.goals[i]), byte(d.goals[i] >> 8)})
		}
	}
	if len(ids) > 0 {
		if err := d.syncWrite(AddrGoalPosition, ids, data); err != nil {
			return err
		}
	}
	if skipped != nil {
		return &LimitError{Joints: skipped}
	}
	return nil
}

// ReadPositions reads the present position of every servo (one READ each)
// and converts it to joint angles. It also takes the positions as the known
// goals. On error the remaining servos are still read and the first error
// is returned with the servo's name.
func (d *Driver) ReadPositions(j *hexapod.Joints) error {
	var errs []error
	for i, s := range d.cfg.Servos {
		st, err := d.transact(s.ID, InstRead, AddrPresentPosition, 2)
		if err == nil && len(st.Params) != 2 {
			err = fmt.Errorf("dynamixel: %d bytes in a 2-byte read", len(st.Params))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("read %s: %w", s.Name, err))
			continue
		}
		tick := int(st.Params[0]) | int(st.Params[1])<<8
		j[i] = s.Angle(tick)
		d.goals[i], d.valid[i] = tick, true
	}
	return errors.Join(errs...)
}

func (d *Driver) syncWrite(addr byte, ids []byte, data [][]byte) error {
	p, err := SyncWrite(addr, ids, data)
	if err != nil {
		return err
	}
	if _, err := d.port.Write(p); err != nil {
		return fmt.Errorf("dynamixel: sync write at %d: %w", addr, err)
	}
	return nil
}

// transact sends one instruction to id and returns its status packet.
func (d *Driver) transact(id, inst byte, params ...byte) (Status, error) {
	p, err := Instruction(id, inst, params...)
	if err != nil {
		return Status{}, err
	}
	d.rbuf = d.rbuf[:0]
	if _, err := d.port.Write(p); err != nil {
		return Status{}, fmt.Errorf("dynamixel: write to servo %d: %w", id, err)
	}
	st, err := d.readStatus(id)
	if err != nil {
		return Status{}, err
	}
	if st.Error != 0 {
		return st, &StatusError{ID: id, Bits: st.Error}
	}
	return st, nil
}

// readStatus reads status packets until one from id arrives, a packet with
// a bad checksum arrives, or the timeout expires. Packets from other ids are
// skipped.
func (d *Driver) readStatus(id byte) (Status, error) {
	if dl, ok := d.port.(deadliner); ok {
		if err := dl.SetReadDeadline(time.Now().Add(d.cfg.Timeout)); err != nil {
			return Status{}, fmt.Errorf("dynamixel: set read deadline: %w", err)
		}
		defer dl.SetReadDeadline(time.Time{})
	}
	for {
		if p, ok := d.nextPacket(); ok {
			st, err := parseStatus(p)
			if err != nil {
				return Status{}, err
			}
			if st.ID == id {
				return st, nil
			}
			continue
		}
		n, err := d.port.Read(d.tmp[:])
		d.rbuf = append(d.rbuf, d.tmp[:n]...)
		if err != nil && n == 0 {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return Status{}, fmt.Errorf("%w: servo %d after %v", ErrTimeout, id, d.cfg.Timeout)
			}
			return Status{}, fmt.Errorf("dynamixel: read status of servo %d: %w", id, err)
		}
	}
}

// nextPacket cuts the next complete packet from rbuf, dropping garbage
// before a header and headers with an impossible length.
func (d *Driver) nextPacket() ([]byte, bool) {
	b := d.rbuf
	for {
		for len(b) >= 2 && !(b[0] == 0xFF && b[1] == 0xFF && (len(b) < 3 || b[2] != 0xFF)) {
			b = b[1:]
		}
		if len(b) >= 4 && b[3] < 2 {
			b = b[2:] // LENGTH < 2 cannot be a status packet: resynchronise
			continue
		}
		break
	}
	d.rbuf = b
	if len(b) < 4 || len(b) < int(b[3])+4 {
		return nil, false
	}
	n := int(b[3]) + 4
	d.rbuf = b[n:]
	return b[:n:n], true
}
