package sim

import (
	"errors"
	"math"
	"testing"
)

const dt = 0.02

func emptyWorld(t *testing.T) *Grid {
	t.Helper()
	g, err := NewGrid(100, 100, 0.1, -5, -5, Free)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func newRobot(t *testing.T, g *Grid, p Pose2D) *DiffDrive {
	t.Helper()
	r, err := NewDiffDrive(DefaultDiffDrive(), g, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func run(r *DiffDrive, v, w, seconds float64) {
	for t := 0.0; t < seconds-1e-9; t += dt {
		_ = r.Command(v, w)
		r.Step(dt)
	}
}

func TestDiffDriveKinematics(t *testing.T) {
	tests := []struct {
		name        string
		v, w, secs  float64
		want        Pose2D
		tolPos, tol float64
	}{
		{"straight", 0.3, 0, 2, Pose2D{0.6, 0, 0}, 1e-9, 1e-9},
		{"turn in place", 0, 1, 1, Pose2D{0, 0, 1}, 1e-9, 1e-9},
		{"quarter circle r=1", math.Pi / 8, math.Pi / 8, 4, Pose2D{1, 1, math.Pi / 2}, 1e-6, 1e-6},
		{"clamped to limits", 5, 0, 1, Pose2D{0.5, 0, 0}, 1e-9, 1e-9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRobot(t, emptyWorld(t), Pose2D{})
			run(r, tc.v, tc.w, tc.secs)
			p := r.Pose()
			if math.Hypot(p.X-tc.want.X, p.Y-tc.want.Y) > tc.tolPos || math.Abs(wrap(p.Theta-tc.want.Theta)) > tc.tol {
				t.Fatalf("pose %+v, want %+v", p, tc.want)
			}
		})
	}
}

// The wheels turn by distance/radius: together when driving straight,
// against each other when turning in place; a blocked robot's wheels stop.
func TestDiffDriveWheels(t *testing.T) {
	tests := []struct {
		name     string
		v, w     float64
		secs     float64
		vel      [2]float64
		traveled [2]float64 // wheel rim distance, m
	}{
		{"straight", 0.1, 0, 0.5, [2]float64{0.1 / WheelRadius, 0.1 / WheelRadius}, [2]float64{0.05, 0.05}},
		{"backwards", -0.1, 0, 0.5, [2]float64{-0.1 / WheelRadius, -0.1 / WheelRadius}, [2]float64{-0.05, -0.05}},
		{"turn left in place", 0, 1, 0.1, [2]float64{-WheelSeparation / 2 / WheelRadius, WheelSeparation / 2 / WheelRadius},
			[2]float64{-0.1 * WheelSeparation / 2, 0.1 * WheelSeparation / 2}},
		{"stopped", 0, 0, 1, [2]float64{}, [2]float64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRobot(t, emptyWorld(t), Pose2D{})
			run(r, tc.v, tc.w, tc.secs)
			pos, vel := r.Wheels()
			for i := range 2 {
				if math.Abs(vel[i]-tc.vel[i]) > 1e-9 || math.Abs(pos[i]*WheelRadius-tc.traveled[i]) > 1e-9 {
					t.Fatalf("wheel %d: angle %v vel %v, want rim distance %v vel %v", i, pos[i], vel[i], tc.traveled[i], tc.vel[i])
				}
			}
		})
	}
	// angles stay within [−π, π] however far the robot drives
	r := newRobot(t, emptyWorld(t), Pose2D{})
	run(r, 0, 1.5, 20)
	if pos, _ := r.Wheels(); math.Abs(pos[0]) > math.Pi || math.Abs(pos[1]) > math.Pi {
		t.Fatalf("wheel angles %v not wrapped", pos)
	}
}

func TestCommandTimeoutStopsRobot(t *testing.T) {
	r := newRobot(t, emptyWorld(t), Pose2D{})
	if err := r.Command(0.4, 0); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ { // 2 s with a single command
		r.Step(dt)
	}
	// Moves only while the command is fresh (0.5 s): 0.2 m, give or take a step.
	if x := r.Pose().X; x < 0.19 || x > 0.21+0.4*dt {
		t.Fatalf("x = %v after a stale command, want about 0.2", x)
	}
}

// A stamped command that was given age seconds ago holds for the rest of
// the command timeout (0.5 s) only; a negative or NaN age counts as a
// fresh command.
func TestCommandAged_HoldsForTheRestOfTheTimeout(t *testing.T) {
	for _, tt := range []struct {
		name string
		age  float64
		want float64 // x after 2 s at 0.4 m/s
	}{
		{"fresh", 0, 0.2},
		{"0.3 s old", 0.3, 0.08},
		{"as old as the timeout", 0.5, 0},
		{"negative age counts as 0", -1, 0.2},
		{"NaN age counts as 0", math.NaN(), 0.2},
		{"+Inf age never holds", math.Inf(1), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRobot(t, emptyWorld(t), Pose2D{})
			if err := r.CommandAged(0.4, 0, tt.age); err != nil {
				t.Fatal(err)
			}
			for range 100 {
				r.Step(dt)
			}
			if x := r.Pose().X; math.Abs(x-tt.want) > 0.4*dt+1e-9 {
				t.Errorf("x = %v, want about %v", x, tt.want)
			}
		})
	}
	r := newRobot(t, emptyWorld(t), Pose2D{})
	if err := r.CommandAged(math.NaN(), 0, 0.1); err == nil {
		t.Error("CommandAged(NaN) accepted")
	}
}

