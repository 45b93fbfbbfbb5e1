package ros

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"

	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	action_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/action_msgs/msg"
	action_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/action_msgs/srv"
	unique_identifier_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/unique_identifier_msgs/msg"
)

// feedbackGrace is how long a goal's feedback callback stays registered
// after its result has been received.
const feedbackGrace = time.Second

// Errors of the action client; test with errors.Is.
var (
	ErrGoalRejected   = errors.New("goal rejected by the action server")
	ErrCancelRejected = errors.New("cancel request rejected")
	ErrUnknownGoal    = errors.New("goal unknown to the action server")
	ErrGoalTerminated = errors.New("goal already finished")
)

// ActionClient sends goals to one ROS 2 action server. It is safe for
// concurrent use; its calls may be made from the node's callbacks, but
// feedback callbacks run on the node's callback goroutine, so feedback is
// delivered only while that goroutine is free.
type ActionClient[G, R, F any] struct {
	n        *Node
	name     string
	at       *rosidl.ActionType
	desc     rosidl.Action[G, R, F]
	sendGoal *client
	getRes   *client
	cancel   *Client[action_msgs_srv.CancelGoal_Request, action_msgs_srv.CancelGoal_Response]
	fbSub    *Subscription
	stSub    *Subscription

	mu       sync.Mutex
	feedback map[action.GoalID]func(*F)
	status   map[action.GoalID]action.Status
	statusCh chan struct{} // closed and replaced on every status message
}

// NewActionClient creates a client of the action name (relative,
// absolute or "~/"; remapped); the generated descriptor a gives the goal,
// result and feedback types:
//
//	cli, err := ros.NewActionClient(node, "navigate_to_pose", nav2_msgs_action.NavigateToPose)
func NewActionClient[G, R, F any](n *Node, name string, a rosidl.Action[G, R, F]) (_ *ActionClient[G, R, F], err error) {
	at := a.Type()
	if at == nil {
		return nil, fmt.Errorf("ros: action client %q: no action type (zero descriptor)", name)
	}
	fqn, err := n.ResolveServiceName(name)
	if err != nil {
		return nil, fmt.Errorf("ros: action client: %w", err)
	}
	c := &ActionClient[G, R, F]{
		n: n, name: fqn, at: at, desc: a,
		feedback: map[action.GoalID]func(*F){},
		status:   map[action.GoalID]action.Status{},
		statusCh: make(chan struct{}),
	}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	// The topics first: the server answers send_goal only after it has
	// discovered our reply reader, and subscriptions are announced in
	// creation order, so by then its feedback writer knows our feedback
	// reader and no feedback of an accepted goal is lost.
	prefix := fqn + "/_action/"
	if c.fbSub, err = newSubscription(n, prefix+"feedback", at.FeedbackMessage, QoSDefault,
		func() rosidl.Message {
			return &actionFeedbackMessage{ti: at.FeedbackMessage, Feedback: a.FeedbackMsg(new(F))}
		},
		func(m rosidl.Message) {
			fm := m.(*actionFeedbackMessage)
			c.mu.Lock()
			f := c.feedback[fm.ID]
			c.mu.Unlock()
			if f != nil {
				f(any(fm.Feedback).(*F))
			}
		}, nil); err != nil {
		return nil, err
	}
	if c.stSub, err = NewSubscription(n, prefix+"status", QoSLatched, c.onStatus); err != nil {
		return nil, err
	}
	if c.sendGoal, err = newClient(n, prefix+"send_goal", at.SendGoal.Request, at.SendGoal.Response,
		func() rosidl.Message { return &actionSendGoalResponse{ti: at.SendGoal.Response} }, []EndpointOption{alsoUses(at.Desc)}); err != nil {
		return nil, err
	}
	if c.getRes, err = newClient(n, prefix+"get_result", at.GetResult.Request, at.GetResult.Response,
		func() rosidl.Message {
			return &actionGetResultResponse{ti: at.GetResult.Response, Result: a.ResultMsg(new(R))}
		}, nil); err != nil {
		return nil, err
	}
	if c.cancel, err = NewClient(n, prefix+"cancel_goal", action_msgs_srv.CancelGoal); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *ActionClient[G, R, F]) onStatus(m *action_msgs_msg.GoalStatusArray) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range m.StatusList {
		id := action.GoalID(s.GoalInfo.GoalId.Uuid)
		if _, mine := c.status[id]; mine {
			c.status[id] = action.Status(s.Status)
		}
	}
	close(c.statusCh)
	c.statusCh = make(chan struct{})
}

// Name returns the fully qualified action name.
func (c *ActionClient[G, R, F]) Name() string { return c.name }

