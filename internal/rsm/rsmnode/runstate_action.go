package rsmnode

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
	"github.com/fsmnodes/fsmnodes/internal/rsm/goallist"
	rsm_msgs_action "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/action"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
)

// runStateClient is the action client of one RunState server.
type runStateClient = ros.ActionClient[rsm_msgs_action.RunState_Goal, rsm_msgs_action.RunState_Result, rsm_msgs_action.RunState_Feedback]

// hookClient is the client of a plugin node's <action>/hook service.
type hookClient = ros.Client[rsm_msgs_srv.RunStateHook_Request, rsm_msgs_srv.RunStateHook_Response]

// HookService is the name of a plugin node's optional hook service
// relative to its RunState action: <action>/hook.
const HookService = "/hook"

// ActionStateRunner is rsm.StateRunner over rsm_msgs/action/RunState: one
// action client per action name, created on first use, with a client of
// the plugin node's optional <action>/hook service beside it
// (rsm.HookCaller). Ready, Run and CallHook are called on the node's
// callback goroutine; the goals' results are awaited on goroutines of their
// own until the goal ends, is canceled or ctx ends.
type ActionStateRunner struct {
	n       *ros.Node
	ctx     context.Context
	clients map[string]*runStateClient
	hooks   map[string]*hookClient
}

// NewActionStateRunner returns the RunState client side of rsmNode.
func NewActionStateRunner(ctx context.Context, n *ros.Node) *ActionStateRunner {
	return &ActionStateRunner{n: n, ctx: ctx, clients: map[string]*runStateClient{}, hooks: map[string]*hookClient{}}
}

// client returns the action client of name, creating it and the hook
// client on first use (so the hook service is discovered while the state
// waits for the server and runs its goal).
func (r *ActionStateRunner) client(name string) (*runStateClient, error) {
	if c, ok := r.clients[name]; ok {
		return c, nil
	}
	c, err := ros.NewActionClient(
		r.n, name, rsm_msgs_action.RunState)
	if err != nil {
		return nil, err
	}
	h, err := ros.NewClient(r.n, name+HookService, rsm_msgs_srv.RunStateHook)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	r.clients[name], r.hooks[name] = c, h
	return c, nil
}

var _ rsm.HookCaller = (*ActionStateRunner)(nil)

// CallHook asks the plugin node serving name how its running state answers
// req (at most CallTimeout). A node without the hook service gives an
// error wrapping rsm.ErrUnavailable at once.
func (r *ActionStateRunner) CallHook(ctx context.Context, name string, req rsm.HookRequest) (rsm.HookReply, error) {
	if _, err := r.client(name); err != nil {
		return rsm.HookReply{}, err
	}
	resp, err := call(ctx, r.hooks[name], &rsm_msgs_srv.RunStateHook_Request{
		Hook: uint8(req.Hook), Interrupt: uint8(req.Interrupt), StateName: req.StateName})
	if err != nil {
		return rsm.HookReply{}, err
	}
	return rsm.HookReply{Handled: resp.Handled, Reply: rsm.Reply{Success: resp.Success, Message: resp.Message},
		NextState: resp.NextState}, nil
}

// Ready reports whether a RunState server serves name.
func (r *ActionStateRunner) Ready(name string) bool {
	c, err := r.client(name)
	if err != nil {
		r.n.Logger().Errorf("rsm: %v", err)
		return false
	}
	return c.ServerIsReady()
}

// Run sends req and returns once the server has accepted it (at most
// CallTimeout). The result is awaited in the background.
func (r *ActionStateRunner) Run(ctx context.Context, name string, req rsm.RunRequest) (rsm.RemoteRun, error) {
	c, err := r.client(name)
	if err != nil {
		return nil, err
	}
	if !c.ServerIsReady() {
		return nil, fmt.Errorf("action %s: %w", c.Name(), rsm.ErrUnavailable)
	}
	goal := &rsm_msgs_action.RunState_Goal{StateName: req.StateName, Goal: PoseToMsg(req.Goal), Interrupt: req.Interrupt}
	run := &actionRun{}
	sctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	g, err := c.SendGoal(sctx, goal, func(f *rsm_msgs_action.RunState_Feedback) {
		run.mu.Lock()
		run.shown = f.StateName
		run.mu.Unlock()
	})
	if err != nil {
		return nil, err
	}
	waitCtx, stop := context.WithCancel(r.ctx)
	run.goal, run.stop, run.ready = g, stop, c.ServerIsReady
	go func() {
		defer stop()
		res, st, err := g.Result(waitCtx)
		run.mu.Lock()
		defer run.mu.Unlock()
		switch {
		case waitCtx.Err() != nil:
			// Canceled by the state, or shutdown: nobody asks any more.
		case err != nil:
			run.status, run.res.Reason = rsm.RunLost, err.Error()
		case st == action.StatusSucceeded:
			run.status, run.res = rsm.RunSucceeded, rsm.RunResult{NextState: res.NextState, Reason: res.Reason}
		case st == action.StatusCanceled:
			run.status, run.res = rsm.RunCanceled, rsm.RunResult{NextState: res.NextState, Reason: res.Reason}
		case st == action.StatusAborted:
			run.status, run.res = rsm.RunAborted, rsm.RunResult{NextState: res.NextState, Reason: res.Reason}
		default:
			run.status, run.res.Reason = rsm.RunLost, fmt.Sprintf("get_result answered status %v", st)
		}
	}()
	return run, nil
}

