package hexapod

import (
	"errors"
	"math"
	"math/rand"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

func randIn(r *rand.Rand, lo, hi float64) float64 { return lo + r.Float64()*(hi-lo) }

func randPose(r *rand.Rand) Pose {
	return Pose{
		Position: geom.Vec3{X: randIn(r, -0.03, 0.03), Y: randIn(r, -0.03, 0.03), Z: randIn(r, -0.03, 0.03)},
		Roll:     randIn(r, -0.4, 0.4), Pitch: randIn(r, -0.4, 0.4), Yaw: randIn(r, -0.5, 0.5),
	}
}

// TestLegIK_ForwardOfInverse_ReproducesFoot samples joint configurations of
// the whole reachable workspace (every coxa angle that keeps the foot
// outboard, femur over ±80°, any knee bend) and random body poses, places the
// foot with FK, and checks that IK recovers the angles and that FK(IK(p))
// reproduces the foot within 1e-9 m.
func TestLegIK_ForwardOfInverse_ReproducesFoot(t *testing.T) {
	g := DefaultGeometry()
	r := rand.New(rand.NewSource(1))
	checked := 0
	for n := 0; n < 200000 && checked < 50000; n++ {
		leg := r.Intn(NumLegs)
		pose := randPose(r)
		psi := randIn(r, -1.45, 1.45) // horizontal angle from the outward axis
		a := LegAngles{
			Coxa:  psi - g.InitCoxaAngle[leg],
			Femur: randIn(r, -1.4, 1.4),
			Tibia: randIn(r, -math.Pi+0.05, -0.05),
		}
		if g.CoxaLength+g.FemurLength*math.Cos(a.Femur)+g.TibiaLength*math.Cos(a.Femur+a.Tibia) < 0.005 {
			continue // foot behind or on the coxa axis: not outboard
		}
		foot := g.LegFK(leg, a, pose)
		got, err := g.LegIK(leg, foot, pose)
		if err != nil {
			t.Fatalf("leg %s foot %+v pose %+v angles %+v: %v", LegName(leg), foot, pose, a, err)
		}
		back := g.LegFK(leg, got, pose)
		if d := back.Sub(foot).Norm(); !(d <= 1e-9) {
			t.Fatalf("leg %s: FK(IK(%+v)) = %+v, error %g m", LegName(leg), foot, back, d)
		}
		for _, p := range [][2]float64{{got.Coxa, a.Coxa}, {got.Femur, a.Femur}, {got.Tibia, a.Tibia}} {
			if math.Abs(p[0]-p[1]) > 1e-7 {
				t.Fatalf("leg %s: IK angles %+v, want %+v", LegName(leg), got, a)
			}
		}
		checked++
	}
	if checked < 10000 {
		t.Fatalf("only %d samples checked", checked)
	}
}

// TestLegIK_RandomPoints_ReachableRoundTripUnreachableReported throws random
// points around each leg (reachable and not) at the IK: a solution must
// round-trip through FK within 1e-9 m; a failure must be an *OutOfRangeError
// for a point that really is out of reach; NaN never comes out.
func TestLegIK_RandomPoints_ReachableRoundTripUnreachableReported(t *testing.T) {
	g := DefaultGeometry()
	r := rand.New(rand.NewSource(2))
	var ok, bad int
	for n := 0; n < 100000; n++ {
		leg := r.Intn(NumLegs)
		pose := randPose(r)
		foot := geom.Vec3{X: g.CoxaX[leg] + randIn(r, -0.45, 0.45), Y: g.CoxaY[leg] + randIn(r, -0.45, 0.45), Z: randIn(r, -0.4, 0.4)}
		a, err := g.LegIK(leg, foot, pose)
		if err != nil {
			var oe *OutOfRangeError
			if !errors.As(err, &oe) || oe.Leg != leg || oe.Reason == "" {
				t.Fatalf("error %v is not an *OutOfRangeError for leg %d", err, leg)
			}
			rot := pose.rotation()
			q := rot.apply(foot.Sub(pose.Position))
			q.X -= g.CoxaX[leg]
			q.Y -= g.CoxaY[leg]
			H := math.Hypot(math.Hypot(q.X, q.Y)-g.CoxaLength, q.Z)
			reachable := q.Y*g.side(leg) > 1e-12 && H < g.FemurLength+g.TibiaLength-1e-12 && H > g.TibiaLength-g.FemurLength+1e-12
			if reachable {
				t.Fatalf("leg %s: reachable foot %+v reported: %v", LegName(leg), foot, err)
			}
			bad++
			continue
		}
		for _, v := range []float64{a.Coxa, a.Femur, a.Tibia} {
			if !isFinite(v) {
				t.Fatalf("non-finite angle %+v", a)
			}
		}
		if d := g.LegFK(leg, a, pose).Sub(foot).Norm(); !(d <= 1e-9) {
			t.Fatalf("leg %s: round trip error %g m for %+v", LegName(leg), d, foot)
		}
		ok++
	}
	if ok < 1000 || bad < 1000 {
		t.Fatalf("sampling too one-sided: %d reachable, %d unreachable", ok, bad)
	}
}

func TestLegIK_Unreachable_ReportedNotNaN(t *testing.T) {
	g := DefaultGeometry()
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name string
		leg  int
		foot geom.Vec3
		pose Pose
	}{
		{"TooFar", LegRF, geom.Vec3{X: 0.8, Y: -0.8, Z: -0.1}, Pose{}},
		{"TooClose", LegRM, geom.Vec3{X: 0, Y: -0.09 - 0.083 - 0.01, Z: 0}, Pose{}},
		{"OtherSide", LegRM, geom.Vec3{X: 0, Y: 0.2, Z: -0.1}, Pose{}},
		{"OnCoxaAxis", LegLM, geom.Vec3{X: 0, Y: 0.09, Z: -0.1}, Pose{}},
		{"NaNFoot", LegLF, geom.Vec3{X: nan, Y: 0.2, Z: -0.1}, Pose{}},
		{"InfFoot", LegLF, geom.Vec3{X: 0.2, Y: inf, Z: -0.1}, Pose{}},
		{"NaNPose", LegLR, g.Neutral(LegLR, -0.135), Pose{Roll: nan}},
		{"InfPosePosition", LegLR, g.Neutral(LegLR, -0.135), Pose{Position: geom.Vec3{Z: -inf}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := g.LegIK(c.leg, c.foot, c.pose)
			var oe *OutOfRangeError
			if !errors.As(err, &oe) || oe.Leg != c.leg {
				t.Fatalf("LegIK = %+v, %v; want *OutOfRangeError for leg %d", a, err, c.leg)
			}
			if a != (LegAngles{}) {
				t.Fatalf("angles %+v returned with an error", a)
			}
		})
	}
}

