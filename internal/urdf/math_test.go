package urdf

import (
	"math"
	"math/rand/v2"
	"testing"
)

const tol = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= tol }

func quatNear(t *testing.T, got, want Quat) {
	t.Helper()
	// q and −q are the same rotation
	if got.W*want.W+got.X*want.X+got.Y*want.Y+got.Z*want.Z < 0 {
		want = Quat{-want.X, -want.Y, -want.Z, -want.W}
	}
	if !near(got.X, want.X) || !near(got.Y, want.Y) || !near(got.Z, want.Z) || !near(got.W, want.W) {
		t.Fatalf("quaternion %+v, want %+v", got, want)
	}
}

func vecNear(t *testing.T, got, want Vec3, eps float64) {
	t.Helper()
	for i := range 3 {
		if math.Abs(got[i]-want[i]) > eps {
			t.Fatalf("vector %v, want %v", got, want)
		}
	}
}

func rotX(a float64) [3][3]float64 {
	s, c := math.Sincos(a)
	return [3][3]float64{{1, 0, 0}, {0, c, -s}, {0, s, c}}
}

func rotY(a float64) [3][3]float64 {
	s, c := math.Sincos(a)
	return [3][3]float64{{c, 0, s}, {0, 1, 0}, {-s, 0, c}}
}

func rotZ(a float64) [3][3]float64 {
	s, c := math.Sincos(a)
	return [3][3]float64{{c, -s, 0}, {s, c, 0}, {0, 0, 1}}
}

func matMul(a, b [3][3]float64) [3][3]float64 {
	var o [3][3]float64
	for i := range 3 {
		for j := range 3 {
			o[i][j] = a[i][0]*b[0][j] + a[i][1]*b[1][j] + a[i][2]*b[2][j]
		}
	}
	return o
}

func TestQuatFromRPY_Table(t *testing.T) {
	h := math.Sqrt(0.5)
	cases := []struct {
		name             string
		roll, pitch, yaw float64
		want             Quat
	}{
		{"zero", 0, 0, 0, Quat{0, 0, 0, 1}},
		{"roll 90°", math.Pi / 2, 0, 0, Quat{h, 0, 0, h}},
		{"pitch 90°", 0, math.Pi / 2, 0, Quat{0, h, 0, h}},
		{"yaw 90°", 0, 0, math.Pi / 2, Quat{0, 0, h, h}},
		{"yaw 180°", 0, 0, math.Pi, Quat{0, 0, 1, 0}},
		{"roll 180°", math.Pi, 0, 0, Quat{1, 0, 0, 0}},
		{"yaw −90°", 0, 0, -math.Pi / 2, Quat{0, 0, -h, h}},
		// roll 90° then yaw 90° about the fixed axes: qz·qx
		{"roll 90° yaw 90°", math.Pi / 2, 0, math.Pi / 2, Quat{0.5, 0.5, 0.5, 0.5}},
		// pitch 90° then yaw 90°: qz·qy
		{"pitch 90° yaw 90°", 0, math.Pi / 2, math.Pi / 2, Quat{-0.5, 0.5, 0.5, 0.5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			quatNear(t, QuatFromRPY(c.roll, c.pitch, c.yaw), c.want)
		})
	}
}

// The quaternion of rpy has the matrix Rz(yaw)·Ry(pitch)·Rx(roll), and RPY
// inverts it away from gimbal lock.
func TestQuatFromRPY_MatchesMatrixAndInverts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		r := (rng.Float64()*2 - 1) * math.Pi
		p := (rng.Float64()*2 - 1) * (math.Pi/2 - 1e-3)
		y := (rng.Float64()*2 - 1) * math.Pi
		q := QuatFromRPY(r, p, y)
		want := matMul(rotZ(y), matMul(rotY(p), rotX(r)))
		got := q.Matrix()
		for i := range 3 {
			for j := range 3 {
				if math.Abs(got[i][j]-want[i][j]) > 1e-12 {
					t.Fatalf("rpy (%v %v %v): matrix %v, want %v", r, p, y, got, want)
				}
			}
		}
		r2, p2, y2 := q.RPY()
		quatNear(t, QuatFromRPY(r2, p2, y2), q)
		if math.Abs(q.X*q.X+q.Y*q.Y+q.Z*q.Z+q.W*q.W-1) > 1e-12 {
			t.Fatalf("not a unit quaternion: %+v", q)
		}
	}
}

