// Package kin is the kinematic and rigid-body model of Velma's body: the
// torso joint and two KUKA LWR4+ arms mounted on it
// (docs/velma-model.md#kinematic-chain, nominal mounts), giving wrist forward
// kinematics, geometric Jacobians in the torso_base frame, the arm mass
// matrix from the URDF inertials plus the lumped tool
// (docs/velma-model.md#dynamics), and the capsule/sphere self-collision model
// (docs/velma-model.md#self-collision-model).
//
// All functions are pure and allocation-light; they are called from the
// 500 Hz control loop.
package kin

import "math"

// Vec3 is a 3-vector.
type Vec3 [3]float64

// Mat3 is a 3×3 rotation or inertia matrix, row-major.
type Mat3 [3][3]float64

// Frame is a rigid transform: a point x in the child frame is R·x + P in the
// parent frame.
type Frame struct {
	R Mat3
	P Vec3
}

// Add returns a+b.
func (a Vec3) Add(b Vec3) Vec3 { return Vec3{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }

// Sub returns a−b.
func (a Vec3) Sub(b Vec3) Vec3 { return Vec3{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }

// Scale returns s·a.
func (a Vec3) Scale(s float64) Vec3 { return Vec3{s * a[0], s * a[1], s * a[2]} }

// Dot returns a·b.
func (a Vec3) Dot(b Vec3) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

// Cross returns a×b.
func (a Vec3) Cross(b Vec3) Vec3 {
	return Vec3{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

// Norm returns |a|.
func (a Vec3) Norm() float64 { return math.Sqrt(a.Dot(a)) }

// Identity3 is the 3×3 identity.
var identity3 = Mat3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}

// Identity returns the identity frame.
func Identity() Frame { return Frame{R: identity3} }

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
		a[0][0]*v[0] + a[0][1]*v[1] + a[0][2]*v[2],
		a[1][0]*v[0] + a[1][1]*v[1] + a[1][2]*v[2],
		a[2][0]*v[0] + a[2][1]*v[1] + a[2][2]*v[2],
	}
}

// T returns the transpose.
func (a Mat3) T() Mat3 {
	return Mat3{{a[0][0], a[1][0], a[2][0]}, {a[0][1], a[1][1], a[2][1]}, {a[0][2], a[1][2], a[2][2]}}
}

// Col returns column j.
func (a Mat3) Col(j int) Vec3 { return Vec3{a[0][j], a[1][j], a[2][j]} }

// RotX returns the rotation by a about x.
func RotX(a float64) Mat3 {
	s, c := math.Sincos(a)
	return Mat3{{1, 0, 0}, {0, c, -s}, {0, s, c}}
}

// RotY returns the rotation by a about y.
func RotY(a float64) Mat3 {
	s, c := math.Sincos(a)
	return Mat3{{c, 0, s}, {0, 1, 0}, {-s, 0, c}}
}

// RotZ returns the rotation by a about z.
func RotZ(a float64) Mat3 {
	s, c := math.Sincos(a)
	return Mat3{{c, -s, 0}, {s, c, 0}, {0, 0, 1}}
}

// RPY returns the URDF fixed-axis rotation Rz(yaw)·Ry(pitch)·Rx(roll).
func RPY(roll, pitch, yaw float64) Mat3 { return RotZ(yaw).Mul(RotY(pitch)).Mul(RotX(roll)) }

// Mul returns the composition a·b.
func (a Frame) Mul(b Frame) Frame {
	return Frame{R: a.R.Mul(b.R), P: a.R.MulVec(b.P).Add(a.P)}
}

// Apply maps a point from the child to the parent frame.
func (a Frame) Apply(v Vec3) Vec3 { return a.R.MulVec(v).Add(a.P) }

// Inv returns the inverse transform.
func (a Frame) Inv() Frame {
	rt := a.R.T()
	return Frame{R: rt, P: rt.MulVec(a.P).Scale(-1)}
}

// Quat is a unit quaternion (w, x, y, z).
type Quat struct{ W, X, Y, Z float64 }

// QuatFromMat returns the unit quaternion of a rotation matrix with W ≥ 0.
func QuatFromMat(r Mat3) Quat {
	tr := r[0][0] + r[1][1] + r[2][2]
	var q Quat
	switch {
	case tr > 0:
		s := math.Sqrt(tr+1) * 2
		q = Quat{0.25 * s, (r[2][1] - r[1][2]) / s, (r[0][2] - r[2][0]) / s, (r[1][0] - r[0][1]) / s}
	case r[0][0] > r[1][1] && r[0][0] > r[2][2]:
		s := math.Sqrt(1+r[0][0]-r[1][1]-r[2][2]) * 2
		q = Quat{(r[2][1] - r[1][2]) / s, 0.25 * s, (r[0][1] + r[1][0]) / s, (r[0][2] + r[2][0]) / s}
	case r[1][1] > r[2][2]:
		s := math.Sqrt(1+r[1][1]-r[0][0]-r[2][2]) * 2
		q = Quat{(r[0][2] - r[2][0]) / s, (r[0][1] + r[1][0]) / s, 0.25 * s, (r[1][2] + r[2][1]) / s}
	default:
		s := math.Sqrt(1+r[2][2]-r[0][0]-r[1][1]) * 2
		q = Quat{(r[1][0] - r[0][1]) / s, (r[0][2] + r[2][0]) / s, (r[1][2] + r[2][1]) / s, 0.25 * s}
	}
	if q.W < 0 {
		q = Quat{-q.W, -q.X, -q.Y, -q.Z}
	}
	return q.Normalize()
}

// Normalize returns q/|q|; the zero quaternion becomes the identity.
func (q Quat) Normalize() Quat {
	n := math.Sqrt(q.W*q.W + q.X*q.X + q.Y*q.Y + q.Z*q.Z)
	if n == 0 || math.IsNaN(n) {
		return Quat{W: 1}
	}
	return Quat{q.W / n, q.X / n, q.Y / n, q.Z / n}
}

// Mat returns the rotation matrix of a unit quaternion.
func (q Quat) Mat() Mat3 {
	w, x, y, z := q.W, q.X, q.Y, q.Z
	return Mat3{
		{1 - 2*(y*y+z*z), 2 * (x*y - w*z), 2 * (x*z + w*y)},
		{2 * (x*y + w*z), 1 - 2*(x*x+z*z), 2 * (y*z - w*x)},
		{2 * (x*z - w*y), 2 * (y*z + w*x), 1 - 2*(x*x+y*y)},
	}
}

// Slerp interpolates between unit quaternions a (s=0) and b (s=1) along the
// shorter arc.
func Slerp(a, b Quat, s float64) Quat {
	d := a.W*b.W + a.X*b.X + a.Y*b.Y + a.Z*b.Z
	if d < 0 {
		b = Quat{-b.W, -b.X, -b.Y, -b.Z}
		d = -d
	}
	if d > 0.9995 {
		return Quat{a.W + s*(b.W-a.W), a.X + s*(b.X-a.X), a.Y + s*(b.Y-a.Y), a.Z + s*(b.Z-a.Z)}.Normalize()
	}
	th := math.Acos(d)
	sa := math.Sin((1-s)*th) / math.Sin(th)
	sb := math.Sin(s*th) / math.Sin(th)
	return Quat{sa*a.W + sb*b.W, sa*a.X + sb*b.X, sa*a.Y + sb*b.Y, sa*a.Z + sb*b.Z}.Normalize()
}

// AngleBetween returns the rotation angle from a to b, in [0, π].
func AngleBetween(a, b Mat3) float64 {
	r := a.T().Mul(b)
	c := (r[0][0] + r[1][1] + r[2][2] - 1) / 2
	return math.Acos(math.Max(-1, math.Min(1, c)))
}
