package rsmnode

import (
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/rsm"
	action_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/action_msgs/msg"
)

func TestNavGoal_SetStatus_TerminalSticks(t *testing.T) {
	tests := []struct {
		name  string
		steps []int8
		want  rsm.NavState
	}{
		{"accepted", []int8{action_msgs_msg.GoalStatus_STATUS_ACCEPTED}, rsm.NavActive},
		{"executing", []int8{action_msgs_msg.GoalStatus_STATUS_EXECUTING}, rsm.NavActive},
		{"succeeded", []int8{action_msgs_msg.GoalStatus_STATUS_EXECUTING, action_msgs_msg.GoalStatus_STATUS_SUCCEEDED}, rsm.NavSucceeded},
		{"aborted", []int8{action_msgs_msg.GoalStatus_STATUS_ABORTED}, rsm.NavFailed},
		{"canceled", []int8{action_msgs_msg.GoalStatus_STATUS_CANCELING, action_msgs_msg.GoalStatus_STATUS_CANCELED}, rsm.NavFailed},
		{"late executing after success ignored", []int8{action_msgs_msg.GoalStatus_STATUS_SUCCEEDED, action_msgs_msg.GoalStatus_STATUS_EXECUTING}, rsm.NavSucceeded},
		{"result after status ignored", []int8{action_msgs_msg.GoalStatus_STATUS_ABORTED, action_msgs_msg.GoalStatus_STATUS_SUCCEEDED}, rsm.NavFailed},
		{"unknown ignored", []int8{action_msgs_msg.GoalStatus_STATUS_UNKNOWN, 42}, rsm.NavPending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &navGoal{}
			for _, s := range tt.steps {
				g.setStatus(s)
			}
			if got := g.State(); got != tt.want {
				t.Errorf("state = %v, want %v", got, tt.want)
			}
		})
	}
}
