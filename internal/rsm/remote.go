package rsm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ActionPluginPrefix starts a plugin name that names a RunState action
// server instead of a registered plugin: "action:/my_robot/stairs" runs the
// state in whatever process serves rsm_msgs/action/RunState there.
const ActionPluginPrefix = "action:"

// Names a RunState goal (StateName) and result (NextState) use besides
// plugin names; the constants of rsm_msgs/action/RunState.
const (
	// NextIdle names the Idle state.
	NextIdle = "Idle"
	// NextWaypointFollowing names the Waypoint Following state.
	NextWaypointFollowing = "WaypointFollowing"
	// NextCalculateGoal names the plugin of parameter calculate_goal_plugin.
	NextCalculateGoal = "calculate_goal_plugin"
	// NextNavigation names the plugin of parameter navigation_plugin.
	NextNavigation = "navigation_plugin"
	// NextMapping names the plugin of parameter mapping_plugin.
	NextMapping = "mapping_plugin"
	// RoutinePrefix followed by a routine's name names that waypoint
	// routine's plugin ("routine:Reversing").
	RoutinePrefix = "routine:"
)

// maxShownName bounds the state name a plugin may show (bytes).
const maxShownName = 200

// remoteLostGrace is how long a running plugin's server may be missing
// from the graph before the state counts it as lost (endpoint matching
// can lag a graph event for a moment).
const remoteLostGrace = time.Second

// RunRequest is the goal of a RunState action (rsm_msgs/action/RunState).
type RunRequest struct {
	// StateName is the name under which the state was started: a plugin
	// parameter (NextCalculateGoal, NextNavigation, NextMapping),
	// RoutinePrefix+name, or the plugin name a NextState gave.
	StateName string
	// Goal is the service provider's navigation goal when the state
	// started.
	Goal Pose
	// Interrupt is true when an interrupt chose the state.
	Interrupt bool
}

// RunResult is the result of a RunState goal.
type RunResult struct {
	// NextState names the state to go to (see StateInterface.StateByName).
	NextState string
	// Reason says why, in words.
	Reason string
}

// RunStatus is how far a RunState goal has come.
type RunStatus int

// RunState goal states.
const (
	RunActive    RunStatus = iota // accepted and running
	RunSucceeded                  // finished with a result
	RunAborted                    // the server aborted it
	RunCanceled                   // canceled (not by this state)
	RunLost                       // the result cannot be had (server gone, protocol error)
)

// String returns a readable name.
func (s RunStatus) String() string {
	switch s {
	case RunActive:
		return "ACTIVE"
	case RunSucceeded:
		return "SUCCEEDED"
	case RunAborted:
		return "ABORTED"
	case RunCanceled:
		return "CANCELED"
	case RunLost:
		return "LOST"
	}
	return fmt.Sprintf("RunStatus(%d)", int(s))
}

// RemoteRun is one accepted RunState goal. Its methods are called on the
// state machine's goroutine; Status and ShownName must not block.
type RemoteRun interface {
	// Status returns the goal's state and, once it has ended, its result
	// (the reason also carries what went wrong for RunLost).
	Status() (RunStatus, RunResult)
	// ShownName returns the state name of the latest feedback ("" before
	// any).
	ShownName() string
	// Cancel stops following the goal and asks the server, if it is
	// still there, to cancel it.
	Cancel(ctx context.Context) error
}

// StateRunner sends RunState goals to plugin state servers; the
// state_interface node implements it with an action client per action
// name (rsmnode.ActionStateRunner).
type StateRunner interface {
	// Ready reports whether a RunState server serves action.
	Ready(action string) bool
	// Run sends req to action and returns once the server has accepted
	// it. A rejected goal is an error; an error wrapping ErrUnavailable
	// means the server is not (yet) there.
	Run(ctx context.Context, action string, req RunRequest) (RemoteRun, error)
}

