package rsm

import "context"

// WaypointFollowing chooses the next waypoint to drive to and hands it to
// the navigation plugin; when none is left it ends (SINGLE) or starts over
// (ROUNDTRIP, PATROL).
type WaypointFollowing struct {
	Base
	array WaypointArray
	index int // chosen waypoint, -1 if none
}

// NewWaypointFollowing returns the "W: Waypoint Following" state.
func NewWaypointFollowing() *WaypointFollowing {
	return &WaypointFollowing{Base: Base{name: "W: Waypoint Following"}, index: -1}
}

// OnEntry reads the waypoints; no waypoints or a failed call → Idle.
func (s *WaypointFollowing) OnEntry(ctx context.Context) {
	if !s.reload(ctx) {
		return
	}
	if len(s.array.Waypoints) == 0 {
		s.si.Log().Warnf("rsm: waypoint following: no waypoints, going to Idle")
		s.Next(NewIdle())
	}
}

// reload re-reads the waypoints; on failure it logs and goes to Idle.
func (s *WaypointFollowing) reload(ctx context.Context) bool {
	a, err := s.si.Store().GetWaypoints(ctx)
	if err != nil {
		s.si.Log().Errorf("rsm: waypoint following: get waypoints: %v; going to Idle", err)
		s.Next(NewIdle())
		return false
	}
	s.array = a
	return true
}

// nextIndex returns the first waypoint neither visited nor unreachable,
// searching from the end when the array is reversed; -1 if none.
func (s *WaypointFollowing) nextIndex() int {
	w := s.array.Waypoints
	if s.array.Reverse {
		for i := len(w) - 1; i >= 0; i-- {
			if !w[i].Visited && !w[i].Unreachable {
				return i
			}
		}
		return -1
	}
	for i := range w {
		if !w[i].Visited && !w[i].Unreachable {
			return i
		}
	}
	return -1
}

// OnActive picks the next waypoint or applies the mode's end-of-list rule.
func (s *WaypointFollowing) OnActive(ctx context.Context) {
	if s.Leaving() {
		return
	}
	if i := s.nextIndex(); i >= 0 {
		s.index = i
		s.nextPlugin(NavigationPlugin, "")
		return
	}
	store, log := s.si.Store(), s.si.Log()
	switch s.array.Mode {
	case Roundtrip:
		if _, err := store.ResetWaypoints(ctx); err != nil {
			log.Errorf("rsm: waypoint following: reset waypoints: %v", err)
		}
		s.reload(ctx)
	case Patrol:
		reverse := s.array.Reverse
		if _, err := store.SetWaypointFollowingMode(ctx, s.array.Mode, !reverse); err != nil {
			log.Errorf("rsm: waypoint following: set waypoint following mode: %v", err)
		}
		if _, err := store.ResetWaypoints(ctx); err != nil {
			log.Errorf("rsm: waypoint following: reset waypoints: %v", err)
		}
		// The end just reached starts the way back; mark it visited so its
		// routine does not run twice.
		end := int64(len(s.array.Waypoints) - 1)
		if reverse {
			end = 0
		}
		if _, err := store.WaypointVisited(ctx, end); err != nil {
			log.Errorf("rsm: waypoint following: waypoint visited: %v", err)
		}
		s.reload(ctx)
	default: // Single, and any unknown mode
		s.Next(NewIdle())
	}
}

// OnExit stores the chosen waypoint as the navigation goal.
func (s *WaypointFollowing) OnExit(ctx context.Context) {
	if s.index < 0 || s.index >= len(s.array.Waypoints) {
		return
	}
	wp := s.array.Waypoints[s.index]
	if _, err := s.si.Store().SetNavigationGoal(ctx, NavigationGoal{
		Goal: wp.Pose, Mode: NavigationWaypointFollowing, WaypointPosition: int64(s.index), Routine: wp.Routine,
	}); err != nil {
		s.si.Log().Errorf("rsm: waypoint following: set navigation goal: %v", err)
	}
}

// OnExplorationStart refuses: "Waypoint following running".
func (s *WaypointFollowing) OnExplorationStart(context.Context) Reply {
	return fail(msgWaypointFollowingRunning)
}

// OnExplorationStop refuses: "Waypoint following running".
func (s *WaypointFollowing) OnExplorationStop(context.Context) Reply {
	return fail(msgWaypointFollowingRunning)
}

// OnWaypointFollowingStart refuses: "Waypoint following running".
func (s *WaypointFollowing) OnWaypointFollowingStart(context.Context) Reply {
	return fail(msgWaypointFollowingRunning)
}

// OnWaypointFollowingStop stops: "Waypoint following stopped" → Idle.
func (s *WaypointFollowing) OnWaypointFollowingStop(context.Context) Reply {
	s.index = -1
	s.Next(NewIdle())
	return ok(msgWaypointFollowingStopped)
}

// OnInterrupt: e-stop, teleoperation and simple goal (common pattern).
func (s *WaypointFollowing) OnInterrupt(_ context.Context, i Interrupt) { s.commonInterrupt(i) }
