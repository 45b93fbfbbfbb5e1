// Package geom is the one 3-D geometry of the project: vectors, unit
// quaternions and rotation matrices, used by the RSM, the URDF model, the
// Velma kinematics, the hexapod and the markers.
//
// The convention is geometry_msgs': a Vec3 is {X, Y, Z}, a Quat is
// {X, Y, Z, W} with W the scalar part, and a rotation is applied as
// q·v·q⁻¹ (Hamilton product; q.Mul(r) is r first, then q). A Mat3 is
// row-major and maps a child frame's vectors into its parent's
// (v_parent = M·v_child). Functions never divide by zero: a quaternion of
// zero or non-finite length normalizes to Identity.
package geom

import "math"

// Vec3 is a point, a translation, an axis, a velocity or a scale.
type Vec3 struct{ X, Y, Z float64 }

// Add returns a+b.
func (a Vec3) Add(b Vec3) Vec3 { return Vec3{a.X + b.X, a.Y + b.Y, a.Z + b.Z} }

// Sub returns a−b.
func (a Vec3) Sub(b Vec3) Vec3 { return Vec3{a.X - b.X, a.Y - b.Y, a.Z - b.Z} }

// Scale returns s·a.
func (a Vec3) Scale(s float64) Vec3 { return Vec3{s * a.X, s * a.Y, s * a.Z} }

// Dot returns a·b.
func (a Vec3) Dot(b Vec3) float64 { return a.X*b.X + a.Y*b.Y + a.Z*b.Z }

// Cross returns a×b.
func (a Vec3) Cross(b Vec3) Vec3 {
	return Vec3{a.Y*b.Z - a.Z*b.Y, a.Z*b.X - a.X*b.Z, a.X*b.Y - a.Y*b.X}
}

// Norm returns the Euclidean length |a|.
func (a Vec3) Norm() float64 { return math.Sqrt(a.Dot(a)) }

// Finite reports whether no component is NaN or ±Inf.
func (a Vec3) Finite() bool { return Finite(a.X, a.Y, a.Z) }

// Finite reports whether none of vs is NaN or ±Inf.
func Finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// Quat is a rotation quaternion x·i + y·j + z·k + w, the layout of
// geometry_msgs/Quaternion. The zero value is not a rotation; use
// Identity.
type Quat struct{ X, Y, Z, W float64 }

// Identity is the rotation by zero.
var Identity = Quat{W: 1}

// Mul returns the Hamilton product q·r: the rotation r followed by q.
func (q Quat) Mul(r Quat) Quat {
	return Quat{
		X: q.W*r.X + q.X*r.W + q.Y*r.Z - q.Z*r.Y,
		Y: q.W*r.Y - q.X*r.Z + q.Y*r.W + q.Z*r.X,
		Z: q.W*r.Z + q.X*r.Y - q.Y*r.X + q.Z*r.W,
		W: q.W*r.W - q.X*r.X - q.Y*r.Y - q.Z*r.Z,
	}
}

// Conj returns the conjugate of q, the inverse rotation of a unit
// quaternion.
func (q Quat) Conj() Quat { return Quat{-q.X, -q.Y, -q.Z, q.W} }

// Norm returns the length of q (1 for a rotation).
func (q Quat) Norm() float64 { return math.Sqrt(q.X*q.X + q.Y*q.Y + q.Z*q.Z + q.W*q.W) }

// Finite reports whether no component is NaN or ±Inf.
func (q Quat) Finite() bool { return Finite(q.X, q.Y, q.Z, q.W) }

// Normalized returns q scaled to unit length, the same rotation with the
// same sign; a quaternion of zero or non-finite length becomes Identity.
func (q Quat) Normalized() Quat {
	n := q.Norm()
	if n == 0 || !Finite(n) {
		return Identity
	}
	return Quat{q.X / n, q.Y / n, q.Z / n, q.W / n}
}

// Rotate returns v rotated by the unit quaternion q (q·v·q⁻¹).
func (q Quat) Rotate(v Vec3) Vec3 {
	u := Vec3{q.X, q.Y, q.Z}
	t := u.Cross(v).Scale(2)
	return v.Add(t.Scale(q.W)).Add(u.Cross(t))
}

