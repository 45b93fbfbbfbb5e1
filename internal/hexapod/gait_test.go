package hexapod

import (
	"math"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

func newTestGait(t testing.TB) *Gait {
	t.Helper()
	g, err := NewGait(DefaultGaitConfig(), DefaultGeometry())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// world tracks the body pose in the world by watching the feet that stay on
// the ground from one tick to the next; it also measures how far those feet
// deviate from one rigid motion (slip).
type world struct {
	x, y, yaw float64
	maxSlip   float64
}

// observe updates the body pose from the internal feet before and after a
// tick.
func (w *world) observe(t *testing.T, before, after Feet) {
	t.Helper()
	var idx []int
	for i := range before {
		if before[i].Z == 0 && after[i].Z == 0 {
			idx = append(idx, i)
		}
	}
	if len(idx) < 3 {
		t.Fatalf("only %d feet on the ground across a tick", len(idx))
	}
	a, b := idx[0], idx[1]
	ang := func(p, q geom.Vec3) float64 { return math.Atan2(q.Y-p.Y, q.X-p.X) }
	th := -(ang(after[a], after[b]) - ang(before[a], before[b]))
	th = math.Remainder(th, 2*math.Pi)
	s, c := math.Sincos(th)
	// before = Rot(th)·after + d
	rot := func(p geom.Vec3) (float64, float64) { return c*p.X - s*p.Y, s*p.X + c*p.Y }
	rx, ry := rot(after[a])
	dx, dy := before[a].X-rx, before[a].Y-ry
	for _, i := range idx {
		px, py := rot(after[i])
		if e := math.Hypot(before[i].X-px-dx, before[i].Y-py-dy); e > w.maxSlip {
			w.maxSlip = e
		}
	}
	ws, wc := math.Sincos(w.yaw)
	w.x += wc*dx - ws*dy
	w.y += ws*dx + wc*dy
	w.yaw += th
}

func TestGait_ConstantCommand_BodyMovesAtCommandedTwist(t *testing.T) {
	max := DefaultGaitConfig().MaxLinearSpeed()
	cases := []struct {
		name string
		v    Velocity
	}{
		{"Forward0.1", Velocity{X: 0.1}},
		{"ForwardFull", Velocity{X: max}},
		{"BackwardHalf", Velocity{X: -max / 2}},
		{"RightSideways", Velocity{Y: -0.15}},
		{"Diagonal", Velocity{X: 0.1, Y: 0.1}},
		{"ArcLeft", Velocity{X: 0.08, Yaw: 0.3}},
		{"ArcRightBackward", Velocity{X: -0.05, Yaw: -0.4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newTestGait(t)
			var w world
			const warm, n = 200, 1000
			var x0, y0, yaw0 float64
			for k := 0; k < warm+n; k++ {
				if k == warm {
					x0, y0, yaw0 = w.x, w.y, w.yaw
				}
				before := g.feet
				g.Step(c.v)
				w.observe(t, before, g.feet)
			}
			dt := float64(n) / g.cfg.Rate
			if w.maxSlip > 1e-9 {
				t.Errorf("grounded feet slip by %g m", w.maxSlip)
			}
			if c.v.Yaw == 0 {
				vx, vy := (w.x-x0)/dt, (w.y-y0)/dt
				if e := math.Hypot(vx-c.v.X, vy-c.v.Y); e > 0.05*math.Hypot(c.v.X, c.v.Y) {
					t.Errorf("body velocity (%.4f, %.4f) m/s, commanded (%.4f, %.4f)", vx, vy, c.v.X, c.v.Y)
				}
				if math.Abs(w.yaw) > 1e-9 {
					t.Errorf("body turned by %g rad on a straight command", w.yaw)
				}
			} else {
				rate := (w.yaw - yaw0) / dt
				if math.Abs(rate-c.v.Yaw) > 0.05*math.Abs(c.v.Yaw) {
					t.Errorf("yaw rate %.4f rad/s, commanded %.4f", rate, c.v.Yaw)
				}
				// speed along the arc: radius of the circle through the path
				chord := math.Hypot(w.x-x0, w.y-y0)
				dyaw := math.Abs(w.yaw - yaw0)
				arc := chord * dyaw / 2 / math.Sin(dyaw/2)
				if s := arc / dt; math.Abs(s-math.Abs(c.v.X)) > 0.05*math.Abs(c.v.X) {
					t.Errorf("speed along the arc %.4f m/s, commanded %.4f", s, c.v.X)
				}
			}
		})
	}
}

func TestGait_TurnInPlace_RotatesAboutCentre(t *testing.T) {
	for _, wz := range []float64{0.5, -1.0} {
		g := newTestGait(t)
		var w world
		maxOff := 0.0
		for k := 0; k < 800; k++ {
			before := g.feet
			g.Step(Velocity{Yaw: wz})
			w.observe(t, before, g.feet)
			maxOff = math.Max(maxOff, math.Hypot(w.x, w.y))
		}
		if maxOff > 1e-9 {
			t.Errorf("wz=%v: body centre moved %g m", wz, maxOff)
		}
		// yaw rate over the last 600 ticks
		yaw1 := w.yaw
		for k := 0; k < 600; k++ {
			before := g.feet
			g.Step(Velocity{Yaw: wz})
			w.observe(t, before, g.feet)
		}
		if rate := (w.yaw - yaw1) / 6; math.Abs(rate-wz) > 0.05*math.Abs(wz) {
			t.Errorf("yaw rate %v, commanded %v", rate, wz)
		}
	}
}

func TestGait_Walking_ExactlyThreeFeetDownInStance(t *testing.T) {
	g := newTestGait(t)
	seen := map[GaitPhase]int{}
	for k := 0; k < 600; k++ {
		v := Velocity{X: 0.15, Yaw: 0.2}
		if k > 300 {
			v = Velocity{Y: 0.1}
		}
		phase := g.Phase()
		swing := g.SwingGroup()
		g.Step(v)
		down := 0
		for _, p := range g.feet {
			if p.Z == 0 {
				down++
			}
		}
		if phase == GaitStanding {
			continue
		}
		seen[phase]++
		switch phase {
		case GaitSwingLift, GaitSwingPlateau, GaitSwingLower:
			if down != 3 {
				t.Fatalf("tick %d (%v): %d feet down, want 3", k, phase, down)
			}
		default:
			if down < 3 {
				t.Fatalf("tick %d (%v): %d feet down", k, phase, down)
			}
		}
		// the tripod that is not swinging is always down
		for i, p := range g.feet {
			if i != swing[0] && i != swing[1] && i != swing[2] && p.Z != 0 {
				t.Fatalf("tick %d: stance leg %s is lifted (z %v)", k, LegName(i), p.Z)
			}
		}
	}
	for _, p := range []GaitPhase{GaitStanceToSwing, GaitSwingLift, GaitSwingPlateau, GaitSwingLower, GaitSwingToStance} {
		if seen[p] == 0 {
			t.Errorf("phase %v never seen", p)
		}
	}
}

func TestGait_HalfCycle_PhaseSequenceAndLanding(t *testing.T) {
	g := newTestGait(t)
	// warm up into the steady walk, then record one whole half cycle
	for k := 0; k < 200 || g.sub != 0; k++ {
		g.Step(Velocity{X: 0.1})
	}
	swing := g.SwingGroup()
	var phases []GaitPhase
	var z []float64
	for k := 0; k < g.cfg.SubSteps; k++ {
		phases = append(phases, g.Phase())
		g.Step(Velocity{X: 0.1})
		z = append(z, g.feet[swing[0]].Z)
	}
	counts := map[GaitPhase]int{}
	for i, p := range phases {
		counts[p]++
		if i > 0 && p < phases[i-1] {
			t.Fatalf("phase order %v", phases)
		}
	}
	want := map[GaitPhase]int{GaitStanceToSwing: 3, GaitSwingLift: 9, GaitSwingPlateau: 26, GaitSwingLower: 9, GaitSwingToStance: 3}
	for p, n := range want {
		if counts[p] != n {
			t.Errorf("%v lasted %d ticks, want %d (sequence %v)", p, counts[p], n, phases)
		}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if !near(z[0], 0) || !near(z[1], 0.0025) || !near(z[2], 0.0075) {
		t.Errorf("stance-to-swing heights %v, want 0, 0.0025, 0.0075", z[:3])
	}
	if mx := z[20]; !near(mx, 0.05) {
		t.Errorf("plateau height %v, want 0.05", mx)
	}
	n := len(z)
	// the table read backwards: −0.005, −0.0025, −0 onto exactly 0
	if !near(z[n-4], 0.0075) || !near(z[n-3], 0.0025) || z[n-2] != 0 || z[n-1] != 0 {
		t.Errorf("landing heights %v, want 0.0075, 0.0025, 0, 0", z[n-4:])
	}
	if g.SwingGroup() == swing {
		t.Errorf("tripods did not swap after a half cycle")
	}
}

func TestGait_StartFromStanding_FirstStepShortened(t *testing.T) {
	g := newTestGait(t)
	g.Step(Velocity{X: 0.2}) // Standing -> Stance_to_swing
	first := g.SwingGroup()
	ticks := 0
	for g.SwingGroup() == first {
		g.Step(Velocity{X: 0.2})
		ticks++
	}
	if ticks >= g.cfg.SubSteps || ticks < 6+2*g.cfg.liftTicks() {
		t.Fatalf("first half cycle took %d ticks; want a shortened step of at least %d and under %d",
			ticks, 6+2*g.cfg.liftTicks(), g.cfg.SubSteps)
	}
}

func TestGait_ZeroCommand_ReturnsToStandingAtNeutral(t *testing.T) {
	for _, stop := range []int{1, 37, 120, 333} {
		g := newTestGait(t)
		for k := 0; k < stop; k++ {
			g.Step(Velocity{X: 0.12, Y: -0.05, Yaw: 0.2})
		}
		if g.IsStanding() {
			t.Fatalf("stop=%d: standing while walking", stop)
		}
		ticks := 0
		for !g.IsStanding() {
			g.Step(Velocity{})
			ticks++
			if ticks > 3*g.cfg.SubSteps {
				t.Fatalf("stop=%d: not standing after %d ticks of zero command", stop, ticks)
			}
		}
		for i, p := range g.Feet() {
			n := g.geom.Neutral(i, -g.geom.WalkingHeight)
			if d := p.Sub(n).Norm(); d > 0.001 {
				t.Errorf("stop=%d: leg %s %.4f m from neutral", stop, LegName(i), d)
			}
		}
		before := g.Feet()
		for k := 0; k < 10; k++ {
			g.Step(Velocity{})
		}
		if g.Feet() != before || !g.IsStanding() {
			t.Errorf("stop=%d: standing gait moved with zero command", stop)
		}
	}
}

// TestGait_ExtremeCommands_FeetStayReachable walks at the limits and checks
// that the IK reaches every foot on every tick.
func TestGait_ExtremeCommands_FeetStayReachable(t *testing.T) {
	cfg := DefaultGaitConfig()
	geom := DefaultGeometry()
	vm, wm := cfg.MaxLinearSpeed(), cfg.MaxAngularSpeed()
	var cmds []Velocity
	for a := 0.0; a < 2*math.Pi; a += math.Pi / 4 {
		cmds = append(cmds, Velocity{X: vm * math.Cos(a), Y: vm * math.Sin(a)})
		cmds = append(cmds, Velocity{X: vm * math.Cos(a), Y: vm * math.Sin(a), Yaw: wm})
	}
	cmds = append(cmds, Velocity{Yaw: wm}, Velocity{Yaw: -wm})
	for _, v := range cmds {
		g := newTestGait(t)
		var j Joints
		for k := 0; k < 500; k++ {
			f := g.Step(v)
			if err := geom.SolveIK(&f, Pose{}, &j); err != nil {
				t.Fatalf("command %+v tick %d: %v", v, k, err)
			}
		}
	}
	// abrupt changes between the extremes at awkward moments
	g := newTestGait(t)
	var j Joints
	for k := 0; k < 20000; k++ {
		v := cmds[(k/37+k/101)%len(cmds)]
		if (k/53)%5 == 0 {
			v = Velocity{}
		}
		f := g.Step(v)
		if err := geom.SolveIK(&f, Pose{}, &j); err != nil {
			t.Fatalf("switching commands, tick %d (%+v): %v", k, v, err)
		}
	}
}

func TestGaitConfig_Limit_ScalesOverspeed(t *testing.T) {
	c := DefaultGaitConfig()
	v, lim := c.Limit(Velocity{X: 3, Y: 4, Yaw: -7})
	if !lim || math.Abs(math.Hypot(v.X, v.Y)-c.MaxLinearSpeed()) > 1e-12 || math.Abs(v.X/v.Y-0.75) > 1e-12 || v.Yaw != -c.MaxAngularSpeed() {
		t.Fatalf("Limit = %+v, %v", v, lim)
	}
	if _, lim := c.Limit(Velocity{X: 0.1, Yaw: 0.5}); lim {
		t.Fatalf("in-range twist reported as limited")
	}
	if math.Abs(c.MaxLinearSpeed()-0.3/math.Sqrt2) > 1e-12 || c.MaxAngularSpeed() != 1 {
		t.Fatalf("max speeds %v %v", c.MaxLinearSpeed(), c.MaxAngularSpeed())
	}
}

func TestGait_NonFiniteCommand_TreatedAsZero(t *testing.T) {
	g := newTestGait(t)
	before := g.Feet()
	g.Step(Velocity{X: math.NaN()})
	g.Step(Velocity{Yaw: math.Inf(1)})
	if !g.IsStanding() || g.Feet() != before {
		t.Fatalf("non-finite command moved the gait")
	}
}

func TestGaitConfig_Validate_RejectsShortHalfCycle(t *testing.T) {
	c := DefaultGaitConfig()
	c.SubSteps = 20
	if c.Validate() == nil {
		t.Fatal("SubSteps 20 accepted")
	}
	c = DefaultGaitConfig()
	c.TransitionXY[1] = 2
	if c.Validate() == nil {
		t.Fatal("TransitionXY 2 accepted")
	}
	c = DefaultGaitConfig()
	c.HeightPerStep = math.NaN()
	if c.Validate() == nil {
		t.Fatal("NaN HeightPerStep accepted")
	}
}

// TestGait_SetConfig_WhileWalking: a new lift height and speed set in the
// middle of a swing wait for the next half cycle (no foot jumps), then
// apply; bad configurations are refused and change nothing.
func TestGait_SetConfig_WhileWalking(t *testing.T) {
	g := newTestGait(t)
	v := Velocity{X: 0.1}
	for i := 0; i < 60; i++ { // past the first half cycle
		g.Step(v)
	}
	for i := 0; i < 100 && g.Phase() != GaitSwingPlateau; i++ {
		g.Step(v)
	}
	if g.Phase() != GaitSwingPlateau {
		t.Fatalf("phase %v, want the swing plateau", g.Phase())
	}
	old := g.Config()
	bad := []GaitConfig{old, old, old, old}
	bad[0].LiftHeight = math.NaN()
	bad[1].DistancePerStep = 0
	bad[2].LiftHeight = 0.2 // needs more sub-steps than a half cycle has
	bad[3].SubSteps = 60
	for i, c := range bad {
		if err := g.SetConfig(c); err == nil {
			t.Errorf("bad config %d accepted", i)
		}
	}
	next := old
	next.LiftHeight, next.DistancePerStep = 0.07, 0.004
	if err := g.SetConfig(next); err != nil {
		t.Fatal(err)
	}
	if g.Config() != old {
		t.Fatal("config changed in the middle of a swing")
	}
	maxZ := 0.0
	prev := g.feet
	for g.sub != 0 { // rest of this half cycle: the old lift height
		g.Step(v)
		for i := range g.feet {
			if dz := math.Abs(g.feet[i].Z - prev[i].Z); dz > old.HeightPerStep+1e-12 {
				t.Fatalf("foot %d moved %v in z in one tick", i, dz)
			}
			maxZ = math.Max(maxZ, g.feet[i].Z)
		}
		prev = g.feet
	}
	if math.Abs(maxZ-old.LiftHeight) > 1e-12 || g.Config() != next {
		t.Fatalf("before the switch: max z %v (want %v), config applied %v", maxZ, old.LiftHeight, g.Config() == next)
	}
	maxZ = 0
	for i := 0; i < old.SubSteps; i++ {
		g.Step(v)
		for _, f := range g.feet {
			maxZ = math.Max(maxZ, f.Z)
		}
	}
	if math.Abs(maxZ-0.07) > 1e-12 {
		t.Errorf("next half cycle lifts to %v, want the new 0.07", maxZ)
	}
	if got := g.Config().MaxLinearSpeed(); math.Abs(got-0.004/math.Sqrt2*100) > 1e-12 {
		t.Errorf("max linear speed %v after the change", got)
	}
}

func TestGait_SetConfig_StandingAppliesAtOnce(t *testing.T) {
	g := newTestGait(t)
	c := g.Config()
	c.DphiMaxStanding = 0.02
	if err := g.SetConfig(c); err != nil || g.Config().MaxAngularSpeed() != 2 {
		t.Fatalf("SetConfig = %v, max angular speed %v; want 2 rad/s at once", err, g.Config().MaxAngularSpeed())
	}
}
