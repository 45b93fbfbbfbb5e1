package velma

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
)

// MaxTrajectoryPoints is the largest number of points one command may carry
// (the original's fixed-size buffers).
const MaxTrajectoryPoints = 50

// JointPoint is one point of a joint trajectory. Velocities and
// Accelerations are optional (nil): a segment ending in a point with both is
// quintic, with velocities cubic, otherwise linear.
type JointPoint struct {
	Positions     []float64
	Velocities    []float64
	Accelerations []float64
	TimeFromStart time.Duration
}

// JointTrajectoryCommand is a jnt_imp (15 body joints) or head (2 joints)
// command. Tolerances ≤ 0 are not checked; zero stiffness selects the
// default.
type JointTrajectoryCommand struct {
	ID                uint32
	Start             time.Duration // delay after reception
	Points            []JointPoint
	PathTolerance     []float64
	GoalTolerance     []float64
	GoalTimeTolerance time.Duration
	Stiffness         []float64 // body only
}

// CartPoint is one wrist pose of a Cartesian trajectory (torso_base frame).
type CartPoint struct {
	Pose          kin.Frame
	TimeFromStart time.Duration
}

// CartTolerance bounds the wrist position [m] and rotation [rad] error;
// values ≤ 0 are not checked.
type CartTolerance struct {
	Position, Rotation float64
}

// CartImpCommand is a cart_imp command for one wrist.
type CartImpCommand struct {
	ID                uint32
	Start             time.Duration
	Points            []CartPoint
	Stiffness         [6]float64 // x, y, z [N/m], rx, ry, rz [Nm/rad]; zero → default
	Damping           [6]float64 // modal damping ratio ξ per direction; zero → default
	PathTolerance     CartTolerance
	GoalTolerance     CartTolerance
	GoalTimeTolerance time.Duration
}

// MotorRequests are enable and homing requests for the motors.
type MotorRequests struct {
	TorsoEnable, HeadPanEnable, HeadTiltEnable bool
	HeadPanHome, HeadTiltHome                  bool
}

// TaskCommand is what the task agent (the ROS interface) sends to cs in one
// iteration. Nil fields were not sent.
type TaskCommand struct {
	Cart   [2]*CartImpCommand // indexed by kin.Side
	Jnt    *JointTrajectoryCommand
	Head   *JointTrajectoryCommand
	Relax  bool
	Motors MotorRequests
	// SourceLost is the ID of a running body motion (a Jnt or Cart command)
	// whose command source is gone, e.g. the process that sent the goal
	// died; 0 means none. cs treats it as a fault of the behaviour that runs
	// the motion: CURRENT_BEHAVIOR_OK becomes false, so ε ends the state
	// with IN_ERROR → idle, and from idle cs returns to safe. It is ignored
	// when the ID does not name the motion that is running.
	SourceLost uint32
}

// Empty reports whether the command carries nothing.
func (c *TaskCommand) Empty() bool {
	return c == nil || (c.Cart[0] == nil && c.Cart[1] == nil && c.Jnt == nil && c.Head == nil && !c.Relax && c.Motors == MotorRequests{} && c.SourceLost == 0)
}

// ErrSourceLost is wrapped by the behaviour error cs reports when the
// command source of its running motion is lost.
var ErrSourceLost = errors.New("command source lost")

// ErrInvalidCommand is wrapped by every command validation error.
var ErrInvalidCommand = errors.New("invalid command")

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidCommand, fmt.Sprintf(format, a...))
}

// JointLimit is a position interval.
type JointLimit struct{ Lo, Hi float64 }

// BodyLimits are the URDF position limits of the 15 body joints.
var BodyLimits = func() [BodyDOF]JointLimit {
	arm := [ArmDOF]float64{2.96706, 2.0944, 2.96706, 2.0944, 2.96706, 2.0944, 2.96706}
	var l [BodyDOF]JointLimit
	l[0] = JointLimit{-1.57, 1.57}
	for i := range ArmDOF {
		l[1+i] = JointLimit{-arm[i], arm[i]}
		l[8+i] = JointLimit{-arm[i], arm[i]}
	}
	return l
}()

// HeadLimits are the URDF limits of head pan and tilt.
var HeadLimits = [HeadDOF]JointLimit{{-1.57, 1.57}, {-1.0, 1.3}}

