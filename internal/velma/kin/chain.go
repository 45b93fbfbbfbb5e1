package kin

import (
	"math"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// Side selects an arm.
type Side int

// The two arms.
const (
	Right Side = iota
	Left
)

// String returns "right" or "left".
func (s Side) String() string {
	if s == Left {
		return "left"
	}
	return "right"
}

// Dimensions of the body.
const (
	ArmDOF   = 7  // joints per LWR arm
	ChainDOF = 8  // torso + one arm: columns of a wrist Jacobian
	BodyDOF  = 15 // torso + right arm + left arm (joint-impedance order)
)

// Geometric constants of docs/velma-model.md#torso-and-arm-mounts and
// docs/velma-model.md#arm-chain (nominal mounts).
const (
	TorsoHeight = 0.03    // torso_0_joint origin above torso_base
	MountHeight = 1.17335 // arm base above torso_link0
)

// armOffsets are the z offsets of the arm joint origins, each in the
// previous link frame (base→j0, j0→j1, …).
var armOffsets = [ArmDOF]float64{0.11, 0.2005, 0.20, 0.20, 0.20, 0.19, 0.078}

// armAxes are the joint axes in their own frames (+z, +y, +z, −y, +z, +y, +z).
var armAxes = [ArmDOF]geom.Vec3{{X: 0, Y: 0, Z: 1}, {X: 0, Y: 1, Z: 0}, {X: 0, Y: 0, Z: 1}, {X: 0, Y: -1, Z: 0}, {X: 0, Y: 0, Z: 1}, {X: 0, Y: 1, Z: 0}, {X: 0, Y: 0, Z: 1}}

// Mount returns torso_link0 → calib_X_arm_base_link for the nominal mount:
// xyz (0, 0, 1.17335), rpy (0, ∓π/3, π/2).
func Mount(s Side) Frame {
	pitch := -math.Pi / 3
	if s == Left {
		pitch = math.Pi / 3
	}
	return Frame{R: geom.MatrixFromRPY(0, pitch, math.Pi/2), P: geom.Vec3{X: 0, Y: 0, Z: MountHeight}}
}

// axisRot returns the rotation by q about a unit axis that is ±x, ±y or ±z.
func axisRot(a geom.Vec3, q float64) geom.Mat3 {
	switch {
	case a.Z != 0:
		return geom.RotZ(a.Z * q)
	case a.Y != 0:
		return geom.RotY(a.Y * q)
	default:
		return geom.RotX(a.X * q)
	}
}

// Link indices of a Chain. LinkTorso is torso_link0, LinkBase the arm base,
// and 1…7 are X_arm_1_link … X_arm_7_link.
const (
	LinkTorso = -1
	LinkBase  = 0
	LinkWrist = 7
)

// Chain holds the forward kinematics of torso + one arm for one
// configuration: every link frame and every joint axis in torso_base.
type Chain struct {
	Side  Side
	Torso Frame               // torso_link0
	Link  [8]Frame            // [0] arm base, [i] X_arm_i_link
	Axis  [ChainDOF]geom.Vec3 // joint axes in torso_base: [0] torso, [1+i] arm joint i
	Org   [ChainDOF]geom.Vec3 // a point on each joint axis
}

// Forward computes the chain of arm s at torso angle qt and arm angles q.
func Forward(s Side, qt float64, q [ArmDOF]float64) Chain {
	var c Chain
	c.Side = s
	c.Torso = Frame{R: geom.RotZ(qt), P: geom.Vec3{X: 0, Y: 0, Z: TorsoHeight}}
	c.Axis[0] = geom.Vec3{X: 0, Y: 0, Z: 1}
	c.Org[0] = geom.Vec3{X: 0, Y: 0, Z: TorsoHeight}
	f := c.Torso.Mul(Mount(s))
	c.Link[0] = f
	for i := range ArmDOF {
		// joint origin: translate along the parent's z
		f.P = f.Apply(geom.Vec3{X: 0, Y: 0, Z: armOffsets[i]})
		c.Axis[1+i] = f.R.MulVec(armAxes[i])
		c.Org[1+i] = f.P
		f.R = f.R.Mul(axisRot(armAxes[i], q[i]))
		c.Link[1+i] = f
	}
	return c
}

// Wrist returns the pose of X_arm_7_link in torso_base.
func (c *Chain) Wrist() Frame { return c.Link[LinkWrist] }

// Jacobian is a 6×8 geometric Jacobian: rows vx, vy, vz, wx, wy, wz; columns
// torso, arm joint 0 … 6.
type Jacobian [6][ChainDOF]float64

// PointJacobian returns the geometric Jacobian, in torso_base, of point p
// (in torso_base) rigidly attached to link. Joints beyond link have zero
// columns.
func (c *Chain) PointJacobian(link int, p geom.Vec3) Jacobian {
	var j Jacobian
	n := 1 + link // joints that move the link: torso + arm joints 0…link-1
	if link == LinkTorso {
		n = 1
	}
	for k := range n {
		z := c.Axis[k]
		v := z.Cross(p.Sub(c.Org[k]))
		j[0][k], j[1][k], j[2][k] = v.X, v.Y, v.Z
		j[3][k], j[4][k], j[5][k] = z.X, z.Y, z.Z
	}
	return j
}

// WristJacobian returns the geometric Jacobian of the wrist frame origin.
func (c *Chain) WristJacobian() Jacobian { return c.PointJacobian(LinkWrist, c.Link[LinkWrist].P) }

// BodyIndex returns the 15-joint body index of column k (0 torso, 1…7 arm
// joints) of a Jacobian of arm s.
func BodyIndex(s Side, k int) int {
	if k == 0 {
		return 0
	}
	if s == Left {
		return 7 + k
	}
	return k
}

// ArmQ extracts the 7 arm angles of side s from a 15-joint body vector.
func ArmQ(s Side, body []float64) [ArmDOF]float64 {
	var q [ArmDOF]float64
	off := 1
	if s == Left {
		off = 8
	}
	copy(q[:], body[off:off+ArmDOF])
	return q
}

// Body holds the chains of both arms for one 15-joint configuration.
type Body struct {
	Arm [2]Chain
}

// ForwardBody computes both chains of a 15-joint configuration (torso,
// right 0…6, left 0…6).
func ForwardBody(q []float64) Body {
	return Body{Arm: [2]Chain{
		Forward(Right, q[0], ArmQ(Right, q)),
		Forward(Left, q[0], ArmQ(Left, q)),
	}}
}
