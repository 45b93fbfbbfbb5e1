package geom

import (
	"math"
	"math/rand/v2"
	"testing"
)

const tol = 1e-12

func near(a, b, eps float64) bool { return math.Abs(a-b) <= eps }

func vecNear(t *testing.T, got, want Vec3, eps float64) {
	t.Helper()
	if !near(got.X, want.X, eps) || !near(got.Y, want.Y, eps) || !near(got.Z, want.Z, eps) {
		t.Fatalf("vector %+v, want %+v", got, want)
	}
}

// sameRotation fails unless got and want are the same rotation (q and −q
// are).
func sameRotation(t *testing.T, got, want Quat) {
	t.Helper()
	if got.W*want.W+got.X*want.X+got.Y*want.Y+got.Z*want.Z < 0 {
		want = Quat{-want.X, -want.Y, -want.Z, -want.W}
	}
	quatExact(t, got, want, tol)
}

// quatExact fails unless got and want agree component by component (the
// sign too).
func quatExact(t *testing.T, got, want Quat, eps float64) {
	t.Helper()
	if !near(got.X, want.X, eps) || !near(got.Y, want.Y, eps) || !near(got.Z, want.Z, eps) || !near(got.W, want.W, eps) {
		t.Fatalf("quaternion %+v, want %+v", got, want)
	}
}

func matNear(t *testing.T, got, want Mat3, eps float64) {
	t.Helper()
	for i := range 3 {
		for j := range 3 {
			if !near(got[i][j], want[i][j], eps) {
				t.Fatalf("matrix %v, want %v", got, want)
			}
		}
	}
}

func TestVec3_Table(t *testing.T) {
	a, b := Vec3{1, 2, 3}, Vec3{-4, 5, 0.5}
	cases := []struct {
		name      string
		got, want Vec3
	}{
		{"add", a.Add(b), Vec3{-3, 7, 3.5}},
		{"sub", a.Sub(b), Vec3{5, -3, 2.5}},
		{"scale", a.Scale(-2), Vec3{-2, -4, -6}},
		{"cross x×y", Vec3{1, 0, 0}.Cross(Vec3{0, 1, 0}), Vec3{0, 0, 1}},
		{"cross y×z", Vec3{0, 1, 0}.Cross(Vec3{0, 0, 1}), Vec3{1, 0, 0}},
		{"cross z×x", Vec3{0, 0, 1}.Cross(Vec3{1, 0, 0}), Vec3{0, 1, 0}},
		{"cross a×b", a.Cross(b), Vec3{2*0.5 - 3*5, 3*-4 - 1*0.5, 1*5 - 2*-4}},
		{"cross a×a", a.Cross(a), Vec3{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { vecNear(t, c.got, c.want, 0) })
	}
	if a.Dot(b) != -4+10+1.5 {
		t.Errorf("dot = %v", a.Dot(b))
	}
	if n := (Vec3{3, 4, 12}).Norm(); n != 13 {
		t.Errorf("norm = %v", n)
	}
}

func TestFinite_Table(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name         string
		v            Vec3
		q            Quat
		wantV, wantQ bool
	}{
		{"zero", Vec3{}, Quat{}, true, true},
		{"ordinary", Vec3{1, -2, 3e300}, Quat{0.1, 0.2, 0.3, 0.9}, true, true},
		{"NaN in x", Vec3{nan, 0, 0}, Quat{nan, 0, 0, 1}, false, false},
		{"+Inf in z", Vec3{0, 0, inf}, Quat{0, 0, inf, 1}, false, false},
		{"−Inf in y", Vec3{0, -inf, 0}, Quat{0, -inf, 0, 1}, false, false},
		{"NaN in w", Vec3{}, Quat{0, 0, 0, nan}, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.v.Finite(); got != c.wantV {
				t.Errorf("%+v.Finite() = %v", c.v, got)
			}
			if got := c.q.Finite(); got != c.wantQ {
				t.Errorf("%+v.Finite() = %v", c.q, got)
			}
		})
	}
}

// Normalized keeps the sign and never divides by zero.
func TestQuat_Normalized_Table(t *testing.T) {
	h := math.Sqrt(0.5)
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name    string
		in, out Quat
	}{
		{"unit stays", Quat{0, 0, h, h}, Quat{0, 0, h, h}},
		{"scaled", Quat{0, 0, 2, 2}, Quat{0, 0, h, h}},
		{"negative w keeps its sign", Quat{0, 0, -2, -2}, Quat{0, 0, -h, -h}},
		{"tiny", Quat{1e-150, 0, 0, 0}, Quat{1, 0, 0, 0}},
		{"zero is the identity", Quat{}, Identity},
		{"NaN is the identity", Quat{nan, 0, 0, 1}, Identity},
		{"Inf is the identity", Quat{inf, 0, 0, 1}, Identity},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { quatExact(t, c.in.Normalized(), c.out, tol) })
	}
}

