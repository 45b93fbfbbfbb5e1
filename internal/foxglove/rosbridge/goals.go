package rosbridge

import (
	"context"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/foxglove"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	action_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/action_msgs/msg"
	action_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/action_msgs/srv"
	unique_identifier_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/unique_identifier_msgs/msg"
)

// The Foxglove protocol has no actions: a client (the dashboard's Velma
// form) sends a goal by calling the action's <action>/_action/send_goal
// service and waits for its end with <action>/_action/get_result. The
// bridge is then the goal's ROS 2 client, on the robot, and its
// heartbeats and subscriptions say nothing about the operator behind the
// WebSocket: a server that supervises its clients (docs/multihost.md)
// would let the goal run to its end with the operator cut off.
//
// So the bridge supervises for the server: a goal a WebSocket client sent
// and the server accepted is canceled (<action>/_action/cancel_goal, its
// goal id) when that client disconnects or is lost
// (foxglove.Options.ClientTimeout), unless its result was fetched first
// (its get_result answered: the goal has ended).

const (
	sendGoalSuffix  = "/_action/send_goal"
	getResultSuffix = "/_action/get_result"
	cancelSuffix    = "/_action/cancel_goal"
	// maxTrackedGoals bounds the goals the bridge watches at once; one
	// beyond it is not watched (logged).
	maxTrackedGoals = 1024
	// cancelTimeout bounds a cancel call.
	cancelTimeout = 5 * time.Second
)

// goalKey is a goal's id (a UUID, the first field of send_goal's and
// get_result's requests).
type goalKey [16]byte

// trackedGoal is a goal a client sent through the bridge.
type trackedGoal struct {
	action string        // the action's name, without /_action/...
	ended  chan struct{} // closed when its result was fetched
}

// goals watches the goals clients sent.
type goals struct {
	b *Bridge

	mu      sync.Mutex
	tracked map[goalKey]*trackedGoal
	cancels map[string]*ros.Client[action_msgs_srv.CancelGoal_Request, action_msgs_srv.CancelGoal_Response]
	full    bool // a goal went unwatched (logged once)
}

// goalID reads the goal id at the start of a CDR request (after the
// 4-byte encapsulation header).
func goalID(cdr []byte) (goalKey, bool) {
	var k goalKey
	if len(cdr) < 4+len(k) {
		return k, false
	}
	copy(k[:], cdr[4:])
	return k, true
}

// afterCall is told of every service call a client made through the
// bridge and its response.
func (g *goals) afterCall(ctx context.Context, service string, request, response []byte) {
	switch {
	case strings.HasSuffix(service, sendGoalSuffix):
		// SendGoal_Response: bool accepted first.
		if len(response) < 5 || response[4] == 0 {
			return
		}
		id, ok := goalID(request)
		sess := foxglove.SessionOf(ctx)
		if !ok || sess == nil {
			return
		}
		g.track(strings.TrimSuffix(service, sendGoalSuffix), id, sess)
	case strings.HasSuffix(service, getResultSuffix):
		if id, ok := goalID(request); ok {
			g.ended(id)
		}
	}
}

func (g *goals) track(action string, id goalKey, sess *foxglove.Session) {
	log := g.b.node.Logger()
	cancel, err := g.cancelClient(action)
	if err != nil {
		log.Errorf("goal %s of %s from client %s: cannot cancel it should the client be lost: %v", hex.EncodeToString(id[:]), action, sess.Addr(), err)
		return
	}
	g.mu.Lock()
	if len(g.tracked) >= maxTrackedGoals {
		full := g.full
		g.full = true
		g.mu.Unlock()
		if !full {
			log.Warnf("%d goals of clients are watched: goal %s of %s from client %s (and further ones) is not canceled should its client be lost",
				maxTrackedGoals, hex.EncodeToString(id[:]), action, sess.Addr())
		}
		return
	}
	tg := &trackedGoal{action: action, ended: make(chan struct{})}
	g.tracked[id] = tg
	g.mu.Unlock()
	// The goal is canceled when its client goes silent after it was
	// sent: Silent is read now, while the client is heard (the send_goal
	// call was answered to it).
	silent := sess.Silent()
	go func() {
		var why string
		select {
		case <-tg.ended:
			return
		case <-g.b.rc.Done():
			return
		case <-sess.Done():
			why = "disconnected"
		case <-silent:
			why = "lost (nothing heard from it for client_timeout)"
		}
		g.ended(id)
		ctx, stop := context.WithTimeout(context.Background(), cancelTimeout)
		defer stop()
		goal := hex.EncodeToString(id[:])
		log.Warnf("client %s %s: canceling its goal %s of %s", sess.Addr(), why, goal, action)
		resp, err := cancel.Call(ctx, &action_msgs_srv.CancelGoal_Request{GoalInfo: action_msgs_msg.GoalInfo{
			GoalId: unique_identifier_msgs_msg.UUID{Uuid: id}}})
		switch {
		case err != nil:
			log.Errorf("canceling goal %s of %s (client %s %s): %v", goal, action, sess.Addr(), why, err)
		case resp.ReturnCode == action_msgs_srv.CancelGoal_Response_ERROR_NONE:
			log.Infof("goal %s of %s canceled (return code 0)", goal, action)
		case resp.ReturnCode == action_msgs_srv.CancelGoal_Response_ERROR_GOAL_TERMINATED,
			resp.ReturnCode == action_msgs_srv.CancelGoal_Response_ERROR_UNKNOWN_GOAL_ID:
			// It ended without its result being fetched through the bridge.
			log.Infof("goal %s of %s had already ended (cancel return code %d)", goal, action, resp.ReturnCode)
		default:
			log.Errorf("canceling goal %s of %s (client %s %s): the server refused (return code %d)", goal, action, sess.Addr(), why, resp.ReturnCode)
		}
	}()
}

// ended forgets goal id: its result was fetched, or it is being canceled.
func (g *goals) ended(id goalKey) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if tg, ok := g.tracked[id]; ok {
		close(tg.ended)
		delete(g.tracked, id)
	}
}

// cancelClient returns the client of action's cancel_goal service, made
// with the first goal of the action so that it has found the server by the
// time it is needed.
func (g *goals) cancelClient(action string) (*ros.Client[action_msgs_srv.CancelGoal_Request, action_msgs_srv.CancelGoal_Response], error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if c, ok := g.cancels[action]; ok {
		return c, nil
	}
	c, err := ros.NewClient(g.b.node, action+cancelSuffix, action_msgs_srv.CancelGoal)
	if err != nil {
		return nil, err
	}
	g.cancels[action] = c
	return c, nil
}