// Matrix returns the rotation matrix of the unit quaternion q.
func (q Quat) Matrix() Mat3 {
	x, y, z, w := q.X, q.Y, q.Z, q.W
	return Mat3{
		{1 - 2*(y*y+z*z), 2 * (x*y - z*w), 2 * (x*z + y*w)},
		{2 * (x*y + z*w), 1 - 2*(x*x+z*z), 2 * (y*z - x*w)},
		{2 * (x*z - y*w), 2 * (y*z + x*w), 1 - 2*(x*x+y*y)},
	}
}

// Yaw returns the rotation of q about the z axis in radians, (−π, π].
func (q Quat) Yaw() float64 {
	return math.Atan2(2*(q.W*q.Z+q.X*q.Y), 1-2*(q.Y*q.Y+q.Z*q.Z))
}

// RPY returns roll, pitch and yaw of q, the inverse of QuatFromRPY with
// pitch in [−π/2, π/2]; at gimbal lock the shared angle is all yaw.
func (q Quat) RPY() (roll, pitch, yaw float64) {
	m := q.Matrix()
	pitch = math.Asin(math.Max(-1, math.Min(1, -m[2][0])))
	if math.Abs(m[2][0]) > 1-1e-12 {
		return 0, pitch, math.Atan2(-m[0][1], m[1][1])
	}
	return math.Atan2(m[2][1], m[2][2]), pitch, math.Atan2(m[1][0], m[0][0])
}

// AngleTo returns the rotation angle in radians (0..π) from q to r.
func (q Quat) AngleTo(r Quat) float64 {
	d := q.Normalized().Conj().Mul(r.Normalized())
	return 2 * math.Acos(math.Min(1, math.Abs(d.W)))
}

// QuatFromYaw returns the rotation by yaw radians about the z axis.
func QuatFromYaw(yaw float64) Quat {
	s, c := math.Sincos(yaw / 2)
	return Quat{Z: s, W: c}
}

// QuatFromAxisAngle returns the rotation by angle radians about a unit
// axis.
func QuatFromAxisAngle(axis Vec3, angle float64) Quat {
	s, c := math.Sincos(angle / 2)
	return Quat{axis.X * s, axis.Y * s, axis.Z * s, c}
}

// QuatFromRPY returns the rotation of URDF's rpy: roll about x, then pitch
// about y, then yaw about z, all about the fixed parent axes
// (R = Rz(yaw)·Ry(pitch)·Rx(roll)).
func QuatFromRPY(roll, pitch, yaw float64) Quat {
	sr, cr := math.Sincos(roll / 2)
	sp, cp := math.Sincos(pitch / 2)
	sy, cy := math.Sincos(yaw / 2)
	return Quat{
		X: sr*cp*cy - cr*sp*sy,
		Y: cr*sp*cy + sr*cp*sy,
		Z: cr*cp*sy - sr*sp*cy,
		W: cr*cp*cy + sr*sp*sy,
	}
}

// QuatFromMatrix returns the unit quaternion, with W ≥ 0, of a rotation
// matrix.
func QuatFromMatrix(r Mat3) Quat {
	tr := r[0][0] + r[1][1] + r[2][2]
	var q Quat
	switch {
	case tr > 0:
		s := math.Sqrt(tr+1) * 2
		q = Quat{X: (r[2][1] - r[1][2]) / s, Y: (r[0][2] - r[2][0]) / s, Z: (r[1][0] - r[0][1]) / s, W: 0.25 * s}
	case r[0][0] > r[1][1] && r[0][0] > r[2][2]:
		s := math.Sqrt(1+r[0][0]-r[1][1]-r[2][2]) * 2
		q = Quat{X: 0.25 * s, Y: (r[0][1] + r[1][0]) / s, Z: (r[0][2] + r[2][0]) / s, W: (r[2][1] - r[1][2]) / s}
	case r[1][1] > r[2][2]:
		s := math.Sqrt(1+r[1][1]-r[0][0]-r[2][2]) * 2
		q = Quat{X: (r[0][1] + r[1][0]) / s, Y: 0.25 * s, Z: (r[1][2] + r[2][1]) / s, W: (r[0][2] - r[2][0]) / s}
	default:
		s := math.Sqrt(1+r[2][2]-r[0][0]-r[1][1]) * 2
		q = Quat{X: (r[0][2] + r[2][0]) / s, Y: (r[1][2] + r[2][1]) / s, Z: 0.25 * s, W: (r[1][0] - r[0][1]) / s}
	}
	if q.W < 0 {
		q = Quat{-q.X, -q.Y, -q.Z, -q.W}
	}
	return q.Normalized()
}

