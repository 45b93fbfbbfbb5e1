package rsmnode

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync/atomic"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
	action_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/action_msgs/msg"
	action_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/action_msgs/srv"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	unique_identifier_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/unique_identifier_msgs/msg"
)

// actionStatusQoS is the QoS of an action's status topic (rcl_action):
// reliable, transient local, keep last 1.
var actionStatusQoS = ros.QoSLatched

// ActionNavigator is rsm.Navigator over the nav2_msgs/NavigateToPose action
// protocol, spoken directly on the action's services and status topic
// (<action>/_action/send_goal, get_result, cancel_goal, status), so it works
// with Nav2 (and any rclcpp action server) through the plain service and
// topic support of internal/ros.
//
// A goal's state comes from the status topic and from get_result; a
// result that cannot be decoded (a Humble server's result differs from
// Jazzy's) is ignored and the status topic decides
// (docs/interfaces.md#nav2_msgs-results).
//
// Ready, Navigate and Cancel are called on the node's callback goroutine;
// goal states are updated from other goroutines (atomics).
type ActionNavigator struct {
	n       *ros.Node
	ctx     context.Context
	clients map[string]*navAction
}

type navAction struct {
	name      string
	sendGoal  *ros.Client[nav2_msgs_action.NavigateToPose_SendGoal_Request, nav2_msgs_action.NavigateToPose_SendGoal_Response]
	getResult *ros.Client[nav2_msgs_action.NavigateToPose_GetResult_Request, nav2_msgs_action.NavigateToPose_GetResult_Response]
	cancel    *ros.Client[action_msgs_srv.CancelGoal_Request, action_msgs_srv.CancelGoal_Response]
	goals     map[[16]byte]*navGoal // live goals, updated from the status topic
}

// NewActionNavigator returns a Navigator that creates the clients of an
// action name on first use. Waiting for results ends with ctx.
func NewActionNavigator(ctx context.Context, n *ros.Node) (rsm.Navigator, error) {
	return &ActionNavigator{n: n, ctx: ctx, clients: map[string]*navAction{}}, nil
}

func (a *ActionNavigator) action(name string) (*navAction, error) {
	if c, ok := a.clients[name]; ok {
		return c, nil
	}
	c := &navAction{name: name, goals: map[[16]byte]*navGoal{}}
	var err error
	if c.sendGoal, err = ros.NewClient(a.n, name+"/_action/send_goal", nav2_msgs_action.NavigateToPose_SendGoal); err != nil {
		return nil, fmt.Errorf("action %s: %w", name, err)
	}
	if c.getResult, err = ros.NewClient(a.n, name+"/_action/get_result", nav2_msgs_action.NavigateToPose_GetResult); err != nil {
		return nil, fmt.Errorf("action %s: %w", name, err)
	}
	if c.cancel, err = ros.NewClient(a.n, name+"/_action/cancel_goal", action_msgs_srv.CancelGoal); err != nil {
		return nil, fmt.Errorf("action %s: %w", name, err)
	}
	if _, err = ros.NewSubscription(a.n, name+"/_action/status", actionStatusQoS, func(m *action_msgs_msg.GoalStatusArray) {
		for _, s := range m.StatusList {
			if g, ok := c.goals[s.GoalInfo.GoalId.Uuid]; ok {
				g.setStatus(s.Status)
				if g.State().Done() {
					g.stopWaiting()
					delete(c.goals, s.GoalInfo.GoalId.Uuid)
				}
			}
		}
	}); err != nil {
		return nil, fmt.Errorf("action %s: %w", name, err)
	}
	a.clients[name] = c
	return c, nil
}

// Ready reports whether the action's send_goal and get_result services
// have a server.
func (a *ActionNavigator) Ready(name string) bool {
	c, err := a.action(name)
	if err != nil {
		a.n.Logger().Errorf("rsm: %v", err)
		return false
	}
	return c.sendGoal.ServiceIsReady() && c.getResult.ServiceIsReady()
}

// Navigate sends goal (frame "map", stamped now) and returns at once after
// the server accepted or rejected it; the result is awaited in the
// background.
func (a *ActionNavigator) Navigate(ctx context.Context, name string, goal rsm.Pose) (rsm.NavGoal, error) {
	c, err := a.action(name)
	if err != nil {
		return nil, err
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("goal id: %w", err)
	}
	id[6] = id[6]&0x0f | 0x40 // UUID version 4
	id[8] = id[8]&0x3f | 0x80
	uuid := unique_identifier_msgs_msg.UUID{Uuid: id}
	req := &nav2_msgs_action.NavigateToPose_SendGoal_Request{GoalId: uuid}
	req.Goal.Pose = geometry_msgs_msg.PoseStamped{
		Header: std_msgs_msg.Header{FrameId: MapFrame, Stamp: builtin_interfaces_msg.TimeOf(a.n.Clock().Now())},
		Pose:   PoseToMsg(goal),
	}
	resp, err := call(ctx, c.sendGoal, req)
	if err != nil {
		return nil, err
	}
	waitCtx, stop := context.WithCancel(a.ctx)
	g := &navGoal{action: c, id: uuid, stopWaiting: stop}
	if !resp.Accepted {
		stop()
		g.state.Store(int32(rsm.NavFailed))
		return g, nil
	}
	g.state.Store(int32(rsm.NavActive))
	for k, old := range c.goals { // finished goals whose status never came
		if old.State().Done() {
			old.stopWaiting()
			delete(c.goals, k)
		}
	}
	c.goals[id] = g
	go func() {
		defer stop()
		r, err := c.getResult.Call(waitCtx, &nav2_msgs_action.NavigateToPose_GetResult_Request{GoalId: uuid})
		if err != nil {
			return // undecodable (Humble) result, or the status topic came first, or shutdown
		}
		g.setStatus(r.Status)
	}()
	return g, nil
}

// navGoal is one NavigateToPose goal.
type navGoal struct {
	action      *navAction
	id          unique_identifier_msgs_msg.UUID
	state       atomic.Int32       // rsm.NavState
	stopWaiting context.CancelFunc // ends the get_result call
}

// setStatus applies an action_msgs/GoalStatus status; terminal states stick.
func (g *navGoal) setStatus(s int8) {
	var st rsm.NavState
	switch s {
	case action_msgs_msg.GoalStatus_STATUS_SUCCEEDED:
		st = rsm.NavSucceeded
	case action_msgs_msg.GoalStatus_STATUS_CANCELED, action_msgs_msg.GoalStatus_STATUS_ABORTED:
		st = rsm.NavFailed
	case action_msgs_msg.GoalStatus_STATUS_ACCEPTED, action_msgs_msg.GoalStatus_STATUS_EXECUTING,
		action_msgs_msg.GoalStatus_STATUS_CANCELING:
		st = rsm.NavActive
	default:
		return
	}
	for {
		cur := g.state.Load()
		if rsm.NavState(cur).Done() || g.state.CompareAndSwap(cur, int32(st)) {
			return
		}
	}
}

// State returns the latest known state.
func (g *navGoal) State() rsm.NavState { return rsm.NavState(g.state.Load()) }

// Cancel asks the server to cancel the goal.
func (g *navGoal) Cancel(ctx context.Context) error {
	req := &action_msgs_srv.CancelGoal_Request{GoalInfo: action_msgs_msg.GoalInfo{GoalId: g.id}}
	if _, err := call(ctx, g.action.cancel, req); err != nil {
		return err
	}
	return nil
}
