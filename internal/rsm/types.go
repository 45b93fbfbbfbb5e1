package rsm

import "fmt"

// Interrupt is an event that the StateInterface forwards to the current
// state's OnInterrupt (BaseState.h of the original).
type Interrupt int

// Interrupts with the numbers of the original.
const (
	InterruptEnd            Interrupt = 0 // the former interrupt ended
	EmergencyStopInterrupt  Interrupt = 1 // software e-stop pressed
	TeleoperationInterrupt  Interrupt = 2 // teleoperation used
	SimpleGoalInterrupt     Interrupt = 3 // a goal arrived on /rsm/simpleGoal
	SimpleGoalStopInterrupt Interrupt = 4 // /rsm/stop2DNavGoal was called
)

// String returns the constant's name of the original.
func (i Interrupt) String() string {
	switch i {
	case InterruptEnd:
		return "INTERRUPT_END"
	case EmergencyStopInterrupt:
		return "EMERGENCY_STOP_INTERRUPT"
	case TeleoperationInterrupt:
		return "TELEOPERATION_INTERRUPT"
	case SimpleGoalInterrupt:
		return "SIMPLE_GOAL_INTERRUPT"
	case SimpleGoalStopInterrupt:
		return "SIMPLE_GOAL_STOP_INTERRUPT"
	}
	return fmt.Sprintf("Interrupt(%d)", int(i))
}

// NavigationMode says what a navigation goal belongs to.
type NavigationMode int8

// Navigation modes with the numbers of the original.
const (
	NavigationNone              NavigationMode = -1 // no goal was set yet
	NavigationExploration       NavigationMode = 0
	NavigationWaypointFollowing NavigationMode = 1
	NavigationSimpleGoal        NavigationMode = 2
)

// String returns a readable name.
func (m NavigationMode) String() string {
	switch m {
	case NavigationNone:
		return "NONE"
	case NavigationExploration:
		return "EXPLORATION"
	case NavigationWaypointFollowing:
		return "WAYPOINT_FOLLOWING"
	case NavigationSimpleGoal:
		return "SIMPLE_GOAL"
	}
	return fmt.Sprintf("NavigationMode(%d)", int(m))
}

// GoalState is rsm_msgs/GoalStatus.goal_status.
type GoalState uint8

// Goal states of rsm_msgs/GoalStatus.
const (
	GoalActive  GoalState = 0
	GoalReached GoalState = 1
	GoalFailed  GoalState = 2
	GoalAborted GoalState = 3
)

// String returns the constant's name of the message.
func (s GoalState) String() string {
	switch s {
	case GoalActive:
		return "ACTIVE"
	case GoalReached:
		return "REACHED"
	case GoalFailed:
		return "FAILED"
	case GoalAborted:
		return "ABORTED"
	}
	return fmt.Sprintf("GoalState(%d)", uint8(s))
}

// GoalStatus is rsm_msgs/GoalStatus: a goal and how it ended.
type GoalStatus struct {
	Goal   Pose
	Status GoalState
}

// Mode is rsm_msgs/OperationMode.mode.
type Mode uint8

// Operation modes of rsm_msgs/OperationMode.
const (
	ModeStopped       Mode = 0
	ModeAutonomous    Mode = 1
	ModeTeleoperation Mode = 2
)

// Valid reports whether m is one of the three known modes.
func (m Mode) Valid() bool { return m <= ModeTeleoperation }

// String returns the constant's name of the message.
func (m Mode) String() string {
	switch m {
	case ModeStopped:
		return "STOPPED"
	case ModeAutonomous:
		return "AUTONOMOUS"
	case ModeTeleoperation:
		return "TELEOPERATION"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// OperationMode is rsm_msgs/OperationMode: software e-stop plus mode.
type OperationMode struct {
	EmergencyStop bool
	Mode          Mode
}

// WaypointMode is rsm_msgs/WaypointArray.mode.
type WaypointMode uint8

// Waypoint following modes of rsm_msgs/WaypointArray.
const (
	Single    WaypointMode = 0 // one trip start→end
	Roundtrip WaypointMode = 1 // start→end, again from the start, repeated
	Patrol    WaypointMode = 2 // start→end, then end→start, repeated
)

// Valid reports whether m is one of the three known modes.
func (m WaypointMode) Valid() bool { return m <= Patrol }

// String returns the constant's name of the message.
func (m WaypointMode) String() string {
	switch m {
	case Single:
		return "SINGLE"
	case Roundtrip:
		return "ROUNDTRIP"
	case Patrol:
		return "PATROL"
	}
	return fmt.Sprintf("WaypointMode(%d)", uint8(m))
}

// Waypoint is rsm_msgs/Waypoint.
type Waypoint struct {
	Pose        Pose
	Visited     bool   // reached
	Unreachable bool   // no path could be found
	Routine     string // routine to run on arrival ("" = none)
}

// WaypointArray is rsm_msgs/WaypointArray without header and size (the
// node fills frame "map" and waypoints_size = len(Waypoints)).
type WaypointArray struct {
	Mode      WaypointMode
	Reverse   bool
	Waypoints []Waypoint
}

// NavigationGoal is what setNavigationGoal stores and getNavigationGoal
// returns.
type NavigationGoal struct {
	Goal             Pose
	Mode             NavigationMode
	WaypointPosition int64
	Routine          string
}

// Reply is the success flag and message of a setter service or of a
// state's start/stop hook.
type Reply struct {
	Success bool
	Message string
}

func ok(msg string) Reply   { return Reply{Success: true, Message: msg} }
func fail(msg string) Reply { return Reply{Success: false, Message: msg} }