func TestCommandRejectsNonFinite(t *testing.T) {
	r := newRobot(t, emptyWorld(t), Pose2D{})
	for _, c := range [][2]float64{{math.NaN(), 0}, {0, math.Inf(1)}, {math.Inf(-1), 0}} {
		if err := r.Command(c[0], c[1]); err == nil {
			t.Errorf("Command(%v) accepted", c)
		}
	}
}

func TestWallStopsRobot(t *testing.T) {
	g := emptyWorld(t)
	g.FillRect(1, -5, 1.2, 5, Occupied)
	r := newRobot(t, g, Pose2D{})
	run(r, 0.5, 0, 5)
	p := r.Pose()
	if p.X+r.Config().Radius > 1.0+1e-9 {
		t.Fatalf("robot at x=%v went into the wall at x=1", p.X)
	}
	if p.X < 0.7 {
		t.Fatalf("robot stopped early at x=%v", p.X)
	}
	if r.Bumps() == 0 {
		t.Fatal("no bump counted")
	}
	if _, err := NewDiffDrive(DefaultDiffDrive(), g, Pose2D{X: 1.1}); err == nil {
		t.Fatal("start inside a wall accepted")
	}
}

// A robot that touches an obstacle (the world changed around it: a box put
// against it) may back away from it, slide along it or turn, but not push
// further in.
func TestStepTouchingMovesAway(t *testing.T) {
	tests := []struct {
		name    string
		heading float64
		v, w    float64
		moves   bool
	}{
		{"backing away", 0, -0.3, 0, true},
		{"turning away on an arc", 0, -0.3, 1, true},
		{"sliding along", math.Pi / 2, 0.3, 0, true},
		{"turning in place", 0, 0, 1, false},
		{"pushing in", 0, 0.3, 0, false},
		{"pushing in on an arc", 0, 0.3, 0.5, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := emptyWorld(t)
			start := Pose2D{0.05, 0, tc.heading}
			r := newRobot(t, g, start)
			g.FillRect(0.2, -1, 0.6, 1, Occupied) // face at x = 0.2: 3 cm into the footprint
			c0 := g.Clearance(start.X, start.Y, r.Config().Radius, false)
			if c0 >= r.Config().Radius {
				t.Fatal("the box does not touch the robot")
			}
			run(r, tc.v, tc.w, 0.5)
			p := r.Pose()
			moved := math.Hypot(p.X-start.X, p.Y-start.Y)
			c := g.Clearance(p.X, p.Y, r.Config().Radius, false)
			if c < c0-1e-12 {
				t.Fatalf("pushed into the box: clearance %.4f, was %.4f", c, c0)
			}
			if tc.moves != (moved > 0.1) {
				t.Fatalf("moved %.3f m, want moving %v", moved, tc.moves)
			}
			if refused := tc.v != 0 && !tc.moves; refused != (r.Bumps() > 0) {
				t.Errorf("%d bumps", r.Bumps())
			}
		})
	}
}

