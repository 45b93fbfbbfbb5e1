// Package goallist is the example plugin state of fsmnodes' Robot
// Statemachine: a calculate-goal state that, instead of choosing frontiers,
// visits a fixed list of goals in order. It runs in its own process
// (nodes/example_rsm_plugin) and is reached by state_interface through
// rsm_msgs/action/RunState; docs/rsm.md#writing-a-plugin walks through it.
//
// The package holds behaviour only (no ROS types): the node adapter
// (rsmnode.ServeRunState) turns each RunState goal into a call of
// GoalList.RunState, and DataStore calls become service calls to the
// service provider.
package goallist

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
)

// GoalList is a calculate-goal plugin state. Every RunState goal it gets
// as the calculate-goal plugin takes the next goal of the list: it shows
// "E: Goal List <i>/<n>" for Dwell, stores the goal as the exploration goal
// with /rsm/setNavigationGoal (facing from the previous goal towards it) and
// answers with the navigation plugin as the next state. After the last goal
// it answers Idle ("all <n> goals visited"); Reset starts over.
//
// A canceled goal (the state was interrupted or exploration stopped)
// keeps its place in the list, so the next exploration resumes there.
// GoalList is safe for concurrent use; goals are handled one at a time.
type GoalList struct {
	store rsm.DataStore
	goals []geom.Vec3
	dwell time.Duration

	mu   sync.Mutex
	next int
}

// ErrWrongState is returned for a goal that does not ask for the
// calculate-goal plugin.
var ErrWrongState = errors.New("goal list serves only calculate_goal_plugin")

// New returns a GoalList over the (x, y) pairs in xy (map frame); store is
// the service provider, dwell how long each goal's name is shown before
// the goal is handed to navigation.
func New(store rsm.DataStore, xy []float64, dwell time.Duration) (*GoalList, error) {
	if store == nil {
		return nil, errors.New("goal list: a data store is required")
	}
	if len(xy)%2 != 0 {
		return nil, fmt.Errorf("goal list: %d coordinates, want x, y pairs", len(xy))
	}
	if dwell < 0 {
		return nil, fmt.Errorf("goal list: dwell %v: must be ≥ 0", dwell)
	}
	g := &GoalList{store: store, dwell: dwell}
	for i := 0; i < len(xy); i += 2 {
		x, y := xy[i], xy[i+1]
		if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
			return nil, fmt.Errorf("goal list: goal %d (%v, %v): not finite", i/2+1, x, y)
		}
		g.goals = append(g.goals, geom.Vec3{X: x, Y: y})
	}
	return g, nil
}

// Next returns the index of the goal the next run takes (len = done).
func (g *GoalList) Next() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.next
}

// Reset starts the list over.
func (g *GoalList) Reset() {
	g.mu.Lock()
	g.next = 0
	g.mu.Unlock()
}

// RunState runs the state for one RunState goal.
func (g *GoalList) RunState(ctx context.Context, req rsm.RunRequest, show func(name string)) (rsm.RunResult, error) {
	if req.StateName != rsm.NextCalculateGoal {
		return rsm.RunResult{}, fmt.Errorf("%w, asked for %q", ErrWrongState, req.StateName)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	n := len(g.goals)
	if g.next >= n {
		return rsm.RunResult{NextState: rsm.NextIdle, Reason: fmt.Sprintf("all %d goals visited", n)}, nil
	}
	show(fmt.Sprintf("E: Goal List %d/%d", g.next+1, n))
	if g.dwell > 0 {
		t := time.NewTimer(g.dwell)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return rsm.RunResult{Reason: "canceled before goal " + fmt.Sprint(g.next+1)}, ctx.Err()
		case <-t.C:
		}
	}
	p := g.goals[g.next]
	from := req.Goal.Position
	yaw := 0.0
	if dx, dy := p.X-from.X, p.Y-from.Y; dx != 0 || dy != 0 {
		yaw = math.Atan2(dy, dx)
	}
	goal := rsm.Pose{Position: p, Orientation: geom.QuatFromYaw(yaw)}
	r, err := g.store.SetNavigationGoal(ctx, rsm.NavigationGoal{Goal: goal, Mode: rsm.NavigationExploration, WaypointPosition: -1})
	switch {
	case err != nil:
		return rsm.RunResult{}, fmt.Errorf("set navigation goal: %w", err)
	case !r.Success:
		return rsm.RunResult{}, fmt.Errorf("set navigation goal refused: %s", r.Message)
	}
	g.next++
	return rsm.RunResult{NextState: rsm.NextNavigation,
		Reason: fmt.Sprintf("goal %d of %d at (%.2f, %.2f)", g.next, n, p.X, p.Y)}, nil
}

var _ rsm.StateServer = (*GoalList)(nil)