// Hook names one of the hooks of a state a plugin node may answer while its
// RunState goal runs (rsm_msgs/srv/RunStateHook): the start/stop requests
// and interrupts a pluginlib state answered in onExplorationStart,
// onExplorationStop, onWaypointFollowingStart, onWaypointFollowingStop and
// onInterrupt.
type Hook uint8

// The hooks, numbered as RunStateHook's constants.
const (
	HookExplorationStart       Hook = 0
	HookExplorationStop        Hook = 1
	HookWaypointFollowingStart Hook = 2
	HookWaypointFollowingStop  Hook = 3
	HookInterrupt              Hook = 4
)

// String returns the hook's name as the original's state interface spells
// it.
func (h Hook) String() string {
	switch h {
	case HookExplorationStart:
		return "onExplorationStart"
	case HookExplorationStop:
		return "onExplorationStop"
	case HookWaypointFollowingStart:
		return "onWaypointFollowingStart"
	case HookWaypointFollowingStop:
		return "onWaypointFollowingStop"
	case HookInterrupt:
		return "onInterrupt"
	}
	return fmt.Sprintf("Hook(%d)", uint8(h))
}

// HookRequest asks a plugin node how its running state answers a hook.
type HookRequest struct {
	Hook Hook
	// Interrupt is the interrupt, for HookInterrupt.
	Interrupt Interrupt
	// StateName is the running goal's RunRequest.StateName.
	StateName string
}

// HookReply is a plugin node's answer to a HookRequest.
type HookReply struct {
	// Handled false leaves the request to the common handling (the other
	// fields are ignored).
	Handled bool
	// Reply answers a start/stop request (ignored for an interrupt).
	Reply Reply
	// NextState is "" to stay in the state (the goal goes on), or the
	// state to go to, named as RunResult.NextState; the goal is then
	// canceled.
	NextState string
}

// StateHooks is implemented by a StateServer whose states answer the hooks
// themselves while a goal runs (rsmnode.ServeRunState then also serves
// <action>/hook). OnHook may be called while RunState runs, from another
// goroutine, and should answer at once: the state machine waits for it
// (at most rsmnode.CallTimeout, then the common handling applies).
type StateHooks interface {
	OnHook(ctx context.Context, req HookRequest) (HookReply, error)
}

// HookCaller is implemented by a StateRunner that can ask a plugin node
// for its hooks (rsmnode.ActionStateRunner over <action>/hook).
type HookCaller interface {
	// CallHook asks the plugin node serving action. An error wrapping
	// ErrUnavailable means the node has no hook service.
	CallHook(ctx context.Context, action string, req HookRequest) (HookReply, error)
}

// RemoteState is a plugin state that runs in another process: it sends a
// RunState goal to Action when it is entered, shows the name the server
// sends as feedback, and goes to the state the result names. It treats
// everything else like the original treated a plugin that cannot run: an
// error log with the reason, then Idle. That covers a server that is not
// there within ServerTimeout (action_server_timeout), a rejected, aborted
// or canceled goal, a server that leaves while the goal runs, and a next
// state it does not know. An interrupt or a stop request that ends the
// state cancels the goal.
//
// While the goal runs, a plugin node that serves <action>/hook answers the
// start/stop requests and interrupts itself (HookCaller, StateHooks): it
// may stay, go to a state it names, or leave the request to the common
// handling. Without the hook service (or when it fails or declines), the
// start/stop services and SIMPLE_GOAL_STOP follow the prefix of the shown
// name, the convention the GUI follows too: "E:" answers as an exploration
// state (Mapping Dummy), "W:" as a waypoint routine (Reversing), "G:" as a
// simple goal's navigation; other names refuse every request with
// "<name> running" and stop nothing; interrupts get the common handling.
type RemoteState struct {
	Base
	action, started string
	runner          StateRunner
	timeout         time.Duration
	goal            NavigationGoal

	entered      bool
	finished     bool // the goal ended (or failed to start); nothing to cancel
	run          RemoteRun
	waitingSince time.Time // since when the server is missing before the goal
	lostSince    time.Time // since when the server is missing during the goal
	report       onceReporter
	badName      onceReporter
	hookFailed   onceReporter
}

