package ros

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	action_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/action_msgs/msg"
	action_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/action_msgs/srv"
	unique_identifier_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/unique_identifier_msgs/msg"
)

// ErrGoalCanceled may be returned by an execute function that stops
// because its goal was canceled; any error does, once the cancel request
// has been accepted.
var ErrGoalCanceled = errors.New("goal canceled")

// ActionServerOptions configures NewActionServer. The zero value accepts
// every goal and every cancel request and keeps results for 15 minutes.
type ActionServerOptions[G any] struct {
	// (optional) AcceptGoal decides whether to accept a new goal; a non-nil
	// error rejects it (the client sees accepted=false). It runs on the
	// node's callback goroutine and must not block. Default: accept.
	AcceptGoal func(id action.GoalID, goal *G) error
	// (optional) AcceptCancel decides whether to accept a request to cancel
	// a goal. It runs on the node's callback goroutine. Default: accept.
	AcceptCancel func(id action.GoalID) bool
	// (optional) ResultRetention is how long a finished goal's result stays
	// available to get_result (rcl_action's result_timeout). Default 15 min.
	ResultRetention time.Duration
	// (optional) MaxGoalSize is the largest send_goal request accepted, in
	// bytes of serialized CDR (encapsulation header, request header, goal
	// id and goal). A larger one is dropped before it is decoded, counted
	// (the node's oversized_samples) and logged; its client times out.
	// Default DefaultMaxRequestSize; NoSizeLimit lifts it. cancel_goal and
	// get_result requests are bounded by their types.
	MaxGoalSize int
	// (optional) ClientTimeout, when positive, supervises the client of
	// every running goal: a goal whose client's process sent heartbeats
	// (every action client of this library does, see HeartbeatPeriod) and
	// then none for ClientTimeout (at least three of its periods) is
	// aborted: its context is canceled with the cause ErrClientLost, which
	// the execute function sees as ctx.Done, and the abort is logged. This
	// does not wait for the DDS participant lease (Cyclone's default 10 s),
	// so a server that moves a robot stops within about ClientTimeout of
	// its client's death or freeze. Goals of clients that send no
	// heartbeats (rclcpp, rclpy) are not watched this way; watch them
	// through the graph (action.ClientWatch). Zero: no supervision.
	ClientTimeout time.Duration
}

// ServerGoal is one accepted goal as its execute function sees it.
type ServerGoal[G, F any] struct {
	id       action.GoalID
	goal     *G
	canceled atomic.Bool
	feedback func(*F) error
}

// ID returns the goal's UUID.
func (g *ServerGoal[G, F]) ID() action.GoalID { return g.id }

// Goal returns the goal message (owned by the execute function).
func (g *ServerGoal[G, F]) Goal() *G { return g.goal }

// PublishFeedback sends feedback for this goal on <action>/_action/feedback.
// It is safe to call from any goroutine.
func (g *ServerGoal[G, F]) PublishFeedback(f *F) error { return g.feedback(f) }

// CancelRequested reports whether a cancel request for this goal has been
// accepted (the goal is canceling; its context is done too).
func (g *ServerGoal[G, F]) CancelRequested() bool { return g.canceled.Load() }

// ExecuteFunc runs one accepted goal on its own goroutine. ctx is cancelled
// when a cancel request is accepted or the node closes. Return the result
// and nil to succeed; return an error to abort, or, after a cancel request
// was accepted, to report the goal canceled (the result may then be nil:
// the zero result is sent).
type ExecuteFunc[G, R, F any] func(ctx context.Context, goal *ServerGoal[G, F]) (*R, error)

// ActionServer serves one ROS 2 action: the send_goal, cancel_goal and
// get_result services and the feedback and status topics under
// <name>/_action/. Goals run concurrently, each on its own goroutine.
type ActionServer[G, R, F any] struct {
	n       *Node
	name    string
	at      *rosidl.ActionType
	desc    rosidl.Action[G, R, F]
	execute ExecuteFunc[G, R, F]
	opts    ActionServerOptions[G]
	tracker *action.Tracker[rosidl.Message]

	statusPub   *publisher
	feedbackPub *publisher
	services    []*Service

	mu      sync.Mutex
	cancels map[action.GoalID]context.CancelFunc
	goals   map[action.GoalID]*ServerGoal[G, F]
	closed  bool
	wg      sync.WaitGroup

	rejectLog throttle // a flood of bad goals is counted, logged 1/s
}