// Validate checks a joint trajectory against n joints and limits: 1…50
// points, finite values within limits, strictly increasing times.
func (c *JointTrajectoryCommand) Validate(limits []JointLimit) error {
	n := len(limits)
	if len(c.Points) == 0 || len(c.Points) > MaxTrajectoryPoints {
		return invalid("%d points, want 1…%d", len(c.Points), MaxTrajectoryPoints)
	}
	if c.Start < 0 {
		return invalid("negative start delay %v", c.Start)
	}
	var last time.Duration = -1
	for i, p := range c.Points {
		if len(p.Positions) != n {
			return invalid("point %d: %d positions, want %d", i, len(p.Positions), n)
		}
		if p.Velocities != nil && len(p.Velocities) != n {
			return invalid("point %d: %d velocities, want %d", i, len(p.Velocities), n)
		}
		if p.Accelerations != nil && len(p.Accelerations) != n {
			return invalid("point %d: %d accelerations, want %d", i, len(p.Accelerations), n)
		}
		if p.TimeFromStart <= last {
			return invalid("point %d: time_from_start %v not after %v", i, p.TimeFromStart, last)
		}
		last = p.TimeFromStart
		for j, q := range p.Positions {
			if !finite(q) {
				return invalid("point %d joint %d: position %g", i, j, q)
			}
			if q < limits[j].Lo || q > limits[j].Hi {
				return invalid("point %d joint %d: position %g outside [%g, %g]", i, j, q, limits[j].Lo, limits[j].Hi)
			}
		}
		for j := range n {
			if p.Velocities != nil && !finite(p.Velocities[j]) {
				return invalid("point %d joint %d: velocity %g", i, j, p.Velocities[j])
			}
			if p.Accelerations != nil && !finite(p.Accelerations[j]) {
				return invalid("point %d joint %d: acceleration %g", i, j, p.Accelerations[j])
			}
		}
	}
	for name, v := range map[string][]float64{"path_tolerance": c.PathTolerance, "goal_tolerance": c.GoalTolerance} {
		if v != nil && len(v) != n {
			return invalid("%s has %d values, want %d", name, len(v), n)
		}
		for j, x := range v {
			if math.IsNaN(x) {
				return invalid("%s[%d] is NaN", name, j)
			}
		}
	}
	if c.Stiffness != nil {
		if len(c.Stiffness) != n {
			return invalid("stiffness has %d values, want %d", len(c.Stiffness), n)
		}
		for j, k := range c.Stiffness {
			if !finite(k) || k < 0 || k > 3000 {
				return invalid("stiffness[%d] = %g, want 0…3000", j, k)
			}
		}
	}
	return nil
}

// Validate checks a Cartesian command: 1…50 points, finite poses with
// orthonormal rotations, increasing times, stiffness and damping in range.
func (c *CartImpCommand) Validate() error {
	if len(c.Points) == 0 || len(c.Points) > MaxTrajectoryPoints {
		return invalid("%d points, want 1…%d", len(c.Points), MaxTrajectoryPoints)
	}
	if c.Start < 0 {
		return invalid("negative start delay %v", c.Start)
	}
	var last time.Duration = -1
	for i, p := range c.Points {
		if p.TimeFromStart <= last {
			return invalid("point %d: time_from_start %v not after %v", i, p.TimeFromStart, last)
		}
		last = p.TimeFromStart
		for _, v := range []float64{p.Pose.P.X, p.Pose.P.Y, p.Pose.P.Z} {
			if !finite(v) || math.Abs(v) > 3 {
				return invalid("point %d: position %v not finite or beyond 3 m", i, p.Pose.P)
			}
		}
		r := p.Pose.R
		rt := r.T().Mul(r)
		for a := range 3 {
			for b := range 3 {
				want := 0.0
				if a == b {
					want = 1
				}
				if !finite(r[a][b]) || math.Abs(rt[a][b]-want) > 1e-3 {
					return invalid("point %d: rotation not orthonormal", i)
				}
			}
		}
	}
	for i, k := range c.Stiffness {
		if !finite(k) || k < 0 || k > 5000 {
			return invalid("stiffness[%d] = %g, want 0…5000", i, k)
		}
	}
	for i, d := range c.Damping {
		if !finite(d) || d < 0 || d > 2 {
			return invalid("damping[%d] = %g, want 0…2", i, d)
		}
	}
	for _, x := range []float64{c.PathTolerance.Position, c.PathTolerance.Rotation, c.GoalTolerance.Position, c.GoalTolerance.Rotation} {
		if math.IsNaN(x) {
			return invalid("tolerance is NaN")
		}
	}
	return nil
}
