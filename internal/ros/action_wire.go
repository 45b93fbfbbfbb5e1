package ros

import (
	"context"
	"errors"

	"github.com/fsmnodes/fsmnodes/internal/cdr"
	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
)

// The action protocol wraps the user's goal, result and feedback in derived
// types (X_SendGoal_Request = {goal_id, goal}, ...;
// docs/interfaces.md#derived-action-types).
// Their layout is fixed, so one implementation per shape serves every
// action: the embedded user message is encoded inline after the fixed
// fields (XCDR1 nests structs without headers or extra alignment), and the
// type information comes from the generated rosidl.ActionType at run time.

// actionGoalIDMsg is X_GetResult_Request: {UUID goal_id}.
type actionGoalIDMsg struct {
	ti *rosidl.TypeInfo
	ID action.GoalID
}

func (m *actionGoalIDMsg) MarshalCDR(e *cdr.Encoder) { e.RawBytes(m.ID[:]) }
func (m *actionGoalIDMsg) UnmarshalCDR(d *cdr.Decoder) error {
	d.ReadRawBytes(m.ID[:])
	return d.Err()
}
func (m *actionGoalIDMsg) ROSType() *rosidl.TypeInfo {
	if m == nil {
		return nil
	}
	return m.ti
}

// actionSendGoalRequest is X_SendGoal_Request: {UUID goal_id, X_Goal goal}.
type actionSendGoalRequest struct {
	ti   *rosidl.TypeInfo
	ID   action.GoalID
	Goal rosidl.Message
}

func (m *actionSendGoalRequest) MarshalCDR(e *cdr.Encoder) {
	e.RawBytes(m.ID[:])
	m.Goal.MarshalCDR(e)
}
func (m *actionSendGoalRequest) UnmarshalCDR(d *cdr.Decoder) error {
	d.ReadRawBytes(m.ID[:])
	if err := d.Err(); err != nil {
		return err
	}
	return m.Goal.UnmarshalCDR(d)
}
func (m *actionSendGoalRequest) ROSType() *rosidl.TypeInfo {
	if m == nil {
		return nil
	}
	return m.ti
}

// actionSendGoalResponse is X_SendGoal_Response: {bool accepted, Time stamp}.
type actionSendGoalResponse struct {
	ti       *rosidl.TypeInfo
	Accepted bool
	Stamp    builtin_interfaces_msg.Time
}

func (m *actionSendGoalResponse) MarshalCDR(e *cdr.Encoder) {
	e.Bool(m.Accepted)
	m.Stamp.MarshalCDR(e)
}
func (m *actionSendGoalResponse) UnmarshalCDR(d *cdr.Decoder) error {
	m.Accepted = d.Bool()
	return m.Stamp.UnmarshalCDR(d)
}
func (m *actionSendGoalResponse) ROSType() *rosidl.TypeInfo {
	if m == nil {
		return nil
	}
	return m.ti
}

// actionGetResultResponse is X_GetResult_Response: {int8 status, X_Result result}.
type actionGetResultResponse struct {
	ti     *rosidl.TypeInfo
	Status int8
	Result rosidl.Message
}

func (m *actionGetResultResponse) MarshalCDR(e *cdr.Encoder) {
	e.Int8(m.Status)
	m.Result.MarshalCDR(e)
}
func (m *actionGetResultResponse) UnmarshalCDR(d *cdr.Decoder) error {
	m.Status = d.Int8()
	if err := d.Err(); err != nil {
		return err
	}
	return m.Result.UnmarshalCDR(d)
}
func (m *actionGetResultResponse) ROSType() *rosidl.TypeInfo {
	if m == nil {
		return nil
	}
	return m.ti
}

// actionFeedbackMessage is X_FeedbackMessage: {UUID goal_id, X_Feedback feedback}.
type actionFeedbackMessage struct {
	ti       *rosidl.TypeInfo
	ID       action.GoalID
	Feedback rosidl.Message
}

func (m *actionFeedbackMessage) MarshalCDR(e *cdr.Encoder) {
	e.RawBytes(m.ID[:])
	m.Feedback.MarshalCDR(e)
}
func (m *actionFeedbackMessage) UnmarshalCDR(d *cdr.Decoder) error {
	d.ReadRawBytes(m.ID[:])
	if err := d.Err(); err != nil {
		return err
	}
	return m.Feedback.UnmarshalCDR(d)
}
func (m *actionFeedbackMessage) ROSType() *rosidl.TypeInfo {
	if m == nil {
		return nil
	}
	return m.ti
}

// newDeferredService creates a service whose handler answers later by
// calling reply, from any goroutine (used by get_result, which answers when
// the goal finishes). The handler runs on the node's callback goroutine and
// must not block; reply queues the response there too, because Service's
// respond keeps per-service caches that belong to that goroutine.
func newDeferredService(n *Node, name string, reqT, respT *rosidl.TypeInfo, newReq func() rosidl.Message,
	handle func(ctx context.Context, req rosidl.Message, reply func(rosidl.Message)), qos QoS) (*Service, error) {
	return newServiceEndpoints(n, name, reqT, respT, newReq, qos, nil, nil, 0, func(s *Service) func(incomingRequest) {
		return func(r incomingRequest) {
			handle(n.runCtx, r.req, func(resp rosidl.Message) {
				// ErrClosed from Post: the node is gone, and so is the reply.
				_ = n.Post(func() {
					if err := s.respond(r, resp, nil); err != nil && !errors.Is(err, dds.ErrClosed) {
						n.Logger().Warnf("service %s: %v", s.name, err)
					}
				})
			})
		}
	})
}
