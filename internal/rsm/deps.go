package rsm

import (
	"context"
	"errors"
	"time"
)

// ErrUnavailable marks an error of a backend that is not running (service
// or action server not found). Adapters wrap it so that states can report a
// missing backend once instead of on every tick.
var ErrUnavailable = errors.New("not available")

// DataStore is the service provider as the states see it: one method per
// /rsm service they call. *Store implements it directly (in-process tests);
// the state_interface node implements it with service clients.
type DataStore interface {
	GetWaypoints(ctx context.Context) (WaypointArray, error)
	SetWaypointFollowingMode(ctx context.Context, mode WaypointMode, reverse bool) (Reply, error)
	ResetWaypoints(ctx context.Context) (Reply, error)
	WaypointVisited(ctx context.Context, position int64) (Reply, error)
	SetNavigationGoal(ctx context.Context, goal NavigationGoal) (Reply, error)
	GetNavigationGoal(ctx context.Context) (NavigationGoal, error)
	// NavigationGoalCompleted reports how the current goal ended;
	// navigationStatus is true when the report comes from the navigation
	// state (rsm_msgs/GoalCompleted.navigation_status).
	NavigationGoalCompleted(ctx context.Context, status GoalStatus, navigationStatus bool) (Reply, error)
	GetRobotPose(ctx context.Context) (Pose, error)
	// GetExplorationMode returns true for Interrupt, false for Finish.
	GetExplorationMode(ctx context.Context) (bool, error)
	// GetReverseMode returns true while reverse driving is active.
	GetReverseMode(ctx context.Context) (bool, error)
	SetReverseMode(ctx context.Context, reverse bool) (Reply, error)
}

// BootService is /rsm/bootUpFinished (std_srvs/SetBool, called with
// data=true): Success is true once the robot has booted.
type BootService interface {
	BootUpFinished(ctx context.Context) (Reply, error)
}

// NavState is the state of a navigation goal as the Navigation plugin needs
// it (a coarse view of action_msgs/GoalStatus).
type NavState int

// Navigation goal states.
const (
	NavPending   NavState = iota // sent, not yet accepted
	NavActive                    // accepted, executing (or cancelling)
	NavSucceeded                 // reached
	NavFailed                    // rejected, aborted or cancelled
)

// Done reports whether the goal has finished.
func (s NavState) Done() bool { return s == NavSucceeded || s == NavFailed }

// String returns a readable name.
func (s NavState) String() string {
	switch s {
	case NavPending:
		return "PENDING"
	case NavActive:
		return "ACTIVE"
	case NavSucceeded:
		return "SUCCEEDED"
	case NavFailed:
		return "FAILED"
	}
	return "NavState(?)"
}

// NavGoal is one goal sent through a Navigator.
type NavGoal interface {
	// State returns the latest known state; it must not block.
	State() NavState
	// Cancel asks the server to cancel the goal.
	Cancel(ctx context.Context) error
}

// Navigator is a Nav2 NavigateToPose action client that can talk to more
// than one action name (forward "navigate_to_pose" and a reverse one). The
// state_interface node adapts it to the client library's action client.
type Navigator interface {
	// Ready reports whether the action server named action is connected.
	Ready(action string) bool
	// Navigate sends goal (in frame "map", stamped now) to action.
	Navigate(ctx context.Context, action string, goal Pose) (NavGoal, error)
}

// Clock gives the current (ROS) time.
type Clock interface{ Now() time.Time }

// Logger is what the behaviour logs through; *zap.SugaredLogger fits.
type Logger interface {
	Infof(format string, args ...any)
	Warnf(format string, args ...any)
	Errorf(format string, args ...any)
}

type nopLogger struct{}

// Infof discards.
func (nopLogger) Infof(string, ...any) {}

// Warnf discards.
func (nopLogger) Warnf(string, ...any) {}

// Errorf discards.
func (nopLogger) Errorf(string, ...any) {}

// onceReporter logs a failure the first time it happens and stays silent
// until a success re-arms it, so a missing backend gives one clear line
// instead of one line per tick.
type onceReporter struct{ failing bool }

// fail logs msg once per burst of failures.
func (r *onceReporter) fail(log Logger, format string, args ...any) {
	if r.failing {
		return
	}
	r.failing = true
	log.Errorf(format, args...)
}

// ok ends a burst; if one was reported, says that it is over.
func (r *onceReporter) ok(log Logger, format string, args ...any) {
	if r.failing {
		r.failing = false
		log.Infof(format, args...)
	}
}
