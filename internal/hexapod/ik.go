package hexapod

import (
	"fmt"
	"math"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// Pose is the body pose used by the inverse kinematics: a translation of the
// body and its roll, pitch and yaw (Tait-Bryan Z-Y-X) in radians.
type Pose struct {
	Position         geom.Vec3
	Roll, Pitch, Yaw float64
}

// LegAngles are the three joint angles of one leg in radians.
type LegAngles struct {
	Coxa, Femur, Tibia float64
}

// Joints are all 18 joint angles in joint_states order (coxa, femur, tibia
// of RR, RM, RF, LR, LM, LF).
type Joints [NumJoints]float64

// Leg returns the angles of leg i.
func (j *Joints) Leg(i int) LegAngles {
	return LegAngles{j[3*i], j[3*i+1], j[3*i+2]}
}

// SetLeg stores the angles of leg i.
func (j *Joints) SetLeg(i int, a LegAngles) {
	j[3*i], j[3*i+1], j[3*i+2] = a.Coxa, a.Femur, a.Tibia
}

// Feet are the six foot positions in the body frame, in leg order.
type Feet [NumLegs]geom.Vec3

// OutOfRangeError reports a foot the leg cannot reach; the original logged
// "Out of Range" in this case.
type OutOfRangeError struct {
	Leg    int       // leg index
	Foot   geom.Vec3 // requested foot position in the body frame
	Reason string    // why the foot is unreachable
}

func (e *OutOfRangeError) Error() string {
	return fmt.Sprintf("out of range: leg %s foot (%.4f, %.4f, %.4f): %s",
		LegName(e.Leg), e.Foot.X, e.Foot.Y, e.Foot.Z, e.Reason)
}

// rotation is the matrix Z(yaw)·Y(pitch)·X(roll) of a Pose.
type rotation [3][3]float64

func (p Pose) rotation() rotation {
	s1, c1 := math.Sincos(p.Yaw)
	s2, c2 := math.Sincos(p.Pitch)
	s3, c3 := math.Sincos(p.Roll)
	return rotation{
		{c1 * c2, c1*s2*s3 - c3*s1, s1*s3 + c1*c3*s2},
		{c2 * s1, c1*c3 + s1*s2*s3, c3*s1*s2 - c1*s3},
		{-s2, c2 * s3, c2 * c3},
	}
}

func (r *rotation) apply(v geom.Vec3) geom.Vec3 {
	return geom.Vec3{
		X: r[0][0]*v.X + r[0][1]*v.Y + r[0][2]*v.Z,
		Y: r[1][0]*v.X + r[1][1]*v.Y + r[1][2]*v.Z,
		Z: r[2][0]*v.X + r[2][1]*v.Y + r[2][2]*v.Z,
	}
}

func (r *rotation) applyT(v geom.Vec3) geom.Vec3 {
	return geom.Vec3{
		X: r[0][0]*v.X + r[1][0]*v.Y + r[2][0]*v.Z,
		Y: r[0][1]*v.X + r[1][1]*v.Y + r[2][1]*v.Z,
		Z: r[0][2]*v.X + r[1][2]*v.Y + r[2][2]*v.Z,
	}
}

// LegIK solves the inverse kinematics of leg i for a foot given in the body
// frame and a body pose, following the original's equations:
//
//	q = Rz(yaw)·Ry(pitch)·Rx(roll)·(foot − body position) − coxa position
//	G = √(qx²+qy²) − COXA, H = √(G²+qz²)
//	coxa  = atan2(qx, |qy|) − INIT_COXA_ANGLE
//	femur = acos((F²+H²−T²)/(2FH)) + atan2(qz, G)
//	tibia = acos((T²+F²−H²)/(2FT)) − π
//
// The original wrote femur as t − atan(G/qz) + sgn(qz)·π/2, which equals the
// atan2 form above for every qz ≠ 0 and divides by zero at qz = 0; it also
// wrapped the coxa angle with fmod(…, π), which is the identity because
// Geometry.Validate keeps |INIT_COXA_ANGLE| ≤ π/2. The femur angle is
// wrapped into [−π, π]: with the knee folded tightly the original could
// return the same angle plus 2π, which no servo range contains.
//
// A foot the leg cannot reach is reported as *OutOfRangeError, never as NaN:
// non-finite input, a foot on the other side of the body from the leg's coxa
// (the original's |qy| made such a foot silently mirror), a foot on the coxa
// axis, or a distance H outside [|F−T|, F+T].
func (g *Geometry) LegIK(i int, foot geom.Vec3, pose Pose) (LegAngles, error) {
	r := pose.rotation()
	return g.legIK(i, foot, pose.Position, &r)
}

func (g *Geometry) legIK(i int, foot, bodyPos geom.Vec3, r *rotation) (LegAngles, error) {
	fail := func(reason string) (LegAngles, error) {
		return LegAngles{}, &OutOfRangeError{Leg: i, Foot: foot, Reason: reason}
	}
	if !foot.Finite() {
		return fail("non-finite foot position")
	}
	q := r.apply(foot.Sub(bodyPos))
	q.X -= g.CoxaX[i]
	q.Y -= g.CoxaY[i]
	if !q.Finite() {
		return fail("non-finite body pose")
	}
	if q.Y*g.side(i) <= 0 {
		return fail("foot is not outboard of the coxa joint")
	}
	horiz := math.Hypot(q.X, q.Y)
	G := horiz - g.CoxaLength
	H := math.Hypot(G, q.Z)
	F, T := g.FemurLength, g.TibiaLength
	if H > F+T {
		return fail(fmt.Sprintf("foot %.4f m from the femur joint, beyond the reach %.4f m", H, F+T))
	}
	if H < math.Abs(F-T) || H == 0 {
		return fail(fmt.Sprintf("foot %.4f m from the femur joint, closer than %.4f m", H, math.Abs(F-T)))
	}
	t := math.Acos(clampUnit((F*F + H*H - T*T) / (2 * F * H)))
	a := LegAngles{
		Coxa:  math.Atan2(q.X, math.Abs(q.Y)) - g.InitCoxaAngle[i],
		Femur: math.Remainder(t+math.Atan2(q.Z, G), 2*math.Pi),
		Tibia: math.Acos(clampUnit((T*T+F*F-H*H)/(2*F*T))) - math.Pi,
	}
	if !isFinite(a.Coxa) || !isFinite(a.Femur) || !isFinite(a.Tibia) {
		return fail("non-finite joint angle")
	}
	return a, nil
}

// clampUnit clamps rounding noise at the reach boundary into [-1, 1]; the
// callers have already checked that H is within the reachable annulus.
func clampUnit(x float64) float64 {
	return math.Max(-1, math.Min(1, x))
}

// LegFK is the forward kinematics of leg i: the foot position in the body
// frame for the given joint angles and body pose. It inverts LegIK.
func (g *Geometry) LegFK(i int, a LegAngles, pose Pose) geom.Vec3 {
	psi := a.Coxa + g.InitCoxaAngle[i]
	reach := g.CoxaLength + g.FemurLength*math.Cos(a.Femur) + g.TibiaLength*math.Cos(a.Femur+a.Tibia)
	z := g.FemurLength*math.Sin(a.Femur) + g.TibiaLength*math.Sin(a.Femur+a.Tibia)
	sp, cp := math.Sincos(psi)
	q := geom.Vec3{X: reach * sp, Y: g.side(i) * reach * cp, Z: z}
	q.X += g.CoxaX[i]
	q.Y += g.CoxaY[i]
	r := pose.rotation()
	return r.applyT(q).Add(pose.Position)
}

// SolveIK computes the joint angles of all six legs. On failure it returns
// the *OutOfRangeError of the first unreachable leg and leaves j unchanged.
func (g *Geometry) SolveIK(feet *Feet, pose Pose, j *Joints) error {
	r := pose.rotation()
	var out Joints
	for i := 0; i < NumLegs; i++ {
		a, err := g.legIK(i, feet[i], pose.Position, &r)
		if err != nil {
			return err
		}
		out.SetLeg(i, a)
	}
	*j = out
	return nil
}
