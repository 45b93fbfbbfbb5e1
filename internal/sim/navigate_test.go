package sim

import (
	"fmt"
	"math"
	"testing"
)

// corridorWorld is an L-shaped corridor 0.9 m wide: east from (0.5, 0.95)
// to x = 4.5, then north to y = 4.5, with the inner corner at (3.6, 1.4).
func corridorWorld(t *testing.T) *Grid {
	t.Helper()
	g, err := NewGrid(50, 50, 0.1, 0, 0, Occupied)
	if err != nil {
		t.Fatal(err)
	}
	g.FillRect(0.5, 0.5, 4.5, 1.4, Free)
	g.FillRect(3.6, 0.5, 4.5, 4.5, Free)
	return g
}

// navRun is what one navigation goal did in the simulator.
type navRun struct {
	status            NavStatus
	reason            string
	seconds           float64 // simulated time until the goal ended
	bumps             int     // steps the simulator refused as a collision
	forward, backward float64 // metres driven each way
}

// navigate drives a DiffDrive in world from start to goal with a navigator
// using cfg, for at most limit simulated seconds. With seen the navigator
// plans on the map the robot has built (unknown cells free), otherwise on
// the world itself. The robot's velocity limits are the default ones or, if
// higher, cfg's.
func navigate(t *testing.T, world *Grid, start Pose2D, goal Point, cfg NavConfig, seen bool, limit float64) navRun {
	t.Helper()
	rc := DefaultDiffDrive()
	rc.MaxLinear = math.Max(rc.MaxLinear, cfg.MaxLinear)
	rc.MaxAngular = math.Max(rc.MaxAngular, cfg.MaxAngular)
	if !seen {
		rc.MapUpdateRate = 0 // the map is not used: skip the ray casting
	}
	r, err := NewDiffDrive(rc, world, start)
	if err != nil {
		t.Fatal(err)
	}
	m := func() *Grid {
		if seen {
			return r.Seen()
		}
		return world
	}
	n := NewNavigator(cfg)
	if err := n.Start(m(), r.Pose(), goal); err != nil {
		t.Fatal(err)
	}
	var out navRun
	for ; out.seconds < limit; out.seconds += dt {
		v, w := n.Update(m(), r.Pose(), dt)
		if s, _ := n.Status(); s != NavRunning {
			break
		}
		if err := r.Command(v, w); err != nil {
			t.Fatal(err)
		}
		before := r.Pose()
		r.Step(dt)
		d := math.Hypot(r.Pose().X-before.X, r.Pose().Y-before.Y)
		if v < 0 {
			out.backward += d
		} else {
			out.forward += d
		}
	}
	out.status, out.reason = n.Status()
	out.bumps = r.Bumps()
	return out
}

