package rsm

import (
	"errors"
	"fmt"
	"math"
)

// ErrNotFinite is returned (wrapped) for any pose, twist or number that
// contains NaN or ±Inf.
var ErrNotFinite = errors.New("value is not finite (NaN or Inf)")

// Vec3 is a 3D vector (position, linear or angular velocity).
type Vec3 struct{ X, Y, Z float64 }

// Quat is a rotation quaternion. The zero value is not a valid rotation; use
// IdentityQuat.
type Quat struct{ X, Y, Z, W float64 }

// IdentityQuat is the rotation that does nothing.
var IdentityQuat = Quat{W: 1}

// Pose is a position plus an orientation, like geometry_msgs/Pose.
type Pose struct {
	Position    Vec3
	Orientation Quat
}

// Twist is a velocity command, like geometry_msgs/Twist.
type Twist struct{ Linear, Angular Vec3 }

func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// Validate reports ErrNotFinite if any component is NaN or ±Inf.
func (v Vec3) Validate() error {
	if !finite(v.X, v.Y, v.Z) {
		return fmt.Errorf("vector (%v, %v, %v): %w", v.X, v.Y, v.Z, ErrNotFinite)
	}
	return nil
}

// Validate reports ErrNotFinite if any component is NaN or ±Inf.
func (q Quat) Validate() error {
	if !finite(q.X, q.Y, q.Z, q.W) {
		return fmt.Errorf("quaternion (%v, %v, %v, %v): %w", q.X, q.Y, q.Z, q.W, ErrNotFinite)
	}
	return nil
}

// Validate reports ErrNotFinite if the position or the orientation holds a
// NaN or ±Inf.
func (p Pose) Validate() error {
	if err := p.Position.Validate(); err != nil {
		return fmt.Errorf("pose position: %w", err)
	}
	if err := p.Orientation.Validate(); err != nil {
		return fmt.Errorf("pose orientation: %w", err)
	}
	return nil
}

// Validate reports ErrNotFinite if any of the six components is NaN or ±Inf.
func (t Twist) Validate() error {
	if err := t.Linear.Validate(); err != nil {
		return fmt.Errorf("twist linear: %w", err)
	}
	if err := t.Angular.Validate(); err != nil {
		return fmt.Errorf("twist angular: %w", err)
	}
	return nil
}

// IsZero reports whether all six components are exactly zero.
func (t Twist) IsZero() bool { return t == Twist{} }

// Sub returns v - w.
func (v Vec3) Sub(w Vec3) Vec3 { return Vec3{v.X - w.X, v.Y - w.Y, v.Z - w.Z} }

// Add returns v + w.
func (v Vec3) Add(w Vec3) Vec3 { return Vec3{v.X + w.X, v.Y + w.Y, v.Z + w.Z} }

// Norm returns the Euclidean length of v.
func (v Vec3) Norm() float64 { return math.Sqrt(v.X*v.X + v.Y*v.Y + v.Z*v.Z) }

// Mul returns the Hamilton product q*r (apply r first, then q).
func (q Quat) Mul(r Quat) Quat {
	return Quat{
		X: q.W*r.X + q.X*r.W + q.Y*r.Z - q.Z*r.Y,
		Y: q.W*r.Y - q.X*r.Z + q.Y*r.W + q.Z*r.X,
		Z: q.W*r.Z + q.X*r.Y - q.Y*r.X + q.Z*r.W,
		W: q.W*r.W - q.X*r.X - q.Y*r.Y - q.Z*r.Z,
	}
}

// Conj returns the conjugate of q, the inverse of a unit quaternion.
func (q Quat) Conj() Quat { return Quat{-q.X, -q.Y, -q.Z, q.W} }

// Normalized returns q scaled to unit length; a zero quaternion becomes the
// identity.
func (q Quat) Normalized() Quat {
	n := math.Sqrt(q.X*q.X + q.Y*q.Y + q.Z*q.Z + q.W*q.W)
	if n == 0 {
		return IdentityQuat
	}
	return Quat{q.X / n, q.Y / n, q.Z / n, q.W / n}
}

// Rotate returns v rotated by the unit quaternion q.
func (q Quat) Rotate(v Vec3) Vec3 {
	p := q.Mul(Quat{v.X, v.Y, v.Z, 0}).Mul(q.Conj())
	return Vec3{p.X, p.Y, p.Z}
}

// Yaw returns the rotation of q about the z axis in radians.
func (q Quat) Yaw() float64 {
	return math.Atan2(2*(q.W*q.Z+q.X*q.Y), 1-2*(q.Y*q.Y+q.Z*q.Z))
}

// QuatFromYaw returns the rotation by yaw radians about the z axis.
func QuatFromYaw(yaw float64) Quat {
	return Quat{Z: math.Sin(yaw / 2), W: math.Cos(yaw / 2)}
}

// AngleTo returns the rotation angle in radians (0..π) between q and r.
func (q Quat) AngleTo(r Quat) float64 {
	d := q.Normalized().Conj().Mul(r.Normalized())
	w := math.Min(1, math.Abs(d.W))
	return 2 * math.Acos(w)
}
