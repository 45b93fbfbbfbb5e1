package rsm

import (
	"context"
	"errors"
	"time"
)

// stuckCheckEvery is how many ticks lie between two robot pose checks.
const stuckCheckEvery = 5

// Navigation ("Navigation", renamed "E:/W:/G: Navigation" by goal mode;
// rsm::NavigationState) drives to the stored navigation goal through a Nav2
// NavigateToPose action (Navigator).
//
// Stuck handling follows the newer melodic-devel branch: while the
// operation mode is AUTONOMOUS the robot pose is checked every 5th tick; if
// the robot has not moved by PoseTolerance for IdleTimer, it first tries to
// get unstuck by sending the goal to the opposite action (forward ↔
// reverse) for UnstuckTimer, then resends it; stuck a second time, the goal
// fails (or navigation aborts to Idle with AbortWhenStuck). A failed
// navigation result also gets one unstuck attempt before the goal fails.
//
// FIX: in the original master branch the stuck timer could never fire (the
// operation mode was never received, and the pose comparison reset the
// timer on every check); here the state reads the operation mode from the
// StateInterface and measures movement against the last pose at which the
// robot moved.
type Navigation struct {
	Base
	cfg  NavigationConfig
	nav  Navigator
	goal NavigationGoal

	status      GoalState
	entered     bool
	reverse     bool
	action      string
	handle      NavGoal
	interruptEx bool // exploration mode Interrupt: goalObsolete ends the goal

	ticks      int
	refPose    Pose
	havePose   bool
	stillSince time.Time
	didMove    bool

	unstuckTried bool
	unstucking   bool
	unstuckUntil time.Time

	waitingSince time.Time // since when the action server is missing (zero: not waiting)

	serverReport, poseReport onceReporter
}

// NewNavigation returns the "Navigation" plugin state.
func NewNavigation() *Navigation {
	return &Navigation{Base: Base{name: "Navigation"}, status: GoalActive, goal: NavigationGoal{Mode: NavigationNone}}
}

// OnSetup takes the configuration and the action client.
func (s *Navigation) OnSetup() {
	s.cfg = s.si.Config().Navigation
	s.nav = s.si.Navigator()
}

// Goal returns the navigation goal read in OnEntry.
func (s *Navigation) Goal() NavigationGoal { return s.goal }

// Action returns the action name goals are sent to now.
func (s *Navigation) Action() string { return s.action }

func (s *Navigation) actionFor(reverse bool) string {
	if reverse {
		return s.cfg.ReverseAction
	}
	return s.cfg.Action
}

// OnEntry reads the goal, the reverse mode and (for exploration) the
// exploration mode; a missing goal or action client aborts to Idle.
func (s *Navigation) OnEntry(ctx context.Context) {
	store, log := s.si.Store(), s.si.Log()
	s.stillSince = s.si.Now()
	g, err := store.GetNavigationGoal(ctx)
	if err != nil {
		log.Errorf("rsm: navigation: get navigation goal: %v; going to Idle", err)
		s.abort()
		return
	}
	s.goal = g
	switch g.Mode {
	case NavigationExploration:
		s.SetName("E: Navigation")
	case NavigationWaypointFollowing:
		s.SetName("W: Navigation")
	case NavigationSimpleGoal:
		s.SetName("G: Navigation")
	}
	if rev, err := store.GetReverseMode(ctx); err != nil {
		log.Errorf("rsm: navigation: get reverse mode: %v; driving forward", err)
	} else {
		s.reverse = rev
	}
	s.action = s.actionFor(s.reverse)
	if g.Mode == NavigationExploration {
		em, err := store.GetExplorationMode(ctx)
		if err != nil {
			log.Errorf("rsm: navigation: get exploration mode: %v; going to Idle", err)
			s.abort()
			return
		}
		s.interruptEx = em
	}
	if s.nav == nil {
		log.Errorf("rsm: navigation: no NavigateToPose action client configured; going to Idle")
		s.abort()
		return
	}
	s.entered = true
}