// NewActionServer creates a server of the action a (a generated
// descriptor such as nav2_msgs_action.NavigateToPose) named name
// (relative, absolute or "~/"; remapped); execute runs each accepted goal:
//
//	srv, err := ros.NewActionServer(node, "navigate_to_pose", nav2_msgs_action.NavigateToPose,
//	    func(ctx context.Context, g *ros.ServerGoal[nav2_msgs_action.NavigateToPose_Goal, nav2_msgs_action.NavigateToPose_Feedback]) (*nav2_msgs_action.NavigateToPose_Result, error) {
//	        ... g.PublishFeedback(&fb) ... return &nav2_msgs_action.NavigateToPose_Result{}, nil
//	    }, ros.ActionServerOptions[nav2_msgs_action.NavigateToPose_Goal]{})
func NewActionServer[G, R, F any](n *Node, name string, a rosidl.Action[G, R, F], execute ExecuteFunc[G, R, F], opts ActionServerOptions[G],
) (_ *ActionServer[G, R, F], err error) {
	at := a.Type()
	if at == nil {
		return nil, fmt.Errorf("ros: action server %q: no action type (zero descriptor)", name)
	}
	if execute == nil {
		return nil, fmt.Errorf("ros: action server %q: nil execute function", name)
	}
	fqn, err := n.ResolveServiceName(name)
	if err != nil {
		return nil, fmt.Errorf("ros: action server: %w", err)
	}
	s := &ActionServer[G, R, F]{
		n: n, name: fqn, at: at, desc: a, execute: execute, opts: opts,
		tracker: action.NewTracker[rosidl.Message](opts.ResultRetention),
		cancels: map[action.GoalID]context.CancelFunc{},
		goals:   map[action.GoalID]*ServerGoal[G, F]{},
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	prefix := fqn + "/_action/"
	if s.statusPub, err = newPublisher(n, prefix+"status", action_msgs_msg.GoalStatusArray_TypeInfo, QoSLatched, withoutDefaultEvents()); err != nil {
		return nil, err
	}
	if s.feedbackPub, err = newPublisher(n, prefix+"feedback", at.FeedbackMessage, QoSDefault, withoutDefaultEvents()); err != nil {
		return nil, err
	}
	svc, err := newService(n, prefix+"send_goal", at.SendGoal.Request, at.SendGoal.Response,
		func() rosidl.Message { return &actionSendGoalRequest{ti: at.SendGoal.Request, Goal: a.GoalMsg(new(G))} },
		func(ctx context.Context, m rosidl.Message) (rosidl.Message, error) {
			req := m.(*actionSendGoalRequest)
			client, known := requesterOf(ctx)
			return s.onSendGoal(ctx, req.ID, any(req.Goal).(*G), client, known), nil
		}, []EndpointOption{alsoUses(at.Desc), WithMaxSampleSize(opts.MaxGoalSize)})
	if err != nil {
		return nil, err
	}
	s.services = append(s.services, svc)
	svc, err = NewService(n, prefix+"cancel_goal", action_msgs_srv.CancelGoal, s.onCancelGoal)
	if err != nil {
		return nil, err
	}
	s.services = append(s.services, svc)
	svc, err = newDeferredService(n, prefix+"get_result", at.GetResult.Request, at.GetResult.Response,
		func() rosidl.Message { return &actionGoalIDMsg{ti: at.GetResult.Request} },
		func(_ context.Context, m rosidl.Message, reply func(rosidl.Message)) {
			s.tracker.Result(m.(*actionGoalIDMsg).ID, func(st action.Status, res rosidl.Message) {
				if res == nil {
					res = s.desc.ResultMsg(new(R))
				}
				reply(&actionGetResultResponse{ti: at.GetResult.Response, Status: int8(st), Result: res})
			})
		}, QoSServices)
	if err != nil {
		return nil, err
	}
	s.services = append(s.services, svc)
	if opts.ClientTimeout > 0 {
		if err := n.ctx.watchHeartbeats(); err != nil {
			return nil, fmt.Errorf("ros: action server %s: %w", fqn, err)
		}
	}
	return s, nil
}

// Name returns the fully qualified action name.
func (s *ActionServer[G, R, F]) Name() string { return s.name }

// Goals returns the goals the server tracks (active and retained).
func (s *ActionServer[G, R, F]) Goals() []action.Info { return s.tracker.List() }

// onSendGoal runs on the node's callback goroutine. client is the DDS
// participant that sent the goal, when known.
func (s *ActionServer[G, R, F]) onSendGoal(ctx context.Context, id action.GoalID, goal *G, client dds.GUID, known bool) rosidl.Message {
	resp := &actionSendGoalResponse{ti: s.at.SendGoal.Response}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return resp
	}
	if s.opts.AcceptGoal != nil {
		if err := s.opts.AcceptGoal(id, goal); err != nil {
			s.n.Counter(CounterRequestsRejected).Inc()
			if ok, suppressed := s.rejectLog.allow(time.Now()); ok {
				if suppressed > 0 {
					s.n.Logger().Infof("action %s: goal %s rejected: %v (%d more goals rejected since the last report)", s.name, id, err, suppressed)
				} else {
					s.n.Logger().Infof("action %s: goal %s rejected: %v", s.name, id, err)
				}
			}
			return resp
		}
	}
	now := s.n.ext.clock.Now()
	if err := s.tracker.Accept(id, now); err != nil {
		s.n.Logger().Warnf("action %s: %v", s.name, err)
		return resp
	}
	resp.Accepted = true
	resp.Stamp = builtin_interfaces_msg.TimeOf(now)
	// Start, and publish the goal's status, after the response is out, in
	// rclcpp's order: a client applies a status only to a goal whose
	// response it has, so a status that came first would leave the client
	// (ros2 action send_goal) without one until the goal ends, and its
	// Ctrl-C would not cancel. The response may wait for the client's reply
	// reader to match (Service.respond): the start waits with it.
	afterReplyOf(ctx, func() {
		if err := s.n.Post(func() { s.start(id, goal, client, known) }); err != nil {
			s.finish(id, action.EventAbort, nil)
		}
	})
	return resp
}

