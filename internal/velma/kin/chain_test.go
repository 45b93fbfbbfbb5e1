package kin

import (
	"math"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

var (
	initialRight = [ArmDOF]float64{-0.3, -1.8, 1.25, 0.85, 0, -0.5, 0}
	initialLeft  = [ArmDOF]float64{0.3, 1.8, -1.25, -0.85, 0, 0.5, 0}
	probeQ       = [ArmDOF]float64{0.1, -0.4, 0.3, 1.2, -0.5, 0.8, 0.2}
)

func neg(q [ArmDOF]float64) [ArmDOF]float64 {
	for i := range q {
		q[i] = -q[i]
	}
	return q
}

// Test vectors of docs/velma-model.md#test-vectors (given to 4 decimals).
func TestForward_DocTestVectors(t *testing.T) {
	cases := []struct {
		name  string
		side  Side
		torso float64
		q     [ArmDOF]float64
		p     geom.Vec3
		r     *geom.Mat3
	}{
		{"right torso0 q0", Right, 0, [ArmDOF]float64{}, geom.Vec3{X: 0, Y: -1.0206, Z: 1.7926},
			&geom.Mat3{{0, -1, 0}, {0.5, 0, -0.866}, {0.866, 0, 0.5}}},
		{"left torso0 q0", Left, 0, [ArmDOF]float64{}, geom.Vec3{X: 0, Y: 1.0206, Z: 1.7926},
			&geom.Mat3{{0, -1, 0}, {0.5, 0, 0.866}, {-0.866, 0, 0.5}}},
		{"right initial", Right, 0, initialRight, geom.Vec3{X: 0.1483, Y: -0.3909, Z: 0.6141},
			&geom.Mat3{{-0.4840, -0.2375, 0.8422}, {-0.2969, 0.9499, 0.0973}, {-0.8232, -0.2030, -0.5303}}},
		{"left initial", Left, 0, initialLeft, geom.Vec3{X: 0.1483, Y: 0.3909, Z: 0.6141},
			&geom.Mat3{{0.4840, -0.2375, 0.8422}, {-0.2969, -0.9499, -0.0973}, {0.8232, -0.2030, -0.5303}}},
		{"right torso0.5 initial", Right, 0.5, initialRight, geom.Vec3{X: 0.3176, Y: -0.2719, Z: 0.6141}, nil},
		{"right torso0.2 probe", Right, 0.2, probeQ, geom.Vec3{X: 0.3762, Y: -0.8504, Z: 1.0804},
			&geom.Mat3{{-0.1294, -0.7320, 0.6689}, {-0.3170, -0.6087, -0.7274}, {0.9396, -0.3061, -0.1533}}},
		{"left torso-0.2 probe", Left, -0.2, neg(probeQ), geom.Vec3{X: 0.3762, Y: 0.8504, Z: 1.0804}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Forward(tc.side, tc.torso, tc.q)
			w := c.Wrist()
			if d := w.P.Sub(tc.p); math.Abs(d.X) > 6e-5 || math.Abs(d.Y) > 6e-5 || math.Abs(d.Z) > 6e-5 {
				t.Errorf("p = %.5f, want %.4f", w.P, tc.p)
			}
			if tc.r == nil {
				return
			}
			for i := range 3 {
				for j := range 3 {
					if math.Abs(w.R[i][j]-tc.r[i][j]) > 6e-5 {
						t.Fatalf("R[%d][%d] = %.5f, want %.4f", i, j, w.R[i][j], tc.r[i][j])
					}
				}
			}
		})
	}
}

func TestWristJacobian_DocMatrix(t *testing.T) {
	want := [6][ChainDOF]float64{
		{0.3909, 0.7058, -0.0788, 0.0877, 0.3609, 0.0089, -0.0378, 0.0000},
		{0.1483, 0.0742, -0.6733, -0.3506, 0.1430, -0.0355, -0.0232, 0.0000},
		{0.0000, 0.1285, 0.0946, 0.0749, 0.2468, 0.0076, -0.0642, 0.0000},
		{0.0000, 0.0000, -0.9553, -0.2878, 0.2375, 0.5071, -0.2375, 0.8422},
		{0.0000, -0.8660, 0.1478, -0.2684, -0.9499, -0.0570, 0.9499, 0.0973},
		{1.0000, 0.5000, 0.2559, -0.9193, 0.2030, -0.8600, -0.2030, -0.5303},
	}
	c := Forward(Right, 0, initialRight)
	j := c.WristJacobian()
	for r := range 6 {
		for k := range ChainDOF {
			if math.Abs(j[r][k]-want[r][k]) > 6e-5 {
				t.Errorf("J[%d][%d] = %.5f, want %.4f", r, k, j[r][k], want[r][k])
			}
		}
	}
}

// The Jacobian must agree with finite differences of FK at an arbitrary pose.
func TestWristJacobian_MatchesFiniteDifferences(t *testing.T) {
	for _, side := range []Side{Right, Left} {
		qt, q := 0.3, [ArmDOF]float64{0.4, -1.1, 0.7, 1.3, -0.6, 0.9, -0.4}
		c0 := Forward(side, qt, q)
		j := c0.WristJacobian()
		const h = 1e-6
		for k := range ChainDOF {
			qt2, q2 := qt, q
			if k == 0 {
				qt2 += h
			} else {
				q2[k-1] += h
			}
			c1 := Forward(side, qt2, q2)
			a, b := c0.Wrist(), c1.Wrist()
			dp := b.P.Sub(a.P).Scale(1 / h)
			// angular: skew part of dR·Rᵀ
			dr := b.R.Mul(a.R.T())
			w := geom.Vec3{X: (dr[2][1] - dr[1][2]) / 2 / h, Y: (dr[0][2] - dr[2][0]) / 2 / h, Z: (dr[1][0] - dr[0][1]) / 2 / h}
			jp := geom.Vec3{X: j[0][k], Y: j[1][k], Z: j[2][k]}
			jw := geom.Vec3{X: j[3][k], Y: j[4][k], Z: j[5][k]}
			if dp.Sub(jp).Norm() > 1e-5 || w.Sub(jw).Norm() > 1e-5 {
				t.Fatalf("%v column %d: fd (%v, %v) vs J", side, k, dp, w)
			}
		}
	}
}

func TestForward_MirrorSymmetry(t *testing.T) {
	cr, cl := Forward(Right, 0, probeQ), Forward(Left, 0, neg(probeQ))
	r, l := cr.Wrist(), cl.Wrist()
	if math.Abs(r.P.X-l.P.X) > 1e-12 || math.Abs(r.P.Y+l.P.Y) > 1e-12 || math.Abs(r.P.Z-l.P.Z) > 1e-12 {
		t.Fatalf("right %v and left %v are not mirror images", r.P, l.P)
	}
}

func TestQuat_RoundTripAndSlerp(t *testing.T) {
	r := geom.MatrixFromRPY(0.3, -0.7, 2.1)
	q := geom.QuatFromMatrix(r)
	if geom.AngleBetween(q.Matrix(), r) > 1e-9 {
		t.Fatal("quaternion round trip failed")
	}
	a, b := geom.QuatFromMatrix(geom.RotZ(0)), geom.QuatFromMatrix(geom.RotZ(1))
	if got := geom.AngleBetween(geom.Slerp(a, b, 0.25).Matrix(), geom.RotZ(0.25)); got > 1e-9 {
		t.Fatalf("slerp off by %g rad", got)
	}
}
