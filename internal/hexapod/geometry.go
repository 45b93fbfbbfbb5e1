package hexapod

import (
	"errors"
	"fmt"
	"math"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// NumLegs is the number of legs of the hexapod.
const NumLegs = 6

// NumJoints is the number of actuated joints: coxa, femur and tibia per leg.
const NumJoints = 3 * NumLegs

// Leg indices in the original order.
const (
	LegRR = iota // right rear
	LegRM        // right middle
	LegRF        // right front
	LegLR        // left rear
	LegLM        // left middle
	LegLF        // left front
)

// legNames are the short names used in joint names, in leg index order.
var legNames = [NumLegs]string{"RR", "RM", "RF", "LR", "LM", "LF"}

// LegName returns the short name of leg i ("RR" ... "LF"), or "leg<i>" when
// i is out of range.
func LegName(i int) string {
	if i < 0 || i >= NumLegs {
		return fmt.Sprintf("leg%d", i)
	}
	return legNames[i]
}

// JointNames returns the 18 joint names of the original SERVO_NAMES
// parameter in joint_states order: COXA_RR, FEMUR_RR, TIBIA_RR, COXA_RM, ...
func JointNames() []string {
	names := make([]string, 0, NumJoints)
	for _, l := range legNames {
		names = append(names, "COXA_"+l, "FEMUR_"+l, "TIBIA_"+l)
	}
	return names
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// Geometry is the mechanical description of the robot, the ROS parameters
// COXA_LENGTH, FEMUR_LENGTH, TIBIA_LENGTH, COXA_TO_CENTER_X/Y,
// INIT_COXA_ANGLE, INIT_FOOT_POS_X/Y/Z of the original.
type Geometry struct {
	// CoxaLength, FemurLength and TibiaLength are the link lengths in metres.
	CoxaLength, FemurLength, TibiaLength float64
	// CoxaX and CoxaY give the position of each coxa joint in the body frame.
	// The sign of CoxaY decides the side of the leg (negative: right).
	CoxaX, CoxaY [NumLegs]float64
	// InitCoxaAngle is the coxa mounting angle of each leg in radians
	// (the original parameter is in degrees), measured from the outward
	// lateral axis towards the front; |angle| <= pi/2.
	InitCoxaAngle [NumLegs]float64
	// NeutralX and NeutralY are the neutral foot positions in the body frame.
	NeutralX, NeutralY [NumLegs]float64
	// WalkingHeight is the height of the coxa plane above the ground while
	// standing and walking (INIT_FOOT_POS_Z); feet are at z = -WalkingHeight.
	WalkingHeight float64
}

// DefaultGeometry returns the "standard values" of the original's
// test_params.hpp.
func DefaultGeometry() Geometry {
	deg := math.Pi / 180
	return Geometry{
		CoxaLength:    0.083,
		FemurLength:   0.100,
		TibiaLength:   0.1618,
		CoxaX:         [NumLegs]float64{-0.120, 0, 0.120, -0.120, 0, 0.120},
		CoxaY:         [NumLegs]float64{-0.055, -0.090, -0.055, 0.055, 0.090, 0.055},
		InitCoxaAngle: [NumLegs]float64{-60 * deg, 0, 60 * deg, -60 * deg, 0, 60 * deg},
		NeutralX:      [NumLegs]float64{-0.25, 0, 0.25, -0.25, 0, 0.25},
		NeutralY:      [NumLegs]float64{-0.23, -0.308, -0.23, 0.23, 0.308, 0.23},
		WalkingHeight: 0.135,
	}
}

// Validate checks that every length is positive and finite, that every leg
// has a side (CoxaY != 0), that the mounting angles are within +-90 degrees
// and that the neutral feet lie on their leg's side.
func (g Geometry) Validate() error {
	var errs []error
	pos := func(name string, v float64) {
		if !isFinite(v) || v <= 0 {
			errs = append(errs, fmt.Errorf("geometry: %s must be positive and finite, got %v", name, v))
		}
	}
	pos("CoxaLength", g.CoxaLength)
	pos("FemurLength", g.FemurLength)
	pos("TibiaLength", g.TibiaLength)
	pos("WalkingHeight", g.WalkingHeight)
	for i := 0; i < NumLegs; i++ {
		for _, v := range []float64{g.CoxaX[i], g.CoxaY[i], g.InitCoxaAngle[i], g.NeutralX[i], g.NeutralY[i]} {
			if !isFinite(v) {
				errs = append(errs, fmt.Errorf("geometry: leg %s has a non-finite value %v", LegName(i), v))
			}
		}
		if g.CoxaY[i] == 0 {
			errs = append(errs, fmt.Errorf("geometry: leg %s: CoxaY must not be 0 (it decides the side)", LegName(i)))
		}
		if math.Abs(g.InitCoxaAngle[i]) > math.Pi/2 {
			errs = append(errs, fmt.Errorf("geometry: leg %s: InitCoxaAngle %v rad outside [-pi/2, pi/2]", LegName(i), g.InitCoxaAngle[i]))
		}
		if (g.NeutralY[i]-g.CoxaY[i])*g.CoxaY[i] <= 0 {
			errs = append(errs, fmt.Errorf("geometry: leg %s: neutral foot y %v is not outboard of the coxa y %v", LegName(i), g.NeutralY[i], g.CoxaY[i]))
		}
	}
	return errors.Join(errs...)
}

// Neutral returns the neutral foot position of leg i at height z.
func (g Geometry) Neutral(i int, z float64) geom.Vec3 {
	return geom.Vec3{X: g.NeutralX[i], Y: g.NeutralY[i], Z: z}
}

// side returns -1 for a right leg and +1 for a left leg.
func (g Geometry) side(i int) float64 {
	if g.CoxaY[i] < 0 {
		return -1
	}
	return 1
}
