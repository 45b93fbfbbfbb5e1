package sim

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Mapper builds an occupancy grid from range scans taken at known poses:
// the mapping of a robot whose odometry is exact (Gazebo's, for a robot
// spawned at the map origin), where a SLAM system is not needed or not
// installed. Each beam lowers the evidence of the cells it crosses and
// raises that of the cell it ends in (a beam at its maximum range ends in
// no obstacle); a cell is Occupied or Free once its evidence passes a
// threshold either way, Unknown before. It is not safe for concurrent use.
type Mapper struct {
	cfg      MapperConfig
	evidence []int8 // per cell: hits raise it by hitWeight, misses lower it by 1
	grid     *Grid
	scans    int
}

// Evidence weights: a hit counts three misses, so a wall seen once stays
// a wall against a beam that grazes it; the bounds keep a cell able to
// change its mind after a few scans.
const (
	hitWeight     = 3
	evidenceBound = 12
	occupiedAbove = 2  // evidence > this: Occupied
	freeBelow     = -1 // evidence < this: Free
)

// MapperConfig is the grid the mapper fills.
type MapperConfig struct {
	Width, Height    int     // cells
	Resolution       float64 // m per cell
	OriginX, OriginY float64 // world position of the corner of cell (0, 0)
}

// DefaultMapperConfig is the grid of the built-in world (DefaultWorld):
// 12 m × 8 m at 0.1 m from (-1, -1).
func DefaultMapperConfig() MapperConfig {
	w := DefaultWorld()
	return MapperConfig{Width: w.Width, Height: w.Height, Resolution: w.Resolution, OriginX: w.OriginX, OriginY: w.OriginY}
}

// NewMapper returns a mapper with every cell Unknown.
func NewMapper(cfg MapperConfig) (*Mapper, error) {
	if !finite(cfg.OriginX) || !finite(cfg.OriginY) {
		return nil, fmt.Errorf("sim: map origin (%v, %v) must be finite", cfg.OriginX, cfg.OriginY)
	}
	g, err := NewGrid(cfg.Width, cfg.Height, cfg.Resolution, cfg.OriginX, cfg.OriginY, Unknown)
	if err != nil {
		return nil, err
	}
	return &Mapper{cfg: cfg, evidence: make([]int8, len(g.Cells)), grid: g}, nil
}

// Scan is one sweep of a planar range sensor, as sensor_msgs/LaserScan
// carries it: beam i points at AngleMin + i·AngleIncrement in the sensor
// frame; ranges outside [RangeMin, RangeMax) are no return.
type Scan struct {
	AngleMin, AngleIncrement float64
	RangeMin, RangeMax       float64
	Ranges                   []float32
}

// ErrBadScan is returned (wrapped) for a scan the mapper cannot use.
var ErrBadScan = errors.New("sim: bad scan")

// maxBeams bounds the beams of one scan (a 0.1° lidar has 3600).
const maxBeams = 100000

// Add enters scan s taken by a sensor at pose (the sensor's position and
// heading in the map). Beams that are NaN or below RangeMin are skipped;
// a beam at or beyond RangeMax (or +Inf, no return) clears its cells up to
// RangeMax. A scan or pose that is not finite, or whose limits make no
// sense, is refused whole with ErrBadScan and changes nothing.
func (m *Mapper) Add(pose Pose2D, s Scan) error {
	switch {
	case !finite(pose.X) || !finite(pose.Y) || !finite(pose.Theta):
		return fmt.Errorf("%w: pose %+v", ErrBadScan, pose)
	case !finite(s.AngleMin) || !finite(s.AngleIncrement):
		return fmt.Errorf("%w: angles %v + i·%v", ErrBadScan, s.AngleMin, s.AngleIncrement)
	case !(s.RangeMin >= 0) || !(s.RangeMax > s.RangeMin) || math.IsInf(s.RangeMax, 0):
		return fmt.Errorf("%w: range limits [%v, %v)", ErrBadScan, s.RangeMin, s.RangeMax)
	case len(s.Ranges) > maxBeams:
		return fmt.Errorf("%w: %d beams (at most %d)", ErrBadScan, len(s.Ranges), maxBeams)
	}
	for i, r32 := range s.Ranges {
		r := float64(r32)
		if math.IsNaN(r) || r < s.RangeMin {
			continue
		}
		hit := r < s.RangeMax
		if !hit {
			r = s.RangeMax
		}
		m.beam(pose.X, pose.Y, pose.Theta+s.AngleMin+float64(i)*s.AngleIncrement, r, hit)
	}
	m.scans++
	return nil
}

