package ros

import (
	"bytes"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	control_msgs_action "github.com/fsmnodes/fsmnodes/msgs/control_msgs/action"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
	trajectory_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/trajectory_msgs/msg"
	unique_identifier_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/unique_identifier_msgs/msg"
)

// The hand-written protocol wrappers must produce exactly the bytes of the
// generated derived types (which follow rosidl's field order), and decode
// them back.
func TestActionWire_MatchesGeneratedDerivedTypes(t *testing.T) {
	id := action.GoalID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	uuid := unique_identifier_msgs_msg.UUID{Uuid: id}
	stamp := builtin_interfaces_msg.Time{Sec: 12, Nanosec: 34}
	navAT := nav2_msgs_action.NavigateToPose_ActionType
	fjtAT := control_msgs_action.FollowJointTrajectory_ActionType

	navGoal := nav2_msgs_action.NavigateToPose_Goal{BehaviorTree: "bt"}
	navGoal.Pose.Pose.Position.X = 1.5
	navGoal.Pose.Header.FrameId = "map"
	fjtGoal := control_msgs_action.FollowJointTrajectory_Goal{
		Trajectory: trajectory_msgs_msg.JointTrajectory{JointNames: []string{"a", "b"}},
	}
	fjtGoal.GoalTimeTolerance.Sec = 3

	cases := []struct {
		name      string
		mine, gen rosidl.Message
		fresh     func() rosidl.Message // an empty wrapper to decode into
	}{
		{"nav send_goal request",
			&actionSendGoalRequest{ti: navAT.SendGoal.Request, ID: id, Goal: &navGoal},
			&nav2_msgs_action.NavigateToPose_SendGoal_Request{GoalId: uuid, Goal: navGoal},
			func() rosidl.Message {
				return &actionSendGoalRequest{ti: navAT.SendGoal.Request, Goal: &nav2_msgs_action.NavigateToPose_Goal{}}
			}},
		{"nav send_goal response",
			&actionSendGoalResponse{ti: navAT.SendGoal.Response, Accepted: true, Stamp: stamp},
			&nav2_msgs_action.NavigateToPose_SendGoal_Response{Accepted: true, Stamp: stamp},
			func() rosidl.Message { return &actionSendGoalResponse{ti: navAT.SendGoal.Response} }},
		{"nav get_result request",
			&actionGoalIDMsg{ti: navAT.GetResult.Request, ID: id},
			&nav2_msgs_action.NavigateToPose_GetResult_Request{GoalId: uuid},
			func() rosidl.Message { return &actionGoalIDMsg{ti: navAT.GetResult.Request} }},
		{"nav get_result response",
			&actionGetResultResponse{ti: navAT.GetResult.Response, Status: 4,
				Result: &nav2_msgs_action.NavigateToPose_Result{ErrorCode: 9, ErrorMsg: "x"}},
			&nav2_msgs_action.NavigateToPose_GetResult_Response{Status: 4,
				Result: nav2_msgs_action.NavigateToPose_Result{ErrorCode: 9, ErrorMsg: "x"}},
			func() rosidl.Message {
				return &actionGetResultResponse{ti: navAT.GetResult.Response, Result: &nav2_msgs_action.NavigateToPose_Result{}}
			}},
		{"nav feedback message",
			&actionFeedbackMessage{ti: navAT.FeedbackMessage, ID: id,
				Feedback: &nav2_msgs_action.NavigateToPose_Feedback{NumberOfRecoveries: 2, DistanceRemaining: 0.5}},
			&nav2_msgs_action.NavigateToPose_FeedbackMessage{GoalId: uuid,
				Feedback: nav2_msgs_action.NavigateToPose_Feedback{NumberOfRecoveries: 2, DistanceRemaining: 0.5}},
			func() rosidl.Message {
				return &actionFeedbackMessage{ti: navAT.FeedbackMessage, Feedback: &nav2_msgs_action.NavigateToPose_Feedback{}}
			}},
		{"fjt send_goal request",
			&actionSendGoalRequest{ti: fjtAT.SendGoal.Request, ID: id, Goal: &fjtGoal},
			&control_msgs_action.FollowJointTrajectory_SendGoal_Request{GoalId: uuid, Goal: fjtGoal},
			func() rosidl.Message {
				return &actionSendGoalRequest{ti: fjtAT.SendGoal.Request, Goal: &control_msgs_action.FollowJointTrajectory_Goal{}}
			}},
		{"fjt get_result response",
			&actionGetResultResponse{ti: fjtAT.GetResult.Response, Status: 6,
				Result: &control_msgs_action.FollowJointTrajectory_Result{ErrorCode: -1, ErrorString: "bad"}},
			&control_msgs_action.FollowJointTrajectory_GetResult_Response{Status: 6,
				Result: control_msgs_action.FollowJointTrajectory_Result{ErrorCode: -1, ErrorString: "bad"}},
			func() rosidl.Message {
				return &actionGetResultResponse{ti: fjtAT.GetResult.Response, Result: &control_msgs_action.FollowJointTrajectory_Result{}}
			}},
	}
	for _, c := range cases {
		a, b := rosidl.Marshal(c.mine, nil), rosidl.Marshal(c.gen, nil)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: bytes differ\nmine %x\ngen  %x", c.name, a, b)
			continue
		}
		if c.mine.ROSType() != c.gen.ROSType() {
			t.Errorf("%s: type info %v, generated %v", c.name, c.mine.ROSType().Name, c.gen.ROSType().Name)
		}
		back := c.fresh()
		if err := rosidl.Unmarshal(b, back); err != nil {
			t.Errorf("%s: decode: %v", c.name, err)
			continue
		}
		if again := rosidl.Marshal(back, nil); !bytes.Equal(again, b) {
			t.Errorf("%s: decode/encode round trip differs", c.name)
		}
	}
}

func TestActionWire_TruncatedPayloadsAreErrors(t *testing.T) {
	at := nav2_msgs_action.NavigateToPose_ActionType
	full := rosidl.Marshal(&nav2_msgs_action.NavigateToPose_SendGoal_Request{Goal: nav2_msgs_action.NavigateToPose_Goal{BehaviorTree: "abc"}}, nil)
	for n := 4; n < len(full)-4; n += 7 {
		m := &actionSendGoalRequest{ti: at.SendGoal.Request, Goal: &nav2_msgs_action.NavigateToPose_Goal{}}
		if err := rosidl.Unmarshal(full[:n], m); err == nil {
			t.Errorf("payload cut to %d of %d bytes decoded without error", n, len(full))
		}
	}
}
