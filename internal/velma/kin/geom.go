// Package kin is the kinematic and rigid-body model of Velma's body: the
// torso joint and two KUKA LWR4+ arms mounted on it
// (docs/velma-model.md#kinematic-chain, nominal mounts), giving wrist forward
// kinematics, geometric Jacobians in the torso_base frame, the arm mass
// matrix from the URDF inertials plus the lumped tool
// (docs/velma-model.md#dynamics), and the capsule/sphere self-collision model
// (docs/velma-model.md#self-collision-model).
//
// All functions are pure and allocation-light; they are called from the
// 500 Hz control loop.
package kin

import "github.com/fsmnodes/fsmnodes/internal/geom"

// Frame is a rigid transform: a point x in the child frame is R·x + P in the
// parent frame.
type Frame struct {
	R geom.Mat3
	P geom.Vec3
}

// Identity returns the identity frame.
func Identity() Frame { return Frame{R: geom.Identity3} }

// Mul returns the composition a·b.
func (a Frame) Mul(b Frame) Frame {
	return Frame{R: a.R.Mul(b.R), P: a.R.MulVec(b.P).Add(a.P)}
}

// Apply maps a point from the child to the parent frame.
func (a Frame) Apply(v geom.Vec3) geom.Vec3 { return a.R.MulVec(v).Add(a.P) }

// Inv returns the inverse transform.
func (a Frame) Inv() Frame {
	rt := a.R.T()
	return Frame{R: rt, P: rt.MulVec(a.P).Scale(-1)}
}
