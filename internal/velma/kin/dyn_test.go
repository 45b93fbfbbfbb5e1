package kin

import (
	"math"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/velma/la"
)

func TestMassMatrix_SymmetricPositiveDefinite(t *testing.T) {
	for _, q := range [][ArmDOF]float64{{}, initialRight, probeQ} {
		c := Forward(Right, 0, q)
		m := c.MassMatrix()
		a := la.New(ArmDOF, ArmDOF)
		for i := range ArmDOF {
			for j := range ArmDOF {
				if math.Abs(m[i][j]-m[j][i]) > 1e-12 {
					t.Fatalf("M not symmetric at (%d,%d)", i, j)
				}
				a.Set(i, j, m[i][j])
			}
		}
		if _, err := la.Cholesky(a); err != nil {
			t.Fatalf("M(%v) not positive definite: %v", q, err)
		}
	}
}

// The last diagonal element is the inertia of link 7 + tool about the wrist
// z axis: Izz_tool + m·(x²+y²) + Izz_link7.
func TestMassMatrix_LastJointInertiaByHand(t *testing.T) {
	c := Forward(Right, 0, initialRight)
	m := c.MassMatrix()
	tl := Tool(Right)
	want := tl.I[2][2] + tl.Mass*(tl.COM.X*tl.COM.X+tl.COM.Y*tl.COM.Y) + 3.333e-4
	if math.Abs(m[6][6]-want) > 1e-9 {
		t.Fatalf("M[6][6] = %g, want %g", m[6][6], want)
	}
}

func TestClosestSegments_KnownGeometry(t *testing.T) {
	// crossing skew segments 1 m apart
	pa, pb := closestSegments(geom.Vec3{X: -1, Y: 0, Z: 0}, geom.Vec3{X: 1, Y: 0, Z: 0}, geom.Vec3{X: 0, Y: -1, Z: 1}, geom.Vec3{X: 0, Y: 1, Z: 1})
	if pa.Sub(geom.Vec3{X: 0, Y: 0, Z: 0}).Norm() > 1e-12 || pb.Sub(geom.Vec3{X: 0, Y: 0, Z: 1}).Norm() > 1e-12 {
		t.Fatalf("got %v %v", pa, pb)
	}
	// parallel, offset past the end
	pa, pb = closestSegments(geom.Vec3{X: 0, Y: 0, Z: 0}, geom.Vec3{X: 1, Y: 0, Z: 0}, geom.Vec3{X: 2, Y: 1, Z: 0}, geom.Vec3{X: 3, Y: 1, Z: 0})
	if d := pb.Sub(pa).Norm(); math.Abs(d-math.Sqrt2) > 1e-12 {
		t.Fatalf("distance %g, want √2", d)
	}
	// point vs segment
	pa, pb = closestSegments(geom.Vec3{X: 0, Y: 0, Z: 5}, geom.Vec3{X: 0, Y: 0, Z: 5}, geom.Vec3{X: -1, Y: 0, Z: 0}, geom.Vec3{X: 1, Y: 0, Z: 0})
	if pb.Sub(geom.Vec3{X: 0, Y: 0, Z: 0}).Norm() > 1e-12 || pa.Z != 5 {
		t.Fatalf("got %v %v", pa, pb)
	}
}

func body(qt float64, r, l [ArmDOF]float64) Body {
	q := make([]float64, BodyDOF)
	q[0] = qt
	copy(q[1:8], r[:])
	copy(q[8:15], l[:])
	return ForwardBody(q)
}

func TestCollision_HomePoseIsFree(t *testing.T) {
	m := DefaultCollisionModel()
	b := body(0, initialRight, initialLeft)
	d, pi := m.MinDistance(&b)
	if d < 0.04 {
		p := m.Pairs[pi]
		t.Fatalf("home pose min distance %.3f m between %s and %s", d, m.Caps[p[0]].Name, m.Caps[p[1]].Name)
	}
}

func TestCollision_ArmFoldedIntoTorsoIsDetected(t *testing.T) {
	m := DefaultCollisionModel()
	// Right arm swung across the body towards the torso: base joint turned
	// so the forearm points at the torso column.
	folded := [ArmDOF]float64{1.2, -1.6, 0, 1.9, 0, 0, 0}
	b := body(0, folded, initialLeft)
	d, _ := m.MinDistance(&b)
	if d >= 0.04 {
		t.Fatalf("folded arm min distance %.3f m, want a collision (< 0.04)", d)
	}
	cs := m.Contacts(&b, 0.04, nil)
	if len(cs) == 0 {
		t.Fatal("Contacts found nothing")
	}
	for _, c := range cs {
		if math.Abs(c.Normal.Norm()-1) > 1e-9 {
			t.Fatal("contact normal not unit")
		}
	}
}