// The navigator does not drive into obstacles it knows of: around the
// doorway's jambs of the default world and the inner corner of a corridor,
// where pure pursuit cuts the corner, it reaches the goal without one
// refused step, forwards and in reverse (the back leading), at the default
// velocity limits and at twice them.
func TestNavigatorAvoidsKnownObstacles(t *testing.T) {
	tests := []struct {
		name  string
		world func(*testing.T) *Grid
		start Pose2D
		goal  Point
		seen  bool // plan on the map seen so far instead of the world
	}{
		// Where the demo's exploration stalled for 18 s: against the
		// doorway's north jamb (2.9, 2.0), 4 mm from it, the next path
		// point beyond the jamb.
		{"doorway jamb, demo stall", dflt, Pose2D{2.757, 1.89, -0.34}, Point{8.65, 5.55}, false},
		{"doorway jamb, demo stall, seen map", dflt, Pose2D{2.757, 1.89, -0.34}, Point{8.65, 5.55}, true},
		{"past the north jamb into room 2", dflt, Pose2D{1.8, 3.0, 0}, Point{4, 3}, false},
		{"past the north jamb, seen map", dflt, Pose2D{1.8, 3.0, math.Pi / 2}, Point{8.65, 5.55}, true},
		{"past the south jamb along the wall", dflt, Pose2D{2.2, 0, 0}, Point{4, 0.2}, false},
		{"L-shaped corridor", corridorWorld, Pose2D{1.0, 0.95, 0}, Point{4.05, 4.0}, false},
		{"L-shaped corridor, seen map", corridorWorld, Pose2D{1.0, 0.95, 0}, Point{4.05, 4.0}, true},
	}
	for _, tc := range tests {
		for _, mode := range []struct {
			reverse bool
			speed   float64
		}{{false, 1}, {true, 1}, {false, 2}, {true, 2}} {
			reverse := mode.reverse
			name := tc.name
			start := tc.start
			if reverse {
				name += ", reverse"
				start.Theta = wrap(start.Theta + math.Pi) // the same way round, back first
			}
			if mode.speed != 1 {
				name += fmt.Sprintf(", %gx speed", mode.speed)
			}
			t.Run(name, func(t *testing.T) {
				cfg := DefaultNav()
				cfg.Reverse = reverse
				cfg.MaxLinear *= mode.speed
				cfg.MaxAngular *= mode.speed
				got := navigate(t, tc.world(t), start, tc.goal, cfg, tc.seen, 90)
				if got.status != NavSucceeded {
					t.Fatalf("status %v (%s) after %.1f s, %d refused steps", got.status, got.reason, got.seconds, got.bumps)
				}
				if got.bumps > 0 {
					t.Errorf("the simulator refused %d steps (driving into a known obstacle)", got.bumps)
				}
				lead, other := got.forward, got.backward
				if reverse {
					lead, other = other, lead
				}
				if other > 0.1*lead {
					t.Errorf("drove %.2f m the leading way and %.2f m the other (reverse=%v)", lead, other, reverse)
				}
				t.Logf("%.1f s, %.2f m forward, %.2f m backward", got.seconds, got.forward, got.backward)
			})
		}
	}
}

func dflt(*testing.T) *Grid { return DefaultWorld() }

// wallWorld is empty space with a wall whose west face is at x = 1.
func wallWorld(t *testing.T) *Grid {
	t.Helper()
	g := emptyWorld(t)
	g.FillRect(1.05, -5, 1.25, 5, Occupied)
	return g
}

// The collision check of a command: what the Footprint disc would touch
// driving it from a pose for CollisionTime, up to the point steered to.
func TestNavigatorCollides(t *testing.T) {
	fp := DefaultNav().Footprint
	touching := 1 - fp + 0.005 // 5 mm into the wall
	tests := []struct {
		name  string
		pose  Pose2D
		v, w  float64
		reach float64
		want  bool
	}{
		{"wall within the horizon", Pose2D{0.5, 0, 0}, 0.4, 0, 1, true},
		{"wall beyond the point steered to", Pose2D{0.5, 0, 0}, 0.4, 0, 0.25, false},
		{"wall beyond the horizon", Pose2D{0.1, 0, 0}, 0.4, 0, 1, false},
		{"reversing into the wall", Pose2D{0.5, 0, math.Pi}, -0.4, 0, 1, true},
		{"driving away from it", Pose2D{0.5, 0, math.Pi}, 0.4, 0, 1, false},
		{"parallel to it", Pose2D{0.75, 0, math.Pi / 2}, 0.4, 0, 1, false},
		{"arc curving into it", Pose2D{0.65, 0, math.Pi / 2}, 0.4, -1.2, 1, true},
		{"arc curving away", Pose2D{0.65, 0, math.Pi / 2}, 0.4, 1.2, 1, false},
		{"turning in place against it", Pose2D{1 - fp, 0, 0}, 0, 1.2, 1, false},
		{"closer than the margin, going closer", Pose2D{1 - fp - 0.005, 0, 0}, 0.1, 0, 1, true},
		{"touching, going deeper", Pose2D{touching, 0, 0}, 0.1, 0, 1, true},
		{"touching, backing away", Pose2D{touching, 0, 0}, -0.1, 0, 1, false},
		{"touching, turning away", Pose2D{touching, 0, math.Pi / 2}, 0.2, 1.2, 1, false},
		{"touching, sliding along", Pose2D{touching, 0, math.Pi / 2}, 0.2, 0, 1, false},
	}
	g := wallWorld(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := NewNavigator(DefaultNav())
			if got := n.collides(g, tc.pose, tc.v, tc.w, tc.reach); got != tc.want {
				t.Fatalf("collides = %v, want %v", got, tc.want)
			}
		})
	}
	// The check is off without a footprint or a horizon.
	for _, cfg := range []func(*NavConfig){func(c *NavConfig) { c.Footprint = 0 }, func(c *NavConfig) { c.CollisionTime = 0 }} {
		c := DefaultNav()
		cfg(&c)
		if NewNavigator(c).collides(g, Pose2D{0.5, 0, 0}, 0.4, 0, 1) {
			t.Errorf("check on with %+v", c)
		}
	}
}

