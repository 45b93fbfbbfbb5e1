package urdf

import (
	"fmt"
	"math"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// Motion returns the transform a joint adds at position q: a rotation by
// q about the axis (revolute, continuous), a translation by q along it
// (prismatic), or nothing (fixed, and floating and planar joints, which one
// position cannot describe).
func (j *Joint) Motion(q float64) Transform {
	switch j.Type {
	case Revolute, Continuous:
		return Transform{Rotation: geom.QuatFromAxisAngle(j.Axis, q)}
	case Prismatic:
		return Transform{Translation: j.Axis.Scale(q), Rotation: geom.Identity}
	}
	return Identity
}

// Transform returns the pose of the joint's child link in its parent link
// at position q: origin · motion(q), the transform robot_state_publisher
// publishes with frame_id = parent and child_frame_id = child.
func (j *Joint) Transform(q float64) Transform {
	return j.Origin.Transform().Mul(j.Motion(q))
}

// Positions resolves the position of every moving joint: the given
// positions, with each mimic joint computed from the joint it follows when
// that one is given. A mimic joint whose leader has no position is left out,
// as robot_state_publisher leaves it out.
func (m *Model) Positions(given map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(given))
	for k, v := range given {
		out[k] = v
	}
	for i := range m.Joints {
		j := &m.Joints[i]
		if j.Mimic == nil {
			continue
		}
		if q, ok := given[j.Mimic.Joint]; ok {
			out[j.Name] = q*j.Mimic.Multiplier + j.Mimic.Offset
		}
	}
	return out
}

// FK returns the pose of link in the root link's frame for the given joint
// positions (mimic joints follow their leaders). A moving joint on the way
// without a position is an error.
func (m *Model) FK(link string, positions map[string]float64) (Transform, error) {
	if _, ok := m.links[link]; !ok {
		return Transform{}, fmt.Errorf("urdf: no link %q", link)
	}
	q := m.Positions(positions)
	t := Identity
	for l := link; l != m.Root; {
		j, _ := m.ParentJoint(l)
		var pos float64
		if j.Type.Moving() {
			v, ok := q[j.Name]
			if !ok {
				return Transform{}, fmt.Errorf("urdf: joint %q (on the way to link %q) has no position", j.Name, link)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return Transform{}, fmt.Errorf("urdf: joint %q position %v is not finite", j.Name, v)
			}
			pos = v
		}
		t = j.Transform(pos).Mul(t)
		l = j.Parent
	}
	return t, nil
}

// Chain returns the joints from the root link down to link, root first.
func (m *Model) Chain(link string) ([]*Joint, error) {
	if _, ok := m.links[link]; !ok {
		return nil, fmt.Errorf("urdf: no link %q", link)
	}
	var out []*Joint
	for l := link; l != m.Root; {
		j, _ := m.ParentJoint(l)
		out = append(out, j)
		l = j.Parent
	}
	for i, k := 0, len(out)-1; i < k; i, k = i+1, k-1 {
		out[i], out[k] = out[k], out[i]
	}
	return out, nil
}