// actionRun is one RunState goal of ActionStateRunner.
type actionRun struct {
	goal  *ros.ClientGoal[rsm_msgs_action.RunState_Goal, rsm_msgs_action.RunState_Result, rsm_msgs_action.RunState_Feedback]
	stop  context.CancelFunc // ends the wait for the result
	ready func() bool        // whether the server is still there

	mu     sync.Mutex
	status rsm.RunStatus
	res    rsm.RunResult
	shown  string
}

// Status returns the goal's state and result.
func (a *actionRun) Status() (rsm.RunStatus, rsm.RunResult) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.status, a.res
}

// ShownName returns the latest feedback's state name.
func (a *actionRun) ShownName() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.shown
}

// Cancel stops waiting for the result and, if the server is still there,
// asks it to cancel the goal (at most CallTimeout). A goal that has just
// ended is no error.
func (a *actionRun) Cancel(ctx context.Context) error {
	a.stop()
	if !a.ready() {
		return nil // the server left: nothing to cancel
	}
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	err := a.goal.Cancel(ctx)
	if errors.Is(err, ros.ErrGoalTerminated) || errors.Is(err, ros.ErrUnknownGoal) {
		return nil
	}
	return err
}

// ParseRoutinePlugins reads the routine_plugins parameter: entries
// "<routine>=<plugin>", e.g. "Stairs=action:/my_robot/stairs".
func ParseRoutinePlugins(entries []string) (map[string]string, error) {
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		routine, plugin, ok := strings.Cut(e, "=")
		routine, plugin = strings.TrimSpace(routine), strings.TrimSpace(plugin)
		if !ok || routine == "" || plugin == "" {
			return nil, fmt.Errorf("parameter routine_plugins: entry %q: want <routine>=<plugin>, e.g. Stairs=action:/my_robot/stairs", e)
		}
		if _, dup := out[routine]; dup {
			return nil, fmt.Errorf("parameter routine_plugins: routine %q listed twice", routine)
		}
		out[routine] = plugin
	}
	return out, nil
}

// StateServer is rsm.StateServer (kept here for the node-side API).
type StateServer = rsm.StateServer

// PluginClientTimeout is how long rsmNode may send no heartbeat before a
// plugin's running RunState goal is aborted (its context canceled with the
// cause ros.ErrClientLost): a plugin state that drives the robot stops
// soon after rsmNode dies or freezes.
const PluginClientTimeout = time.Second

// ServeRunState serves the RunState action name on n with s. Goals run on
// goroutines of their own; each carries its own context. If s also
// implements rsm.StateHooks, the service <name>/hook answers rsmNode's
// hook requests with it.
func ServeRunState(n *ros.Node, name string, s StateServer) error {
	if hs, ok := s.(rsm.StateHooks); ok {
		if err := serveHooks(n, name, hs); err != nil {
			return err
		}
	}
	log := n.Logger()
	_, err := ros.NewActionServer(n, name, rsm_msgs_action.RunState,
		func(ctx context.Context, g *ros.ServerGoal[rsm_msgs_action.RunState_Goal, rsm_msgs_action.RunState_Feedback]) (*rsm_msgs_action.RunState_Result, error) {
			goal := g.Goal()
			req := rsm.RunRequest{StateName: goal.StateName, Goal: PoseFromMsg(&goal.Goal), Interrupt: goal.Interrupt}
			show := func(name string) {
				if err := g.PublishFeedback(&rsm_msgs_action.RunState_Feedback{StateName: name}); err != nil {
					log.Warnf("rsm plugin: feedback %q: %v", name, err)
				}
			}
			res, err := s.RunState(ctx, req, show)
			out := &rsm_msgs_action.RunState_Result{NextState: res.NextState, Reason: res.Reason}
			if err != nil {
				if out.Reason == "" {
					out.Reason = err.Error()
				}
				return out, err
			}
			return out, nil
		}, ros.ActionServerOptions[rsm_msgs_action.RunState_Goal]{ClientTimeout: PluginClientTimeout})
	if err != nil {
		return fmt.Errorf("RunState server %s: %w", name, err)
	}
	return nil
}

