package velma

import (
	"math"
	"testing"
)

func TestWCCGeometry(t *testing.T) {
	cases := []struct {
		name   string
		p      [2]float64
		inside bool
		d      float64
	}{
		{"home pose", [2]float64{-0.5, 0}, true, math.Hypot(0.35, 0.26)},
		{"in the notch", [2]float64{1.0, -0.5}, false, -1},
		{"far corner", [2]float64{-1.0, 1.0}, true, -1},
		{"outside the box", [2]float64{2.5, 0}, false, -1},
	}
	for _, tc := range cases {
		in, d, n := wccGeometry(wccPolygonRight, tc.p)
		if in != tc.inside {
			t.Errorf("%s: inside = %v", tc.name, in)
		}
		if tc.d >= 0 && math.Abs(d-tc.d) > 1e-9 {
			t.Errorf("%s: d = %g, want %g", tc.name, d, tc.d)
		}
		if math.Abs(math.Hypot(n[0], n[1])-1) > 1e-9 {
			t.Errorf("%s: normal %v not unit", tc.name, n)
		}
		// a small step along the inward normal must not leave the polygon
		if in {
			q := [2]float64{tc.p[0] + 0.01*n[0], tc.p[1] + 0.01*n[1]}
			if in2, _, _ := wccGeometry(wccPolygonRight, q); !in2 {
				t.Errorf("%s: inward step leaves the polygon", tc.name)
			}
		} else {
			q := [2]float64{tc.p[0] + (d+0.01)*n[0], tc.p[1] + (d+0.01)*n[1]}
			if in2, _, _ := wccGeometry(wccPolygonRight, q); !in2 {
				t.Errorf("%s: stepping along the normal past the edge does not enter", tc.name)
			}
		}
	}
}

func TestWristConstraint_PushesBackAndLimitsTorque(t *testing.T) {
	c, _ := NewCS(DefaultCSConfig())
	// right q5/q6 at the notch edge from inside, incoming torque pushing out
	c.q[6], c.q[7] = 0.0, 0.0
	c.tau[6] = 20
	c.wristConstraint(wccPolygonRight, 6, 7)
	if c.tau[6] >= 20 {
		t.Fatalf("outward torque not reduced: %v", c.tau[6])
	}
	// far from every edge: nothing changes
	c.q[6], c.q[7], c.tau[6], c.tau[7] = -1.0, 1.0, 3, -3
	c.wristConstraint(wccPolygonRight, 6, 7)
	if c.tau[6] != 3 || c.tau[7] != -3 {
		t.Fatalf("torque changed far inside: %v %v", c.tau[6], c.tau[7])
	}
	// outside: the push back is limited to 8 Nm per joint
	c.q[6], c.q[7], c.tau[6], c.tau[7] = 1.0, -0.5, 0, 0
	c.wristConstraint(wccPolygonRight, 6, 7)
	if m := math.Max(math.Abs(c.tau[6]), math.Abs(c.tau[7])); math.Abs(m-8) > 1e-9 {
		t.Fatalf("push back %v %v, want max 8", c.tau[6], c.tau[7])
	}
	if c.tau[6] >= 0 {
		t.Fatalf("push back %v does not point back into the polygon", c.tau[6])
	}
	// the left arm uses the mirrored polygon
	c.q[13], c.q[14], c.tau[13], c.tau[14] = -1.0, 0.5, 0, 0
	c.wristConstraint(c.wccLeft, 13, 14)
	if c.tau[13] <= 0 {
		t.Fatalf("left push back %v, want > 0", c.tau[13])
	}
}