func TestQuat_MulConjRotate_Table(t *testing.T) {
	h := math.Sqrt(0.5)
	z90 := Quat{0, 0, h, h}
	x90 := Quat{h, 0, 0, h}
	cases := []struct {
		name    string
		q       Quat
		p, want Vec3
	}{
		{"identity", Identity, Vec3{1, 2, 3}, Vec3{1, 2, 3}},
		{"z 90°", z90, Vec3{1, 0, 0}, Vec3{0, 1, 0}},
		{"x 90°", x90, Vec3{0, 1, 0}, Vec3{0, 0, 1}},
		{"x 90° then z 90°", z90.Mul(x90), Vec3{0, 0, 1}, Vec3{1, 0, 0}},
		{"z 90° then x 90°", x90.Mul(z90), Vec3{1, 0, 0}, Vec3{0, 0, 1}},
		{"z 90° undone", z90.Conj().Mul(z90), Vec3{1, 2, 3}, Vec3{1, 2, 3}},
		{"z −90° (conj)", z90.Conj(), Vec3{1, 0, 0}, Vec3{0, -1, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vecNear(t, c.q.Rotate(c.p), c.want, tol)
			vecNear(t, c.q.Matrix().MulVec(c.p), c.want, tol)
		})
	}
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
			q := QuatFromRPY(c.roll, c.pitch, c.yaw)
			sameRotation(t, q, c.want)
			matNear(t, q.Matrix(), MatrixFromRPY(c.roll, c.pitch, c.yaw), tol)
		})
	}
}

// The quaternion of rpy has the matrix Rz(yaw)·Ry(pitch)·Rx(roll); RPY
// inverts it away from gimbal lock, and QuatFromMatrix inverts Matrix.
func TestQuatFromRPY_MatchesMatrixAndInverts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		r := (rng.Float64()*2 - 1) * math.Pi
		p := (rng.Float64()*2 - 1) * (math.Pi/2 - 1e-3)
		y := (rng.Float64()*2 - 1) * math.Pi
		q := QuatFromRPY(r, p, y)
		matNear(t, q.Matrix(), RotZ(y).Mul(RotY(p)).Mul(RotX(r)), tol)
		r2, p2, y2 := q.RPY()
		sameRotation(t, QuatFromRPY(r2, p2, y2), q)
		if !near(q.Norm(), 1, tol) {
			t.Fatalf("not a unit quaternion: %+v", q)
		}
		m := QuatFromMatrix(q.Matrix())
		if m.W < 0 {
			t.Fatalf("QuatFromMatrix gave W < 0: %+v", m)
		}
		sameRotation(t, m, q)
	}
}

func TestRPY_GimbalLock(t *testing.T) {
	for _, c := range []struct{ r, p, y float64 }{{0.3, math.Pi / 2, 0.2}, {-0.4, -math.Pi / 2, 1.0}} {
		q := QuatFromRPY(c.r, c.p, c.y)
		r, p, y := q.RPY()
		if r != 0 || !near(math.Abs(p), math.Pi/2, tol) {
			t.Fatalf("gimbal lock: rpy %v %v %v", r, p, y)
		}
		sameRotation(t, QuatFromRPY(r, p, y), q)
	}
}

func TestQuatFromAxisAngle_Table(t *testing.T) {
	h := math.Sqrt(0.5)
	cases := []struct {
		name    string
		axis    Vec3
		angle   float64
		p, want Vec3 // a point and the point rotated
		q       Quat
		m       Mat3
	}{
		{"z 90°", Vec3{0, 0, 1}, math.Pi / 2, Vec3{1, 0, 0}, Vec3{0, 1, 0}, Quat{0, 0, h, h}, RotZ(math.Pi / 2)},
		{"−z 90°", Vec3{0, 0, -1}, math.Pi / 2, Vec3{1, 0, 0}, Vec3{0, -1, 0}, Quat{0, 0, -h, h}, RotZ(-math.Pi / 2)},
		{"y 90°", Vec3{0, 1, 0}, math.Pi / 2, Vec3{1, 0, 0}, Vec3{0, 0, -1}, Quat{0, h, 0, h}, RotY(math.Pi / 2)},
		{"−y 90°", Vec3{0, -1, 0}, math.Pi / 2, Vec3{1, 0, 0}, Vec3{0, 0, 1}, Quat{0, -h, 0, h}, RotY(-math.Pi / 2)},
		{"x 180°", Vec3{1, 0, 0}, math.Pi, Vec3{0, 1, 0}, Vec3{0, -1, 0}, Quat{1, 0, 0, 0}, RotX(math.Pi)},
		{"zero angle", Vec3{1, 0, 0}, 0, Vec3{1, 2, 3}, Vec3{1, 2, 3}, Quat{0, 0, 0, 1}, Identity3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := QuatFromAxisAngle(c.axis, c.angle)
			sameRotation(t, q, c.q)
			vecNear(t, q.Rotate(c.p), c.want, tol)
			vecNear(t, c.m.MulVec(c.p), c.want, tol)
			matNear(t, q.Matrix(), c.m, tol)
		})
	}
}

