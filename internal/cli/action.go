package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/msgyaml"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

func actionVerbs() map[string]verb {
	return map[string]verb{
		"action list": {
			usage: "action list [-t] [-c]",
			help:  "List the actions served in the graph (-t with types, -c only count them).",
			run:   (*App).actionList,
		},
		"action info": {
			usage: "action info ACTION [-t]",
			help:  "Print the action clients and servers of an action.",
			run:   (*App).actionInfo,
		},
		"action send_goal": {
			usage: "action send_goal ACTION TYPE [GOAL] [-f|--feedback] [--timeout S]",
			help: "Send a goal built from YAML GOAL, wait for the result and print it (with --feedback also\n" +
				"every feedback message). Ctrl-C cancels the goal. With --timeout, waiting for the server\n" +
				"and the result takes at most S seconds; then the goal is canceled and the command fails.",
			run: (*App).actionSendGoal,
		},
	}
}

const actionSendGoalSuffix = "/_action/send_goal"

// actionsInGraph derives actions from the hidden send_goal services.
func actionsInGraph(s *session) []ros.NameAndTypes {
	return actionsOf(s.rc.ServiceNamesAndTypes())
}

func (a *App) actionList(ctx context.Context, args []string) error {
	s, p, err := a.graphSession(ctx, args, flagSpec{"-t": false, "--show-types": false, "-c": false, "--count-actions": false},
		0, "action list [-t] [-c]")
	if err != nil {
		return err
	}
	defer s.close()
	acts := actionsInGraph(s)
	if p.has("-c", "--count-actions") {
		fmt.Fprintln(a.Stdout, len(acts))
		return nil
	}
	printNames(a.Stdout, acts, p.has("-t", "--show-types"))
	return nil
}

func (a *App) actionInfo(ctx context.Context, args []string) error {
	s, p, err := a.graphSession(ctx, args, flagSpec{"-t": false, "--show-types": false, "-c": false, "--count": false},
		1, "action info ACTION [-t]")
	if err != nil {
		return err
	}
	defer s.close()
	fqn, err := s.node.ResolveServiceName(p.pos[0])
	if err != nil {
		return fmt.Errorf("action: %w", err)
	}
	var types []string
	for _, act := range actionsInGraph(s) {
		if act.Name == fqn {
			types = act.Types
		}
	}
	type entry struct{ node, typ string }
	var servers, clients []entry
	for _, n := range s.rc.NodeNames() {
		srvs, err := s.rc.ServiceNamesAndTypesByNode(n.Name, n.Namespace)
		if err != nil {
			continue
		}
		clis, err := s.rc.ClientNamesAndTypesByNode(n.Name, n.Namespace)
		if err != nil {
			continue
		}
		for _, act := range actionsOf(srvs) {
			if act.Name == fqn {
				servers = append(servers, entry{n.FullyQualifiedName(), strings.Join(act.Types, ", ")})
			}
		}
		for _, act := range actionsOf(clis) {
			if act.Name == fqn {
				clients = append(clients, entry{n.FullyQualifiedName(), strings.Join(act.Types, ", ")})
			}
		}
	}
	if len(types) == 0 && len(clients) == 0 {
		return fmt.Errorf("unknown action '%s'", fqn)
	}
	fmt.Fprintf(a.Stdout, "Action: %s\n", fqn)
	list := func(title string, es []entry) {
		fmt.Fprintf(a.Stdout, "Action %s: %d\n", title, len(es))
		if p.has("-c", "--count") {
			return
		}
		sort.Slice(es, func(i, j int) bool { return es[i].node < es[j].node })
		for _, e := range es {
			if p.has("-t", "--show-types") {
				fmt.Fprintf(a.Stdout, "    %s [%s]\n", e.node, e.typ)
			} else {
				fmt.Fprintf(a.Stdout, "    %s\n", e.node)
			}
		}
	}
	list("clients", clients)
	list("servers", servers)
	return nil
}