// ServerIsReady reports whether an action server is available, as
// rcl_action_server_is_available does: its three services are ready and
// the feedback and status subscriptions have matched a publisher.
func (c *ActionClient[G, R, F]) ServerIsReady() bool {
	fb, _ := c.fbSub.PublisherCount()
	st, _ := c.stSub.PublisherCount()
	return fb > 0 && st > 0 &&
		c.sendGoal.serviceIsReady() && c.getRes.serviceIsReady() && c.cancel.ServiceIsReady()
}

// WaitForServer blocks until ServerIsReady or ctx is done. It re-checks on
// every graph change (the matches of the client's endpoints included, see
// GraphChanged).
func (c *ActionClient[G, R, F]) WaitForServer(ctx context.Context) error {
	for {
		ch := c.n.ctx.GraphChanged()
		if c.ServerIsReady() {
			return nil
		}
		c.n.ctx.beforeWait()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("ros: waiting for action server %s: %w", c.name, ctx.Err())
		}
	}
}

// ClientGoal is a goal accepted by the server.
type ClientGoal[G, R, F any] struct {
	c        *ActionClient[G, R, F]
	id       action.GoalID
	accepted time.Time
}

// ID returns the goal's UUID.
func (g *ClientGoal[G, R, F]) ID() action.GoalID { return g.id }

// Accepted returns the server's acceptance stamp.
func (g *ClientGoal[G, R, F]) Accepted() time.Time { return g.accepted }

// SendGoal sends goal under a new random UUID and waits for the server's
// answer; a rejected goal returns ErrGoalRejected. onFeedback (may be nil)
// is called, on the node's callback goroutine, with each feedback message
// for this goal until its result has been received.
func (c *ActionClient[G, R, F]) SendGoal(ctx context.Context, goal *G, onFeedback func(*F)) (*ClientGoal[G, R, F], error) {
	id, err := action.NewGoalID(nil)
	if err != nil {
		return nil, fmt.Errorf("ros: action %s: %w", c.name, err)
	}
	c.mu.Lock()
	if onFeedback != nil {
		c.feedback[id] = onFeedback
	}
	c.status[id] = action.StatusUnknown
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.feedback, id)
		delete(c.status, id)
		c.mu.Unlock()
	}
	if goal == nil {
		forget()
		return nil, fmt.Errorf("ros: action %s: nil goal", c.name)
	}
	resp, err := c.sendGoal.call(ctx, &actionSendGoalRequest{ti: c.at.SendGoal.Request, ID: id, Goal: c.desc.GoalMsg(goal)})
	if err != nil {
		forget()
		return nil, fmt.Errorf("ros: action %s: send goal: %w", c.name, err)
	}
	r := resp.(*actionSendGoalResponse)
	if !r.Accepted {
		forget()
		return nil, fmt.Errorf("ros: action %s: goal %s: %w", c.name, id, ErrGoalRejected)
	}
	c.mu.Lock()
	if c.status[id] == action.StatusUnknown {
		c.status[id] = action.StatusAccepted
	}
	c.mu.Unlock()
	return &ClientGoal[G, R, F]{c: c, id: id, accepted: r.Stamp.AsTime()}, nil
}

// Status returns the goal's latest status seen on the status topic
// (StatusAccepted until the first update).
func (g *ClientGoal[G, R, F]) Status() action.Status {
	g.c.mu.Lock()
	defer g.c.mu.Unlock()
	return g.c.status[g.id]
}

// WaitForStatus blocks until the goal's status satisfies cond or ctx is
// done.
func (g *ClientGoal[G, R, F]) WaitForStatus(ctx context.Context, cond func(action.Status) bool) (action.Status, error) {
	for {
		g.c.mu.Lock()
		st, ch := g.c.status[g.id], g.c.statusCh
		g.c.mu.Unlock()
		if cond(st) {
			return st, nil
		}
		g.c.n.ctx.beforeWait()
		select {
		case <-ch:
		case <-ctx.Done():
			return st, fmt.Errorf("ros: action %s: goal %s: waiting for status (now %v): %w", g.c.name, g.id, st, ctx.Err())
		}
	}
}

