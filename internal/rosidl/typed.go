package rosidl

import "fmt"

// Service is a service type together with the Go types of its request
// and response. The generator emits one per service, named after it
// (std_srvs_srv.Trigger, nav2_msgs_action.NavigateToPose_SendGoal), so
// that the clients and servers of internal/ros infer their type
// parameters from it and a request cannot be paired with the wrong
// response:
//
//	cli, err := ros.NewClient(node, "/motor/reset", std_srvs_srv.Trigger)
//
// Besides the type description it holds what generic code needs to treat
// *Req and *Resp as Messages. The zero value describes no service.
type Service[Req, Resp any] struct {
	typ      *ServiceType
	request  func(*Req) Message
	response func(*Resp) Message
}

// TypedService returns the descriptor of the service st whose request
// and response have the Go types Req and Resp. Generated code calls it
// once per service; it panics if st does not describe those types (a
// programming error, like a bad regexp.MustCompile pattern).
func TypedService[Req, Resp any, PReq Ptr[Req], PResp Ptr[Resp]](st *ServiceType) Service[Req, Resp] {
	req, resp := PReq(nil).ROSType(), PResp(nil).ROSType()
	if st == nil || st.Request != req || st.Response != resp {
		panic(fmt.Sprintf("rosidl: %s is not the service of request %s and response %s", serviceName(st), req.Name, resp.Name))
	}
	return Service[Req, Resp]{
		typ:      st,
		request:  func(r *Req) Message { return PReq(r) },
		response: func(r *Resp) Message { return PResp(r) },
	}
}

func serviceName(st *ServiceType) string {
	if st == nil {
		return "<nil>"
	}
	return st.Name
}

// Type returns the description of the service (nil for the zero value).
func (s Service[Req, Resp]) Type() *ServiceType { return s.typ }

// RequestMsg returns r as a Message.
func (s Service[Req, Resp]) RequestMsg(r *Req) Message { return s.request(r) }

// ResponseMsg returns r as a Message.
func (s Service[Req, Resp]) ResponseMsg(r *Resp) Message { return s.response(r) }

// Action is an action type together with the Go types of its goal, result
// and feedback. The generator emits one per action, named after it
// (control_msgs_action.FollowJointTrajectory), so that the action clients
// and servers of internal/ros infer their type parameters from it:
//
//	cli, err := ros.NewActionClient(node, "follow_joint_trajectory", control_msgs_action.FollowJointTrajectory)
//
// Besides the type description it holds what generic code needs to treat
// *G, *R and *F as Messages. The zero value describes no action.
type Action[G, R, F any] struct {
	typ      *ActionType
	goal     func(*G) Message
	result   func(*R) Message
	feedback func(*F) Message
}

// TypedAction returns the descriptor of the action at whose goal, result
// and feedback have the Go types G, R and F. Generated code calls it once
// per action; it panics if at does not describe those types or lacks the
// types the action protocol derives from them (a programming error).
func TypedAction[G, R, F any, PG Ptr[G], PR Ptr[R], PF Ptr[F]](at *ActionType) Action[G, R, F] {
	g, r, f := PG(nil).ROSType(), PR(nil).ROSType(), PF(nil).ROSType()
	if at == nil || at.Goal != g || at.Result != r || at.Feedback != f {
		name := "<nil>"
		if at != nil {
			name = at.Name
		}
		panic(fmt.Sprintf("rosidl: %s is not the action of goal %s, result %s and feedback %s", name, g.Name, r.Name, f.Name))
	}
	if at.SendGoal == nil || at.GetResult == nil || at.FeedbackMessage == nil {
		panic(fmt.Sprintf("rosidl: action %s lacks its derived types", at.Name))
	}
	return Action[G, R, F]{
		typ:      at,
		goal:     func(m *G) Message { return PG(m) },
		result:   func(m *R) Message { return PR(m) },
		feedback: func(m *F) Message { return PF(m) },
	}
}

// Type returns the description of the action and of the types the action
// protocol derives from it (nil for the zero value).
func (a Action[G, R, F]) Type() *ActionType { return a.typ }

// GoalMsg returns g as a Message.
func (a Action[G, R, F]) GoalMsg(g *G) Message { return a.goal(g) }

// ResultMsg returns r as a Message.
func (a Action[G, R, F]) ResultMsg(r *R) Message { return a.result(r) }

// FeedbackMsg returns f as a Message.
func (a Action[G, R, F]) FeedbackMsg(f *F) Message { return a.feedback(f) }