// statusRepeatDelay is when a started goal's status array is published
// again (see start).
const statusRepeatDelay = 250 * time.Millisecond

// feedbackMatchTimeout bounds how long a goal's first feedback waits for
// the feedback writer to match the goal's client (waitForClientFeedback).
const feedbackMatchTimeout = time.Second

// start moves the goal to executing and runs the execute function. client
// (if known) is the participant that sent the goal.
func (s *ActionServer[G, R, F]) start(id action.GoalID, goal *G, client dds.GUID, known bool) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.finish(id, action.EventAbort, nil)
		return
	}
	ctx, cancelCause := context.WithCancelCause(s.n.runCtx)
	cancel := func() { cancelCause(nil) }
	g := &ServerGoal[G, F]{id: id, goal: goal}
	var first sync.Once
	g.feedback = func(f *F) error {
		if known {
			first.Do(func() { s.waitForClientFeedback(ctx, client) })
		}
		return s.feedbackPub.publish(&actionFeedbackMessage{ti: s.at.FeedbackMessage, ID: id, Feedback: s.desc.FeedbackMsg(f)})
	}
	s.cancels[id] = cancel
	s.goals[id] = g
	s.wg.Add(1)
	s.mu.Unlock()
	if st, _ := s.tracker.Status(id); st == action.StatusCanceling {
		// Canceled between acceptance and start.
		g.canceled.Store(true)
		cancel()
	} else if _, err := s.tracker.Fire(id, action.EventExecute); err != nil {
		s.n.Logger().Warnf("action %s: %v", s.name, err)
	}
	s.publishStatus()
	// Once more a moment later: rclpy (ros2 action send_goal) drops a status
	// that it takes before the goal's response, and then knows the goal only
	// as UNKNOWN until it ends, so Ctrl-C does not cancel it. Seen under
	// load with Humble and Jazzy even with the response written first; a
	// repeated status array is harmless to every client.
	time.AfterFunc(statusRepeatDelay, func() {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if !closed {
			s.publishStatus()
		}
	})
	if s.opts.ClientTimeout > 0 && known && client != s.n.ctx.part.GUID() {
		go s.superviseClient(ctx, cancelCause, id, client)
	}
	go func() {
		defer s.wg.Done()
		defer cancel()
		res, err := s.run(ctx, g)
		st, _ := s.tracker.Status(id)
		var msg rosidl.Message
		if res != nil {
			msg = s.desc.ResultMsg(res)
		}
		switch {
		case err == nil:
			s.finish(id, action.EventSucceed, msg)
		case st == action.StatusCanceling:
			s.finish(id, action.EventCanceled, msg)
		default:
			if cause := context.Cause(ctx); cause != nil && cause != context.Canceled && !errors.Is(err, cause) {
				err = fmt.Errorf("%w (%v)", err, cause)
			}
			s.n.Logger().Warnf("action %s: goal %s aborted: %v", s.name, id, err)
			s.finish(id, action.EventAbort, msg)
		}
	}()
}