// NewRemoteState returns a state that runs in the RunState server action,
// started under stateName (see RunRequest.StateName). Its name until the
// first feedback is derived from stateName; it needs the StateInterface's
// Deps.Runner.
func NewRemoteState(action, stateName string) *RemoteState {
	return &RemoteState{Base: Base{name: initialRemoteName(action, stateName)}, action: action, started: stateName}
}

// initialRemoteName is the name shown before the first feedback: the
// action's last name element with the prefix of the state's role.
func initialRemoteName(action, stateName string) string {
	short := action[strings.LastIndex(action, "/")+1:]
	if short == "" {
		short = action
	}
	switch {
	case stateName == NextCalculateGoal, stateName == NextMapping:
		return "E: " + short
	case strings.HasPrefix(stateName, RoutinePrefix):
		return "W: " + strings.TrimPrefix(stateName, RoutinePrefix)
	}
	return short
}

// Action returns the RunState action name.
func (s *RemoteState) Action() string { return s.action }

// StartedAs returns the name under which the state was started.
func (s *RemoteState) StartedAs() string { return s.started }

// OnSetup takes the runner and the server timeout.
func (s *RemoteState) OnSetup() {
	s.runner = s.si.deps.Runner
	s.timeout = s.si.Config().Navigation.ServerTimeout
}

// OnEntry reads the navigation goal the request carries and, for the
// navigation plugin, names the state after the goal's mode like the
// built-in Navigation does.
func (s *RemoteState) OnEntry(ctx context.Context) {
	if s.runner == nil {
		s.fail("no RunState action client is configured")
		return
	}
	g, err := s.si.Store().GetNavigationGoal(ctx)
	if err != nil {
		s.fail("get navigation goal: %v", err)
		return
	}
	s.goal = g
	if s.started == NextNavigation {
		short := initialRemoteName(s.action, "")
		switch g.Mode {
		case NavigationExploration:
			s.SetName("E: " + short)
		case NavigationWaypointFollowing:
			s.SetName("W: " + short)
		case NavigationSimpleGoal:
			s.SetName("G: " + short)
		}
	}
	s.entered = true
}

// fail logs why the plugin cannot go on and goes to Idle (unless an
// interrupt chose the next state already).
func (s *RemoteState) fail(format string, args ...any) {
	s.finished = true
	s.si.Log().Errorf("rsm: plugin %s%s (%s): %s; going to Idle",
		ActionPluginPrefix, s.action, s.started, fmt.Sprintf(format, args...))
	s.Next(NewIdle())
}

// OnActive sends the goal once the server is there, then follows it.
func (s *RemoteState) OnActive(ctx context.Context) {
	if s.Leaving() || !s.entered || s.finished {
		return
	}
	now := s.si.Now()
	if s.run == nil {
		s.start(ctx, now)
		return
	}
	if name := s.run.ShownName(); name != "" && name != s.name {
		if err := checkShownName(name); err != nil {
			s.badName.fail(s.si.Log(), "rsm: plugin %s%s: feedback state name ignored: %v", ActionPluginPrefix, s.action, err)
		} else {
			s.SetName(name)
		}
	}
	st, res := s.run.Status()
	switch st {
	case RunActive:
		if s.runner.Ready(s.action) {
			s.lostSince = time.Time{}
			return
		}
		if s.lostSince.IsZero() {
			s.lostSince = now
		}
		if now.Sub(s.lostSince) >= remoteLostGrace {
			s.fail("the server left while the goal was running")
		}
	case RunSucceeded:
		s.finished = true
		next, err := s.si.StateByName(res.NextState)
		if err != nil {
			s.fail("result: %v (reason %q)", err, res.Reason)
			return
		}
		if res.Reason != "" {
			s.si.Log().Infof("rsm: plugin %s%s: next state %q: %s", ActionPluginPrefix, s.action, res.NextState, res.Reason)
		}
		s.Next(next)
	case RunAborted:
		s.fail("the server aborted the goal: %s", orNoReason(res.Reason))
	case RunCanceled:
		s.fail("the server canceled the goal: %s", orNoReason(res.Reason))
	default:
		s.fail("goal lost: %s", orNoReason(res.Reason))
	}
}

