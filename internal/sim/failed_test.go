package sim

import (
	"errors"
	"testing"
)

// TestFailedGoals: distinct goals up to the bound, a repeat counted once
// (also when the list is full), one beyond the bound refused, Clear
// empties it (issue 25: the list grew with every FAILED status and was
// republished every second).
func TestFailedGoals(t *testing.T) {
	f := FailedGoals{Max: 3}
	steps := []struct {
		p       Point
		refused bool
		n       int
	}{
		{Point{1, 1}, false, 1},
		{Point{1, 1.0005}, false, 1}, // the same goal
		{Point{2, 1}, false, 2},
		{Point{3, 1}, false, 3},
		{Point{4, 1}, true, 3},
		{Point{2, 1}, false, 3}, // a repeat of a held goal is no growth
	}
	for i, s := range steps {
		err := f.Add(s.p)
		if got := errors.Is(err, ErrFailedGoalsFull); got != s.refused {
			t.Errorf("step %d: Add(%v) = %v, refused %v", i, s.p, err, s.refused)
		}
		if len(f.Points()) != s.n {
			t.Errorf("step %d: %d goals, want %d", i, len(f.Points()), s.n)
		}
	}
	f.Clear()
	if len(f.Points()) != 0 || f.Add(Point{4, 1}) != nil {
		t.Errorf("after Clear: %v", f.Points())
	}
	var d FailedGoals
	for i := range DefaultMaxFailedGoals + 5 {
		_ = d.Add(Point{X: float64(i)})
	}
	if len(d.Points()) != DefaultMaxFailedGoals {
		t.Errorf("the zero value held %d goals, want DefaultMaxFailedGoals", len(d.Points()))
	}
}
