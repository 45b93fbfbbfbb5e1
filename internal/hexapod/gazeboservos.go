package hexapod

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrNoJointStates is returned (wrapped) by GazeboServos.ReadPositions
// until Gazebo has reported every joint.
var ErrNoJointStates = errors.New("no joint states from Gazebo yet")

// GazeboServos drives the 18 joints of a hexapod simulated by Gazebo, whose
// joint position controllers take a target per joint (the servo driver
// "gazebo" of motion_control, over ros_gz_bridge). Like an AX-12A, each
// target moves toward its goal at the commanded servo speed: the targets
// sent are those of SimServos following the goals in the caller's time,
// so standing up and sitting down keep their speeds. Gazebo's controllers
// have no torque-off: with torque off nothing is sent and the joints hold
// their last targets. ReadPositions returns the positions Gazebo measured
// (JointStates). It is safe for concurrent use: the controller's tick and
// the joint-state subscription call it from different goroutines.
type GazeboServos struct {
	send func(targets *Joints) error

	mu       sync.Mutex
	setpoint *SimServos
	index    map[string]int
	measured Joints
	seen     [NumJoints]bool
	rejected uint64
}

// NewGazeboServos returns the driver with the joints' targets at initial
// (Gazebo's position controllers start at 0), torque off, at full speed.
// names are the joint names in Joints order (JointNames); send publishes
// one target per joint and is called from WriteGoals; now is the clock of
// the servo speed (the node clock, which follows Gazebo's /clock).
func NewGazeboServos(now func() time.Time, names []string, initial Joints, send func(targets *Joints) error) (*GazeboServos, error) {
	if len(names) != NumJoints {
		return nil, fmt.Errorf("gazebo servos: %d joint names, want %d", len(names), NumJoints)
	}
	if send == nil {
		return nil, errors.New("gazebo servos: no sender")
	}
	idx := make(map[string]int, NumJoints)
	for i, n := range names {
		if _, dup := idx[n]; dup || n == "" {
			return nil, fmt.Errorf("gazebo servos: joint name %q empty or repeated", n)
		}
		idx[n] = i
	}
	return &GazeboServos{send: send, setpoint: NewSimServos(now, initial), index: idx}, nil
}

// SetTorque implements ServoDriver. Turning torque on holds the joints at
// their current targets; off stops sending (Gazebo holds the last ones).
func (g *GazeboServos) SetTorque(on bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.setpoint.SetTorque(on)
}

// SetSpeed implements ServoDriver: the targets move at this fraction of
// the AX-12A's full speed; fraction must be finite and >= 0.
func (g *GazeboServos) SetSpeed(fraction float64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.setpoint.SetSpeed(fraction); err != nil {
		return fmt.Errorf("gazebo servos: %w", err)
	}
	return nil
}

// WriteGoals implements ServoDriver: it moves the targets toward j at the
// servo speed and sends them. Goals are ignored while torque is off; a
// goal that is not finite is refused and nothing is sent.
func (g *GazeboServos) WriteGoals(j *Joints) error {
	g.mu.Lock()
	if err := g.setpoint.WriteGoals(j); err != nil {
		g.mu.Unlock()
		return fmt.Errorf("gazebo servos: %w", err)
	}
	if !g.setpoint.Torque() {
		g.mu.Unlock()
		return nil
	}
	var targets Joints
	_ = g.setpoint.ReadPositions(&targets)
	g.mu.Unlock()
	return g.send(&targets)
}

// ReadPositions implements ServoDriver: the joint positions Gazebo last
// reported, or ErrNoJointStates before every joint was reported once.
func (g *GazeboServos) ReadPositions(j *Joints) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, ok := range g.seen {
		if !ok {
			return fmt.Errorf("gazebo servos: joint %d: %w", i, ErrNoJointStates)
		}
	}
	*j = g.measured
	return nil
}

// JointStates takes a joint state report from Gazebo (names with their
// positions, radians). Joints that are not the hexapod's are ignored. A
// report whose lists differ in length or that holds a position that is
// not finite is refused whole and counted (Rejected).
func (g *GazeboServos) JointStates(names []string, positions []float64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(names) != len(positions) {
		g.rejected++
		return fmt.Errorf("gazebo servos: joint state with %d names and %d positions", len(names), len(positions))
	}
	for i, p := range positions {
		if !isFinite(p) {
			g.rejected++
			return fmt.Errorf("gazebo servos: joint %s at %v", names[i], p)
		}
	}
	for i, n := range names {
		if k, ok := g.index[n]; ok {
			g.measured[k] = positions[i]
			g.seen[k] = true
		}
	}
	return nil
}

// Targets returns the targets last computed (what WriteGoals sent while
// torque was on).
func (g *GazeboServos) Targets() Joints {
	g.mu.Lock()
	defer g.mu.Unlock()
	var t Joints
	_ = g.setpoint.ReadPositions(&t)
	return t
}

// Rejected returns how many joint state reports were refused.
func (g *GazeboServos) Rejected() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rejected
}