// TestLegIK_MatchesOriginalFemurFormula checks that the atan2 form equals the
// original's t − atan(G/z) + sgn(z)·π/2 wherever that one is defined.
func TestLegIK_MatchesOriginalFemurFormula(t *testing.T) {
	g := DefaultGeometry()
	r := rand.New(rand.NewSource(3))
	for n := 0; n < 20000; n++ {
		leg := r.Intn(NumLegs)
		foot := geom.Vec3{X: g.NeutralX[leg] + randIn(r, -0.1, 0.1), Y: g.NeutralY[leg] + randIn(r, -0.08, 0.08), Z: randIn(r, -0.2, 0.1)}
		a, err := g.LegIK(leg, foot, Pose{})
		if err != nil {
			continue
		}
		q := foot.Sub(geom.Vec3{X: g.CoxaX[leg], Y: g.CoxaY[leg], Z: 0})
		G := math.Hypot(q.X, q.Y) - g.CoxaLength
		H := math.Hypot(G, q.Z)
		F, T := g.FemurLength, g.TibiaLength
		tt := math.Acos((F*F + H*H - T*T) / (2 * F * H))
		sgn := 1.0
		if q.Z < 0 {
			sgn = -1
		}
		orig := tt - math.Atan(G/q.Z) + sgn*math.Pi/2
		coxa := math.Mod(math.Atan2(q.X, math.Abs(q.Y))-g.InitCoxaAngle[leg], math.Pi)
		if math.Abs(math.Remainder(orig-a.Femur, 2*math.Pi)) > 1e-9 || math.Abs(coxa-a.Coxa) > 1e-12 {
			t.Fatalf("leg %s foot %+v: femur %v coxa %v, original %v %v", LegName(leg), foot, a.Femur, a.Coxa, orig, coxa)
		}
	}
}

