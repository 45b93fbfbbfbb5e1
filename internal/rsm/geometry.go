package rsm

import (
	"errors"
	"fmt"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// ErrNotFinite is returned (wrapped) for any pose, twist or number that
// contains NaN or ±Inf.
var ErrNotFinite = errors.New("value is not finite (NaN or Inf)")

// Pose is a position plus an orientation, like geometry_msgs/Pose.
type Pose struct {
	Position    geom.Vec3
	Orientation geom.Quat
}

// Twist is a velocity command, like geometry_msgs/Twist.
type Twist struct{ Linear, Angular geom.Vec3 }

// ValidateVec3 reports ErrNotFinite if any component of v is NaN or ±Inf.
func ValidateVec3(v geom.Vec3) error {
	if !v.Finite() {
		return fmt.Errorf("vector (%v, %v, %v): %w", v.X, v.Y, v.Z, ErrNotFinite)
	}
	return nil
}

// ValidateQuat reports ErrNotFinite if any component of q is NaN or ±Inf.
func ValidateQuat(q geom.Quat) error {
	if !q.Finite() {
		return fmt.Errorf("quaternion (%v, %v, %v, %v): %w", q.X, q.Y, q.Z, q.W, ErrNotFinite)
	}
	return nil
}

// Validate reports ErrNotFinite if the position or the orientation holds a
// NaN or ±Inf.
func (p Pose) Validate() error {
	if err := ValidateVec3(p.Position); err != nil {
		return fmt.Errorf("pose position: %w", err)
	}
	if err := ValidateQuat(p.Orientation); err != nil {
		return fmt.Errorf("pose orientation: %w", err)
	}
	return nil
}

// Validate reports ErrNotFinite if any of the six components is NaN or ±Inf.
func (t Twist) Validate() error {
	if err := ValidateVec3(t.Linear); err != nil {
		return fmt.Errorf("twist linear: %w", err)
	}
	if err := ValidateVec3(t.Angular); err != nil {
		return fmt.Errorf("twist angular: %w", err)
	}
	return nil
}

// IsZero reports whether all six components are exactly zero.
func (t Twist) IsZero() bool { return t == Twist{} }