// abort ends navigation: status ABORTED → Idle (unless an interrupt chose
// the next state already).
func (s *Navigation) abort() {
	if s.interrupted {
		return
	}
	s.status = GoalAborted
	s.Next(NewIdle())
}

// OnActive sends the goal once the action server is there, then follows it.
func (s *Navigation) OnActive(ctx context.Context) {
	if s.Leaving() || !s.entered {
		return
	}
	s.cfg.NavigationTuning = s.si.Config().Navigation.NavigationTuning // live parameters, per tick
	log := s.si.Log()
	now := s.si.Now()
	if !s.nav.Ready(s.action) {
		s.waitForServer(now)
		return
	}
	s.waitingSince = time.Time{}
	s.serverReport.ok(log, "rsm: navigation: action server %q is available", s.action)
	if s.handle == nil {
		h, err := s.nav.Navigate(ctx, s.action, s.goal.Goal)
		if err != nil {
			if errors.Is(err, ErrUnavailable) {
				return // retried next tick
			}
			log.Errorf("rsm: navigation: send goal to %q: %v", s.action, err)
			s.onResult(ctx, NavFailed)
			return
		}
		s.handle, s.stillSince = h, now
		return
	}
	st := s.handle.State()
	if s.unstucking {
		switch {
		case st == NavSucceeded:
			s.onResult(ctx, st)
		case st.Done() || !now.Before(s.unstuckUntil):
			s.endUnstuck(ctx)
		}
		return
	}
	if st.Done() {
		s.onResult(ctx, st)
		return
	}
	s.checkStuck(ctx, now)
}

// waitForServer reports a missing action server once and, after
// ServerTimeout, gives up: ABORTED (the goal itself did not fail, so no
// waypoint is marked unreachable and no frontier blacklisted) → Idle, with
// the reason in the log.
func (s *Navigation) waitForServer(now time.Time) {
	log := s.si.Log()
	hint := "start Nav2 (bt_navigator serves navigate_to_pose) or set navigation_action"
	if s.action == s.cfg.ReverseAction && s.action != s.cfg.Action {
		hint = "reverse mode needs a second navigation stack serving it, whose cmd_vel goes through cmd_vel_reverse " +
			"(docs/rsm.md), or set reverse_navigation_action; or switch reverse mode off (setReverseMode false)"
	}
	if s.waitingSince.IsZero() {
		s.waitingSince = now
	}
	timeout := s.cfg.ServerTimeout
	if timeout < 0 {
		s.serverReport.fail(log, "rsm: navigation: action server %q is not available; %s; waiting", s.action, hint)
		return
	}
	s.serverReport.fail(log, "rsm: navigation: action server %q is not available; %s; waiting up to %v", s.action, hint, timeout)
	if now.Sub(s.waitingSince) < timeout {
		return
	}
	log.Errorf("rsm: navigation: giving up: action server %q not available within %v (action_server_timeout); %s; going to Idle",
		s.action, timeout, hint)
	s.abort()
}

// onResult handles a finished goal.
func (s *Navigation) onResult(ctx context.Context, st NavState) {
	if st == NavSucceeded {
		s.succeeded()
		return
	}
	if !s.unstuckTried {
		s.si.Log().Warnf("rsm: navigation: goal failed on %q, trying once to get unstuck", s.action)
		s.startUnstuck(ctx)
		return
	}
	s.failed()
}

func (s *Navigation) succeeded() {
	if s.interrupted {
		return
	}
	switch s.goal.Mode {
	case NavigationExploration:
		s.status = GoalReached
		s.nextPlugin(MappingPlugin, "")
	case NavigationWaypointFollowing:
		if s.goal.Routine == "" {
			s.status = GoalReached
			s.Next(NewWaypointFollowing())
		} else {
			// The routine reports completion (marks the waypoint visited).
			s.nextPlugin(RoutinePlugin, s.goal.Routine)
		}
	default:
		s.status = GoalReached
		s.Next(NewIdle())
	}
}

