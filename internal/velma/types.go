package velma

import (
	"fmt"
	"math"

	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
)

// Joint counts.
const (
	ArmDOF  = kin.ArmDOF
	BodyDOF = kin.BodyDOF // torso + 2×7 arm joints
	HeadDOF = 2
)

// BodyJointNames are the 15 joints controlled by joint impedance, in order.
var BodyJointNames = [BodyDOF]string{
	"torso_0_joint",
	"right_arm_0_joint", "right_arm_1_joint", "right_arm_2_joint", "right_arm_3_joint",
	"right_arm_4_joint", "right_arm_5_joint", "right_arm_6_joint",
	"left_arm_0_joint", "left_arm_1_joint", "left_arm_2_joint", "left_arm_3_joint",
	"left_arm_4_joint", "left_arm_5_joint", "left_arm_6_joint",
}

// HeadJointNames are the head pan and tilt joints.
var HeadJointNames = [HeadDOF]string{"head_pan_joint", "head_tilt_joint"}

// Fault types of StatusSC.fault_type (docs/velma.md#between-cs-and-ve_body),
// as bits.
const (
	FaultNaNCommand     int32 = 1
	FaultRangeCommand   int32 = 2
	FaultNaNStatus      int32 = 4
	FaultRangeStatus    int32 = 8
	FaultCommHW         int32 = 16
	FaultCommUp         int32 = 32
	FaultCommPacketLost int32 = 64
	FaultHWState        int32 = 128
)

// Faulty module ids of StatusSC.faulty_module_id, as bits.
const (
	ModuleRArm       int32 = 1
	ModuleLArm       int32 = 2
	ModuleRHand      int32 = 4
	ModuleLHand      int32 = 8
	ModuleRFT        int32 = 16
	ModuleLFT        int32 = 32
	ModuleTMotor     int32 = 64
	ModuleHPMotor    int32 = 128
	ModuleHTMotor    int32 = 256
	ModuleRTactile   int32 = 512
	ModuleLOptoforce int32 = 1024
)

// ExitSafeState is the value of BodyCommand.SC that asks ve_body to leave
// its safe states.
const ExitSafeState int32 = 1

// ArmStatus is the status of one LWR arm (FRI torque mode).
type ArmStatus struct {
	Q, DQ, T   [ArmDOF]float64 // position, velocity, measured torque
	OK         bool            // drive powered, no FRI error
	InCmdState bool            // FRI in command state
}

// MotorStatus is the status of the torso or a head motor.
type MotorStatus struct {
	Q, DQ            float64
	Enabled          bool
	HomingRequired   bool
	HomingInProgress bool
	OK               bool // drive not in fault
}

// EffectorStatus is what the real effectors report each cycle.
type EffectorStatus struct {
	RArm, LArm               ArmStatus
	Torso, HeadPan, HeadTilt MotorStatus
}

// ArmCommand is a joint torque command of one arm.
type ArmCommand struct {
	Valid bool
	T     [ArmDOF]float64
}

// MotorCommand commands the torso (torque T) or a head motor (position Q,
// velocity DQ); enable and homing requests are edge commands.
type MotorCommand struct {
	T                float64
	TValid           bool
	Q, DQ            float64
	QValid           bool
	Enable           bool
	EnableValid      bool
	HomingStart      bool
	HomingStartValid bool
}

// EffectorCommand is what ve_body sends to the real effectors.
type EffectorCommand struct {
	RArm, LArm               ArmCommand
	Torso, HeadPan, HeadTilt MotorCommand
}

// Effectors are the real effectors (hardware or simulator). ReadStatus
// returns false when no new status arrived this cycle. Both are called from
// the loop goroutine only.
type Effectors interface {
	ReadStatus() (EffectorStatus, bool)
	WriteCommand(EffectorCommand)
}

// StatusSC is ve_body's safety summary.
type StatusSC struct {
	SafeBehavior   bool
	Error          bool
	FaultType      int32
	FaultyModuleID int32
}

// BodyStatus is ve_body → cs data.
type BodyStatus struct {
	Valid bool // present this iteration
	SC    StatusSC
	EffectorStatus
}

// BodyCommand is cs → ve_body data.
type BodyCommand struct {
	Valid bool // present this iteration
	SC    int32
	EffectorCommand
}

// Limits are ve_body's validity limits (docs/velma-model.md#joint-limits).
type Limits struct {
	ArmTorque   [ArmDOF]float64 // |command| per arm joint
	TorsoTorque float64
	ArmQ        [ArmDOF]float64 // |status q| per arm joint
}

// DefaultLimits returns the limits hard-coded in the original ve_body.
func DefaultLimits() Limits {
	return Limits{
		ArmTorque:   [ArmDOF]float64{50, 50, 30, 20, 20, 10, 10},
		TorsoTorque: 100,
		ArmQ:        [ArmDOF]float64{2.96706, 2.0944, 2.96706, 2.0944, 2.96706, 2.0944, 2.96706},
	}
}

// Validate checks that every limit is finite and positive.
func (l Limits) Validate() error {
	for i := range ArmDOF {
		if !(l.ArmTorque[i] > 0) || math.IsInf(l.ArmTorque[i], 0) {
			return fmt.Errorf("limits: arm_torque[%d] = %g, want finite > 0", i, l.ArmTorque[i])
		}
		if !(l.ArmQ[i] > 0) || math.IsInf(l.ArmQ[i], 0) {
			return fmt.Errorf("limits: arm_q[%d] = %g, want finite > 0", i, l.ArmQ[i])
		}
	}
	if !(l.TorsoTorque > 0) || math.IsInf(l.TorsoTorque, 0) {
		return fmt.Errorf("limits: torso_torque = %g, want finite > 0", l.TorsoTorque)
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// BodyQ returns the 15 body joint positions and velocities of a status.
func (s EffectorStatus) BodyQ() (q, dq [BodyDOF]float64) {
	q[0], dq[0] = s.Torso.Q, s.Torso.DQ
	for i := range ArmDOF {
		q[1+i], dq[1+i] = s.RArm.Q[i], s.RArm.DQ[i]
		q[8+i], dq[8+i] = s.LArm.Q[i], s.LArm.DQ[i]
	}
	return q, dq
}