func TestYaw_Table(t *testing.T) {
	cases := []struct {
		name string
		q    Quat
		want float64
	}{
		{"identity", Identity, 0},
		{"yaw 1", QuatFromYaw(1), 1},
		{"yaw −2", QuatFromYaw(-2), -2},
		{"yaw π", QuatFromYaw(math.Pi), math.Pi},
		{"negated quaternion, same yaw", Quat{0, 0, -math.Sin(0.5), -math.Cos(0.5)}, 1},
		{"roll and pitch ignored", QuatFromRPY(0.3, -0.2, 0.7), 0.7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.q.Yaw(); !near(got, c.want, 1e-9) {
				t.Errorf("Yaw = %v, want %v", got, c.want)
			}
		})
	}
	sameRotation(t, QuatFromYaw(0.4), QuatFromRPY(0, 0, 0.4))
}

func TestAngle_Table(t *testing.T) {
	cases := []struct {
		name string
		a, b Quat
		want float64
	}{
		{"same", QuatFromYaw(1), QuatFromYaw(1), 0},
		{"yaw 0.5 apart", QuatFromYaw(1), QuatFromYaw(1.5), 0.5},
		{"q and −q", QuatFromYaw(1), Quat{0, 0, -math.Sin(0.5), -math.Cos(0.5)}, 0},
		{"half turn", Identity, Quat{1, 0, 0, 0}, math.Pi},
		{"unnormalized", Quat{0, 0, 0, 3}, Quat{0, 0, 2 * math.Sin(0.2), 2 * math.Cos(0.2)}, 0.4},
		{"zero is the identity", Quat{}, QuatFromYaw(0.3), 0.3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.a.AngleTo(c.b); !near(got, c.want, 1e-7) {
				t.Errorf("AngleTo = %v, want %v", got, c.want)
			}
			if got := AngleBetween(c.a.Normalized().Matrix(), c.b.Normalized().Matrix()); !near(got, c.want, 1e-7) {
				t.Errorf("AngleBetween = %v, want %v", got, c.want)
			}
		})
	}
}

// Every branch of QuatFromMatrix (trace > 0; the largest diagonal entry x,
// y or z) gives back the rotation, with W ≥ 0.
func TestQuatFromMatrix_Branches(t *testing.T) {
	cases := []struct {
		name string
		m    Mat3
	}{
		{"identity (trace > 0)", Identity3},
		{"rpy (trace > 0)", MatrixFromRPY(0.3, -0.7, 2.1)},
		{"x 180° (x largest)", RotX(math.Pi)},
		{"y 180° (y largest)", RotY(math.Pi)},
		{"z 180° (z largest)", RotZ(math.Pi)},
		{"x 170° then y 10°", RotY(0.17).Mul(RotX(2.97))},
		{"z −170°", RotZ(-2.97)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := QuatFromMatrix(c.m)
			if q.W < 0 || !near(q.Norm(), 1, tol) {
				t.Fatalf("QuatFromMatrix = %+v: want unit with W ≥ 0", q)
			}
			matNear(t, q.Matrix(), c.m, 1e-12)
		})
	}
}

func TestSlerp_Table(t *testing.T) {
	a, b := QuatFromYaw(0), QuatFromYaw(1)
	negB := Quat{-b.X, -b.Y, -b.Z, -b.W}
	cases := []struct {
		name string
		a, b Quat
		s    float64
		want Quat
	}{
		{"start", a, b, 0, a},
		{"end", a, b, 1, b},
		{"quarter", a, b, 0.25, QuatFromYaw(0.25)},
		{"half", a, b, 0.5, QuatFromYaw(0.5)},
		{"shorter arc of −b", a, negB, 0.5, QuatFromYaw(0.5)},
		{"nearly equal", QuatFromYaw(0.1), QuatFromYaw(0.1 + 1e-5), 0.5, QuatFromYaw(0.1 + 5e-6)},
		{"about x", QuatFromAxisAngle(Vec3{1, 0, 0}, 0.2), QuatFromAxisAngle(Vec3{1, 0, 0}, 2.2), 0.75, QuatFromAxisAngle(Vec3{1, 0, 0}, 1.7)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { sameRotation(t, Slerp(c.a, c.b, c.s), c.want) })
	}
}

func TestMat3_Table(t *testing.T) {
	m := Mat3{{1, 2, 3}, {4, 5, 6}, {7, 8, 10}}
	matNear(t, m.Mul(Identity3), m, 0)
	matNear(t, Identity3.Mul(m), m, 0)
	matNear(t, m.T(), Mat3{{1, 4, 7}, {2, 5, 8}, {3, 6, 10}}, 0)
	matNear(t, m.Mul(m), Mat3{{30, 36, 45}, {66, 81, 102}, {109, 134, 169}}, 0)
	vecNear(t, m.MulVec(Vec3{1, 0, -1}), Vec3{-2, -2, -3}, 0)
	vecNear(t, m.Col(2), Vec3{3, 6, 10}, 0)
	r := MatrixFromRPY(0.3, -0.7, 2.1)
	matNear(t, r.Mul(r.T()), Identity3, 1e-15)
}
