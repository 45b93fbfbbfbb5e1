package sim

import (
	"errors"
	"math"
	"testing"
)

// scanAt returns the built-in lidar's scan of world from pose.
func scanAt(t *testing.T, world *Grid, pose Pose2D) Scan {
	t.Helper()
	cfg := DefaultDiffDrive()
	d, err := NewDiffDrive(cfg, world, pose)
	if err != nil {
		t.Fatal(err)
	}
	return Scan{AngleMin: 0, AngleIncrement: 2 * math.Pi / float64(cfg.ScanBeams),
		RangeMin: cfg.ScanMinRange, RangeMax: cfg.ScanRange, Ranges: d.Scan()}
}

// The map built from the built-in lidar's scans along a route through the
// flat agrees with the flat: what it calls a wall is (next to) a wall,
// what it calls free is free, and it covers the rooms it saw.
func TestMapper_MapsTheFlat(t *testing.T) {
	world := DefaultWorld()
	m, err := NewMapper(DefaultMapperConfig())
	if err != nil {
		t.Fatal(err)
	}
	route := []Pose2D{{0, 0, 0}, {1, 0.5, 0.3}, {2, 1.5, 1.2}, {3, 1.5, 0}, {4, 1.5, -0.4}, {5, 1, 2}, {6, 1.5, 3}}
	for _, p := range route {
		if err := m.Add(p, scanAt(t, world, p)); err != nil {
			t.Fatal(err)
		}
	}
	g := m.Grid()
	var free, occ, freeWrong, occWrong int
	for cy := 0; cy < g.Height; cy++ {
		for cx := 0; cx < g.Width; cx++ {
			switch g.At(cx, cy) {
			case Free:
				free++
				if world.At(cx, cy) == Occupied {
					freeWrong++
				}
			case Occupied:
				occ++
				near := false
				for dy := -1; dy <= 1; dy++ {
					for dx := -1; dx <= 1; dx++ {
						near = near || world.At(cx+dx, cy+dy) == Occupied
					}
				}
				if !near {
					occWrong++
				}
			}
		}
	}
	t.Logf("%d scans: %d free cells (%d in walls), %d occupied (%d not next to a wall)", m.Scans(), free, freeWrong, occ, occWrong)
	if free < 1500 || occ < 200 {
		t.Fatalf("map too small: %d free, %d occupied cells", free, occ)
	}
	if float64(freeWrong) > 0.01*float64(free) || float64(occWrong) > 0.02*float64(occ) {
		t.Fatalf("map disagrees with the world: %d of %d free cells in walls, %d of %d occupied cells away from walls",
			freeWrong, free, occWrong, occ)
	}
	f, o := m.Coverage()
	if math.Abs(f*float64(g.Width*g.Height)-float64(free)) > 0.5 || math.Abs(o*float64(g.Width*g.Height)-float64(occ)) > 0.5 {
		t.Fatalf("Coverage %v %v disagrees with the counts", f, o)
	}
}

// A beam with no return clears its cells up to the maximum range and marks
// no wall; a hit marks the end cell; a wall seen once is not erased by one
// grazing miss.
func TestMapper_Beams(t *testing.T) {
	m, err := NewMapper(MapperConfig{Width: 40, Height: 10, Resolution: 0.1, OriginX: 0, OriginY: 0})
	if err != nil {
		t.Fatal(err)
	}
	pose := Pose2D{X: 0.05, Y: 0.55}
	inf := float32(math.Inf(1))
	s := Scan{AngleIncrement: 1, RangeMin: 0.1, RangeMax: 2, Ranges: []float32{inf}}
	for range 2 {
		if err := m.Add(pose, s); err != nil {
			t.Fatal(err)
		}
	}
	g := m.Grid()
	for cx := 0; cx < 20; cx++ {
		if g.At(cx, 5) != Free {
			t.Fatalf("cell %d after two misses: %d, want free", cx, g.At(cx, 5))
		}
	}
	if g.At(21, 5) != Unknown {
		t.Fatalf("cell beyond the maximum range: %d", g.At(21, 5))
	}
	s.Ranges = []float32{1.0}
	_ = m.Add(pose, s)
	_ = m.Add(pose, s)
	if g := m.Grid(); g.At(10, 5) != Occupied || g.At(5, 5) != Free {
		t.Fatalf("after two hits at 1 m: cell 10 %d, cell 5 %d", g.At(10, 5), g.At(5, 5))
	}
	s.Ranges = []float32{inf}
	_ = m.Add(pose, s)
	if g := m.Grid(); g.At(10, 5) != Occupied {
		t.Fatal("one miss erased a wall seen twice")
	}
	// NaN and too-short beams are skipped, not refused
	s.Ranges = []float32{float32(math.NaN()), 0.05}
	if err := m.Add(pose, s); err != nil {
		t.Fatal(err)
	}
}