// However fast the robot is allowed to go, it does not jump through a
// wall: the motion of a step is swept, and stops at the wall.
func TestStepDoesNotTunnel(t *testing.T) {
	g := emptyWorld(t)
	g.FillRect(1, -5, 1.2, 5, Occupied) // cells centred at 1.05 and 1.15: from x = 1 to 1.2
	r := newRobot(t, g, Pose2D{})
	if err := r.SetLimits(100, 1); err != nil {
		t.Fatal(err)
	}
	_ = r.Command(100, 0)
	r.Step(dt) // 2 m in one step
	p := r.Pose()
	if p.X+r.Config().Radius > 1+1e-9 || p.X < 0.75 {
		t.Fatalf("robot at x=%v after a 2 m step towards a wall at x = 1", p.X)
	}
	if v, _ := r.Twist(); v <= 0 || v >= 100 {
		t.Errorf("achieved speed %v, want the share of the step driven", v)
	}
	if r.Bumps() != 1 {
		t.Errorf("%d bumps, want 1", r.Bumps())
	}
}

func TestScanAndSeenMap(t *testing.T) {
	g := emptyWorld(t)
	g.FillRect(2, -5, 2.2, 5, Occupied) // wall whose near face is at x = 2.0
	r := newRobot(t, g, Pose2D{})
	scan := r.Scan()
	if len(scan) != DefaultDiffDrive().ScanBeams {
		t.Fatalf("%d beams", len(scan))
	}
	if d := float64(scan[0]); math.Abs(d-2.0) > 0.05 {
		t.Fatalf("beam ahead = %v, want about 2.0", d)
	}
	if !math.IsInf(float64(scan[len(scan)/2]), 1) {
		t.Fatalf("beam behind = %v, want +Inf (nothing within range)", scan[len(scan)/2])
	}
	seen := r.Seen()
	if v := seen.At(seen.CellOf(1.0, 0)); v != Free {
		t.Errorf("cell between robot and wall is %d, want free", v)
	}
	if v := seen.At(seen.CellOf(2.05, 0)); v != Occupied {
		t.Errorf("wall cell is %d, want occupied", v)
	}
	if v := seen.At(seen.CellOf(3.0, 0)); v != Unknown {
		t.Errorf("cell behind wall is %d, want unknown", v)
	}
}