func TestSolveIK_NeutralStance_SymmetricAngles(t *testing.T) {
	g := DefaultGeometry()
	var feet Feet
	for i := range feet {
		feet[i] = g.Neutral(i, -g.WalkingHeight)
	}
	var j Joints
	if err := g.SolveIK(&feet, Pose{}, &j); err != nil {
		t.Fatal(err)
	}
	if c := j.Leg(LegRM).Coxa; math.Abs(c) > 1e-12 {
		t.Errorf("middle leg coxa %v, want 0", c)
	}
	for _, p := range [][2]int{{LegRR, LegLR}, {LegRM, LegLM}, {LegRF, LegLF}} {
		if a, b := j.Leg(p[0]), j.Leg(p[1]); math.Abs(a.Coxa-b.Coxa) > 1e-12 || math.Abs(a.Femur-b.Femur) > 1e-12 || math.Abs(a.Tibia-b.Tibia) > 1e-12 {
			t.Errorf("legs %s and %s differ: %+v vs %+v", LegName(p[0]), LegName(p[1]), a, b)
		}
	}
	if a, b := j.Leg(LegRR).Coxa, j.Leg(LegRF).Coxa; math.Abs(a+b) > 1e-12 || a <= 0 {
		t.Errorf("rear/front coxa %v, %v: want opposite and rear positive", a, b)
	}
}

func TestSolveIK_OneLegOut_LeavesJointsUnchanged(t *testing.T) {
	g := DefaultGeometry()
	var feet Feet
	for i := range feet {
		feet[i] = g.Neutral(i, -g.WalkingHeight)
	}
	feet[LegLM].Y = 2
	j := Joints{1, 2, 3}
	err := g.SolveIK(&feet, Pose{}, &j)
	var oe *OutOfRangeError
	if !errors.As(err, &oe) || oe.Leg != LegLM {
		t.Fatalf("SolveIK error %v, want leg LM out of range", err)
	}
	if j != (Joints{1, 2, 3}) {
		t.Fatalf("joints changed to %v", j)
	}
}

func TestGeometry_Validate_RejectsBadValues(t *testing.T) {
	if err := DefaultGeometry().Validate(); err != nil {
		t.Fatalf("default geometry invalid: %v", err)
	}
	for name, mut := range map[string]func(*Geometry){
		"NegativeFemur":   func(g *Geometry) { g.FemurLength = -1 },
		"NaNTibia":        func(g *Geometry) { g.TibiaLength = math.NaN() },
		"ZeroCoxaY":       func(g *Geometry) { g.CoxaY[2] = 0 },
		"WideCoxaAngle":   func(g *Geometry) { g.InitCoxaAngle[0] = 2 },
		"NeutralInboard":  func(g *Geometry) { g.NeutralY[4] = 0.01 },
		"InfNeutral":      func(g *Geometry) { g.NeutralX[1] = math.Inf(1) },
		"NoWalkingHeight": func(g *Geometry) { g.WalkingHeight = 0 },
	} {
		g := DefaultGeometry()
		mut(&g)
		if g.Validate() == nil {
			t.Errorf("%s: Validate() = nil", name)
		}
	}
}

func TestJointNames_OriginalOrder(t *testing.T) {
	n := JointNames()
	if len(n) != 18 || n[0] != "COXA_RR" || n[1] != "FEMUR_RR" || n[2] != "TIBIA_RR" || n[3] != "COXA_RM" ||
		n[8] != "TIBIA_RF" || n[9] != "COXA_LR" || n[17] != "TIBIA_LF" {
		t.Fatalf("JointNames() = %v", n)
	}
}
