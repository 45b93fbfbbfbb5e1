package hexapod

import (
	"errors"
	"fmt"
	"math"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// Velocity is a planar body twist: linear velocity X (forward) and Y (left)
// in m/s and yaw rate in rad/s, in the body frame.
type Velocity struct {
	X, Y, Yaw float64
}

// IsZero reports whether all components are exactly zero.
func (v Velocity) IsZero() bool { return v.X == 0 && v.Y == 0 && v.Yaw == 0 }

// Validate rejects non-finite components with a reason.
func (v Velocity) Validate() error {
	for _, c := range []struct {
		name string
		v    float64
	}{{"linear.x", v.X}, {"linear.y", v.Y}, {"angular.z", v.Yaw}} {
		if !isFinite(c.v) {
			return fmt.Errorf("velocity %s is %v; only finite values are accepted", c.name, c.v)
		}
	}
	return nil
}

// GaitConfig holds the gait constants of the original class Gait and the
// SUB_STEPS and LEG_LIFT_HEIGHT parameters.
type GaitConfig struct {
	// Rate is the control rate in Hz (100).
	Rate float64
	// SubSteps is the number of ticks per half cycle (SUB_STEPS, 50).
	SubSteps int
	// LiftHeight is the swing foot height in metres (LEG_LIFT_HEIGHT, 0.05).
	LiftHeight float64
	// DistancePerStep is the stance foot travel per tick at full stick before
	// the original's 1/√2 walking factor (0.003 m).
	DistancePerStep float64
	// HeightPerStep is the swing foot rise and fall per tick (0.005 m).
	HeightPerStep float64
	// StabilityRadius is how close to neutral every foot must be, in metres,
	// for the gait to return to Standing (0.001).
	StabilityRadius float64
	// DphiMaxStanding is the yaw per tick at full stick when turning in
	// place (0.01 rad).
	DphiMaxStanding float64
	// TransitionXY and TransitionZ are the three-entry stance-to-swing
	// table: the share of stance motion a lifting foot still follows, and its
	// rise in units of HeightPerStep ({1, 1, 0} and {0, 0.5, 1}). The
	// swing-to-stance transition walks the same table backwards.
	TransitionXY, TransitionZ [3]float64
}

// DefaultGaitConfig returns the original's gait constants.
func DefaultGaitConfig() GaitConfig {
	return GaitConfig{
		Rate:            100,
		SubSteps:        50,
		LiftHeight:      0.05,
		DistancePerStep: 0.003,
		HeightPerStep:   0.005,
		StabilityRadius: 0.001,
		DphiMaxStanding: 0.01,
		TransitionXY:    [3]float64{1, 1, 0},
		TransitionZ:     [3]float64{0, 0.5, 1},
	}
}

// MaxLinearSpeed is the walking speed at full stick in m/s: the original
// moved stance feet DistancePerStep/√2 per tick (0.212 m/s at 100 Hz).
func (c GaitConfig) MaxLinearSpeed() float64 {
	return c.DistancePerStep / math.Sqrt2 * c.Rate
}

// MaxAngularSpeed is the yaw rate at full stick in rad/s (1 rad/s).
func (c GaitConfig) MaxAngularSpeed() float64 { return c.DphiMaxStanding * c.Rate }

// liftTicks is the number of ticks the swing foot needs to rise from the
// transition height to LiftHeight (and to fall back).
func (c GaitConfig) liftTicks() int {
	zt := (c.TransitionZ[0] + c.TransitionZ[1] + c.TransitionZ[2]) * c.HeightPerStep
	return int(math.Ceil((c.LiftHeight - zt) / c.HeightPerStep))
}

// Validate checks the gait constants and that a half cycle is long enough
// for two transitions, the lift and the lowering.
func (c GaitConfig) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    float64
	}{{"Rate", c.Rate}, {"LiftHeight", c.LiftHeight}, {"DistancePerStep", c.DistancePerStep},
		{"HeightPerStep", c.HeightPerStep}, {"StabilityRadius", c.StabilityRadius}, {"DphiMaxStanding", c.DphiMaxStanding}} {
		if !isFinite(f.v) || f.v <= 0 {
			errs = append(errs, fmt.Errorf("gait: %s must be positive and finite, got %v", f.name, f.v))
		}
	}
	for k := 0; k < 3; k++ {
		if x := c.TransitionXY[k]; !isFinite(x) || x < 0 || x > 1 {
			errs = append(errs, fmt.Errorf("gait: TransitionXY[%d] = %v outside [0, 1]", k, x))
		}
		if z := c.TransitionZ[k]; !isFinite(z) || z < 0 {
			errs = append(errs, fmt.Errorf("gait: TransitionZ[%d] = %v must be >= 0", k, z))
		}
	}
	if zt := (c.TransitionZ[0] + c.TransitionZ[1] + c.TransitionZ[2]) * c.HeightPerStep; zt > c.LiftHeight {
		errs = append(errs, fmt.Errorf("gait: transition height %v exceeds LiftHeight %v", zt, c.LiftHeight))
	}
	if len(errs) == 0 {
		if need := 6 + 2*c.liftTicks(); c.SubSteps < need {
			errs = append(errs, fmt.Errorf("gait: SubSteps %d too small, need at least %d for the transitions, lift and lowering", c.SubSteps, need))
		}
	}
	return errors.Join(errs...)
}

