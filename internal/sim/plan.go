package sim

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
)

// ErrNoPath means the planner found no collision-free path.
var ErrNoPath = errors.New("sim: no path to goal")

// Point is a world position in metres.
type Point struct{ X, Y float64 }

// Planner plans collision-free paths for a disc-shaped robot on a grid with
// A* over 8-connected cells.
type Planner struct {
	// Radius is the robot radius plus a safety margin, m.
	Radius float64
	// UnknownFree lets paths cross unknown cells (as Nav2's allow_unknown).
	UnknownFree bool
}

// free computes which cells the robot centre may occupy.
func (p Planner) free(g *Grid) []bool {
	ok := make([]bool, len(g.Cells))
	for cy := 0; cy < g.Height; cy++ {
		for cx := 0; cx < g.Width; cx++ {
			x, y := g.Center(cx, cy)
			ok[cy*g.Width+cx] = !g.Blocked(x, y, p.Radius, !p.UnknownFree)
		}
	}
	return ok
}

// Plan returns a path of waypoints from start to goal (both included) on g.
// A start cell inside the inflated obstacles is allowed (the robot may be
// touching a wall); a goal cell there is not: it yields ErrNoPath.
func (p Planner) Plan(g *Grid, start, goal Point) ([]Point, error) {
	for _, v := range []float64{start.X, start.Y, goal.X, goal.Y} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("sim: plan from %v to %v: coordinates must be finite", start, goal)
		}
	}
	sx, sy := g.CellOf(start.X, start.Y)
	gx, gy := g.CellOf(goal.X, goal.Y)
	if !g.In(sx, sy) || !g.In(gx, gy) {
		return nil, fmt.Errorf("%w: start or goal outside the map", ErrNoPath)
	}
	ok := p.free(g)
	si, gi := sy*g.Width+sx, gy*g.Width+gx
	if !ok[gi] {
		return nil, fmt.Errorf("%w: goal (%.2f, %.2f) is in or too close to an obstacle", ErrNoPath, goal.X, goal.Y)
	}
	ok[si] = true
	dist := make([]float64, len(g.Cells))
	prev := make([]int32, len(g.Cells))
	for i := range dist {
		dist[i] = math.Inf(1)
		prev[i] = -1
	}
	h := func(i int) float64 {
		dx, dy := float64(i%g.Width-gx), float64(i/g.Width-gy)
		return math.Hypot(dx, dy)
	}
	dist[si] = 0
	open := &pq{{i: si, f: h(si)}}
	for open.Len() > 0 {
		cur := heap.Pop(open).(node)
		if cur.i == gi {
			break
		}
		if cur.f > dist[cur.i]+h(cur.i)+1e-9 {
			continue // stale entry
		}
		cx, cy := cur.i%g.Width, cur.i/g.Width
		for _, n := range neighbours {
			nx, ny := cx+n.dx, cy+n.dy
			if !g.In(nx, ny) {
				continue
			}
			ni := ny*g.Width + nx
			if !ok[ni] {
				continue
			}
			// No corner cutting between two blocked cells.
			if n.dx != 0 && n.dy != 0 && (!ok[cy*g.Width+nx] || !ok[ny*g.Width+cx]) {
				continue
			}
			nd := dist[cur.i] + n.cost
			if nd < dist[ni] {
				dist[ni] = nd
				prev[ni] = int32(cur.i)
				heap.Push(open, node{i: ni, f: nd + h(ni)})
			}
		}
	}
	if math.IsInf(dist[gi], 1) {
		return nil, fmt.Errorf("%w: (%.2f, %.2f) is not reachable from (%.2f, %.2f)", ErrNoPath, goal.X, goal.Y, start.X, start.Y)
	}
	var cells []int
	for i := gi; i != -1; i = int(prev[i]) {
		cells = append(cells, i)
	}
	path := make([]Point, 0, len(cells)+1)
	path = append(path, start)
	for k := len(cells) - 2; k >= 1; k-- { // skip start and goal cells
		x, y := g.Center(cells[k]%g.Width, cells[k]/g.Width)
		path = append(path, Point{x, y})
	}
	return append(path, goal), nil
}

type step struct {
	dx, dy int
	cost   float64
}

var neighbours = [8]step{
	{1, 0, 1}, {-1, 0, 1}, {0, 1, 1}, {0, -1, 1},
	{1, 1, math.Sqrt2}, {1, -1, math.Sqrt2}, {-1, 1, math.Sqrt2}, {-1, -1, math.Sqrt2},
}

type node struct {
	i int
	f float64
}

type pq []node

func (q pq) Len() int            { return len(q) }
func (q pq) Less(a, b int) bool  { return q[a].f < q[b].f }
func (q pq) Swap(a, b int)       { q[a], q[b] = q[b], q[a] }
func (q *pq) Push(x interface{}) { *q = append(*q, x.(node)) }
func (q *pq) Pop() interface{} {
	old := *q
	n := old[len(old)-1]
	*q = old[:len(old)-1]
	return n
}
