package kin

import "github.com/fsmnodes/fsmnodes/internal/geom"

// Inertial is a rigid body's mass, centre of mass and inertia tensor about
// the centre of mass, both in the link frame.
type Inertial struct {
	Mass float64
	COM  geom.Vec3
	I    geom.Mat3
}

func diagInertia(m float64, com geom.Vec3, ixx, iyy, izz float64) Inertial {
	return Inertial{Mass: m, COM: com, I: geom.Mat3{{ixx, 0, 0}, {0, iyy, 0}, {0, 0, izz}}}
}

// armLinks are the URDF inertials of X_arm_1_link … X_arm_7_link
// (docs/velma-model.md#link-inertials; placeholder boxes, as Gazebo uses
// them).
var armLinks = [ArmDOF]Inertial{
	diagInertia(2.0, geom.Vec3{X: 0, Y: -0.06, Z: 0.13}, 0.0136667, 0.0030, 0.0118667),
	diagInertia(2.0, geom.Vec3{X: 0, Y: 0.06, Z: 0.07}, 0.0136667, 0.0030, 0.0118667),
	diagInertia(2.0, geom.Vec3{X: 0, Y: 0.06, Z: 0.13}, 0.0136667, 0.0030, 0.0118667),
	diagInertia(2.0, geom.Vec3{X: 0, Y: -0.06, Z: 0.07}, 0.0136667, 0.0030, 0.0118667),
	diagInertia(2.0, geom.Vec3{X: 0, Y: 0, Z: 0.124}, 0.0126507, 0.0030, 0.0108507),
	diagInertia(0.2, geom.Vec3{X: 0, Y: 0, Z: 0.0625}, 5.2083e-4, 5.2083e-4, 5.2083e-4),
	diagInertia(0.002, geom.Vec3{X: 0, Y: 0, Z: 0}, 3.333e-4, 3.333e-4, 3.333e-4),
}

// Tool returns the lumped tool (gripper mount, F/T sensor, BarrettHand) in
// X_arm_7_link of arm s, as the Gazebo LWR simulation uses it
// (docs/velma-model.md#lumped-tool).
func Tool(s Side) Inertial {
	if s == Left {
		return Inertial{Mass: 1.53858, COM: geom.Vec3{X: -0.15272, Y: 0.0111521, Z: -0.0687842}, I: geom.Mat3{
			{0.00838618, 0.000596738, -0.0011774},
			{0.000596738, 0.00702498, 0.000105634},
			{-0.0011774, 0.000105634, 0.012516}}}
	}
	return Inertial{Mass: 1.52832, COM: geom.Vec3{X: 0.152207, Y: 0.0108986, Z: -0.0694205}, I: geom.Mat3{
		{0.00818233, -0.000581708, 0.00126671},
		{-0.000581708, 0.00703382, 0.000167246},
		{0.00126671, 0.000167246, 0.012285}}}
}

// TorsoInertia is the constant torso inertia the controllers assume
// [kg·m²] (docs/velma-model.md#gravity-and-inertia-in-the-original-stack).
const TorsoInertia = 10.0

// ArmMass is a 7×7 joint-space mass matrix of one arm.
type ArmMass [ArmDOF][ArmDOF]float64

// MassMatrix returns the joint-space mass matrix of the arm of chain c
// (arm joints only; the torso coupling is not modelled, as in the
// original controllers), from the URDF link inertials plus the lumped tool.
func (c *Chain) MassMatrix() ArmMass {
	var m ArmMass
	add := func(link int, in Inertial) {
		f := c.Link[link]
		com := f.Apply(in.COM)
		iw := f.R.Mul(in.I).Mul(f.R.T())
		var jv, jw [ArmDOF]geom.Vec3
		for j := 0; j < link; j++ {
			z := c.Axis[1+j]
			jv[j] = z.Cross(com.Sub(c.Org[1+j]))
			jw[j] = z
		}
		for a := 0; a < link; a++ {
			ia := iw.MulVec(jw[a])
			for b := a; b < link; b++ {
				v := in.Mass*jv[a].Dot(jv[b]) + ia.Dot(jw[b])
				m[a][b] += v
				if a != b {
					m[b][a] += v
				}
			}
		}
	}
	for k := range ArmDOF {
		add(k+1, armLinks[k])
	}
	add(LinkWrist, Tool(c.Side))
	return m
}