// A robot something was put against (the world changed around it) backs
// away and goes round it: the navigator plans from inside the obstacle's
// inflation, sends only motions that take it no closer, and the simulator
// lets it move away.
func TestNavigatorLeavesObstacleItTouches(t *testing.T) {
	for _, reverse := range []bool{false, true} {
		t.Run(map[bool]string{false: "forward", true: "reverse"}[reverse], func(t *testing.T) {
			world := emptyWorld(t)
			start := Pose2D{0.025, 0, 0}
			if reverse {
				start.Theta = math.Pi
			}
			cfg := DefaultNav()
			cfg.Reverse = reverse
			rc := DefaultDiffDrive()
			rc.MapUpdateRate = 0
			r, err := NewDiffDrive(rc, world, start)
			if err != nil {
				t.Fatal(err)
			}
			// A box right ahead (its face at x = 0.2), 5 mm into the
			// footprint, between the robot and its goal.
			world.FillRect(0.2, -0.5, 0.6, 0.5, Occupied)
			if !world.Blocked(start.X, start.Y, rc.Radius, false) {
				t.Fatal("the box does not touch the robot")
			}
			goal := Point{2, 0}
			n := NewNavigator(cfg)
			if err := n.Start(world, r.Pose(), goal); err != nil {
				t.Fatal(err)
			}
			closest := world.Clearance(start.X, start.Y, rc.Radius, false)
			for i := 0; i < 3000; i++ {
				v, w := n.Update(world, r.Pose(), dt)
				if s, _ := n.Status(); s != NavRunning {
					break
				}
				_ = r.Command(v, w)
				r.Step(dt)
				p := r.Pose()
				if c := world.Clearance(p.X, p.Y, rc.Radius, false); c < closest-1e-9 {
					t.Fatalf("robot at %+v came closer to the box: clearance %.4f, was %.4f", p, c, closest)
				} else if c < rc.Radius {
					closest = c
				}
			}
			if s, why := n.Status(); s != NavSucceeded {
				t.Fatalf("status %v (%s), robot at %+v, %d refused steps", s, why, r.Pose(), r.Bumps())
			}
			if r.Bumps() > 0 {
				t.Errorf("%d refused steps", r.Bumps())
			}
		})
	}
}

// The path follower drives at its velocity limit on a straight path, and
// slows down only for the goal (it used to slow down for every path point
// it steered to, 0.4 to 0.5 m ahead, which capped it at 0.37 to 0.45 m/s
// whatever the limit).
func TestNavigatorDrivesAtItsLimit(t *testing.T) {
	for _, limit := range []float64{0.2, 0.4, 1.0} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			world := emptyWorld(t)
			cfg := DefaultNav()
			cfg.MaxLinear = limit
			rc := DefaultDiffDrive()
			rc.MaxLinear, rc.MapUpdateRate = 2, 0
			r, err := NewDiffDrive(rc, world, Pose2D{-4, 0, 0})
			if err != nil {
				t.Fatal(err)
			}
			n := NewNavigator(cfg)
			goal := Point{4, 0}
			if err := n.Start(world, r.Pose(), goal); err != nil {
				t.Fatal(err)
			}
			top, near := 0.0, 0.0
			for i := 0; i < 10000; i++ {
				v, w := n.Update(world, r.Pose(), dt)
				if s, _ := n.Status(); s != NavRunning {
					break
				}
				top = math.Max(top, v)
				if distTo(r.Pose(), goal) < 0.25 {
					near = v
				}
				_ = r.Command(v, w)
				r.Step(dt)
			}
			if s, why := n.Status(); s != NavSucceeded {
				t.Fatalf("status %v (%s)", s, why)
			}
			if math.Abs(top-limit) > 1e-9 {
				t.Errorf("top speed %v, want the limit %v", top, limit)
			}
			if near >= math.Min(limit, 0.25) {
				t.Errorf("%v m/s within 0.25 m of the goal: no slowing down", near)
			}
		})
	}
}