// GaitPhase is the phase of the swinging tripod; Standing means all six feet
// are down and the gait is idle.
type GaitPhase int

// Gait phases in the order of one half cycle.
const (
	GaitStanding GaitPhase = iota
	GaitStanceToSwing
	GaitSwingLift
	GaitSwingPlateau
	GaitSwingLower
	GaitSwingToStance
)

func (p GaitPhase) String() string {
	switch p {
	case GaitStanding:
		return "Standing"
	case GaitStanceToSwing:
		return "Stance_to_swing"
	case GaitSwingLift:
		return "Swing_lift"
	case GaitSwingPlateau:
		return "Swing_plateau"
	case GaitSwingLower:
		return "Swing_lower"
	case GaitSwingToStance:
		return "Swing_to_stance"
	}
	return fmt.Sprintf("GaitPhase(%d)", int(p))
}

// tripods are the two leg groups; group 0 ({RM, LR, LF}) swings first.
var tripods = [2][3]int{{LegRM, LegLR, LegLF}, {LegRR, LegRF, LegLM}}

// Gait is the alternating tripod gait. Each tick it moves the stance tripod
// with the commanded twist (so the body moves exactly as commanded) and the
// swing tripod through the original's phases: Stance_to_swing (three ticks
// of the transition table), Swing_lift, Swing_plateau, Swing_lower and
// Swing_to_stance (the table backwards). A swing foot heads for the point
// that centres its next ground track on its neutral position, moving at most
// DistancePerStep·scaling_factor per tick. At the end of a half cycle the
// tripods swap; with a zero command and all feet within StabilityRadius of
// neutral the gait returns to Standing.
//
// Feet are held with z measured from the ground (0 = foot down); Feet
// returns them in the body frame, z − WalkingHeight.
type Gait struct {
	cfg     GaitConfig
	geom    Geometry
	phase   GaitPhase
	group   int // index into tripods of the swinging group
	sub     int // tick within the half cycle
	feet    Feet
	inStand [NumLegs]bool // true for legs of the stance tripod

	// per half-cycle tick tables, computed once
	z      []float64   // swing foot height after tick k
	xy     []float64   // share of stance motion a swing foot follows at tick k
	air    []float64   // remaining sum of (1-xy) from tick k to the end
	phases []GaitPhase // phase of tick k
	cap    float64     // per-tick swing travel limit
	half   float64     // ticks from touch-down to the middle of the ground track
	lower  int         // first tick of Swing_lower
	rest   float64     // ground ticks left for the stance tripod when cutting to lower

	pending *GaitConfig // set by SetConfig while walking; applied at the next half cycle
}