func TestPlanner(t *testing.T) {
	w := DefaultWorld()
	p := Planner{Radius: 0.24}
	path, err := p.Plan(w, Point{0, 0}, Point{9, 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range path {
		if w.Blocked(q.X, q.Y, 0.2, false) {
			t.Fatalf("path point %v collides", q)
		}
	}
	if last := path[len(path)-1]; last != (Point{9, 5}) {
		t.Fatalf("path ends at %v", last)
	}
	bad := []struct {
		name       string
		start, end Point
	}{
		{"goal in pillar", Point{0, 0}, Point{4.8, 2.8}},
		{"goal outside map", Point{0, 0}, Point{50, 0}},
		{"goal NaN", Point{0, 0}, Point{math.NaN(), 0}},
	}
	for _, tc := range bad {
		if _, err := p.Plan(w, tc.start, tc.end); err == nil {
			t.Errorf("%s: planned", tc.name)
		}
	}
	// A room with no door.
	g := emptyWorld(t)
	g.FillRect(2, 2, 4, 2.2, Occupied)
	g.FillRect(2, 4, 4, 4.2, Occupied)
	g.FillRect(2, 2, 2.2, 4.2, Occupied)
	g.FillRect(3.8, 2, 4, 4.2, Occupied)
	if _, err := p.Plan(g, Point{0, 0}, Point{3, 3.1}); !errors.Is(err, ErrNoPath) {
		t.Fatalf("enclosed goal: err = %v, want ErrNoPath", err)
	}
}

// drive runs robot and navigator together until the goal ends or limit
// seconds pass.
func drive(r *DiffDrive, n *Navigator, limit float64) NavStatus {
	for t := 0.0; t < limit; t += dt {
		v, w := n.Update(r.Seen(), r.Pose(), dt)
		if s, _ := n.Status(); s != NavRunning {
			return s
		}
		_ = r.Command(v, w)
		r.Step(dt)
	}
	s, _ := n.Status()
	return s
}

func TestNavigatorReachesGoalAcrossRooms(t *testing.T) {
	r := newRobot(t, DefaultWorld(), Pose2D{})
	n := NewNavigator(DefaultNav())
	goal := Point{9, 5}
	if err := n.Start(r.Seen(), r.Pose(), goal); err != nil {
		t.Fatal(err)
	}
	if s := drive(r, n, 200); s != NavSucceeded {
		_, why := n.Status()
		t.Fatalf("status %v (%s), robot at %+v", s, why, r.Pose())
	}
	p := r.Pose()
	if d := math.Hypot(p.X-goal.X, p.Y-goal.Y); d > DefaultNav().GoalTolerance {
		t.Fatalf("ended %.2f m from the goal", d)
	}
	if r.Bumps() > 0 {
		t.Errorf("robot bumped into obstacles %d times", r.Bumps())
	}
}

func TestNavigatorFailsUnreachable(t *testing.T) {
	r := newRobot(t, DefaultWorld(), Pose2D{})
	n := NewNavigator(DefaultNav())
	if err := n.Start(r.World(), r.Pose(), Point{4.8, 2.8}); err == nil {
		t.Fatal("goal inside a pillar accepted")
	}
	if s, why := n.Status(); s != NavFailed || why == "" {
		t.Fatalf("status %v %q", s, why)
	}
	// Unknown space looks free at first; the goal turns out to be walled in.
	g := DefaultWorld()
	g.FillRect(8, 2.6, 10.8, 2.8, Occupied)
	g.FillRect(8, 2.6, 8.2, 6.8, Occupied)
	r = newRobot(t, g, Pose2D{})
	n = NewNavigator(DefaultNav())
	if err := n.Start(r.Seen(), r.Pose(), Point{9.5, 4.5}); err != nil {
		t.Fatal(err)
	}
	if s := drive(r, n, 300); s != NavFailed {
		t.Fatalf("walled-in goal: status %v, want failed", s)
	}
}

func TestFindFrontiers(t *testing.T) {
	g, _ := NewGrid(20, 10, 0.1, 0, 0, Unknown)
	for cy := 0; cy < 10; cy++ {
		for cx := 0; cx < 10; cx++ {
			g.Set(cx, cy, Free)
		}
	}
	g.Set(15, 5, Free) // a lone free cell: a frontier of size 1
	fs := FindFrontiers(g, 3, 0)
	if len(fs) != 1 {
		t.Fatalf("%d frontiers, want 1: %+v", len(fs), fs)
	}
	if fs[0].Size != 10 || math.Abs(fs[0].Goal.X-0.95) > 1e-9 {
		t.Fatalf("frontier %+v, want 10 cells at x=0.95", fs[0])
	}
	if got := FindFrontiers(g, 1, 0); len(got) != 2 {
		t.Fatalf("minSize 1: %d frontiers, want 2", len(got))
	}
}

// TestExplorationCompletes runs the whole exploration loop in the default
// world: go to the nearest frontier, mark goals that fail, repeat until no
// frontier is left; the map must then cover the reachable space.
func TestExplorationCompletes(t *testing.T) {
	r := newRobot(t, DefaultWorld(), Pose2D{})
	n := NewNavigator(DefaultNav())
	var failed []Point
	goals := 0
	for ; goals < 60; goals++ {
		fs := FindFrontiers(r.Seen(), 5, 0.25)
		var best *Frontier
		for i := range fs {
			if isNear(fs[i].Goal, failed, 0.5) {
				continue
			}
			if best == nil || dist(r.Pose(), fs[i].Goal) < dist(r.Pose(), best.Goal) {
				best = &fs[i]
			}
		}
		if best == nil {
			break
		}
		if err := n.Start(r.Seen(), r.Pose(), best.Goal); err != nil {
			failed = append(failed, best.Goal)
			continue
		}
		if drive(r, n, 120) != NavSucceeded {
			failed = append(failed, best.Goal)
		}
	}
	if goals == 60 {
		t.Fatal("exploration did not finish within 60 goals")
	}
	// Every free cell of the world reachable by the robot must be known.
	w, seen := r.World(), r.Seen()
	unknown, free := 0, 0
	for i, v := range w.Cells {
		if v != Free {
			continue
		}
		x, y := w.Center(i%w.Width, i/w.Width)
		if w.Blocked(x, y, 0.3, false) {
			continue
		}
		free++
		if seen.Cells[i] == Unknown {
			unknown++
		}
	}
	if float64(unknown) > 0.02*float64(free) {
		t.Fatalf("after %d goals %d of %d reachable free cells are still unknown", goals, unknown, free)
	}
	t.Logf("explored in %d goals (%d failed)", goals, len(failed))
}

func dist(p Pose2D, q Point) float64 { return math.Hypot(p.X-q.X, p.Y-q.Y) }

func isNear(p Point, list []Point, d float64) bool {
	for _, q := range list {
		if math.Hypot(p.X-q.X, p.Y-q.Y) < d {
			return true
		}
	}
	return false
}

func TestNavigatorReverseDrivesBackwards(t *testing.T) {
	r := newRobot(t, DefaultWorld(), Pose2D{})
	cfg := DefaultNav()
	cfg.Reverse = true
	n := NewNavigator(cfg)
	if err := n.Start(r.Seen(), r.Pose(), Point{2, 0}); err != nil {
		t.Fatal(err)
	}
	backwards := 0
	for i := 0; i < 3000; i++ {
		v, w := n.Update(r.Seen(), r.Pose(), dt)
		if s, _ := n.Status(); s != NavRunning {
			break
		}
		if v < 0 {
			backwards++
		} else if v > 0 {
			t.Fatalf("reverse mode drove forwards (v=%v)", v)
		}
		_ = r.Command(v, w)
		r.Step(dt)
	}
	if s, why := n.Status(); s != NavSucceeded || backwards == 0 {
		t.Fatalf("status %v %q after %d backward steps", s, why, backwards)
	}
}

func TestSetLimits(t *testing.T) {
	r := newRobot(t, emptyWorld(t), Pose2D{})
	if err := r.Command(1e308, -1e308); err != nil {
		t.Fatal(err)
	}
	if err := r.SetLimits(0.2, 0.3); err != nil {
		t.Fatal(err)
	}
	r.Step(dt)
	if v, w := r.Twist(); v != 0.2 || w != -0.3 {
		t.Errorf("twist after SetLimits(0.2, 0.3) = %v, %v; want the command clamped to 0.2, -0.3", v, w)
	}
	for _, l := range [][2]float64{{0, 1}, {1, -1}, {math.NaN(), 1}, {1, math.Inf(1)}} {
		if err := r.SetLimits(l[0], l[1]); err == nil {
			t.Errorf("SetLimits(%v) accepted", l)
		}
		n := NewNavigator(DefaultNav())
		if err := n.SetLimits(l[0], l[1]); err == nil {
			t.Errorf("Navigator.SetLimits(%v) accepted", l)
		}
	}
	if r.Config().MaxLinear != 0.2 || r.Config().MaxAngular != 0.3 {
		t.Errorf("config after rejected SetLimits = %+v", r.Config())
	}
}

func TestNavigatorSetLimits_CommandsStayWithin(t *testing.T) {
	world := DefaultWorld()
	r := newRobot(t, world, Pose2D{})
	n := NewNavigator(DefaultNav())
	if err := n.SetLimits(0.1, 0.2); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(world, r.Pose(), Point{X: 2, Y: 0.5}); err != nil {
		t.Fatal(err)
	}
	for range 200 {
		v, w := n.Update(world, r.Pose(), dt)
		if math.Abs(v) > 0.1+1e-12 || math.Abs(w) > 0.2+1e-12 {
			t.Fatalf("command (%v, %v) beyond the limits (0.1, 0.2)", v, w)
		}
		_ = r.Command(v, w)
		r.Step(dt)
	}
}