func (s *Navigation) failed() {
	if s.interrupted {
		return
	}
	s.status = GoalFailed
	switch s.goal.Mode {
	case NavigationExploration:
		s.nextPlugin(CalculateGoalPlugin, "")
	case NavigationWaypointFollowing:
		s.Next(NewWaypointFollowing())
	default:
		s.Next(NewIdle())
	}
}

// checkStuck compares the robot pose every 5th tick while AUTONOMOUS.
func (s *Navigation) checkStuck(ctx context.Context, now time.Time) {
	op, known := s.si.OperationMode()
	if !known || op.EmergencyStop || op.Mode != ModeAutonomous {
		// Not driving autonomously: standing still is not being stuck.
		s.stillSince, s.ticks = now, 0
		return
	}
	s.ticks++
	if s.ticks < stuckCheckEvery {
		return
	}
	s.ticks = 0
	log := s.si.Log()
	pose, err := s.si.Store().GetRobotPose(ctx)
	if err != nil {
		s.poseReport.fail(log, "rsm: navigation: get robot pose: %v; stuck detection paused", err)
		return
	}
	s.poseReport.ok(log, "rsm: navigation: robot pose available again")
	if !s.havePose {
		s.refPose, s.havePose = pose, true
		return
	}
	moved := pose.Position.Sub(s.refPose.Position).Norm() >= s.cfg.PoseTolerance ||
		pose.Orientation.AngleTo(s.refPose.Orientation) >= s.cfg.PoseTolerance
	if moved {
		s.refPose, s.stillSince, s.didMove = pose, now, true
		return
	}
	if now.Sub(s.stillSince) < s.cfg.IdleTimer {
		return
	}
	log.Warnf("rsm: navigation: robot appears to be stuck (no movement for %v)", now.Sub(s.stillSince))
	switch {
	case !s.unstuckTried:
		s.startUnstuck(ctx)
	case s.cfg.AbortWhenStuck:
		s.abort()
	default:
		s.failed()
	}
}

// startUnstuck drives towards the goal with the opposite action for
// UnstuckTimer.
func (s *Navigation) startUnstuck(ctx context.Context) {
	s.unstuckTried = true
	s.cancel(ctx)
	log := s.si.Log()
	opposite := s.actionFor(!s.reverse)
	now := s.si.Now()
	if !s.nav.Ready(opposite) {
		log.Warnf("rsm: navigation: cannot try to get unstuck: action server %q is not available; resending the goal", opposite)
		s.handle, s.stillSince = nil, now
		return
	}
	h, err := s.nav.Navigate(ctx, opposite, s.goal.Goal)
	if err != nil {
		log.Warnf("rsm: navigation: cannot try to get unstuck on %q: %v; resending the goal", opposite, err)
		s.handle, s.stillSince = nil, now
		return
	}
	log.Infof("rsm: navigation: trying to get unstuck with %q for %v", opposite, s.cfg.UnstuckTimer)
	s.action, s.handle = opposite, h
	s.unstucking, s.unstuckUntil = true, now.Add(s.cfg.UnstuckTimer)
}

// endUnstuck switches back to the normal action; the goal is resent on the
// next tick.
func (s *Navigation) endUnstuck(ctx context.Context) {
	s.cancel(ctx)
	s.unstucking = false
	s.action = s.actionFor(s.reverse)
	s.handle, s.stillSince, s.havePose = nil, s.si.Now(), false
}

// cancel cancels the current goal if it is still running.
func (s *Navigation) cancel(ctx context.Context) {
	if s.handle == nil || s.handle.State().Done() {
		return
	}
	if err := s.handle.Cancel(ctx); err != nil {
		s.si.Log().Errorf("rsm: navigation: cancel goal on %q: %v", s.action, err)
	}
}