func orNoReason(r string) string {
	if r == "" {
		return "no reason given"
	}
	return r
}

// start sends the goal when the server is ready; without a server it waits
// up to the timeout, reporting once.
func (s *RemoteState) start(ctx context.Context, now time.Time) {
	log := s.si.Log()
	if !s.runner.Ready(s.action) {
		if s.waitingSince.IsZero() {
			s.waitingSince = now
		}
		hint := "start the plugin node that serves it, or set the plugin parameter to another plugin"
		if s.timeout < 0 {
			s.report.fail(log, "rsm: plugin %s%s: no RunState server; %s; waiting", ActionPluginPrefix, s.action, hint)
			return
		}
		s.report.fail(log, "rsm: plugin %s%s: no RunState server; %s; waiting up to %v",
			ActionPluginPrefix, s.action, hint, s.timeout)
		if now.Sub(s.waitingSince) >= s.timeout {
			s.fail("no RunState server within %v (action_server_timeout); %s", s.timeout, hint)
		}
		return
	}
	s.report.ok(log, "rsm: plugin %s%s: RunState server available", ActionPluginPrefix, s.action)
	run, err := s.runner.Run(ctx, s.action, RunRequest{StateName: s.started, Goal: s.goal.Goal, Interrupt: s.byInterrupt})
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			return // went away between Ready and Run: wait again next tick
		}
		s.fail("send goal: %v", err)
		return
	}
	s.run = run
}

// checkShownName accepts a non-empty, printable UTF-8 name of at most
// maxShownName bytes.
func checkShownName(name string) error {
	switch {
	case len(name) > maxShownName:
		return fmt.Errorf("%d bytes, at most %d allowed", len(name), maxShownName)
	case !utf8.ValidString(name):
		return errors.New("not UTF-8")
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%q has a non-printable character", name)
		}
	}
	return nil
}

// OnExit cancels a goal that is still running (also one whose server
// left: Cancel then only stops waiting for it).
func (s *RemoteState) OnExit(ctx context.Context) {
	if s.run == nil {
		return
	}
	if st, _ := s.run.Status(); st != RunActive {
		return
	}
	s.finished = true
	if err := s.run.Cancel(ctx); err != nil {
		s.si.Log().Warnf("rsm: plugin %s%s: cancel goal: %v", ActionPluginPrefix, s.action, err)
	}
}

// kind is what the shown name's prefix says the state belongs to.
func (s *RemoteState) kind() NavigationMode {
	switch {
	case strings.HasPrefix(s.name, "E:"):
		return NavigationExploration
	case strings.HasPrefix(s.name, "W:"):
		return NavigationWaypointFollowing
	case strings.HasPrefix(s.name, "G:"):
		return NavigationSimpleGoal
	}
	return NavigationNone
}

func (s *RemoteState) running() string {
	switch s.kind() {
	case NavigationExploration:
		return msgExplorationRunning
	case NavigationWaypointFollowing:
		return msgWaypointFollowingRunning
	case NavigationSimpleGoal:
		return "Simple Goal running"
	}
	return s.name + " running"
}