// Result asks the server for the goal's result and waits until the goal
// has finished (or ctx is done). It returns the result and the final
// status (succeeded, aborted or canceled). A goal the server does not know
// (anymore) gives ErrUnknownGoal. Feedback for the goal is delivered until
// one second after the result has been received.
func (g *ClientGoal[G, R, F]) Result(ctx context.Context) (*R, action.Status, error) {
	resp, err := g.c.getRes.call(ctx, &actionGoalIDMsg{ti: g.c.at.GetResult.Request, ID: g.id})
	if err != nil {
		return nil, action.StatusUnknown, fmt.Errorf("ros: action %s: goal %s: result: %w", g.c.name, g.id, err)
	}
	r := resp.(*actionGetResultResponse)
	st := action.Status(r.Status)
	g.c.mu.Lock()
	g.c.status[g.id] = st
	g.c.mu.Unlock()
	// Feedback and the result travel on different endpoints, so feedback
	// published before the result may still be on its way: keep the
	// callback for a grace period, then forget it on the node's callback
	// goroutine (after any feedback already queued there).
	time.AfterFunc(feedbackGrace, func() {
		if g.c.n.Post(func() { g.c.forgetFeedback(g.id) }) != nil {
			g.c.forgetFeedback(g.id)
		}
	})
	if st == action.StatusUnknown {
		return nil, st, fmt.Errorf("ros: action %s: goal %s: %w", g.c.name, g.id, ErrUnknownGoal)
	}
	return any(r.Result).(*R), st, nil
}

func (c *ActionClient[G, R, F]) forgetFeedback(id action.GoalID) {
	c.mu.Lock()
	delete(c.feedback, id)
	c.mu.Unlock()
}

// Cancel asks the server to cancel the goal. It returns nil once the server
// accepted (the goal is canceling; Result then reports the outcome), or
// ErrCancelRejected, ErrUnknownGoal or ErrGoalTerminated.
func (g *ClientGoal[G, R, F]) Cancel(ctx context.Context) error {
	_, err := g.c.cancelGoals(ctx, g.id, time.Time{})
	return err
}

// CancelAll asks the server to cancel every goal (of any client) accepted
// at or before before; the zero time cancels all goals. It returns the ids
// of the goals now canceling.
func (c *ActionClient[G, R, F]) CancelAll(ctx context.Context, before time.Time) ([]action.GoalID, error) {
	return c.cancelGoals(ctx, action.GoalID{}, before)
}

func (c *ActionClient[G, R, F]) cancelGoals(ctx context.Context, id action.GoalID, before time.Time) ([]action.GoalID, error) {
	req := &action_msgs_srv.CancelGoal_Request{}
	req.GoalInfo.GoalId = unique_identifier_msgs_msg.UUID{Uuid: id}
	if !before.IsZero() {
		req.GoalInfo.Stamp = builtin_interfaces_msg.TimeOf(before)
	}
	resp, err := c.cancel.Call(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("ros: action %s: cancel: %w", c.name, err)
	}
	ids := make([]action.GoalID, len(resp.GoalsCanceling))
	for i, gi := range resp.GoalsCanceling {
		ids[i] = action.GoalID(gi.GoalId.Uuid)
	}
	switch action.CancelCode(resp.ReturnCode) {
	case action.CancelErrorNone:
		if !id.IsZero() && len(ids) == 0 {
			return nil, fmt.Errorf("ros: action %s: cancel goal %s: %w", c.name, id, ErrCancelRejected)
		}
		return ids, nil
	case action.CancelErrorRejected:
		return ids, fmt.Errorf("ros: action %s: cancel: %w", c.name, ErrCancelRejected)
	case action.CancelErrorUnknownGoalID:
		return ids, fmt.Errorf("ros: action %s: cancel goal %s: %w", c.name, id, ErrUnknownGoal)
	case action.CancelErrorGoalTerminated:
		return ids, fmt.Errorf("ros: action %s: cancel goal %s: %w", c.name, id, ErrGoalTerminated)
	}
	return ids, fmt.Errorf("ros: action %s: cancel: unknown return code %d", c.name, resp.ReturnCode)
}

// Execute sends goal, waits for its result and returns it with the final
// status. If ctx is done first, it asks the server to cancel the goal (best
// effort, with a short grace period) and returns ctx's error.
func (c *ActionClient[G, R, F]) Execute(ctx context.Context, goal *G, onFeedback func(*F)) (*R, action.Status, error) {
	g, err := c.SendGoal(ctx, goal, onFeedback)
	if err != nil {
		return nil, action.StatusUnknown, err
	}
	res, st, err := g.Result(ctx)
	if err != nil && ctx.Err() != nil {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = g.Cancel(cctx)
	}
	return res, st, err
}

// Close closes the client's services and subscriptions.
func (c *ActionClient[G, R, F]) Close() error {
	var errs []error
	if c.sendGoal != nil {
		errs = append(errs, c.sendGoal.Close())
	}
	if c.getRes != nil {
		errs = append(errs, c.getRes.Close())
	}
	if c.cancel != nil {
		errs = append(errs, c.cancel.Close())
	}
	if c.fbSub != nil {
		errs = append(errs, c.fbSub.Close())
	}
	if c.stSub != nil {
		errs = append(errs, c.stSub.Close())
	}
	for i, e := range errs {
		if errors.Is(e, ErrClosed) {
			errs[i] = nil
		}
	}
	return errors.Join(errs...)
}
