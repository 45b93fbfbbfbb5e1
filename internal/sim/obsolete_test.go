package sim

import (
	"errors"
	"math"
	"testing"
)

// room returns a 4 m × 2 m map whose left half (x < 2) is known free and
// whose right half is unknown: one frontier along x = 1.95.
func room(t *testing.T) *Grid {
	t.Helper()
	g, err := NewGrid(40, 20, 0.1, 0, 0, Unknown)
	if err != nil {
		t.Fatal(err)
	}
	for cy := 0; cy < 20; cy++ {
		for cx := 0; cx < 20; cx++ {
			g.Set(cx, cy, Free)
		}
	}
	return g
}

func TestNearFrontier(t *testing.T) {
	fs := FindFrontiers(room(t), 5, 0)
	if len(fs) != 1 {
		t.Fatalf("%d frontiers, want 1", len(fs))
	}
	tests := []struct {
		name string
		p    Point
		tol  float64
		want bool
	}{
		{"the frontier's goal", fs[0].Goal, 0, true},
		{"another cell of the frontier", Point{1.95, 0.05}, 1e-9, true},
		{"just within the tolerance in x", Point{1.95 - 0.25, 1.05}, 0.25 + 1e-9, true},
		{"just beyond the tolerance in x", Point{1.95 - 0.26, 1.05}, 0.25, false},
		{"beyond in y only", Point{1.95, 2.35}, 0.25, false},
		{"explored space", Point{0.5, 0.5}, 0.25, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NearFrontier(fs, tt.p, tt.tol); got != tt.want {
				t.Errorf("NearFrontier(%v, %v) = %v, want %v", tt.p, tt.tol, got, tt.want)
			}
		})
	}
	if NearFrontier(nil, Point{}, 1) {
		t.Error("no frontiers: a goal cannot be near one")
	}
}

// TestGoalWatch covers every input of the goalObsolete decision: the
// exploration mode, the goal status and the frontier under the goal.
func TestGoalWatch(t *testing.T) {
	known := room(t)
	fs := FindFrontiers(known, 5, 0)
	goal := fs[0].Goal
	explored := known.Clone()
	for cy := 0; cy < 20; cy++ {
		for cx := 20; cx < 40; cx++ {
			explored.Set(cx, cy, Free) // the robot saw the right half: no frontier left
		}
	}
	moved := known.Clone()
	for cy := 0; cy < 20; cy++ {
		for cx := 20; cx < 24; cx++ {
			moved.Set(cx, cy, Free) // the frontier receded by 0.4 m
		}
	}
	nearlyMoved := known.Clone()
	for cy := 0; cy < 20; cy++ {
		nearlyMoved.Set(20, cy, Free) // receded by one cell: still within 0.25 m
		nearlyMoved.Set(21, cy, Free)
	}
	tests := []struct {
		name          string
		interrupt     bool
		goal          Point
		active        bool
		grid          *Grid
		publish, want bool
	}{
		{"Finish mode: nothing published", false, goal, true, explored, false, false},
		{"Interrupt, goal on the frontier", true, goal, true, known, true, false},
		{"Interrupt, frontier receded within the tolerance", true, goal, true, nearlyMoved, true, false},
		{"Interrupt, frontier receded beyond the tolerance", true, goal, true, moved, true, true},
		{"Interrupt, frontier explored", true, goal, true, explored, true, true},
		{"Interrupt, goal no longer ACTIVE (reached, failed, aborted)", true, goal, false, explored, true, false},
		{"Interrupt, no goal yet", true, Point{}, false, known, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := NewGoalWatch(DefaultGoalTolerance)
			if err != nil {
				t.Fatal(err)
			}
			w.OnExplorationMode(tt.interrupt)
			if err := w.OnGoalStatus(tt.goal, tt.active); err != nil {
				t.Fatal(err)
			}
			pub, obs := w.Obsolete(FindFrontiers(tt.grid, 5, 0))
			if pub != tt.publish || obs != tt.want {
				t.Errorf("Obsolete = publish %v, obsolete %v; want %v, %v", pub, obs, tt.publish, tt.want)
			}
		})
	}
}

func TestGoalWatch_BadInput(t *testing.T) {
	for _, tol := range []float64{-0.1, math.NaN(), math.Inf(1)} {
		if _, err := NewGoalWatch(tol); err == nil {
			t.Errorf("tolerance %v accepted", tol)
		}
	}
	w, _ := NewGoalWatch(0.25)
	w.OnExplorationMode(true)
	_ = w.OnGoalStatus(Point{0.5, 0.5}, true)
	if _, obs := w.Obsolete(nil); !obs {
		t.Fatal("set-up: goal away from any frontier should be obsolete")
	}
	err := w.OnGoalStatus(Point{math.NaN(), 0}, true)
	if !errors.Is(err, ErrNotFinite) {
		t.Errorf("NaN goal: err = %v, want ErrNotFinite", err)
	}
	if pub, obs := w.Obsolete(nil); !pub || obs {
		t.Errorf("after a NaN goal: publish %v, obsolete %v; want the goal forgotten (true, false)", pub, obs)
	}
}