// beam walks from (x, y) along angle a in quarter-cell steps to range r:
// crossed cells get a miss, the end cell a hit when hit.
func (m *Mapper) beam(x, y, a, r float64, hit bool) {
	g := m.grid
	ca, sa := math.Cos(a), math.Sin(a)
	endX, endY := g.CellOf(x+r*ca, y+r*sa)
	lastX, lastY := math.MinInt, math.MinInt
	step := g.Resolution / 4
	for d := 0.0; d < r; d += step {
		cx, cy := g.CellOf(x+d*ca, y+d*sa)
		if (cx == lastX && cy == lastY) || (hit && cx == endX && cy == endY) {
			continue
		}
		lastX, lastY = cx, cy
		m.vote(cx, cy, -1)
	}
	if hit {
		m.vote(endX, endY, hitWeight)
	}
}

func (m *Mapper) vote(cx, cy int, v int) {
	g := m.grid
	if !g.In(cx, cy) {
		return
	}
	i := cy*g.Width + cx
	e := int(m.evidence[i]) + v
	e = max(-evidenceBound, min(evidenceBound, e))
	m.evidence[i] = int8(e)
	// between the thresholds a cell keeps what it was last
	switch {
	case e > occupiedAbove:
		g.Cells[i] = Occupied
	case e < freeBelow:
		g.Cells[i] = Free
	}
}

// Grid returns a copy of the map.
func (m *Mapper) Grid() *Grid { return m.grid.Clone() }

// Scans returns how many scans were entered.
func (m *Mapper) Scans() int { return m.scans }

// Coverage returns the fractions of the map's cells that are Free and
// Occupied.
func (m *Mapper) Coverage() (free, occupied float64) {
	var f, o int
	for _, c := range m.grid.Cells {
		switch c {
		case Free:
			f++
		case Occupied:
			o++
		}
	}
	n := float64(len(m.grid.Cells))
	return float64(f) / n, float64(o) / n
}

// PoseHistory keeps the latest timed poses of a robot (its odometry) and
// gives the pose at a time between them, so a scan is placed where the
// robot was when it was taken, not where the newest odometry says. Times
// are seconds (any epoch). It is not safe for concurrent use.
type PoseHistory struct {
	max   int
	times []float64
	poses []Pose2D
}

// NewPoseHistory returns a history of at most n poses (at least 2).
func NewPoseHistory(n int) *PoseHistory { return &PoseHistory{max: max(n, 2)} }

// Add records pose p at time t. A pose that is not finite is refused; a
// time before the newest one clears the history first (the clock jumped
// back: a simulation reset).
func (h *PoseHistory) Add(t float64, p Pose2D) error {
	if !finite(t) || !finite(p.X) || !finite(p.Y) || !finite(p.Theta) {
		return fmt.Errorf("sim: pose %+v at %v is not finite", p, t)
	}
	if n := len(h.times); n > 0 && t < h.times[n-1] {
		h.times, h.poses = h.times[:0], h.poses[:0]
	}
	h.times = append(h.times, t)
	h.poses = append(h.poses, p)
	if len(h.times) > h.max {
		h.times = append(h.times[:0], h.times[1:]...)
		h.poses = append(h.poses[:0], h.poses[1:]...)
	}
	return nil
}

// At returns the pose at time t, interpolated between the two recorded
// poses around it (the heading along the shorter turn); up to tolerance
// seconds beyond either end it returns the end pose. ok is false when t is
// further outside the history, or the history is empty.
func (h *PoseHistory) At(t, tolerance float64) (p Pose2D, ok bool) {
	n := len(h.times)
	if n == 0 || !finite(t) {
		return Pose2D{}, false
	}
	if t <= h.times[0] {
		return h.poses[0], h.times[0]-t <= tolerance
	}
	if t >= h.times[n-1] {
		return h.poses[n-1], t-h.times[n-1] <= tolerance
	}
	k := sort.SearchFloat64s(h.times, t) // times[k-1] < t <= times[k]
	a, b := h.poses[k-1], h.poses[k]
	f := (t - h.times[k-1]) / (h.times[k] - h.times[k-1])
	dth := math.Remainder(b.Theta-a.Theta, 2*math.Pi)
	return Pose2D{X: a.X + f*(b.X-a.X), Y: a.Y + f*(b.Y-a.Y), Theta: math.Remainder(a.Theta+f*dth, 2*math.Pi)}, true
}

// TurnRate returns how fast the heading turned at time t, rad/s (its
// magnitude): the heading change over the recorded poses within window
// seconds either side of t, divided by the time between them. ok is false
// when fewer than two poses fall in that span.
func (h *PoseHistory) TurnRate(t, window float64) (rate float64, ok bool) {
	if !finite(t) || !(window > 0) {
		return 0, false
	}
	first, last := -1, -1
	for i, ti := range h.times {
		if ti >= t-window && ti <= t+window {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 || last == first || h.times[last] <= h.times[first] {
		return 0, false
	}
	turned := 0.0
	for i := first + 1; i <= last; i++ {
		turned += math.Remainder(h.poses[i].Theta-h.poses[i-1].Theta, 2*math.Pi)
	}
	return math.Abs(turned) / (h.times[last] - h.times[first]), true
}