// NewGait returns a standing gait with all feet at neutral.
func NewGait(cfg GaitConfig, geom Geometry) (*Gait, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := geom.Validate(); err != nil {
		return nil, err
	}
	return newGait(cfg, geom), nil
}

// newGait is NewGait for a configuration and geometry already validated
// (by Config.Validate, in NewController).
func newGait(cfg GaitConfig, geom Geometry) *Gait {
	g := &Gait{cfg: cfg, geom: geom}
	g.buildTables()
	g.Reset()
	return g
}

// buildTables computes the swing profile of one half cycle.
//
// The original's Swing_to_stance walked the transition table with an index
// running from 3 down to 1, so its first tick read one element past the end
// of the three-entry array (undefined behaviour), and it stopped lowering at
// a height unrelated to what the transition removes. Here the table is read
// backwards with indices 2, 1, 0, and lowering stops exactly at the height the
// transition removes, so a swing foot lands at z = 0 on the last tick.
func (g *Gait) buildTables() {
	c := g.cfg
	n := c.SubSteps
	g.z = make([]float64, n)
	g.xy = make([]float64, n)
	g.air = make([]float64, n+1)
	g.phases = make([]GaitPhase, n)
	h := c.HeightPerStep
	zt := (c.TransitionZ[0] + c.TransitionZ[1] + c.TransitionZ[2]) * h
	lift := c.liftTicks()
	z := 0.0
	for k := 0; k < n; k++ {
		switch {
		case k < 3:
			z += c.TransitionZ[k] * h
			g.xy[k] = c.TransitionXY[k]
			g.phases[k] = GaitStanceToSwing
		case k < 3+lift:
			z = math.Min(z+h, c.LiftHeight)
			g.phases[k] = GaitSwingLift
		case k < n-3-lift:
			g.phases[k] = GaitSwingPlateau
		case k < n-3:
			z = math.Max(z-h, zt)
			g.phases[k] = GaitSwingLower
		default:
			j := 2 - (k - (n - 3)) // 2, 1, 0: never past the end
			z = math.Max(z-c.TransitionZ[j]*h, 0)
			g.xy[k] = c.TransitionXY[j]
			g.phases[k] = GaitSwingToStance
		}
		g.z[k] = z
	}
	g.z[n-1] = 0
	ground := 0.0
	for k := n - 1; k >= 0; k-- {
		g.air[k] = g.air[k+1] + (1 - g.xy[k])
		ground += g.xy[k]
	}
	// A foot is on the ground for the xy share of its own swing half cycle
	// (split between lift-off and touch-down) plus a whole stance half cycle.
	g.half = (ground + float64(n)) / 2
	g.lower = n - 3 - lift
	g.rest = float64(n - g.lower)
	for k := 0; k < 3; k++ {
		g.rest += g.xy[k]
	}
	scaling := float64(n+6)/float64(n-6) + 0.2
	g.cap = c.DistancePerStep * scaling
}

// Config returns the gait constants in force (a change scheduled by
// SetConfig shows once applied).
func (g *Gait) Config() GaitConfig { return g.cfg }

// SetConfig changes the gait constants while the robot runs (live
// parameters: speeds, lift height). An invalid configuration, or one that
// changes Rate or SubSteps (the length of a half cycle), is refused with the
// reason. In Standing the change applies at once; while walking it applies
// at the start of the next half cycle, when every foot of the new swing
// tripod is on the ground, so no foot jumps mid-swing.
func (g *Gait) SetConfig(cfg GaitConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Rate != g.cfg.Rate || cfg.SubSteps != g.cfg.SubSteps {
		return fmt.Errorf("gait: Rate and SubSteps cannot change while running (%v Hz, %d sub-steps)", g.cfg.Rate, g.cfg.SubSteps)
	}
	g.schedule(cfg)
	return nil
}

// schedule is SetConfig for a configuration already validated, with this
// gait's Rate and SubSteps (Controller.SetTuning validates the whole
// controller configuration, and a tuning cannot change them).
func (g *Gait) schedule(cfg GaitConfig) {
	g.pending = &cfg
	if g.phase == GaitStanding {
		g.applyPending()
	}
}

