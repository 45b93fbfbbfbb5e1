// Package action holds the middleware-free core of the ROS 2 action
// protocol: goal identifiers, the goal state machine of rcl_action
// (accepted, executing, canceling, succeeded, aborted, canceled), the
// cancel-request selection rules of action_msgs/srv/CancelGoal, and a
// Tracker that keeps goals, their results and the callers waiting for them
// until the result retention time has passed.
//
// Package ros wires a Tracker to the send_goal, cancel_goal and get_result
// services and the feedback and status topics. Nothing here reads a clock:
// times are passed in, so the behaviour is testable and works with sim time.
package action

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
)

// GoalID is a goal's UUID (unique_identifier_msgs/msg/UUID).
type GoalID [16]byte

// NewGoalID returns a random (version 4) UUID read from r (crypto/rand
// when r is nil).
func NewGoalID(r io.Reader) (GoalID, error) {
	if r == nil {
		r = rand.Reader
	}
	var id GoalID
	if _, err := io.ReadFull(r, id[:]); err != nil {
		return GoalID{}, fmt.Errorf("goal id: %w", err)
	}
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id, nil
}

// IsZero reports whether id is all zeros (the "any goal" id of a cancel
// request).
func (id GoalID) IsZero() bool { return id == GoalID{} }

// String formats id as 8-4-4-4-12 hex digits.
func (id GoalID) String() string {
	h := hex.EncodeToString(id[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Status is a goal status; the numbers are those of
// action_msgs/msg/GoalStatus.
type Status int8

// Goal statuses (action_msgs/msg/GoalStatus STATUS_*).
const (
	StatusUnknown   Status = 0
	StatusAccepted  Status = 1
	StatusExecuting Status = 2
	StatusCanceling Status = 3
	StatusSucceeded Status = 4
	StatusCanceled  Status = 5
	StatusAborted   Status = 6
)

var statusNames = [...]string{"UNKNOWN", "ACCEPTED", "EXECUTING", "CANCELING", "SUCCEEDED", "CANCELED", "ABORTED"}

// String returns the upper-case name ros2cli prints ("SUCCEEDED").
func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", int8(s))
}

// Terminal reports whether s is succeeded, canceled or aborted.
func (s Status) Terminal() bool {
	return s == StatusSucceeded || s == StatusCanceled || s == StatusAborted
}

// Event drives a goal from one status to the next (rcl_action's
// rcl_action_goal_event_t).
type Event int

// Goal events.
const (
	EventExecute Event = iota
	EventCancelGoal
	EventSucceed
	EventAbort
	EventCanceled
)

var eventNames = [...]string{"execute", "cancel goal", "succeed", "abort", "canceled"}

// String returns the event name.
func (e Event) String() string {
	if e >= 0 && int(e) < len(eventNames) {
		return eventNames[e]
	}
	return fmt.Sprintf("Event(%d)", int(e))
}

// transitions is the goal state machine of rcl_action
// (goal_state_machine.c), as data.
var transitions = map[Status]map[Event]Status{
	StatusAccepted: {
		EventExecute:    StatusExecuting,
		EventCancelGoal: StatusCanceling,
	},
	StatusExecuting: {
		EventCancelGoal: StatusCanceling,
		EventSucceed:    StatusSucceeded,
		EventAbort:      StatusAborted,
	},
	StatusCanceling: {
		EventSucceed:  StatusSucceeded,
		EventAbort:    StatusAborted,
		EventCanceled: StatusCanceled,
	},
}

// TransitionError reports an event that the goal's status does not permit.
type TransitionError struct {
	ID    GoalID
	From  Status
	Event Event
}

// Error implements error.
func (e *TransitionError) Error() string {
	return fmt.Sprintf("goal %s: event %q is not allowed in status %s", e.ID, e.Event, e.From)
}

// Next returns the status that ev leads to from s, or false if the state
// machine does not permit ev in s.
func Next(s Status, ev Event) (Status, bool) {
	to, ok := transitions[s][ev]
	return to, ok
}
