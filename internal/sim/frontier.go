package sim

import (
	"math"
	"sort"
)

// Frontier is a cluster of known-free cells that border unknown space.
type Frontier struct {
	// Goal is the frontier cell nearest the cluster centroid: a reachable
	// place from which the unknown space can be seen.
	Goal Point
	// Size is the number of cells in the cluster.
	Size int
	// Cells are the centres of the cluster's cells.
	Cells []Point
}

// FindFrontiers returns the frontiers of map g with at least minSize
// cells, largest first. A frontier cell is a free cell with an unknown
// 4-neighbour; cells are clustered by 8-connectivity. Cells closer than
// clearance to an obstacle are skipped so every goal is drivable.
func FindFrontiers(g *Grid, minSize int, clearance float64) []Frontier {
	isFrontier := make([]bool, len(g.Cells))
	for cy := 0; cy < g.Height; cy++ {
		for cx := 0; cx < g.Width; cx++ {
			if g.At(cx, cy) != Free {
				continue
			}
			if g.At(cx+1, cy) == Unknown && g.In(cx+1, cy) || g.At(cx-1, cy) == Unknown && g.In(cx-1, cy) ||
				g.At(cx, cy+1) == Unknown && g.In(cx, cy+1) || g.At(cx, cy-1) == Unknown && g.In(cx, cy-1) {
				x, y := g.Center(cx, cy)
				if clearance > 0 && g.Blocked(x, y, clearance, false) {
					continue
				}
				isFrontier[cy*g.Width+cx] = true
			}
		}
	}
	seen := make([]bool, len(g.Cells))
	var out []Frontier
	for start := range isFrontier {
		if !isFrontier[start] || seen[start] {
			continue
		}
		cluster := []int{start}
		seen[start] = true
		for k := 0; k < len(cluster); k++ {
			cx, cy := cluster[k]%g.Width, cluster[k]/g.Width
			for _, n := range neighbours {
				nx, ny := cx+n.dx, cy+n.dy
				if !g.In(nx, ny) {
					continue
				}
				ni := ny*g.Width + nx
				if isFrontier[ni] && !seen[ni] {
					seen[ni] = true
					cluster = append(cluster, ni)
				}
			}
		}
		if len(cluster) < minSize {
			continue
		}
		var mx, my float64
		cells := make([]Point, len(cluster))
		for k, i := range cluster {
			x, y := g.Center(i%g.Width, i/g.Width)
			cells[k] = Point{x, y}
			mx += x
			my += y
		}
		mx /= float64(len(cluster))
		my /= float64(len(cluster))
		best, bestD := cluster[0], math.Inf(1)
		for _, i := range cluster {
			x, y := g.Center(i%g.Width, i/g.Width)
			if d := math.Hypot(x-mx, y-my); d < bestD {
				best, bestD = i, d
			}
		}
		x, y := g.Center(best%g.Width, best/g.Width)
		out = append(out, Frontier{Goal: Point{x, y}, Size: len(cluster), Cells: cells})
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Size > out[b].Size })
	return out
}