func TestMapper_Refuses(t *testing.T) {
	if _, err := NewMapper(MapperConfig{Width: 0, Height: 10, Resolution: 0.1}); err == nil {
		t.Error("empty map accepted")
	}
	if _, err := NewMapper(MapperConfig{Width: 10, Height: 10, Resolution: 0.1, OriginX: math.NaN()}); err == nil {
		t.Error("NaN origin accepted")
	}
	m, _ := NewMapper(MapperConfig{Width: 10, Height: 10, Resolution: 0.1})
	good := Scan{AngleIncrement: 0.1, RangeMin: 0.1, RangeMax: 2, Ranges: []float32{0.5}}
	nan := math.NaN()
	for _, c := range []struct {
		name string
		pose Pose2D
		s    Scan
	}{
		{"NaN pose", Pose2D{X: nan}, good},
		{"Inf heading", Pose2D{Theta: math.Inf(1)}, good},
		{"NaN increment", Pose2D{}, Scan{AngleIncrement: nan, RangeMin: 0.1, RangeMax: 2}},
		{"Inf angle", Pose2D{}, Scan{AngleMin: math.Inf(-1), RangeMin: 0.1, RangeMax: 2}},
		{"max below min", Pose2D{}, Scan{RangeMin: 2, RangeMax: 1}},
		{"negative min", Pose2D{}, Scan{RangeMin: -1, RangeMax: 1}},
		{"Inf max", Pose2D{}, Scan{RangeMin: 0, RangeMax: math.Inf(1)}},
		{"too many beams", Pose2D{}, Scan{RangeMin: 0, RangeMax: 1, Ranges: make([]float32, maxBeams+1)}},
	} {
		if err := m.Add(c.pose, c.s); !errors.Is(err, ErrBadScan) {
			t.Errorf("%s: %v, want ErrBadScan", c.name, err)
		}
	}
	if m.Scans() != 0 {
		t.Fatalf("%d refused scans counted", m.Scans())
	}
	for _, c := range m.Grid().Cells {
		if c != Unknown {
			t.Fatal("a refused scan changed the map")
		}
	}
}

func TestPoseHistory(t *testing.T) {
	h := NewPoseHistory(3)
	if _, ok := h.At(1, 1); ok {
		t.Fatal("empty history gave a pose")
	}
	_ = h.Add(1, Pose2D{X: 0, Theta: 3})
	_ = h.Add(2, Pose2D{X: 1, Y: 2, Theta: -3}) // turned 0.28 rad through ±π
	for _, c := range []struct {
		t, tol float64
		want   Pose2D
		ok     bool
	}{
		{1.5, 0, Pose2D{X: 0.5, Y: 1, Theta: math.Remainder(3+(2*math.Pi-6)/2, 2*math.Pi)}, true},
		{1, 0, Pose2D{X: 0, Theta: 3}, true},
		{2.05, 0.1, Pose2D{X: 1, Y: 2, Theta: -3}, true},
		{2.2, 0.1, Pose2D{}, false},
		{0.95, 0.1, Pose2D{X: 0, Theta: 3}, true},
		{0.5, 0.1, Pose2D{}, false},
		{math.NaN(), 1, Pose2D{}, false},
	} {
		p, ok := h.At(c.t, c.tol)
		if ok != c.ok || (ok && (math.Abs(p.X-c.want.X) > 1e-12 || math.Abs(p.Y-c.want.Y) > 1e-12 ||
			math.Abs(math.Remainder(p.Theta-c.want.Theta, 2*math.Pi)) > 1e-12)) {
			t.Errorf("At(%v, %v) = %+v %v, want %+v %v", c.t, c.tol, p, ok, c.want, c.ok)
		}
	}
	// bounded: the oldest goes
	_ = h.Add(3, Pose2D{X: 2})
	_ = h.Add(4, Pose2D{X: 3})
	if _, ok := h.At(1.5, 0); ok {
		t.Fatal("kept more than 3 poses")
	}
	// the clock went back: start over
	_ = h.Add(0.5, Pose2D{X: 9})
	if p, ok := h.At(0.5, 0); !ok || p.X != 9 {
		t.Fatalf("after a reset: %+v %v", p, ok)
	}
	if _, ok := h.At(3.5, 0.1); ok {
		t.Fatal("poses from before the reset kept")
	}
	if h.Add(1, Pose2D{Y: math.Inf(1)}) == nil || h.Add(math.NaN(), Pose2D{}) == nil {
		t.Fatal("a pose that is not finite was accepted")
	}
}

func TestPoseHistory_TurnRate(t *testing.T) {
	h := NewPoseHistory(20)
	if _, ok := h.TurnRate(1, 0.1); ok {
		t.Fatal("empty history gave a turn rate")
	}
	// 0.5 rad/s through ±π from t = 0 to 1, then still to t = 2
	for i := 0; i <= 10; i++ {
		_ = h.Add(float64(i)/10, Pose2D{Theta: math.Remainder(3+0.05*float64(i), 2*math.Pi)})
	}
	_ = h.Add(2, Pose2D{Theta: math.Remainder(3.5, 2*math.Pi)})
	for _, c := range []struct {
		t, window, want float64
		ok              bool
	}{
		{0.5, 0.2, 0.5, true},
		{0.05, 0.1, 0.5, true},
		{1.5, 0.5, 0, true},  // between 1 and 2: one pose each side
		{1.5, 0.2, 0, false}, // no pose within 0.2 s
		{5, 1, 0, false},
		{math.NaN(), 1, 0, false},
		{0.5, 0, 0, false},
	} {
		r, ok := h.TurnRate(c.t, c.window)
		if ok != c.ok || (ok && math.Abs(r-c.want) > 1e-9) {
			t.Errorf("TurnRate(%v, %v) = %v %v, want %v %v", c.t, c.window, r, ok, c.want, c.ok)
		}
	}
}
