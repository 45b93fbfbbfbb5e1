package urdf

import "math"

// Vec3 is a 3-vector (a point, a translation or an axis).
type Vec3 [3]float64

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

// Quat is a unit quaternion x·i + y·j + z·k + w, the layout of
// geometry_msgs/Quaternion.
type Quat struct{ X, Y, Z, W float64 }

// IdentityQuat is the rotation by zero.
var IdentityQuat = Quat{W: 1}

// Mul returns the Hamilton product a·b: the rotation b followed by a.
func (a Quat) Mul(b Quat) Quat {
	return Quat{
		X: a.W*b.X + a.X*b.W + a.Y*b.Z - a.Z*b.Y,
		Y: a.W*b.Y - a.X*b.Z + a.Y*b.W + a.Z*b.X,
		Z: a.W*b.Z + a.X*b.Y - a.Y*b.X + a.Z*b.W,
		W: a.W*b.W - a.X*b.X - a.Y*b.Y - a.Z*b.Z,
	}
}

// Conj returns the conjugate, the inverse rotation of a unit quaternion.
func (a Quat) Conj() Quat { return Quat{-a.X, -a.Y, -a.Z, a.W} }

// Rotate returns v rotated by a.
func (a Quat) Rotate(v Vec3) Vec3 {
	u := Vec3{a.X, a.Y, a.Z}
	t := u.Cross(v).Scale(2)
	return v.Add(t.Scale(a.W)).Add(u.Cross(t))
}

// Normalized returns a scaled to unit length with w ≥ 0 (the same rotation).
func (a Quat) Normalized() Quat {
	n := math.Sqrt(a.X*a.X + a.Y*a.Y + a.Z*a.Z + a.W*a.W)
	if a.W < 0 {
		n = -n
	}
	return Quat{a.X / n, a.Y / n, a.Z / n, a.W / n}
}

// Matrix returns the rotation matrix of a, row-major.
func (a Quat) Matrix() [3][3]float64 {
	x, y, z, w := a.X, a.Y, a.Z, a.W
	return [3][3]float64{
		{1 - 2*(y*y+z*z), 2 * (x*y - z*w), 2 * (x*z + y*w)},
		{2 * (x*y + z*w), 1 - 2*(x*x+z*z), 2 * (y*z - x*w)},
		{2 * (x*z - y*w), 2 * (y*z + x*w), 1 - 2*(x*x+y*y)},
	}
}

// QuatFromRPY returns the rotation of URDF's rpy attribute: roll about x,
// then pitch about y, then yaw about z, all about the fixed parent axes
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

// RPY returns roll, pitch and yaw of a (the inverse of QuatFromRPY, with
// pitch in [−π/2, π/2]).
func (a Quat) RPY() (roll, pitch, yaw float64) {
	m := a.Matrix()
	pitch = math.Asin(math.Max(-1, math.Min(1, -m[2][0])))
	if math.Abs(m[2][0]) > 1-1e-12 {
		// gimbal lock: roll and yaw share one axis; put it all in yaw
		return 0, pitch, math.Atan2(-m[0][1], m[1][1])
	}
	return math.Atan2(m[2][1], m[2][2]), pitch, math.Atan2(m[1][0], m[0][0])
}

// QuatFromAxisAngle returns the rotation by angle about a unit axis.
func QuatFromAxisAngle(axis Vec3, angle float64) Quat {
	s, c := math.Sincos(angle / 2)
	return Quat{axis[0] * s, axis[1] * s, axis[2] * s, c}
}

// Transform is a rigid transform from a child frame to its parent frame: a
// point p of the child is Rotation·p + Translation in the parent, the
// meaning of geometry_msgs/Transform in a TF message.
type Transform struct {
	Translation Vec3
	Rotation    Quat
}

// Identity is the transform that changes nothing.
var Identity = Transform{Rotation: IdentityQuat}

// Mul returns a·b: b's child frame expressed in a's parent frame.
func (a Transform) Mul(b Transform) Transform {
	return Transform{
		Translation: a.Rotation.Rotate(b.Translation).Add(a.Translation),
		Rotation:    a.Rotation.Mul(b.Rotation),
	}
}

// Apply maps a point from the child frame to the parent frame.
func (a Transform) Apply(p Vec3) Vec3 { return a.Rotation.Rotate(p).Add(a.Translation) }

// Inverse returns the transform from parent to child.
func (a Transform) Inverse() Transform {
	r := a.Rotation.Conj()
	return Transform{Translation: r.Rotate(a.Translation).Scale(-1), Rotation: r}
}

// Finite reports whether every component of t is finite.
func (a Transform) Finite() bool {
	for _, v := range []float64{a.Translation[0], a.Translation[1], a.Translation[2],
		a.Rotation.X, a.Rotation.Y, a.Rotation.Z, a.Rotation.W} {
		if !finite(v) {
			return false
		}
	}
	return true
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
