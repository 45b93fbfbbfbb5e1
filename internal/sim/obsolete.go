package sim

import (
	"errors"
	"fmt"
	"math"
)

// DefaultGoalTolerance is the default of the frontier detector's
// exploration_goal_tolerance: how far (m, in x and in y) the nearest
// frontier cell may be from the current exploration goal before the goal
// counts as explored.
const DefaultGoalTolerance = 0.25

// NearFrontier reports whether p lies within tol, in x and in y, of a cell
// of one of frontiers, i.e. whether the frontier an exploration goal was
// taken from is still there.
//
// The original compared the goal with explore_lite's representative point
// of each frontier (0.05 m); a representative moves whenever its frontier
// changes shape, which called goals obsolete that were not explored. The
// cells only leave once the unknown space next to them has been seen.
func NearFrontier(frontiers []Frontier, p Point, tol float64) bool {
	for _, f := range frontiers {
		for _, c := range f.Cells {
			if math.Abs(c.X-p.X) <= tol && math.Abs(c.Y-p.Y) <= tol {
				return true
			}
		}
	}
	return false
}

// GoalWatch decides what the frontier detector publishes on
// rsm/goalObsolete (std_msgs/Bool), the topic RSM's Navigation state
// listens to in the Interrupt exploration mode: as in the original,
// nothing is published unless the exploration mode (rsm/explorationMode)
// is Interrupt; then, on every frontier update, true while the current
// exploration goal (rsm/explorationGoalStatus with status ACTIVE) is no
// longer near a frontier cell, else false.
//
// The zero value is not usable; use NewGoalWatch. Not safe for concurrent
// use.
type GoalWatch struct {
	tol       float64
	interrupt bool  // exploration mode Interrupt
	active    bool  // an exploration goal is being driven to
	goal      Point // that goal
}

// NewGoalWatch returns a watch that treats a goal as explored once no
// frontier cell lies within tol (m, in x and in y) of it.
func NewGoalWatch(tol float64) (*GoalWatch, error) {
	if math.IsNaN(tol) || math.IsInf(tol, 0) || tol < 0 {
		return nil, fmt.Errorf("exploration goal tolerance %v: must be a finite number ≥ 0", tol)
	}
	return &GoalWatch{tol: tol}, nil
}

// ErrNotFinite is returned for a goal with NaN or Inf coordinates.
var ErrNotFinite = errors.New("not finite")

// OnExplorationMode takes rsm/explorationMode: true is Interrupt, false
// Finish.
func (w *GoalWatch) OnExplorationMode(interrupt bool) { w.interrupt = interrupt }

// OnGoalStatus takes rsm/explorationGoalStatus: the exploration goal and
// whether its status is ACTIVE (being driven to). A goal with NaN/Inf
// coordinates is rejected and forgets the current goal.
func (w *GoalWatch) OnGoalStatus(goal Point, active bool) error {
	if !finite(goal.X) || !finite(goal.Y) {
		w.active = false
		return fmt.Errorf("exploration goal (%v, %v): %w", goal.X, goal.Y, ErrNotFinite)
	}
	w.goal, w.active = goal, active
	return nil
}

// Obsolete evaluates the current frontiers: publish says whether to
// publish on rsm/goalObsolete at all (only in the Interrupt mode), obsolete
// is the value (true only for an ACTIVE goal no frontier cell is near).
func (w *GoalWatch) Obsolete(frontiers []Frontier) (publish, obsolete bool) {
	if !w.interrupt {
		return false, false
	}
	return true, w.active && !NearFrontier(frontiers, w.goal, w.tol)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