// goalStatusNames are the action_msgs/GoalStatus values as ros2 prints them.
var goalStatusNames = map[int8]string{1: "ACCEPTED", 2: "EXECUTING", 3: "CANCELING", 4: "SUCCEEDED", 5: "CANCELED", 6: "ABORTED"}

func goalStatusName(s int8) string {
	if n, ok := goalStatusNames[s]; ok {
		return n
	}
	return "UNKNOWN"
}

// actionTypeOf resolves an action type name with a clear error.
func (a *App) actionTypeOf(name string) (*rosidl.ActionType, error) {
	at, err := a.Registry.Action(name)
	if err != nil || at.Goal == nil || at.Goal.New == nil || at.SendGoal == nil || at.GetResult == nil || at.FeedbackMessage == nil {
		return nil, fmt.Errorf("the passed action type %q is invalid or unknown (see 'fsmnodes interface list -a')", name)
	}
	return at, nil
}

// lockedPrinter serializes output from the feedback callback and the main
// goroutine.
type lockedPrinter struct {
	mu  sync.Mutex
	app *App
}

func (l *lockedPrinter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.app.Stdout, format, args...)
}

func (a *App) actionSendGoal(ctx context.Context, args []string) error {
	p, err := parseFlags(args, flagSpec{"-f": false, "--feedback": false, "--timeout": true, "--no-daemon": false})
	if err != nil {
		return err
	}
	if len(p.pos) < 2 || len(p.pos) > 3 {
		return usagef("usage: fsmnodes action send_goal ACTION TYPE [GOAL] [-f|--feedback] [--timeout S]")
	}
	// timedOut tells an expired --timeout from Ctrl-C (which cancels the
	// outer context): both end ctx.
	timedOut := func() bool { return false }
	if p.has("--timeout") {
		t, err := positiveFloat(p, "1", "--timeout")
		if err != nil {
			return err
		}
		outer := ctx
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(t*float64(time.Second)))
		defer cancel()
		timedOut = func() bool { return outer.Err() == nil && ctx.Err() == context.DeadlineExceeded }
	}
	at, err := a.actionTypeOf(p.pos[1])
	if err != nil {
		return err
	}
	values := "{}"
	if len(p.pos) == 3 {
		values = p.pos[2]
	}
	g, err := newGoalRequest(at, values)
	if err != nil {
		return err
	}
	s, err := a.open(ctx, "send_goal")
	if err != nil {
		return err
	}
	defer s.close()
	fqn, err := s.node.ResolveServiceName(p.pos[0])
	if err != nil {
		return fmt.Errorf("action: %w", err)
	}
	out := &lockedPrinter{app: a}
	ep, err := a.goalEndpoints(s, fqn, at, g.uuid, p.has("-f", "--feedback"), out)
	if err != nil {
		return err
	}
	defer ep.close()
	// Wait as ros2 action send_goal does (rcl_action_server_is_available):
	// the services are ready and the feedback and status topics have
	// matched the server's publishers.
	out.printf("Waiting for an action server to become available...\n")
	if err := waitActionServer(ctx, s.rc, []*ros.DynamicClient{ep.send, ep.result}, ep.subs); err != nil {
		if timedOut() {
			return fmt.Errorf("action server %s did not become available within the timeout", fqn)
		}
		return nilIfCanceled(err)
	}
	if err := settle(ctx); err != nil {
		if timedOut() {
			return fmt.Errorf("action server %s did not become available within the timeout", fqn)
		}
		return nilIfCanceled(err)
	}
	goalText, err := msgyaml.Marshal(g.goal)
	if err != nil {
		return err
	}
	out.printf("Sending goal:\n     %s\n", goalText)
	resp, err := ep.send.Call(ctx, g.request)
	if err != nil {
		if timedOut() {
			return fmt.Errorf("action server %s did not answer the goal within the timeout", fqn)
		}
		return nilIfCanceled(fmt.Errorf("exception while sending goal: %w", err))
	}
	accepted, err := msgyaml.Field(resp, "accepted")
	if err != nil {
		return err
	}
	if ok, _ := accepted.(bool); !ok {
		out.printf("Goal was rejected.\n")
		return nil
	}
	out.printf("Goal accepted with ID: %s\n\n", hex.EncodeToString(g.uuid[:]))
	return a.goalResult(ctx, s, fqn, at, g.uuid, ep.result, out, timedOut)
}