func (g *Gait) applyPending() {
	if g.pending == nil {
		return
	}
	g.cfg, g.pending = *g.pending, nil
	g.buildTables()
}

// Reset puts every foot at neutral on the ground and the gait in Standing.
func (g *Gait) Reset() {
	g.applyPending()
	for i := range g.feet {
		g.feet[i] = g.geom.Neutral(i, 0)
	}
	g.phase = GaitStanding
	g.group = 0
	g.sub = 0
	g.markStance()
}

func (g *Gait) markStance() {
	for i := range g.inStand {
		g.inStand[i] = true
	}
	if g.phase != GaitStanding {
		for _, l := range tripods[g.group] {
			g.inStand[l] = false
		}
	}
}

// IsStanding reports whether the gait is idle with all feet down, the only
// state in which the motion FSM may leave Walking.
func (g *Gait) IsStanding() bool { return g.phase == GaitStanding }

// Phase returns the phase of the swing tripod.
func (g *Gait) Phase() GaitPhase { return g.phase }

// SwingGroup returns the legs of the tripod that swings in the current half
// cycle.
func (g *Gait) SwingGroup() [3]int { return tripods[g.group] }

// Feet returns the foot positions in the body frame (ground at
// z = −WalkingHeight).
func (g *Gait) Feet() Feet {
	var f Feet
	for i, p := range g.feet {
		f[i] = geom.Vec3{X: p.X, Y: p.Y, Z: p.Z - g.geom.WalkingHeight}
	}
	return f
}

// SetFeet replaces the foot positions (body frame, as returned by Feet); the
// controller uses it to undo a tick whose feet were out of range.
func (g *Gait) SetFeet(f Feet) {
	for i, p := range f {
		g.feet[i] = geom.Vec3{X: p.X, Y: p.Y, Z: p.Z + g.geom.WalkingHeight}
	}
}

// Limit scales a twist into what the gait can follow: the linear speed to
// MaxLinearSpeed and the yaw rate to MaxAngularSpeed. It reports whether the
// twist was changed.
func (c GaitConfig) Limit(v Velocity) (Velocity, bool) {
	limited := false
	if s, m := math.Hypot(v.X, v.Y), c.MaxLinearSpeed(); s > m {
		v.X, v.Y = v.X*m/s, v.Y*m/s
		limited = true
	}
	if m := c.MaxAngularSpeed(); math.Abs(v.Yaw) > m {
		v.Yaw = math.Copysign(m, v.Yaw)
		limited = true
	}
	return v, limited
}

// Limit applies GaitConfig.Limit and then scales the whole twist (keeping
// its centre of rotation) so that no neutral foot moves faster than the
// faster of a pure full-speed walk and a pure full-rate turn in place. The
// original bounded combined walking and turning the same way: its turning
// step was chosen so that the outermost foot moved at the linear speed.
func (g *Gait) Limit(v Velocity) (Velocity, bool) {
	v, limited := g.cfg.Limit(v)
	if v.Yaw == 0 {
		return v, limited
	}
	maxR, fastest := 0.0, 0.0
	for i := 0; i < NumLegs; i++ {
		nx, ny := g.geom.NeutralX[i], g.geom.NeutralY[i]
		maxR = math.Max(maxR, math.Hypot(nx, ny))
		fastest = math.Max(fastest, math.Hypot(v.X-v.Yaw*ny, v.Y+v.Yaw*nx))
	}
	bound := math.Max(g.cfg.MaxLinearSpeed(), g.cfg.MaxAngularSpeed()*maxR)
	if fastest > bound {
		f := bound / fastest
		v = Velocity{v.X * f, v.Y * f, v.Yaw * f}
		limited = true
	}
	return v, limited
}

