package rsm

import (
	"context"
	"math"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// failedGoalTolerance is the distance (m, per x and y) within which a
// frontier counts as one of the failed goals.
const failedGoalTolerance = 0.05

// explorationStep is what the exploration plugin states (CalculateGoal,
// MappingDummy) answer alike: stopping the exploration goes to Idle with
// "Exploration stopped", waypoint following is refused with "Exploration
// running", and interrupts take the common pattern (e-stop, teleoperation,
// simple goal). Each answers the exploration start itself.
type explorationStep struct{ Base }

// OnExplorationStop stops: "Exploration stopped" → Idle.
func (s *explorationStep) OnExplorationStop(context.Context) Reply {
	s.Next(NewIdle())
	return ok(msgExplorationStopped)
}

// OnWaypointFollowingStart refuses: "Exploration running".
func (s *explorationStep) OnWaypointFollowingStart(context.Context) Reply {
	return fail(msgExplorationRunning)
}

// OnWaypointFollowingStop refuses: "Exploration running".
func (s *explorationStep) OnWaypointFollowingStop(context.Context) Reply {
	return fail(msgExplorationRunning)
}

// OnInterrupt: e-stop, teleoperation and simple goal (common pattern).
func (s *explorationStep) OnInterrupt(_ context.Context, i Interrupt) { s.commonInterrupt(i) }

// CalculateGoal ("E: Calculate Goal", rsm::CalculateGoalState) picks the
// nearest frontier from /rsm/explorationGoals that is not one of
// /rsm/failedGoals and hands it to the navigation plugin.
type CalculateGoal struct {
	explorationStep
	goals, failed         []Pose
	haveGoals, haveFailed bool
	deadline              time.Time
	goal                  Pose
	found                 bool // goal holds the chosen frontier
	report                onceReporter
}

// NewCalculateGoal returns the "E: Calculate Goal" plugin state.
func NewCalculateGoal() *CalculateGoal {
	return &CalculateGoal{explorationStep: explorationStep{Base{name: "E: Calculate Goal"}}, goal: Pose{Orientation: geom.Identity}}
}

// OnSetup starts the timer for frontier data.
func (s *CalculateGoal) OnSetup() {
	s.deadline = s.si.Now().Add(s.si.Config().CalculateGoalTimeout)
}

// OnExplorationGoals stores the frontier goals.
func (s *CalculateGoal) OnExplorationGoals(goals []Pose) { s.goals, s.haveGoals = goals, true }

// OnFailedGoals stores the goals that failed before.
func (s *CalculateGoal) OnFailedGoals(goals []Pose) { s.failed, s.haveFailed = goals, true }

// OnActive chooses a goal once both topics arrived; no goal in time, or no
// reachable frontier left, ends exploration (→ Idle).
func (s *CalculateGoal) OnActive(ctx context.Context) {
	if s.Leaving() {
		return
	}
	log := s.si.Log()
	if !s.si.Now().Before(s.deadline) {
		log.Errorf("rsm: calculate goal: no goal selected in time (%v without frontier data or robot pose), going to Idle",
			s.si.Config().CalculateGoalTimeout)
		s.Next(NewIdle())
		return
	}
	if !s.haveGoals || !s.haveFailed {
		return
	}
	robot, err := s.si.Store().GetRobotPose(ctx)
	if err != nil {
		s.report.fail(log, "rsm: calculate goal: get robot pose: %v", err)
		return
	}
	s.report.ok(log, "rsm: calculate goal: robot pose available again")
	goal, found := NearestGoal(robot.Position, s.goals, s.failed)
	if !found {
		log.Errorf("rsm: calculate goal: no more reachable goals, going to Idle")
		s.Next(NewIdle())
		return
	}
	s.goal, s.found = goal, true
	s.nextPlugin(NavigationPlugin, "")
}

// NearestGoal returns the frontier with the smallest planar distance to
// robot that is not within 0.05 m (in x and y) of a failed goal, oriented
// from the robot towards it.
func NearestGoal(robot geom.Vec3, frontiers, failed []Pose) (Pose, bool) {
	best, bestD := -1, math.Inf(1)
	for i, f := range frontiers {
		if nearAny(f.Position, failed) {
			continue
		}
		dx, dy := f.Position.X-robot.X, f.Position.Y-robot.Y
		if d := dx*dx + dy*dy; d < bestD {
			best, bestD = i, d
		}
	}
	if best < 0 {
		return Pose{}, false
	}
	p := frontiers[best].Position
	return Pose{Position: p, Orientation: geom.QuatFromYaw(math.Atan2(p.Y-robot.Y, p.X-robot.X))}, true
}

func nearAny(p geom.Vec3, poses []Pose) bool {
	for _, q := range poses {
		if math.Abs(p.X-q.Position.X) < failedGoalTolerance && math.Abs(p.Y-q.Position.Y) < failedGoalTolerance {
			return true
		}
	}
	return false
}

// OnExit stores the chosen frontier as the exploration navigation goal.
//
// FIX: the original stored its goal on every exit. Interrupted by a simple
// goal, that overwrote the simple goal just stored by the state interface
// with the unset exploration goal, so the robot drove to (0,0). Now the
// goal is only stored when one was chosen and no interrupt took over.
func (s *CalculateGoal) OnExit(ctx context.Context) {
	if !s.found || s.interrupted {
		return
	}
	if _, err := s.si.Store().SetNavigationGoal(ctx, NavigationGoal{
		Goal: s.goal, Mode: NavigationExploration, WaypointPosition: -1,
	}); err != nil {
		s.si.Log().Errorf("rsm: calculate goal: set navigation goal: %v", err)
	}
}

// OnExplorationStart answers true "Exploration running".
func (s *CalculateGoal) OnExplorationStart(context.Context) Reply {
	return ok(msgExplorationRunning)
}

// MappingDummy ("E: Mapping Dummy", rsm::MappingDummyState) completes the
// exploration goal at once and asks for the next one.
type MappingDummy struct {
	explorationStep
	status GoalState
}

// NewMappingDummy returns the "E: Mapping Dummy" plugin state.
func NewMappingDummy() *MappingDummy {
	return &MappingDummy{explorationStep: explorationStep{Base{name: "E: Mapping Dummy"}}, status: GoalAborted}
}

// OnActive reports the goal reached and goes to the calculate-goal plugin.
func (s *MappingDummy) OnActive(context.Context) {
	if s.Leaving() {
		return
	}
	s.status = GoalReached
	s.nextPlugin(CalculateGoalPlugin, "")
}

// OnExit reports the goal's status (ABORTED if interrupted).
func (s *MappingDummy) OnExit(ctx context.Context) {
	if _, err := s.si.Store().NavigationGoalCompleted(ctx, GoalStatus{Status: s.status}, false); err != nil {
		s.si.Log().Errorf("rsm: mapping: navigation goal completed: %v", err)
	}
}

// OnExplorationStart refuses: "Exploration running".
func (s *MappingDummy) OnExplorationStart(context.Context) Reply {
	return fail(msgExplorationRunning)
}

// ReversingRoutine ("W: Reversing", rsm::ReversingRoutineState, routine
// "Reversing") toggles the reverse mode at a waypoint.
type ReversingRoutine struct {
	Base
	status  GoalState
	reverse bool
}

// NewReversingRoutine returns the "W: Reversing" routine state.
func NewReversingRoutine() *ReversingRoutine {
	return &ReversingRoutine{Base: Base{name: "W: Reversing"}, status: GoalActive}
}

// OnEntry reads the reverse mode; on failure the waypoint fails.
func (s *ReversingRoutine) OnEntry(ctx context.Context) {
	r, err := s.si.Store().GetReverseMode(ctx)
	if err != nil {
		s.si.Log().Errorf("rsm: reversing: get reverse mode: %v", err)
		s.status = GoalFailed
		s.Next(NewWaypointFollowing())
		return
	}
	s.reverse = r
}

// OnActive toggles the reverse mode, marks the waypoint reached and returns
// to waypoint following.
func (s *ReversingRoutine) OnActive(ctx context.Context) {
	if s.Leaving() {
		return
	}
	if r, err := s.si.Store().SetReverseMode(ctx, !s.reverse); err != nil {
		s.si.Log().Errorf("rsm: reversing: set reverse mode: %v", err)
	} else if !r.Success {
		s.si.Log().Warnf("rsm: reversing: set reverse mode: %s", r.Message)
	}
	s.status = GoalReached
	s.Next(NewWaypointFollowing())
}

// OnExit reports the waypoint's status, which marks it visited.
func (s *ReversingRoutine) OnExit(ctx context.Context) {
	if _, err := s.si.Store().NavigationGoalCompleted(ctx, GoalStatus{Status: s.status}, false); err != nil {
		s.si.Log().Errorf("rsm: reversing: navigation goal completed: %v", err)
	}
}

// OnExplorationStart refuses: "Waypoint following running".
func (s *ReversingRoutine) OnExplorationStart(context.Context) Reply {
	return fail(msgWaypointFollowingRunning)
}

// OnExplorationStop refuses: "Waypoint following running".
func (s *ReversingRoutine) OnExplorationStop(context.Context) Reply {
	return fail(msgWaypointFollowingRunning)
}

// OnWaypointFollowingStart refuses: "Waypoint following running".
func (s *ReversingRoutine) OnWaypointFollowingStart(context.Context) Reply {
	return fail(msgWaypointFollowingRunning)
}

// OnWaypointFollowingStop stops: "Waypoint following stopped" → Idle.
func (s *ReversingRoutine) OnWaypointFollowingStop(context.Context) Reply {
	s.Next(NewIdle())
	return ok(msgWaypointFollowingStopped)
}

// OnInterrupt: e-stop, teleoperation and simple goal (common pattern).
func (s *ReversingRoutine) OnInterrupt(_ context.Context, i Interrupt) { s.commonInterrupt(i) }
