package rosidl_test

import (
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// mustPanic runs f and returns its panic message ("" if it returned).
func mustPanic(t *testing.T, f func()) (msg string) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			msg, _ = r.(string)
		}
	}()
	f()
	return ""
}

func TestTypedService(t *testing.T) {
	s := rosidl.TypedService[std_srvs_srv.Trigger_Request, std_srvs_srv.Trigger_Response](std_srvs_srv.Trigger_ServiceType)
	if s.Type() != std_srvs_srv.Trigger_ServiceType {
		t.Errorf("Type() = %v", s.Type())
	}
	var zero rosidl.Service[std_srvs_srv.Trigger_Request, std_srvs_srv.Trigger_Response]
	if zero.Type() != nil {
		t.Error("the zero descriptor describes a service")
	}
	// A service type that does not describe the Go types is refused.
	msg := mustPanic(t, func() {
		rosidl.TypedService[std_srvs_srv.Trigger_Request, std_srvs_srv.Trigger_Response](std_srvs_srv.SetBool_ServiceType)
	})
	if !strings.Contains(msg, "std_srvs/srv/SetBool is not the service of request std_srvs/srv/Trigger_Request") {
		t.Errorf("mismatched service: panic %q", msg)
	}
	msg = mustPanic(t, func() {
		rosidl.TypedService[std_srvs_srv.Trigger_Request, std_srvs_srv.SetBool_Response](std_srvs_srv.Trigger_ServiceType)
	})
	if !strings.Contains(msg, "response std_srvs/srv/SetBool_Response") {
		t.Errorf("mismatched response: panic %q", msg)
	}
	if msg := mustPanic(t, func() {
		rosidl.TypedService[std_srvs_srv.Trigger_Request, std_srvs_srv.Trigger_Response](nil)
	}); !strings.Contains(msg, "<nil> is not the service") {
		t.Errorf("nil service type: panic %q", msg)
	}
}

func TestTypedAction(t *testing.T) {
	type (
		goal     = nav2_msgs_action.NavigateToPose_Goal
		result   = nav2_msgs_action.NavigateToPose_Result
		feedback = nav2_msgs_action.NavigateToPose_Feedback
	)
	a := rosidl.TypedAction[goal, result, feedback](nav2_msgs_action.NavigateToPose_ActionType)
	if a.Type() != nav2_msgs_action.NavigateToPose_ActionType {
		t.Errorf("Type() = %v", a.Type())
	}
	msg := mustPanic(t, func() {
		rosidl.TypedAction[goal, feedback, result](nav2_msgs_action.NavigateToPose_ActionType)
	})
	if !strings.Contains(msg, "nav2_msgs/action/NavigateToPose is not the action of goal") {
		t.Errorf("swapped result and feedback: panic %q", msg)
	}
	// An action type without its derived types cannot be used on the wire.
	bare := *nav2_msgs_action.NavigateToPose_ActionType
	bare.SendGoal = nil
	if msg := mustPanic(t, func() { rosidl.TypedAction[goal, result, feedback](&bare) }); !strings.Contains(msg, "lacks its derived types") {
		t.Errorf("no derived types: panic %q", msg)
	}
}