// OnExit cancels a running goal and reports how the goal ended (unless it
// is still ACTIVE, e.g. when a routine takes over).
func (s *Navigation) OnExit(ctx context.Context) {
	s.cancel(ctx)
	if s.status == GoalActive {
		return
	}
	if _, err := s.si.Store().NavigationGoalCompleted(ctx, GoalStatus{Goal: s.goal.Goal, Status: s.status}, true); err != nil {
		s.si.Log().Errorf("rsm: navigation: navigation goal completed: %v", err)
	}
}

// OnGoalObsolete ends an exploration goal in Interrupt mode: ABORTED, then
// mapping if the robot moved, else a new goal.
func (s *Navigation) OnGoalObsolete(_ context.Context, obsolete bool) {
	if !obsolete || !s.entered || s.si.Current() != s || s.goal.Mode != NavigationExploration || !s.interruptEx ||
		s.interrupted || s.Leaving() {
		return
	}
	s.status = GoalAborted
	if s.didMove {
		s.nextPlugin(MappingPlugin, "")
	} else {
		s.nextPlugin(CalculateGoalPlugin, "")
	}
}

// OnReverseMode switches between the forward and reverse action when the
// reverse mode changes; the goal is resent on the next tick.
func (s *Navigation) OnReverseMode(ctx context.Context, reverse bool) {
	if !s.entered || s.si.Current() != s || reverse == s.reverse {
		return
	}
	s.cancel(ctx)
	s.reverse, s.unstucking = reverse, false
	s.action = s.actionFor(reverse)
	s.handle, s.stillSince, s.havePose = nil, s.si.Now(), false
	// The other server gets its own wait (and its own report).
	s.waitingSince, s.serverReport = time.Time{}, onceReporter{}
}

// running is the refusal text for the current goal mode.
func (s *Navigation) running() string {
	switch s.goal.Mode {
	case NavigationExploration:
		return msgExplorationRunning
	case NavigationWaypointFollowing:
		return msgWaypointFollowingRunning
	case NavigationSimpleGoal:
		return "Simple Goal running"
	}
	return "Nothing running"
}

// OnExplorationStart refuses with what is running.
func (s *Navigation) OnExplorationStart(context.Context) Reply { return fail(s.running()) }

// OnExplorationStop stops an exploration goal ("Exploration stopped" →
// Idle); otherwise refuses with what is running.
func (s *Navigation) OnExplorationStop(context.Context) Reply {
	if s.goal.Mode != NavigationExploration {
		return fail(s.running())
	}
	s.abort()
	return ok(msgExplorationStopped)
}

// OnWaypointFollowingStart refuses with what is running.
func (s *Navigation) OnWaypointFollowingStart(context.Context) Reply { return fail(s.running()) }

// OnWaypointFollowingStop stops a waypoint goal ("Waypoint following
// stopped" → Idle); otherwise refuses with what is running.
func (s *Navigation) OnWaypointFollowingStop(context.Context) Reply {
	if s.goal.Mode != NavigationWaypointFollowing {
		return fail(s.running())
	}
	s.abort()
	return ok(msgWaypointFollowingStopped)
}

// OnInterrupt: the goal is ABORTED, then the common pattern (a new simple
// goal gives a fresh Navigation that reads it); SIMPLE_GOAL_STOP ends a
// simple goal (→ Idle).
func (s *Navigation) OnInterrupt(_ context.Context, i Interrupt) {
	switch i {
	case EmergencyStopInterrupt, TeleoperationInterrupt, SimpleGoalInterrupt:
		s.status = GoalAborted
		s.commonInterrupt(i)
	case SimpleGoalStopInterrupt:
		if s.goal.Mode == NavigationSimpleGoal {
			s.status = GoalAborted
			s.InterruptTo(NewIdle())
		}
	}
}
