package velma

import (
	"math"

	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
)

// wccPolygonRight is the allowed region of (q5, q6) of the right arm
// (docs/velma-model.md#wrist-constraint, the original's wcc_r.yaml); the
// left arm's is its negation.
var wccPolygonRight = [][2]float64{
	{0.65, -2.90}, {1.79, -2.91}, {1.78, -1.43}, {0.77, -1.39}, {0.36, -1.00}, {-0.15, -0.26},
	{0.35, 0.41}, {0.8, 0.94}, {1.8, 1.01}, {1.81, 2.88}, {-0.4, 2.89}, {-0.81, 2.27},
	{-1.82, 2.29}, {-1.83, -1.66}, {-0.84, -1.73}, {-0.42, -2.09},
}

// Wrist constraint parameters (DoubleJointConstraint).
const (
	wccRange     = 0.25 // activation distance from an edge [rad]
	wccForce     = 50.0 // maximum repulsion before rescaling
	wccMaxTorque = 8.0  // |τ5|, |τ6| limit [Nm]
)

// wccGeometry returns whether p is inside poly, the distance to the nearest
// edge and the unit vector pointing into the polygon from that edge.
func wccGeometry(poly [][2]float64, p [2]float64) (inside bool, d float64, in [2]float64) {
	d = math.Inf(1)
	var near [2]float64
	n := len(poly)
	for i := range n {
		a, b := poly[i], poly[(i+1)%n]
		// ray casting along +x
		if (a[1] > p[1]) != (b[1] > p[1]) {
			x := a[0] + (p[1]-a[1])*(b[0]-a[0])/(b[1]-a[1])
			if p[0] < x {
				inside = !inside
			}
		}
		ex, ey := b[0]-a[0], b[1]-a[1]
		t := ((p[0]-a[0])*ex + (p[1]-a[1])*ey) / (ex*ex + ey*ey)
		t = math.Max(0, math.Min(1, t))
		c := [2]float64{a[0] + t*ex, a[1] + t*ey}
		if dd := math.Hypot(p[0]-c[0], p[1]-c[1]); dd < d {
			d, near = dd, c
		}
	}
	v := [2]float64{p[0] - near[0], p[1] - near[1]}
	if !inside {
		v = [2]float64{-v[0], -v[1]}
	}
	if l := math.Hypot(v[0], v[1]); l > 1e-12 {
		in = [2]float64{v[0] / l, v[1] / l}
	}
	return inside, d, in
}

// wristConstraint is the wcc stage for one arm (body indices i5, i6 of its
// joints 5 and 6): it removes the part of the incoming torque that pushes
// out of the allowed (q5, q6) region, scaled by the activation, and adds a
// repulsion F = 50·f² (f = (0.25 − d)/0.25; full force outside) along the
// inward normal, rescaled so that neither torque exceeds 8 Nm.
func (c *CS) wristConstraint(poly [][2]float64, i5, i6 int) {
	inside, d, in := wccGeometry(poly, [2]float64{c.q[i5], c.q[i6]})
	f := 1.0
	if inside {
		f = math.Max(0, math.Min(1, (wccRange-d)/wccRange))
	}
	if f == 0 {
		return
	}
	if out := -(in[0]*c.tau[i5] + in[1]*c.tau[i6]); out > 0 {
		c.tau[i5] += f * in[0] * out
		c.tau[i6] += f * in[1] * out
	}
	F := wccForce * f * f
	t5, t6 := F*in[0], F*in[1]
	if m := math.Max(math.Abs(t5), math.Abs(t6)); m > wccMaxTorque {
		t5, t6 = t5*wccMaxTorque/m, t6*wccMaxTorque/m
	}
	c.tau[i5] += t5
	c.tau[i6] += t6
}

// wristConstraints applies wcc_r then wcc_l.
func (c *CS) wristConstraints() {
	c.wristConstraint(wccPolygonRight, 6, 7)
	c.wristConstraint(c.wccLeft, 13, 14)
}

func negatePolygon(p [][2]float64) [][2]float64 {
	out := make([][2]float64, len(p))
	for i, v := range p {
		out[i] = [2]float64{-v[0], -v[1]}
	}
	return out
}

// WristRegion reports whether (q5, q6) of arm s lies inside its allowed
// wrist region and the distance to the region's boundary [rad].
func WristRegion(s kin.Side, q5, q6 float64) (inside bool, d float64) {
	poly := wccPolygonRight
	if s == kin.Left {
		q5, q6 = -q5, -q6
	}
	inside, d, _ = wccGeometry(poly, [2]float64{q5, q6})
	return inside, d
}
