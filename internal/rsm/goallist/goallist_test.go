package goallist

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
)

// failingStore refuses or fails setNavigationGoal.
type failingStore struct {
	rsm.DataStore
	reply rsm.Reply
	err   error
}

func (f failingStore) SetNavigationGoal(context.Context, rsm.NavigationGoal) (rsm.Reply, error) {
	return f.reply, f.err
}

func calc(goal rsm.Pose) rsm.RunRequest {
	return rsm.RunRequest{StateName: rsm.NextCalculateGoal, Goal: goal}
}

func TestGoalList_VisitsInOrderThenIdle(t *testing.T) {
	ctx := context.Background()
	store := rsm.NewStore(rsm.StoreConfig{})
	g, err := New(store, []float64{1, 0, 1, 2, -1, 2}, 0)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		shown string
		x, y  float64
		yaw   float64 // from the previous goal (the request's pose)
		next  string
	}{
		{"E: Goal List 1/3", 1, 0, 0, rsm.NextNavigation},
		{"E: Goal List 2/3", 1, 2, math.Pi / 2, rsm.NextNavigation},
		{"E: Goal List 3/3", -1, 2, math.Pi, rsm.NextNavigation},
		{"", 0, 0, 0, rsm.NextIdle},
	}
	prev := rsm.Pose{Orientation: geom.Identity}
	for i, s := range steps {
		var shown []string
		res, err := g.RunState(ctx, calc(prev), func(n string) { shown = append(shown, n) })
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if res.NextState != s.next {
			t.Fatalf("step %d: next %q, want %q (%s)", i, res.NextState, s.next, res.Reason)
		}
		if s.next == rsm.NextIdle {
			if len(shown) != 0 || res.Reason != "all 3 goals visited" {
				t.Fatalf("end: shown %q, reason %q", shown, res.Reason)
			}
			continue
		}
		if len(shown) != 1 || shown[0] != s.shown {
			t.Fatalf("step %d: shown %q, want %q", i, shown, s.shown)
		}
		ng, _ := store.GetNavigationGoal(ctx)
		if ng.Mode != rsm.NavigationExploration || ng.Goal.Position != (geom.Vec3{X: s.x, Y: s.y}) {
			t.Fatalf("step %d: stored goal %+v", i, ng)
		}
		if yaw := ng.Goal.Orientation.Yaw(); math.Abs(yaw-s.yaw) > 1e-9 {
			t.Fatalf("step %d: yaw %v, want %v", i, yaw, s.yaw)
		}
		prev = ng.Goal
	}
	g.Reset()
	if g.Next() != 0 {
		t.Fatal("Reset did not start over")
	}
}

func TestGoalList_Failures(t *testing.T) {
	ctx := context.Background()
	store := rsm.NewStore(rsm.StoreConfig{})
	cases := []struct {
		name  string
		store rsm.DataStore
		req   rsm.RunRequest
		ctx   func() context.Context
		dwell time.Duration
		want  string
	}{
		{"wrong state", store, rsm.RunRequest{StateName: rsm.NextMapping}, nil, 0, "serves only calculate_goal_plugin"},
		{"store down", failingStore{err: rsm.ErrUnavailable}, calc(rsm.Pose{}), nil, 0, "set navigation goal: not available"},
		{"store refuses", failingStore{reply: rsm.Reply{Message: "goal has NaN"}}, calc(rsm.Pose{}), nil, 0, "refused: goal has NaN"},
		{"canceled while shown", store, calc(rsm.Pose{}), func() context.Context {
			c, cancel := context.WithCancel(ctx)
			cancel()
			return c
		}, time.Hour, "context canceled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := New(c.store, []float64{1, 1}, c.dwell)
			if err != nil {
				t.Fatal(err)
			}
			rctx := ctx
			if c.ctx != nil {
				rctx = c.ctx()
			}
			_, err = g.RunState(rctx, c.req, func(string) {})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if g.Next() != 0 {
				t.Fatal("a failed run must keep the goal")
			}
		})
	}
	if _, err := New(store, []float64{1, 1}, 0); err != nil {
		t.Fatal(err)
	}
	g, _ := New(store, nil, 0)
	if res, err := g.RunState(ctx, calc(rsm.Pose{}), func(string) {}); err != nil || res.NextState != rsm.NextIdle {
		t.Fatalf("empty list: %+v %v", res, err)
	}
	if _, err := g.RunState(ctx, rsm.RunRequest{StateName: "x"}, func(string) {}); !errors.Is(err, ErrWrongState) {
		t.Fatalf("err %v, want ErrWrongState", err)
	}
}

func TestNew_RejectsBadInput(t *testing.T) {
	store := rsm.NewStore(rsm.StoreConfig{})
	cases := []struct {
		name  string
		store rsm.DataStore
		xy    []float64
		dwell time.Duration
		want  string
	}{
		{"no store", nil, nil, 0, "data store is required"},
		{"odd", store, []float64{1, 2, 3}, 0, "3 coordinates"},
		{"nan", store, []float64{1, math.NaN()}, 0, "not finite"},
		{"inf", store, []float64{math.Inf(1), 0}, 0, "not finite"},
		{"negative dwell", store, nil, -time.Second, "dwell"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := New(c.store, c.xy, c.dwell); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}