// hook asks the plugin node how its running state answers h (for
// HookInterrupt, the interrupt i). handled is false when the common handling
// applies: no goal running, no hook service, a failed call, a declined
// request or a next state that does not exist (both logged). A handled
// request's next state is requested here, by Next, or by InterruptTo for
// an interrupt.
func (s *RemoteState) hook(ctx context.Context, h Hook, i Interrupt) (rep HookReply, handled bool) {
	if s.run == nil || s.finished || s.Leaving() {
		return HookReply{}, false
	}
	if st, _ := s.run.Status(); st != RunActive {
		return HookReply{}, false
	}
	hc, ok := s.runner.(HookCaller)
	if !ok {
		return HookReply{}, false
	}
	log := s.si.Log()
	rep, err := hc.CallHook(ctx, s.action, HookRequest{Hook: h, Interrupt: i, StateName: s.started})
	switch {
	case errors.Is(err, ErrUnavailable):
		return HookReply{}, false // a plugin without hooks
	case err != nil:
		s.hookFailed.fail(log, "rsm: plugin %s%s: %s: %v; handled the common way", ActionPluginPrefix, s.action, h, err)
		return HookReply{}, false
	}
	s.hookFailed.ok(log, "rsm: plugin %s%s: hooks answer again", ActionPluginPrefix, s.action)
	if !rep.Handled {
		return HookReply{}, false
	}
	if rep.NextState == "" {
		return rep, true
	}
	next, err := s.si.StateByName(rep.NextState)
	if err != nil {
		log.Errorf("rsm: plugin %s%s: %s: next state: %v; handled the common way", ActionPluginPrefix, s.action, h, err)
		return HookReply{}, false
	}
	if h == HookInterrupt {
		s.InterruptTo(next)
	} else {
		s.Next(next)
	}
	return rep, true
}

// OnExplorationStart asks the plugin node; otherwise refuses with what is
// running.
func (s *RemoteState) OnExplorationStart(ctx context.Context) Reply {
	if rep, ok := s.hook(ctx, HookExplorationStart, 0); ok {
		return rep.Reply
	}
	return fail(s.running())
}

// OnExplorationStop asks the plugin node; otherwise it stops an "E:" state
// ("Exploration stopped" → Idle, the goal is canceled) and refuses in any
// other with what is running.
func (s *RemoteState) OnExplorationStop(ctx context.Context) Reply {
	if rep, ok := s.hook(ctx, HookExplorationStop, 0); ok {
		return rep.Reply
	}
	if s.kind() != NavigationExploration {
		return fail(s.running())
	}
	s.Next(NewIdle())
	return ok(msgExplorationStopped)
}

// OnWaypointFollowingStart asks the plugin node; otherwise refuses with
// what is running.
func (s *RemoteState) OnWaypointFollowingStart(ctx context.Context) Reply {
	if rep, ok := s.hook(ctx, HookWaypointFollowingStart, 0); ok {
		return rep.Reply
	}
	return fail(s.running())
}

// OnWaypointFollowingStop asks the plugin node; otherwise it stops a "W:"
// state ("Waypoint following stopped" → Idle, the goal is canceled) and
// refuses in any other with what is running.
func (s *RemoteState) OnWaypointFollowingStop(ctx context.Context) Reply {
	if rep, ok := s.hook(ctx, HookWaypointFollowingStop, 0); ok {
		return rep.Reply
	}
	if s.kind() != NavigationWaypointFollowing {
		return fail(s.running())
	}
	s.Next(NewIdle())
	return ok(msgWaypointFollowingStopped)
}

// OnInterrupt asks the plugin node; otherwise the common pattern, and
// SIMPLE_GOAL_STOP ends a "G:" state (→ Idle). The goal is canceled on
// exit.
func (s *RemoteState) OnInterrupt(ctx context.Context, i Interrupt) {
	if _, ok := s.hook(ctx, HookInterrupt, i); ok {
		return
	}
	if s.commonInterrupt(i) {
		return
	}
	if i == SimpleGoalStopInterrupt && s.kind() == NavigationSimpleGoal {
		s.InterruptTo(NewIdle())
	}
}

// StateServer runs the states of a plugin process, one RunState goal at a
// time each (rsm_msgs/action/RunState); rsmnode.ServeRunState serves it.
// ctx ends when state_interface cancels the goal (the state was
// interrupted or stopped) or the node closes; show sends a feedback with
// the name to show on /rsm/stateInfo. A returned error aborts the goal
// with the error as its reason (the state machine then goes to Idle);
// after ctx has ended, returning ctx.Err() reports the goal canceled.
type StateServer interface {
	RunState(ctx context.Context, req RunRequest, show func(name string)) (RunResult, error)
}