// superviseClient cancels a running goal's context with ErrClientLost
// when its client's heartbeats stop (ActionServerOptions.ClientTimeout).
// It ends with the goal.
func (s *ActionServer[G, R, F]) superviseClient(ctx context.Context, cancel context.CancelCauseFunc, id action.GoalID, client dds.GUID) {
	w := clientWatch{timeout: s.opts.ClientTimeout}
	tick := time.NewTicker(HeartbeatPeriod / 2)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			b, heard := s.n.ctx.heartbeatOf(client)
			if age, lost := w.lost(b, heard, now); lost {
				s.n.Counter(CounterGoalsClientLost).Inc()
				s.n.Logger().Warnf("action %s: goal %s: no heartbeat from its client for %v: aborting it", s.name, id, age.Round(time.Millisecond))
				cancel(ErrClientLost)
				return
			}
		}
	}
}

// run calls the execute function, turning a panic into an abort.
func (s *ActionServer[G, R, F]) run(ctx context.Context, g *ServerGoal[G, F]) (res *R, err error) {
	defer func() {
		if r := recover(); r != nil {
			// An action keeps its node running: the goal is aborted, the
			// stack logged and the panic counted.
			stack := debug.Stack()
			s.n.panics.Add(1)
			s.n.Logger().Errorf("action %s: execute panicked: %v\n%s", s.name, r, stack)
			res, err = nil, fmt.Errorf("execute panicked: %v", r)
		}
	}()
	return s.execute(ctx, g)
}

// finish records the terminal status, answers waiting get_result calls,
// publishes the status and schedules the result's expiry.
func (s *ActionServer[G, R, F]) finish(id action.GoalID, ev action.Event, res rosidl.Message) {
	if res == nil {
		res = s.desc.ResultMsg(new(R))
	}
	if _, err := s.tracker.Finish(id, ev, res, time.Now()); err != nil {
		s.n.Logger().Warnf("action %s: %v", s.name, err)
	}
	s.mu.Lock()
	delete(s.cancels, id)
	delete(s.goals, id)
	closed := s.closed
	s.mu.Unlock()
	if !closed {
		// One timer per finished goal; it only drops retained results.
		time.AfterFunc(s.retention(), s.expire)
	}
	s.publishStatus()
}

func (s *ActionServer[G, R, F]) retention() time.Duration {
	if s.opts.ResultRetention > 0 {
		return s.opts.ResultRetention
	}
	return action.DefaultResultRetention
}

func (s *ActionServer[G, R, F]) expire() {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if !closed && len(s.tracker.Expire(time.Now())) > 0 {
		s.publishStatus()
	}
}

