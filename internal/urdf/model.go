// Package urdf reads robot descriptions in the Unified Robot Description
// Format (the XML that ROS's robot_state_publisher, RViz and Foxglove take)
// and computes the transforms of their kinematic tree.
//
// Parse checks what urdfdom checks and a little more: unique names, known
// joint types, revolute and prismatic joints with limits, finite numbers,
// and a tree (every joint's links exist, no link has two parents, no
// cycle, exactly one root). Its errors name the element at fault.
// Elements the kinematics do not need (inertial, collision, transmission,
// gazebo, ...) are skipped.
//
// The package has no ROS imports: robot_state_publisher's node
// (internal/robotstate) turns its transforms into TF messages.
package urdf

import "github.com/fsmnodes/fsmnodes/internal/geom"

// JointType is the type attribute of a <joint>.
type JointType int

// The joint types of URDF.
const (
	Fixed JointType = iota
	Revolute
	Continuous
	Prismatic
	Floating
	Planar
)

var jointTypeNames = [...]string{"fixed", "revolute", "continuous", "prismatic", "floating", "planar"}

// String returns the URDF spelling of t.
func (t JointType) String() string {
	if t >= 0 && int(t) < len(jointTypeNames) {
		return jointTypeNames[t]
	}
	return "unknown"
}

// Moving reports whether a joint of type t moves with a single position
// (revolute, continuous, prismatic): the joints whose transforms come from
// joint_states.
func (t JointType) Moving() bool { return t == Revolute || t == Continuous || t == Prismatic }

// Origin is an <origin xyz rpy>: the pose of a child frame in its parent.
type Origin struct {
	XYZ geom.Vec3
	RPY geom.Vec3 // roll, pitch, yaw about the fixed parent axes
}

// Transform returns the origin as a transform.
func (o Origin) Transform() Transform {
	return Transform{Translation: o.XYZ, Rotation: geom.QuatFromRPY(o.RPY.X, o.RPY.Y, o.RPY.Z)}
}

// Limit is a joint's <limit>.
type Limit struct {
	Lower, Upper     float64 // m or rad
	Effort, Velocity float64
}

// Mimic is a joint's <mimic>: its position is Multiplier·q + Offset, where
// q is the position of Joint.
type Mimic struct {
	Joint              string
	Multiplier, Offset float64
}

// Joint is a <joint>.
type Joint struct {
	Name          string
	Type          JointType
	Parent, Child string // link names
	Origin        Origin
	Axis          geom.Vec3 // unit axis in the joint frame; (1, 0, 0) when not given
	Limit         *Limit    // nil when not given
	Mimic         *Mimic    // nil when not given
}

// Geometry is the shape of a <visual> or <collision>: exactly one of Box,
// Cylinder, Sphere and Mesh is set.
type Geometry struct {
	Box      *geom.Vec3 // size x y z
	Cylinder *Cylinder
	Sphere   *float64 // radius
	Mesh     *Mesh
}

// Cylinder is a cylinder along the z axis of its frame.
type Cylinder struct{ Radius, Length float64 }

// Mesh is a mesh file.
type Mesh struct {
	Filename string
	Scale    geom.Vec3
}

// Material is a <material>: a name and, when given, an RGBA colour.
type Material struct {
	Name  string
	Color *[4]float64
}

// Visual is a link's <visual>.
type Visual struct {
	Name     string
	Origin   Origin
	Geometry Geometry
	Material *Material // the colour is resolved from the robot's top-level materials
}

// Link is a <link>.
type Link struct {
	Name    string
	Visuals []Visual
}

// Model is a parsed, validated robot description.
type Model struct {
	Name   string
	Root   string // the only link that is no joint's child
	Links  []Link
	Joints []Joint

	links    map[string]int
	joints   map[string]int
	parentOf map[string]int // child link → joint index
	children map[string][]int
}

// Link returns the link named name.
func (m *Model) Link(name string) (*Link, bool) {
	i, ok := m.links[name]
	if !ok {
		return nil, false
	}
	return &m.Links[i], true
}

// Joint returns the joint named name.
func (m *Model) Joint(name string) (*Joint, bool) {
	i, ok := m.joints[name]
	if !ok {
		return nil, false
	}
	return &m.Joints[i], true
}

// ParentJoint returns the joint whose child is link; false for the root.
func (m *Model) ParentJoint(link string) (*Joint, bool) {
	i, ok := m.parentOf[link]
	if !ok {
		return nil, false
	}
	return &m.Joints[i], true
}

// ChildJoints returns the joints whose parent is link, in document order.
func (m *Model) ChildJoints(link string) []*Joint {
	out := make([]*Joint, 0, len(m.children[link]))
	for _, i := range m.children[link] {
		out = append(out, &m.Joints[i])
	}
	return out
}

// MovingJoints returns the names of the revolute, continuous and prismatic
// joints that are not mimic joints: the joints a joint_states message of
// the robot names.
func (m *Model) MovingJoints() []string {
	var out []string
	for i := range m.Joints {
		j := &m.Joints[i]
		if j.Type.Moving() && j.Mimic == nil {
			out = append(out, j.Name)
		}
	}
	return out
}