// serveHooks serves <name>/hook (rsm_msgs/srv/RunStateHook) with hs. A
// request with an unknown hook or interrupt, or an error of hs, is
// answered handled=false (rsmNode then applies its common handling) with
// the reason as the message.
func serveHooks(n *ros.Node, name string, hs rsm.StateHooks) error {
	log := n.Logger()
	_, err := ros.NewService(n, name+HookService, rsm_msgs_srv.RunStateHook,
		func(ctx context.Context, req *rsm_msgs_srv.RunStateHook_Request) (*rsm_msgs_srv.RunStateHook_Response, error) {
			if req.Hook > uint8(rsm.HookInterrupt) || req.Interrupt > uint8(rsm.SimpleGoalStopInterrupt) {
				return &rsm_msgs_srv.RunStateHook_Response{
					Message: fmt.Sprintf("unknown hook %d or interrupt %d", req.Hook, req.Interrupt)}, nil
			}
			rep, err := hs.OnHook(ctx, rsm.HookRequest{Hook: rsm.Hook(req.Hook), Interrupt: rsm.Interrupt(req.Interrupt), StateName: req.StateName})
			if err != nil {
				log.Warnf("rsm plugin: %s: %v; rsmNode handles it the common way", rsm.Hook(req.Hook), err)
				return &rsm_msgs_srv.RunStateHook_Response{Message: err.Error()}, nil
			}
			return &rsm_msgs_srv.RunStateHook_Response{Handled: rep.Handled, Success: rep.Reply.Success,
				Message: rep.Reply.Message, NextState: rep.NextState}, nil
		})
	if err != nil {
		return fmt.Errorf("RunState hook service %s%s: %w", name, HookService, err)
	}
	return nil
}

// ExamplePluginNodeName is the example plugin node's name.
const ExamplePluginNodeName = "example_rsm_plugin"

// ExamplePluginAction is the RunState action the example plugin serves,
// relative to its namespace: state_interface selects it with
// calculate_goal_plugin "action:goal_list" in the same namespace.
const ExamplePluginAction = "goal_list"

// RunExamplePlugin runs the example plugin node until shutdown: the
// goal-list calculate-goal state (internal/rsm/goallist) served as
// RunState action goal_list. Parameters: goals (x, y pairs in map),
// dwell (seconds each goal's name is shown, 1.0).
func RunExamplePlugin(ctx context.Context, args []string) error {
	return ros.Run(ctx, args, ExamplePluginNodeName, func(_ context.Context, n *ros.Node) error {
		d := ros.NewDeclarer(n)
		xy := param.Declare(d, "goals", []float64{}, param.ReadOnly("goals to visit in order, x, y pairs in the map frame",
			"the goal list is built at start-up"), nil)
		dwell := param.DeclareDuration(d, "dwell", time.Second, param.ReadOnly(
			"seconds each goal's name is shown before it is handed to navigation", "the goal list is built at start-up"), nil)
		if err := d.Err(); err != nil {
			return err
		}
		store, err := newRemoteStore(n)
		if err != nil {
			return err
		}
		list, err := goallist.New(store, xy, dwell)
		if err != nil {
			return fmt.Errorf("parameters goals/dwell: %w", err)
		}
		return ServeRunState(n, ExamplePluginAction, list)
	})
}

// RunPlugin runs a plugin node named node until shutdown: it serves the
// RunState action (relative to the node's namespace unless absolute) with
// the StateServer newServer makes; store reaches the service provider's
// /rsm services.
func RunPlugin(ctx context.Context, args []string, node, action string, newServer func(store rsm.DataStore) (StateServer, error)) error {
	return RunPluginNode(ctx, args, node, action, func(p PluginSetup) (StateServer, error) { return newServer(p.Store) })
}

// PluginSetup is what the constructor of a plugin node's StateServer gets
// from RunPluginNode.
type PluginSetup struct {
	// Node is the plugin node.
	Node *ros.Node
	// Params declares the node's own parameters (set with --ros-args -p or
	// --params-file like any node's). RunPluginNode checks Params.Err once
	// the constructor returns: a bad value ends the node with the reason
	// before it serves anything.
	Params *param.Declarer
	// Store calls the service provider's rsm/ services.
	Store rsm.DataStore
}

// RunPluginNode is RunPlugin for a constructor that also reads the node's
// parameters (PluginSetup).
func RunPluginNode(ctx context.Context, args []string, node, action string, newServer func(PluginSetup) (StateServer, error)) error {
	return ros.Run(ctx, args, node, func(_ context.Context, n *ros.Node) error {
		store, err := newRemoteStore(n)
		if err != nil {
			return err
		}
		d := ros.NewDeclarer(n)
		s, err := newServer(PluginSetup{Node: n, Params: d, Store: store})
		if err := errors.Join(d.Err(), err); err != nil {
			return err
		}
		return ServeRunState(n, action, s)
	})
}

// RunStateInterfaceWith runs rsmNode until shutdown with the plugin states
// of reg (nil: the built-in ones).
func RunStateInterfaceWith(ctx context.Context, args []string, reg *rsm.Registry) error {
	return ros.Run(ctx, args, StateInterfaceNodeName, func(ctx context.Context, n *ros.Node) error {
		_, err := NewStateInterface(ctx, n, StateInterfaceOptions{Registry: reg})
		return err
	})
}