// goalRequest is a send_goal request: the goal under a new random id.
type goalRequest struct {
	uuid    [16]byte
	goal    rosidl.Message
	request rosidl.Message
}

// newGoalRequest builds the goal of type at from YAML values.
func newGoalRequest(at *rosidl.ActionType, values string) (goalRequest, error) {
	var g goalRequest
	var err error
	if g.goal, err = buildMessage(at.Goal, values); err != nil {
		return g, err
	}
	if _, err := rand.Read(g.uuid[:]); err != nil {
		return g, fmt.Errorf("goal id: %w", err)
	}
	g.request = at.SendGoal.Request.New()
	if err := msgyaml.SetField(g.request, "goal_id.uuid", g.uuid); err != nil {
		return g, fmt.Errorf("build the send_goal request: %w", err)
	}
	if err := msgyaml.SetField(g.request, "goal", g.goal); err != nil {
		return g, fmt.Errorf("build the send_goal request: %w", err)
	}
	return g, nil
}

// goalEndpoints are send_goal's subscriptions (status, feedback) and
// service clients (send_goal, get_result).
type goalEndpoints struct {
	subs         []*ros.Subscription
	send, result *ros.DynamicClient
}

// close closes the service clients (the subscriptions go with the node).
func (ep *goalEndpoints) close() {
	ep.send.Close()
	ep.result.Close()
}

// goalEndpoints creates the endpoints of a client of action fqn: the
// topics first, as internal/ros's ActionClient does — the server answers
// send_goal only once it knows the client's reply reader, and endpoints
// are announced in creation order, so by the time the goal is accepted
// the server's feedback writer has matched the feedback reader and the
// first feedback is not lost. The status topic is listened to as every
// rclcpp/rclpy action client does: servers that stop a robot when its
// client goes (a killed send_goal) see this process as the goal's client.
// With showFeedback, the feedback of goal uuid is printed.
func (a *App) goalEndpoints(s *session, fqn string, at *rosidl.ActionType, uuid [16]byte, showFeedback bool, out *lockedPrinter) (*goalEndpoints, error) {
	ep := &goalEndpoints{}
	statusT, err := a.Registry.Message("action_msgs/msg/GoalStatusArray")
	if err != nil {
		return nil, err
	}
	stSub, err := ros.NewDynamicSubscription(s.node, fqn+"/_action/status", statusT, ros.QoSLatched, func(rosidl.Message) {})
	if err != nil {
		return nil, fmt.Errorf("status of %s: %w", fqn, err)
	}
	ep.subs = append(ep.subs, stSub)
	fbSub, err := ros.NewDynamicSubscription(s.node, fqn+"/_action/feedback", at.FeedbackMessage, ros.QoSDefault,
		func(m rosidl.Message) {
			if !showFeedback {
				return
			}
			id, err := msgyaml.Field(m, "goal_id")
			if err != nil {
				return
			}
			if raw, err := msgyaml.Field(id, "uuid"); err != nil || raw != any(uuid) {
				return
			}
			fb, err := msgyaml.Field(m, "feedback")
			if err != nil {
				return
			}
			text, err := msgyaml.Marshal(fb)
			if err == nil {
				out.printf("Feedback:\n    %s\n", text)
			}
		})
	if err != nil {
		return nil, fmt.Errorf("feedback of %s: %w", fqn, err)
	}
	ep.subs = append(ep.subs, fbSub)
	if ep.send, err = ros.NewDynamicClient(s.node, fqn+actionSendGoalSuffix, at.SendGoal); err != nil {
		return nil, fmt.Errorf("action client %s: %w", fqn, err)
	}
	if ep.result, err = ros.NewDynamicClient(s.node, fqn+"/_action/get_result", at.GetResult); err != nil {
		ep.send.Close()
		return nil, fmt.Errorf("action client %s: %w", fqn, err)
	}
	return ep, nil
}