func TestRPY_GimbalLock(t *testing.T) {
	for _, c := range []struct{ r, p, y float64 }{{0.3, math.Pi / 2, 0.2}, {-0.4, -math.Pi / 2, 1.0}} {
		q := QuatFromRPY(c.r, c.p, c.y)
		r, p, y := q.RPY()
		if r != 0 || !near(math.Abs(p), math.Pi/2) {
			t.Fatalf("gimbal lock: rpy %v %v %v", r, p, y)
		}
		quatNear(t, QuatFromRPY(r, p, y), q)
	}
}

func TestQuatFromAxisAngle_Table(t *testing.T) {
	h := math.Sqrt(0.5)
	cases := []struct {
		name  string
		axis  Vec3
		angle float64
		p     Vec3 // a point
		want  Vec3 // the point rotated
		q     Quat
	}{
		{"z 90°", Vec3{0, 0, 1}, math.Pi / 2, Vec3{1, 0, 0}, Vec3{0, 1, 0}, Quat{0, 0, h, h}},
		{"−z 90°", Vec3{0, 0, -1}, math.Pi / 2, Vec3{1, 0, 0}, Vec3{0, -1, 0}, Quat{0, 0, -h, h}},
		{"y 90°", Vec3{0, 1, 0}, math.Pi / 2, Vec3{1, 0, 0}, Vec3{0, 0, -1}, Quat{0, h, 0, h}},
		{"−y 90°", Vec3{0, -1, 0}, math.Pi / 2, Vec3{1, 0, 0}, Vec3{0, 0, 1}, Quat{0, -h, 0, h}},
		{"x 180°", Vec3{1, 0, 0}, math.Pi, Vec3{0, 1, 0}, Vec3{0, -1, 0}, Quat{1, 0, 0, 0}},
		{"zero angle", Vec3{1, 0, 0}, 0, Vec3{1, 2, 3}, Vec3{1, 2, 3}, Quat{0, 0, 0, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := QuatFromAxisAngle(c.axis, c.angle)
			quatNear(t, q, c.q)
			vecNear(t, q.Rotate(c.p), c.want, 1e-12)
		})
	}
}

func TestTransform_MulInverseApply(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rnd := func() Transform {
		return Transform{
			Translation: Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()},
			Rotation:    QuatFromRPY(rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()),
		}
	}
	for range 500 {
		a, b := rnd(), rnd()
		p := Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		// (a·b)(p) = a(b(p))
		vecNear(t, a.Mul(b).Apply(p), a.Apply(b.Apply(p)), 1e-12)
		// a⁻¹(a(p)) = p
		vecNear(t, a.Inverse().Apply(a.Apply(p)), p, 1e-12)
		id := a.Mul(a.Inverse())
		vecNear(t, id.Translation, Vec3{}, 1e-12)
		quatNear(t, id.Rotation.Normalized(), IdentityQuat)
	}
	// a known composition: translate 1 along x of a frame turned 90° about z
	a := Transform{Translation: Vec3{1, 0, 0}, Rotation: QuatFromRPY(0, 0, math.Pi/2)}
	b := Transform{Translation: Vec3{1, 0, 0}, Rotation: IdentityQuat}
	vecNear(t, a.Mul(b).Translation, Vec3{1, 1, 0}, 1e-15)
}

func TestQuat_NormalizedKeepsRotation(t *testing.T) {
	q := Quat{0, 0, -2, -2}
	n := q.Normalized()
	if n.W < 0 || !near(n.Z, math.Sqrt(0.5)) {
		t.Fatalf("normalized %+v", n)
	}
	quatNear(t, n, QuatFromRPY(0, 0, math.Pi/2))
}