// Slerp interpolates between unit quaternions a (s=0) and b (s=1) along
// the shorter arc.
func Slerp(a, b Quat, s float64) Quat {
	d := a.W*b.W + a.X*b.X + a.Y*b.Y + a.Z*b.Z
	if d < 0 {
		b = Quat{-b.X, -b.Y, -b.Z, -b.W}
		d = -d
	}
	if d > 0.9995 { // nearly equal: linear, then normalized
		return Quat{a.X + s*(b.X-a.X), a.Y + s*(b.Y-a.Y), a.Z + s*(b.Z-a.Z), a.W + s*(b.W-a.W)}.Normalized()
	}
	th := math.Acos(d)
	sa := math.Sin((1-s)*th) / math.Sin(th)
	sb := math.Sin(s*th) / math.Sin(th)
	return Quat{sa*a.X + sb*b.X, sa*a.Y + sb*b.Y, sa*a.Z + sb*b.Z, sa*a.W + sb*b.W}.Normalized()
}

// Mat3 is a 3×3 matrix (a rotation or an inertia), row-major.
type Mat3 [3][3]float64

// Identity3 is the 3×3 identity matrix.
var Identity3 = Mat3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}

// Mul returns a·b.
func (a Mat3) Mul(b Mat3) Mat3 {
	var o Mat3
	for i := range 3 {
		for j := range 3 {
			o[i][j] = a[i][0]*b[0][j] + a[i][1]*b[1][j] + a[i][2]*b[2][j]
		}
	}
	return o
}

// MulVec returns a·v.
func (a Mat3) MulVec(v Vec3) Vec3 {
	return Vec3{
		a[0][0]*v.X + a[0][1]*v.Y + a[0][2]*v.Z,
		a[1][0]*v.X + a[1][1]*v.Y + a[1][2]*v.Z,
		a[2][0]*v.X + a[2][1]*v.Y + a[2][2]*v.Z,
	}
}

// T returns the transpose of a (the inverse of a rotation).
func (a Mat3) T() Mat3 {
	return Mat3{{a[0][0], a[1][0], a[2][0]}, {a[0][1], a[1][1], a[2][1]}, {a[0][2], a[1][2], a[2][2]}}
}

// Col returns column j of a.
func (a Mat3) Col(j int) Vec3 { return Vec3{a[0][j], a[1][j], a[2][j]} }

// RotX returns the rotation by a radians about x.
func RotX(a float64) Mat3 {
	s, c := math.Sincos(a)
	return Mat3{{1, 0, 0}, {0, c, -s}, {0, s, c}}
}

// RotY returns the rotation by a radians about y.
func RotY(a float64) Mat3 {
	s, c := math.Sincos(a)
	return Mat3{{c, 0, s}, {0, 1, 0}, {-s, 0, c}}
}

// RotZ returns the rotation by a radians about z.
func RotZ(a float64) Mat3 {
	s, c := math.Sincos(a)
	return Mat3{{c, -s, 0}, {s, c, 0}, {0, 0, 1}}
}

// MatrixFromRPY returns URDF's fixed-axis rotation Rz(yaw)·Ry(pitch)·Rx(roll),
// the matrix of QuatFromRPY.
func MatrixFromRPY(roll, pitch, yaw float64) Mat3 {
	return RotZ(yaw).Mul(RotY(pitch)).Mul(RotX(roll))
}

// AngleBetween returns the rotation angle from a to b, in [0, π].
func AngleBetween(a, b Mat3) float64 {
	r := a.T().Mul(b)
	c := (r[0][0] + r[1][1] + r[2][2] - 1) / 2
	return math.Acos(math.Max(-1, math.Min(1, c)))
}