// onCancelGoal runs on the node's callback goroutine.
func (s *ActionServer[G, R, F]) onCancelGoal(_ context.Context, req *action_msgs_srv.CancelGoal_Request) (*action_msgs_srv.CancelGoal_Response, error) {
	id := action.GoalID(req.GoalInfo.GoalId.Uuid)
	var before time.Time
	if st := req.GoalInfo.Stamp; st.Sec != 0 || st.Nanosec != 0 {
		before = st.AsTime()
	}
	cands, code := s.tracker.SelectCancel(id, before)
	resp := &action_msgs_srv.CancelGoal_Response{ReturnCode: int8(code), GoalsCanceling: []action_msgs_msg.GoalInfo{}}
	for _, c := range cands {
		if s.opts.AcceptCancel != nil && !s.opts.AcceptCancel(c.ID) {
			continue
		}
		if _, err := s.tracker.Fire(c.ID, action.EventCancelGoal); err != nil {
			continue
		}
		s.mu.Lock()
		if g := s.goals[c.ID]; g != nil {
			g.canceled.Store(true)
		}
		if cancel := s.cancels[c.ID]; cancel != nil {
			cancel()
		}
		s.mu.Unlock()
		resp.GoalsCanceling = append(resp.GoalsCanceling, goalInfoMsg(c))
	}
	if len(cands) > 0 && len(resp.GoalsCanceling) == 0 {
		resp.ReturnCode = int8(action.CancelErrorRejected)
	}
	if len(resp.GoalsCanceling) > 0 {
		s.publishStatus()
	}
	return resp, nil
}

func goalInfoMsg(i action.Info) action_msgs_msg.GoalInfo {
	return action_msgs_msg.GoalInfo{
		GoalId: unique_identifier_msgs_msg.UUID{Uuid: i.ID},
		Stamp:  builtin_interfaces_msg.TimeOf(i.Accepted),
	}
}

// publishStatus sends the complete status list (transient local, so late
// clients see it).
func (s *ActionServer[G, R, F]) publishStatus() {
	list := s.tracker.List()
	msg := &action_msgs_msg.GoalStatusArray{StatusList: make([]action_msgs_msg.GoalStatus, len(list))}
	for i, g := range list {
		msg.StatusList[i] = action_msgs_msg.GoalStatus{GoalInfo: goalInfoMsg(g), Status: int8(g.Status)}
	}
	if err := s.statusPub.publish(msg); err != nil && !errors.Is(err, ErrClosed) {
		s.n.Logger().Warnf("action %s: publishing status: %v", s.name, err)
	}
}

// Close cancels the running goals, waits for their execute functions to
// return, and closes the services and topics.
func (s *ActionServer[G, R, F]) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for _, c := range s.cancels {
		c()
	}
	s.mu.Unlock()
	if !s.n.OnCallbackGoroutine() {
		s.wg.Wait()
	}
	var errs []error
	for _, svc := range s.services {
		if err := svc.Close(); err != nil && !errors.Is(err, ErrClosed) {
			errs = append(errs, err)
		}
	}
	for _, p := range []*publisher{s.feedbackPub, s.statusPub} {
		if p != nil {
			if err := p.Close(); err != nil && !errors.Is(err, ErrClosed) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// waitForClientFeedback waits, for up to feedbackMatchTimeout, until the
// feedback writer has matched a reader of the client participant. The
// feedback topic is volatile: a goal's first feedback, sent as soon as the
// goal starts, would otherwise be lost whenever the client's feedback
// reader and this writer have not discovered each other yet (the goal only
// needed the send_goal service to have matched). Service replies wait for
// their reader in the same way (Service.respond). A client without a
// feedback reader costs its first feedback this wait once.
func (s *ActionServer[G, R, F]) waitForClientFeedback(ctx context.Context, client dds.GUID) {
	deadline := time.Now().Add(feedbackMatchTimeout)
	for {
		eps, err := s.feedbackPub.w.MatchedReaders()
		if err != nil {
			return
		}
		for _, ep := range eps {
			if ep.ParticipantKey == client {
				return
			}
		}
		if time.Now().After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}
