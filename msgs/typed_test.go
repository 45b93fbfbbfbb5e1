package msgs_test

import (
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	control_msgs_action "github.com/fsmnodes/fsmnodes/msgs/control_msgs/action"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
	rcl_interfaces_srv "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/srv"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
	velma_msgs_action "github.com/fsmnodes/fsmnodes/msgs/velma_msgs/action"
)

// checkService asserts that a generated service descriptor carries the
// service type st and hands its Go values out as themselves.
func checkService[Req, Resp any](t *testing.T, s rosidl.Service[Req, Resp], st *rosidl.ServiceType) {
	t.Helper()
	if s.Type() != st {
		t.Fatalf("descriptor of %s carries %v", st.Name, s.Type())
	}
	req, resp := new(Req), new(Resp)
	if m := s.RequestMsg(req); m.ROSType() != st.Request || any(m) != any(req) {
		t.Errorf("%s: RequestMsg gives %T %s", st.Name, m, m.ROSType().Name)
	}
	if m := s.ResponseMsg(resp); m.ROSType() != st.Response || any(m) != any(resp) {
		t.Errorf("%s: ResponseMsg gives %T %s", st.Name, m, m.ROSType().Name)
	}
}

// checkAction asserts the same of a generated action descriptor.
func checkAction[G, R, F any](t *testing.T, a rosidl.Action[G, R, F], at *rosidl.ActionType) {
	t.Helper()
	if a.Type() != at {
		t.Fatalf("descriptor of %s carries %v", at.Name, a.Type())
	}
	g, r, f := new(G), new(R), new(F)
	if m := a.GoalMsg(g); m.ROSType() != at.Goal || any(m) != any(g) {
		t.Errorf("%s: GoalMsg gives %T", at.Name, m)
	}
	if m := a.ResultMsg(r); m.ROSType() != at.Result || any(m) != any(r) {
		t.Errorf("%s: ResultMsg gives %T", at.Name, m)
	}
	if m := a.FeedbackMsg(f); m.ROSType() != at.Feedback || any(m) != any(f) {
		t.Errorf("%s: FeedbackMsg gives %T", at.Name, m)
	}
}

// TestTypedDescriptors checks generated descriptors of each kind (the
// generator's output compiles only if each pairs the right Go types, and
// rosidl.TypedService/TypedAction panic at init if it describes others).
func TestTypedDescriptors(t *testing.T) {
	checkService(t, std_srvs_srv.Trigger, std_srvs_srv.Trigger_ServiceType)
	checkService(t, std_srvs_srv.SetBool, std_srvs_srv.SetBool_ServiceType)
	checkService(t, std_srvs_srv.Empty, std_srvs_srv.Empty_ServiceType)
	checkService(t, rcl_interfaces_srv.GetParameters, rcl_interfaces_srv.GetParameters_ServiceType)
	checkService(t, rsm_msgs_srv.AddWaypoint, rsm_msgs_srv.AddWaypoint_ServiceType)
	// the services an action derives
	checkService(t, nav2_msgs_action.NavigateToPose_SendGoal, nav2_msgs_action.NavigateToPose_ActionType.SendGoal)
	checkService(t, nav2_msgs_action.NavigateToPose_GetResult, nav2_msgs_action.NavigateToPose_ActionType.GetResult)
	checkAction(t, nav2_msgs_action.NavigateToPose, nav2_msgs_action.NavigateToPose_ActionType)
	checkAction(t, control_msgs_action.FollowJointTrajectory, control_msgs_action.FollowJointTrajectory_ActionType)
	checkAction(t, velma_msgs_action.CartesianTrajectory, velma_msgs_action.CartesianTrajectory_ActionType)
}
