package hexapod

import (
	"fmt"
	"math"
	"time"
)

// AX-12A speed figures used by the simulated servos: the moving-speed
// register unit is 0.111 rpm, the original wrote 532·fraction, and 0 means
// the unregulated maximum of about 114 rpm.
const (
	ax12SpeedUnit   = 0.111 * 2 * math.Pi / 60 // rad/s per register count
	ax12FullCounts  = 532                      // register value at fraction 1
	ax12MaxSpeedRPM = 114
)

// SimServos is a simulated servo set: with torque on each joint moves toward
// its goal at the commanded speed; with torque off it stays where it is. Time
// comes from the clock given to NewSimServos, so tests control it.
type SimServos struct {
	now    func() time.Time
	last   time.Time
	torque bool
	speed  float64 // rad/s
	goal   Joints
	pos    Joints
}

// NewSimServos returns simulated servos at the given positions, torque off,
// at full speed. now is the clock (time.Now when nil).
func NewSimServos(now func() time.Time, initial Joints) *SimServos {
	if now == nil {
		now = time.Now
	}
	s := &SimServos{now: now, pos: initial, goal: initial}
	s.last = now()
	s.speed = speedOf(0)
	return s
}

func speedOf(fraction float64) float64 {
	max := ax12MaxSpeedRPM * 2 * math.Pi / 60
	if fraction == 0 {
		return max
	}
	return math.Min(fraction*ax12FullCounts*ax12SpeedUnit, max)
}

// advance moves the joints for the time since the last call.
func (s *SimServos) advance() {
	t := s.now()
	dt := t.Sub(s.last).Seconds()
	s.last = t
	if !s.torque || dt <= 0 {
		return
	}
	step := s.speed * dt
	for i := range s.pos {
		d := s.goal[i] - s.pos[i]
		if math.Abs(d) <= step {
			s.pos[i] = s.goal[i]
		} else {
			s.pos[i] += math.Copysign(step, d)
		}
	}
}

// SetTorque implements ServoDriver.
func (s *SimServos) SetTorque(on bool) error {
	s.advance()
	if on && !s.torque {
		s.goal = s.pos // hold where the joints are, like a real servo
	}
	s.torque = on
	return nil
}

// SetSpeed implements ServoDriver; fraction must be finite and >= 0.
func (s *SimServos) SetSpeed(fraction float64) error {
	if !isFinite(fraction) || fraction < 0 {
		return fmt.Errorf("sim servos: speed fraction %v must be finite and >= 0", fraction)
	}
	s.advance()
	s.speed = speedOf(fraction)
	return nil
}

// WriteGoals implements ServoDriver; goals are ignored while torque is off,
// as on a real AX-12A bus the joints would not move.
func (s *SimServos) WriteGoals(j *Joints) error {
	for i, v := range j {
		if !isFinite(v) {
			return fmt.Errorf("sim servos: goal %d is %v", i, v)
		}
	}
	s.advance()
	if s.torque {
		s.goal = *j
	}
	return nil
}

// ReadPositions implements ServoDriver.
func (s *SimServos) ReadPositions(j *Joints) error {
	s.advance()
	*j = s.pos
	return nil
}

// Torque reports whether torque is on.
func (s *SimServos) Torque() bool { return s.torque }

// Speed returns the current moving speed in rad/s.
func (s *SimServos) Speed() float64 { return s.speed }

// Goals returns the current goals.
func (s *SimServos) Goals() Joints { return s.goal }
