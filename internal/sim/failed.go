package sim

import (
	"errors"
	"fmt"
	"math"
)

// DefaultMaxFailedGoals is the default bound of FailedGoals.
const DefaultMaxFailedGoals = 100

// failedSame is how close (in x and y, m) two failed goals are the same.
const failedSame = 1e-3

// ErrFailedGoalsFull refuses a failed goal beyond FailedGoals' bound.
var ErrFailedGoalsFull = errors.New("failed-goal list full")

// FailedGoals is the frontier detector's list of exploration goals that
// failed (rsm/explorationGoalStatus FAILED), which it republishes every
// cycle (rsm/failedGoals, and as markers): at most Max distinct goals, a
// repeated one counted once. A goal beyond the bound is refused, so a
// participant that publishes FAILED statuses with ever new goals cannot
// grow what the detector stores and sends; REACHED clears the list, as
// before. Not safe for concurrent use.
type FailedGoals struct {
	Max   int // ≤ 0: DefaultMaxFailedGoals
	goals []Point
}

// Add records a failed goal. It returns ErrFailedGoalsFull (wrapped, with
// the bound) when the list holds Max goals and p is not one of them.
func (f *FailedGoals) Add(p Point) error {
	for _, g := range f.goals {
		if math.Abs(g.X-p.X) < failedSame && math.Abs(g.Y-p.Y) < failedSame {
			return nil
		}
	}
	limit := f.Max
	if limit <= 0 {
		limit = DefaultMaxFailedGoals
	}
	if len(f.goals) >= limit {
		return fmt.Errorf("%w: it holds %d goals, the most max_failed_goals allows", ErrFailedGoalsFull, limit)
	}
	f.goals = append(f.goals, p)
	return nil
}

// Clear empties the list (an exploration goal was reached).
func (f *FailedGoals) Clear() { f.goals = f.goals[:0] }

// Points returns the failed goals in the order they failed (shared: do not
// modify).
func (f *FailedGoals) Points() []Point { return f.goals }
