// Package sim holds the built-in simulators that stand in for Gazebo when no
// ROS 2 installation is around: a 2-D occupancy-grid world, a
// differential-drive robot that moves in it and sees it through a range
// sensor, the map that robot has built so far, an A* planner with a path
// follower (the core of a small Nav2 stand-in), and a frontier detector for
// exploration.
//
// Everything here is plain Go with no ROS types; the nodes in nodes/ adapt it
// to topics (cmd_vel, odom, tf, scan, map) and actions (navigate_to_pose).
package sim

import (
	"errors"
	"fmt"
	"math"
)

// Cell values, as in nav_msgs/OccupancyGrid.
const (
	Unknown  int8 = -1
	Free     int8 = 0
	Occupied int8 = 100
)

// Grid is an occupancy grid: row-major cells, row 0 at the origin's y,
// column 0 at the origin's x, each cell Resolution metres square.
type Grid struct {
	Width, Height int
	Resolution    float64 // metres per cell
	OriginX       float64 // world position of the corner of cell (0,0)
	OriginY       float64
	Cells         []int8
}

// NewGrid returns a grid filled with v.
func NewGrid(width, height int, resolution, originX, originY float64, v int8) (*Grid, error) {
	if width <= 0 || height <= 0 || width*height > 1<<24 {
		return nil, fmt.Errorf("sim: grid size %dx%d out of range", width, height)
	}
	if !(resolution > 0) || math.IsInf(resolution, 0) {
		return nil, fmt.Errorf("sim: resolution %v must be positive", resolution)
	}
	g := &Grid{Width: width, Height: height, Resolution: resolution, OriginX: originX, OriginY: originY,
		Cells: make([]int8, width*height)}
	for i := range g.Cells {
		g.Cells[i] = v
	}
	return g, nil
}

// Clone returns a deep copy.
func (g *Grid) Clone() *Grid {
	c := *g
	c.Cells = append([]int8(nil), g.Cells...)
	return &c
}

// In reports whether cell (cx, cy) is inside the grid.
func (g *Grid) In(cx, cy int) bool { return cx >= 0 && cy >= 0 && cx < g.Width && cy < g.Height }

// At returns the value of a cell; cells outside the grid are Occupied so
// nothing leaves the world.
func (g *Grid) At(cx, cy int) int8 {
	if !g.In(cx, cy) {
		return Occupied
	}
	return g.Cells[cy*g.Width+cx]
}

// Set sets a cell inside the grid; outside cells are ignored.
func (g *Grid) Set(cx, cy int, v int8) {
	if g.In(cx, cy) {
		g.Cells[cy*g.Width+cx] = v
	}
}

// CellOf returns the cell holding world point (x, y).
func (g *Grid) CellOf(x, y float64) (int, int) {
	return int(math.Floor((x - g.OriginX) / g.Resolution)), int(math.Floor((y - g.OriginY) / g.Resolution))
}

// Center returns the world position of the centre of cell (cx, cy).
func (g *Grid) Center(cx, cy int) (float64, float64) {
	return g.OriginX + (float64(cx)+0.5)*g.Resolution, g.OriginY + (float64(cy)+0.5)*g.Resolution
}

// Blocked reports whether a disc of radius r at (x, y) touches an occupied
// (or, if unknownBlocks, unknown) cell or leaves the grid.
func (g *Grid) Blocked(x, y, r float64, unknownBlocks bool) bool {
	c0x, c0y := g.CellOf(x-r, y-r)
	c1x, c1y := g.CellOf(x+r, y+r)
	for cy := c0y; cy <= c1y; cy++ {
		for cx := c0x; cx <= c1x; cx++ {
			v := g.At(cx, cy)
			if v != Occupied && !(unknownBlocks && v == Unknown) {
				continue
			}
			// Distance from the disc centre to the cell square.
			mx, my := g.Center(cx, cy)
			h := g.Resolution / 2
			dx := math.Max(math.Abs(x-mx)-h, 0)
			dy := math.Max(math.Abs(y-my)-h, 0)
			if dx*dx+dy*dy < r*r {
				return true
			}
		}
	}
	return false
}

// Clearance returns the distance from (x, y) to the nearest occupied (or,
// if unknownBlocks, unknown) cell or the edge of the grid, looking no
// farther than r: r means nothing is nearer. A disc of radius r at (x, y)
// is Blocked when its Clearance is below r.
func (g *Grid) Clearance(x, y, r float64, unknownBlocks bool) float64 {
	best := r
	c0x, c0y := g.CellOf(x-r, y-r)
	c1x, c1y := g.CellOf(x+r, y+r)
	h := g.Resolution / 2
	for cy := c0y; cy <= c1y; cy++ {
		for cx := c0x; cx <= c1x; cx++ {
			v := g.At(cx, cy)
			if v != Occupied && !(unknownBlocks && v == Unknown) {
				continue
			}
			mx, my := g.Center(cx, cy)
			dx := math.Max(math.Abs(x-mx)-h, 0)
			dy := math.Max(math.Abs(y-my)-h, 0)
			if d := math.Hypot(dx, dy); d < best {
				best = d
			}
		}
	}
	return best
}

// FillRect sets every cell whose centre lies in the world rectangle.
func (g *Grid) FillRect(x0, y0, x1, y1 float64, v int8) {
	if x0 > x1 {
		x0, x1 = x1, x0
	}
	if y0 > y1 {
		y0, y1 = y1, y0
	}
	for cy := 0; cy < g.Height; cy++ {
		for cx := 0; cx < g.Width; cx++ {
			mx, my := g.Center(cx, cy)
			if mx >= x0 && mx <= x1 && my >= y0 && my <= y1 {
				g.Cells[cy*g.Width+cx] = v
			}
		}
	}
}

// ErrBadWorld reports a world description that cannot be built.
var ErrBadWorld = errors.New("sim: bad world")

// Rect is an axis-aligned rectangle in world coordinates, metres.
type Rect struct{ X0, Y0, X1, Y1 float64 }

// DefaultWalls lists the obstacles of the built-in world: a 12 m × 8 m flat
// with outer walls, three rooms joined by doorways, and three pillars. The
// same list produces the grid (DefaultWorld) and the Gazebo world
// (internal/gazebo.WorldSDF), so both simulators see one building.
func DefaultWalls() []Rect {
	return []Rect{
		// Outer walls.
		{-1, -1, 11, -0.8}, {-1, 6.8, 11, 7}, {-1, -1, -0.8, 7}, {10.8, -1, 11, 7},
		// Between rooms 1 and 2 at x = 3, doorway y in [1, 2].
		{2.9, -1, 3.1, 1}, {2.9, 2, 3.1, 7},
		// Between rooms 2 and 3 at x = 7, doorway y in [4.5, 5.5].
		{6.9, -1, 7.1, 4.5}, {6.9, 5.5, 7.1, 7},
		// Pillars.
		{4.6, 2.6, 5.0, 3.0}, {8.6, 1.2, 9.0, 1.6}, {0.8, 4.2, 1.4, 4.6},
	}
}

// DefaultWorld returns the built-in world at 0.1 m per cell, origin at
// (-1, -1), so the robot starts at (0, 0) in the first room.
func DefaultWorld() *Grid {
	g, _ := NewGrid(120, 80, 0.1, -1, -1, Free)
	for _, r := range DefaultWalls() {
		g.FillRect(r.X0, r.Y0, r.X1, r.Y1, Occupied)
	}
	return g
}