// goalResult waits for the result of accepted goal uuid and prints it with
// its status. When ctx ends first (Ctrl-C, --timeout) the goal is
// canceled.
func (a *App) goalResult(ctx context.Context, s *session, fqn string, at *rosidl.ActionType, uuid [16]byte,
	resultCli *ros.DynamicClient, out *lockedPrinter, timedOut func() bool) error {
	resultReq := at.GetResult.Request.New()
	if err := msgyaml.SetField(resultReq, "goal_id.uuid", uuid); err != nil {
		return err
	}
	res, err := resultCli.Call(ctx, resultReq)
	if err != nil {
		if timedOut() {
			if err := a.cancelGoal(s, fqn, uuid, out); err != nil {
				return fmt.Errorf("goal did not finish within the timeout; %w", err)
			}
			return errors.New("goal did not finish within the timeout (canceled)")
		}
		if ctx.Err() != nil {
			return a.cancelGoal(s, fqn, uuid, out)
		}
		return fmt.Errorf("exception while getting result: %w", err)
	}
	status, err := msgyaml.Field(res, "status")
	if err != nil {
		return err
	}
	result, err := msgyaml.Field(res, "result")
	if err != nil {
		return err
	}
	text, err := msgyaml.Marshal(result)
	if err != nil {
		return err
	}
	// Feedback that arrived before the result may still wait in the
	// node's callback queue: let it print first.
	flushed := make(chan struct{})
	if s.node.Post(func() { close(flushed) }) == nil {
		select {
		case <-flushed:
		case <-ctx.Done():
		}
	}
	st, _ := status.(int8)
	out.printf("Result:\n    %s\n", text)
	out.printf("Goal finished with status: %s\n", goalStatusName(st))
	return nil
}

// waitActionServer waits until every client's service is ready and every
// subscription has matched a publisher, or ctx ends. Both are graph
// changes of rc (matches included), so it waits on them.
func waitActionServer(ctx context.Context, rc *ros.Context, clients []*ros.DynamicClient, subs []*ros.Subscription) error {
	var countErr error
	err := rc.WaitForGraph(ctx, func() bool {
		for _, c := range clients {
			if !c.ServiceIsReady() {
				return false
			}
		}
		for _, sub := range subs {
			n, err := sub.PublisherCount()
			if err != nil {
				countErr = err
				return true
			}
			if n == 0 {
				return false
			}
		}
		return true
	})
	if countErr != nil {
		return countErr
	}
	return err
}

// cancelGoal asks the server to cancel goal uuid after Ctrl-C.
func (a *App) cancelGoal(s *session, fqn string, uuid [16]byte, out *lockedPrinter) error {
	st, err := a.Registry.Service("action_msgs/srv/CancelGoal")
	if err != nil {
		return err
	}
	cli, err := ros.NewDynamicClient(s.node, fqn+"/_action/cancel_goal", st)
	if err != nil {
		return fmt.Errorf("cancel client %s: %w", fqn, err)
	}
	defer cli.Close()
	req := st.Request.New()
	if err := msgyaml.SetField(req, "goal_info.goal_id.uuid", uuid); err != nil {
		return err
	}
	out.printf("Canceling goal...\n")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cli.Call(ctx, req)
	if err != nil {
		return fmt.Errorf("exception while canceling goal: %w", err)
	}
	goals, err := msgyaml.Field(resp, "goals_canceling")
	if err != nil {
		return err
	}
	if n := msgyaml.Len(goals); n != 1 {
		return fmt.Errorf("failed to cancel goal (%d goals canceling)", n)
	}
	out.printf("Goal canceled.\n")
	return nil
}
