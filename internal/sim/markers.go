package sim

import (
	"math"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/viz"
)

// Marker namespaces of FrontierMarkers.
const (
	FrontierCellsNS  = "frontiers"
	FrontierGoalsNS  = "frontier_goals"
	FailedGoalsNS    = "failed_goals"
	frontierGoalSize = 0.25 // sphere diameter, m
)

// Frontier marker colours: the cells blue as explore_lite draws them, the
// goals (one per frontier) yellow, goals that failed red.
var (
	FrontierCellColor = viz.Color{R: 0.1, G: 0.4, B: 1, A: 1}
	FrontierGoalColor = viz.Color{R: 1, G: 0.85, B: 0, A: 1}
	FailedGoalColor   = viz.Color{R: 0.9, G: 0.1, B: 0.1, A: 1}
)

// FrontierMarkers draws the frontiers for RViz: a DELETEALL first (so
// frontiers that closed disappear), then per frontier k its cells as a
// POINTS marker of cell size (namespace "frontiers", id k) and its goal as
// a sphere (namespace "frontier_goals", id k), and each failed goal as a
// red sphere (namespace "failed_goals"). cell is the map resolution.
func FrontierMarkers(frame string, cell float64, frontiers []Frontier, failed []Point) []viz.Marker {
	out := make([]viz.Marker, 0, 1+2*len(frontiers)+len(failed))
	out = append(out, viz.ClearAll(frame))
	for k, f := range frontiers {
		pts := make([]geom.Vec3, len(f.Cells))
		for i, c := range f.Cells {
			pts[i] = geom.Vec3{X: c.X, Y: c.Y}
		}
		out = append(out, viz.Marker{Frame: frame, Namespace: FrontierCellsNS, ID: int32(k), Kind: viz.Points,
			Orientation: geom.Identity, Scale: geom.Vec3{X: cell, Y: cell}, Color: FrontierCellColor, Points: pts})
		out = append(out, sphere(frame, FrontierGoalsNS, int32(k), f.Goal, FrontierGoalColor))
	}
	for k, p := range failed {
		out = append(out, sphere(frame, FailedGoalsNS, int32(k), p, FailedGoalColor))
	}
	return out
}

func sphere(frame, ns string, id int32, p Point, c viz.Color) viz.Marker {
	return viz.Marker{Frame: frame, Namespace: ns, ID: id, Kind: viz.Sphere, Position: geom.Vec3{X: p.X, Y: p.Y},
		Orientation: geom.Identity, Scale: geom.Vec3{X: frontierGoalSize, Y: frontierGoalSize, Z: frontierGoalSize}, Color: c}
}

// PlanPose is one pose of a planned path: a position and the heading (yaw,
// radians) of the path there.
type PlanPose struct {
	Point
	Yaw float64
}

// PlanPoses turns a plan from start into poses for a nav_msgs/Path: start
// first, then every path point, each facing the next point (the last one
// keeps the heading of the final segment; a single pose faces along x).
func PlanPoses(start Point, path []Point) []PlanPose {
	pts := append([]Point{start}, path...)
	out := make([]PlanPose, len(pts))
	yaw := 0.0
	for i, p := range pts {
		if i+1 < len(pts) {
			if n := pts[i+1]; n != p {
				yaw = math.Atan2(n.Y-p.Y, n.X-p.X)
			}
		}
		out[i] = PlanPose{Point: p, Yaw: yaw}
	}
	return out
}
