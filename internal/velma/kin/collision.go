package kin

import (
	"math"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// Capsule is a self-collision primitive: a segment of the given length
// along the local z axis of Origin (centred on it), swept by a sphere of
// Radius. A sphere is a capsule of length 0.
type Capsule struct {
	Name   string
	Side   Side // arm the link belongs to (ignored for torso/head parts)
	Link   int  // LinkTorso, LinkBase, 1…7; LinkHead for the head sphere
	Origin Frame
	Radius float64
	Length float64
}

// LinkHead marks the head bounding sphere, attached to torso_base (it does
// not rotate with the torso).
const LinkHead = -2

func capsule(name string, s Side, link int, xyz geom.Vec3, rpy geom.Vec3, r, l float64) Capsule {
	return Capsule{Name: name, Side: s, Link: link, Origin: Frame{R: geom.MatrixFromRPY(rpy.X, rpy.Y, rpy.Z), P: xyz}, Radius: r, Length: l}
}

// armCapsules returns the primitives of arm s
// (docs/velma-model.md#self-collision-model),
// fingers omitted. The gripper mount and palm are expressed in
// X_arm_7_link (mount = wrist for the right arm, rotated by π about z for
// the left; the palm sphere sits 0.02 m along the palm z, i.e. at
// (±0.140, 0, −0.078) in the wrist).
func armCapsules(s Side) []Capsule {
	p := s.String() + "_"
	caps := []Capsule{
		capsule(p+"arm_base", s, LinkBase, geom.Vec3{X: 0, Y: 0, Z: 0.055}, geom.Vec3{X: 0, Y: 0, Z: math.Pi}, 0.07, 0.11),
		capsule(p+"arm_1", s, 1, geom.Vec3{X: 0, Y: -0.015, Z: 0.1}, geom.Vec3{X: 0.2, Y: 0, Z: 0}, 0.065, 0.208),
		capsule(p+"arm_2", s, 2, geom.Vec3{X: 0, Y: 0.015, Z: 0.1}, geom.Vec3{X: 0.2, Y: 0, Z: 0}, 0.065, 0.208),
		capsule(p+"arm_3", s, 3, geom.Vec3{X: 0, Y: 0.015, Z: 0.1}, geom.Vec3{X: -0.2, Y: 0, Z: 0}, 0.065, 0.208),
		capsule(p+"arm_4", s, 4, geom.Vec3{X: 0, Y: -0.015, Z: 0.1}, geom.Vec3{X: -0.2, Y: 0, Z: 0}, 0.065, 0.208),
		capsule(p+"arm_5", s, 5, geom.Vec3{X: 0, Y: -0.015, Z: 0.095}, geom.Vec3{X: 0.207, Y: 0, Z: 0}, 0.065, 0.198),
		capsule(p+"arm_6", s, 6, geom.Vec3{X: 0, Y: 0.01, Z: 0}, geom.Vec3{}, 0.08, 0),
	}
	if s == Right {
		caps = append(caps,
			capsule(p+"gripper_mount", s, LinkWrist, geom.Vec3{X: 0.02, Y: 0, Z: 0.01}, geom.Vec3{X: 0, Y: math.Pi / 2, Z: 0}, 0.055, 0.08),
			capsule(p+"palm", s, LinkWrist, geom.Vec3{X: 0.140, Y: 0, Z: -0.078}, geom.Vec3{}, 0.06, 0))
	} else {
		// left mount is turned by π about the wrist z: (x, y, z) → (−x, −y, z)
		caps = append(caps,
			capsule(p+"gripper_mount", s, LinkWrist, geom.Vec3{X: -0.02, Y: 0, Z: -0.01}, geom.Vec3{X: 0, Y: -math.Pi / 2, Z: 0}, 0.055, 0.08),
			capsule(p+"palm", s, LinkWrist, geom.Vec3{X: -0.140, Y: 0, Z: -0.078}, geom.Vec3{}, 0.06, 0))
	}
	return caps
}

// CollisionModel is the set of primitives and the pairs checked between them.
// At most 64 primitives are supported; pairs must index below that.
type CollisionModel struct {
	Caps  []Capsule
	Pairs [][2]int
}

// isDistal reports whether an arm primitive is link 3 or further out.
func isDistal(c Capsule) bool { return c.Link >= 3 }

// DefaultCollisionModel returns Velma's self-collision model. The pair list
// approximates velma.srdf (not available here): torso and head vs distal
// arm parts (links 3–7), each arm base vs its own link 5 and hand, and all
// distal cross-arm pairs; adjacent and same-arm pairs are otherwise off.
func DefaultCollisionModel() CollisionModel {
	var m CollisionModel
	m.Caps = append(m.Caps,
		capsule("torso_upper", Right, LinkTorso, geom.Vec3{X: 0, Y: 0, Z: 0.8}, geom.Vec3{}, 0.20, 1.0),
		capsule("torso_lower", Right, LinkTorso, geom.Vec3{X: -0.1, Y: 0, Z: 0.45}, geom.Vec3{}, 0.18, 0.4),
		capsule("head_sphere", Right, LinkHead, geom.Vec3{X: 0.04, Y: 0, Z: 1.57 + TorsoHeight}, geom.Vec3{}, 0.24, 0),
	)
	nBody := len(m.Caps)
	m.Caps = append(m.Caps, armCapsules(Right)...)
	m.Caps = append(m.Caps, armCapsules(Left)...)
	for i := 0; i < len(m.Caps); i++ {
		for j := i + 1; j < len(m.Caps); j++ {
			a, b := m.Caps[i], m.Caps[j]
			switch {
			case i < nBody && j < nBody:
				continue
			case i < nBody:
				if isDistal(b) {
					m.Pairs = append(m.Pairs, [2]int{i, j})
				}
			case a.Side != b.Side:
				if isDistal(a) && isDistal(b) {
					m.Pairs = append(m.Pairs, [2]int{i, j})
				}
			default: // same arm
				if a.Link == LinkBase && b.Link >= 5 {
					m.Pairs = append(m.Pairs, [2]int{i, j})
				}
			}
		}
	}
	return m
}

// Contact is the closest approach of one checked pair.
type Contact struct {
	Pair     int       // index into CollisionModel.Pairs
	Distance float64   // surface distance (negative when penetrating)
	PA, PB   geom.Vec3 // closest points on the two segments (torso_base)
	Normal   geom.Vec3 // unit vector from PA to PB
}

// segment returns the end points of a capsule's axis in torso_base.
func (m *CollisionModel) segment(b *Body, c *Capsule) (geom.Vec3, geom.Vec3) {
	var f Frame
	switch c.Link {
	case LinkHead:
		f = Identity()
	case LinkTorso:
		f = b.Arm[0].Torso
	default:
		f = b.Arm[c.Side].Link[c.Link]
	}
	o := f.Mul(c.Origin)
	h := o.R.Col(2).Scale(c.Length / 2)
	return o.P.Sub(h), o.P.Add(h)
}

// maxCaps bounds the number of primitives of a model.
const maxCaps = 64

// segments computes every capsule's axis end points once.
func (m *CollisionModel) segments(b *Body, segs *[maxCaps][2]geom.Vec3) {
	for i := range min(len(m.Caps), maxCaps) {
		segs[i][0], segs[i][1] = m.segment(b, &m.Caps[i])
	}
}

// Contacts returns every checked pair whose surface distance is below
// within, in pair order. dst is reused.
func (m *CollisionModel) Contacts(b *Body, within float64, dst []Contact) []Contact {
	dst = dst[:0]
	var segs [maxCaps][2]geom.Vec3
	m.segments(b, &segs)
	for pi, pr := range m.Pairs {
		ca, cb := &m.Caps[pr[0]], &m.Caps[pr[1]]
		sa, sb := &segs[pr[0]], &segs[pr[1]]
		pa, pb := closestSegments(sa[0], sa[1], sb[0], sb[1])
		d := pb.Sub(pa)
		n := d.Norm()
		dist := n - ca.Radius - cb.Radius
		if dist >= within {
			continue
		}
		var nv geom.Vec3
		if n > 1e-12 {
			nv = d.Scale(1 / n)
		} else {
			nv = geom.Vec3{X: 0, Y: 0, Z: 1}
		}
		dst = append(dst, Contact{Pair: pi, Distance: dist, PA: pa, PB: pb, Normal: nv})
	}
	return dst
}

// MinDistance returns the smallest surface distance over all checked pairs
// and the pair index.
func (m *CollisionModel) MinDistance(b *Body) (float64, int) {
	var segs [maxCaps][2]geom.Vec3
	m.segments(b, &segs)
	best, bi := math.Inf(1), -1
	for pi, pr := range m.Pairs {
		sa, sb := &segs[pr[0]], &segs[pr[1]]
		pa, pb := closestSegments(sa[0], sa[1], sb[0], sb[1])
		if d := pb.Sub(pa).Norm() - m.Caps[pr[0]].Radius - m.Caps[pr[1]].Radius; d < best {
			best, bi = d, pi
		}
	}
	return best, bi
}

// closestSegments returns the closest points of segments p0p1 and q0q1.
func closestSegments(p0, p1, q0, q1 geom.Vec3) (geom.Vec3, geom.Vec3) {
	d1, d2 := p1.Sub(p0), q1.Sub(q0)
	r := p0.Sub(q0)
	a, e := d1.Dot(d1), d2.Dot(d2)
	f := d2.Dot(r)
	var s, t float64
	const eps = 1e-12
	switch {
	case a <= eps && e <= eps:
		return p0, q0
	case a <= eps:
		t = clamp01(f / e)
	default:
		c := d1.Dot(r)
		if e <= eps {
			s = clamp01(-c / a)
		} else {
			b := d1.Dot(d2)
			den := a*e - b*b
			if den > eps {
				s = clamp01((b*f - c*e) / den)
			}
			t = (b*s + f) / e
			if t < 0 {
				t, s = 0, clamp01(-c/a)
			} else if t > 1 {
				t, s = 1, clamp01((b-c)/a)
			}
		}
	}
	return p0.Add(d1.Scale(s)), q0.Add(d2.Scale(t))
}

func clamp01(x float64) float64 { return math.Max(0, math.Min(1, x)) }