// Step advances the gait by one tick with the body twist v (limited with
// Gait.Limit; non-finite twists count as zero) and returns the feet in the
// body frame.
func (g *Gait) Step(v Velocity) Feet {
	if v.Validate() != nil {
		v = Velocity{}
	}
	if g.phase == GaitStanding {
		g.applyPending()
	}
	v, _ = g.Limit(v)
	if g.phase == GaitStanding {
		if !v.IsZero() {
			g.phase = GaitStanceToSwing
			g.sub = 0
			g.markStance()
		}
		return g.Feet()
	}
	dt := 1 / g.cfg.Rate
	if g.phase == GaitSwingPlateau && g.stanceNearLimit(v, dt) {
		g.sub = g.lower
		g.phase = GaitSwingLower
	}
	k := g.sub
	for i := range g.feet {
		p := g.feet[i]
		moved := groundMotion(p, v, dt)
		if g.inStand[i] {
			g.feet[i] = geom.Vec3{X: moved.X, Y: moved.Y, Z: 0}
			continue
		}
		s := g.xy[k]
		next := geom.Vec3{X: p.X + s*(moved.X-p.X), Y: p.Y + s*(moved.Y-p.Y), Z: g.z[k]}
		if w := 1 - s; w > 0 {
			target := groundMotion(g.geom.Neutral(i, 0), v, -g.half*dt)
			dx, dy := target.X-next.X, target.Y-next.Y
			share := w / g.air[k]
			dx, dy = dx*share, dy*share
			if d, lim := math.Hypot(dx, dy), g.cap*w; d > lim {
				dx, dy = dx*lim/d, dy*lim/d
			}
			next.X += dx
			next.Y += dy
		}
		g.feet[i] = next
	}
	g.sub++
	if g.sub < g.cfg.SubSteps {
		g.phase = g.phases[g.sub]
		return g.Feet()
	}
	// end of the half cycle: swap the tripods
	g.sub = 0
	g.applyPending()
	g.group = 1 - g.group
	g.phase = GaitStanceToSwing
	if v.IsZero() && g.atNeutral() {
		g.phase = GaitStanding
	}
	g.markStance()
	return g.Feet()
}

// stanceNearLimit reports whether the plateau must end now: if it lasted
// one more tick, some stance foot would lift off farther from its neutral
// point than it does in the steady walk at the current command. This keeps
// every stance foot within its steady-state track when the walk starts from
// Standing or the command changes, and plays the role of the original's jump
// of sub_step to SUB_STEPS/2 (which halved the first step).
func (g *Gait) stanceNearLimit(v Velocity, dt float64) bool {
	for i := range g.feet {
		if !g.inStand[i] {
			continue
		}
		n := g.geom.Neutral(i, 0)
		lift := groundMotion(g.feet[i], v, (g.rest+1)*dt)
		steady := groundMotion(n, v, g.half*dt)
		if math.Hypot(lift.X-n.X, lift.Y-n.Y) > math.Hypot(steady.X-n.X, steady.Y-n.Y)+g.cfg.StabilityRadius {
			return true
		}
	}
	return false
}

// atNeutral reports whether every foot is down and within StabilityRadius of
// its neutral position.
func (g *Gait) atNeutral() bool {
	for i, p := range g.feet {
		n := g.geom.Neutral(i, 0)
		if p.Z != 0 || math.Hypot(p.X-n.X, p.Y-n.Y) > g.cfg.StabilityRadius {
			return false
		}
	}
	return true
}

// groundMotion returns where a ground-fixed point p (body frame) appears
// after the body has moved with the constant twist v for t seconds (t may be
// negative). z is kept.
func groundMotion(p geom.Vec3, v Velocity, t float64) geom.Vec3 {
	th := v.Yaw * t
	// body displacement in the old body frame: V(th)·(vx, vy)·t
	var a, b float64 // sin(th)/th and (1-cos(th))/th
	if math.Abs(th) < 1e-6 {
		a, b = 1-th*th/6, th/2
	} else {
		s, c := math.Sincos(th)
		a, b = s/th, (1-c)/th
	}
	dx := (a*v.X - b*v.Y) * t
	dy := (b*v.X + a*v.Y) * t
	s, c := math.Sincos(-th)
	x, y := p.X-dx, p.Y-dy
	return geom.Vec3{X: c*x - s*y, Y: s*x + c*y, Z: p.Z}
}
