package sim

import (
	"math"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/viz"
)

func TestFrontierMarkers(t *testing.T) {
	g, _ := NewGrid(20, 10, 0.1, 0, 0, Unknown)
	for cy := 0; cy < 10; cy++ {
		for cx := 0; cx < 10; cx++ {
			g.Set(cx, cy, Free)
		}
	}
	g.Set(15, 5, Free)
	fs := FindFrontiers(g, 1, 0)
	if len(fs) != 2 || len(fs[0].Cells) != fs[0].Size || len(fs[1].Cells) != 1 {
		t.Fatalf("frontiers %+v: want the cells of each", fs)
	}
	for _, c := range fs[0].Cells {
		if math.Abs(c.X-0.95) > 1e-9 || c.Y < 0 || c.Y > 1 {
			t.Fatalf("frontier cell %+v is not on the column x=0.95", c)
		}
	}
	failed := []Point{{3, 4}}
	ms := FrontierMarkers(FrameMap, g.Resolution, fs, failed)
	if len(ms) != 1+2*len(fs)+len(failed) || ms[0].Action != viz.DeleteAll {
		t.Fatalf("%d markers, first %+v: want DELETEALL, 2 per frontier, 1 per failed goal", len(ms), ms[0])
	}
	for k, f := range fs {
		cells, goal := ms[1+2*k], ms[2+2*k]
		if cells.Kind != viz.Points || cells.Namespace != FrontierCellsNS || cells.ID != int32(k) ||
			len(cells.Points) != len(f.Cells) || cells.Scale.X != 0.1 || cells.Color != FrontierCellColor {
			t.Errorf("frontier %d cells marker %+v", k, cells)
		}
		for i, p := range cells.Points {
			if p.X != f.Cells[i].X || p.Y != f.Cells[i].Y {
				t.Errorf("frontier %d point %d = %+v, want %+v", k, i, p, f.Cells[i])
			}
		}
		if goal.Kind != viz.Sphere || goal.Namespace != FrontierGoalsNS || goal.ID != int32(k) ||
			goal.Position != (geom.Vec3{X: f.Goal.X, Y: f.Goal.Y}) || goal.Color != FrontierGoalColor || goal.Scale.X <= 0 {
			t.Errorf("frontier %d goal marker %+v", k, goal)
		}
	}
	last := ms[len(ms)-1]
	if last.Kind != viz.Sphere || last.Namespace != FailedGoalsNS || last.ID != 0 || last.Position != (geom.Vec3{X: 3, Y: 4}) ||
		last.Color != FailedGoalColor {
		t.Errorf("failed goal marker %+v", last)
	}
	for _, m := range ms {
		if m.Frame != FrameMap {
			t.Errorf("marker in frame %q", m.Frame)
		}
	}
	// No frontier left: only the DELETEALL, which clears the display.
	if ms := FrontierMarkers(FrameMap, 0.1, nil, nil); len(ms) != 1 || ms[0].Action != viz.DeleteAll {
		t.Fatalf("no frontiers: %+v", ms)
	}
}

func TestPlanPoses(t *testing.T) {
	cases := map[string]struct {
		start Point
		path  []Point
		yaws  []float64
	}{
		"at the goal already":           {Point{1, 1}, nil, []float64{0}},
		"straight along +y":             {Point{0, 0}, []Point{{0, 1}, {0, 2}}, []float64{math.Pi / 2, math.Pi / 2, math.Pi / 2}},
		"a corner":                      {Point{0, 0}, []Point{{1, 0}, {1, -1}}, []float64{0, -math.Pi / 2, -math.Pi / 2}},
		"a repeated point keeps facing": {Point{0, 0}, []Point{{0, 0}, {-1, 0}}, []float64{0, math.Pi, math.Pi}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := PlanPoses(c.start, c.path)
			if len(got) != len(c.path)+1 || got[0].Point != c.start {
				t.Fatalf("poses %+v", got)
			}
			for i, p := range got {
				if i > 0 && p.Point != c.path[i-1] {
					t.Errorf("pose %d at %+v, want %+v", i, p.Point, c.path[i-1])
				}
				if math.Abs(p.Yaw-c.yaws[i]) > 1e-12 {
					t.Errorf("pose %d yaw %v, want %v", i, p.Yaw, c.yaws[i])
				}
			}
		})
	}
}

func TestNavigatorCountsPlans(t *testing.T) {
	r := newRobot(t, DefaultWorld(), Pose2D{})
	n := NewNavigator(DefaultNav())
	if err := n.Start(r.Seen(), r.Pose(), Point{9, 5}); err != nil {
		t.Fatal(err)
	}
	if n.Plans() != 1 || len(n.Path()) == 0 {
		t.Fatalf("after Start: %d plans, path of %d points", n.Plans(), len(n.Path()))
	}
	// Drive for longer than the replan period: a replan is counted.
	for t := 0.0; t <= DefaultNav().ReplanPeriod+0.1; t += dt {
		v, w := n.Update(r.Seen(), r.Pose(), dt)
		_ = r.Command(v, w)
		r.Step(dt)
	}
	if n.Plans() < 2 {
		t.Fatalf("%d plans after %v s of driving, want a replan", n.Plans(), DefaultNav().ReplanPeriod+0.1)
	}
}
