package hexapod

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// recorder is a ServoDriver that records every call.
type recorder struct {
	calls []string
	goals int
	last  Joints
}

func (r *recorder) SetTorque(on bool) error {
	r.calls = append(r.calls, fmt.Sprintf("torque %v", on))
	return nil
}
func (r *recorder) SetSpeed(f float64) error {
	r.calls = append(r.calls, fmt.Sprintf("speed %v", f))
	return nil
}
func (r *recorder) WriteGoals(j *Joints) error {
	r.goals++
	r.last = *j
	return nil
}
func (r *recorder) ReadPositions(*Joints) error { return nil }

func (r *recorder) take() string {
	s := strings.Join(r.calls, "; ")
	r.calls = nil
	return s
}

func newTestController(t testing.TB, cfg Config) (*Controller, *recorder) {
	t.Helper()
	rec := &recorder{}
	c, err := NewController(cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

func mustTick(t *testing.T, c *Controller) Output {
	t.Helper()
	out, err := c.Tick()
	if err != nil {
		t.Fatalf("tick in %v: %v", c.State(), err)
	}
	return out
}

// tickUntil ticks until the state is s and returns the number of ticks.
func tickUntil(t *testing.T, c *Controller, s State, max int) int {
	t.Helper()
	for n := 1; n <= max; n++ {
		if mustTick(t, c).State == s {
			return n
		}
	}
	t.Fatalf("state %v not reached in %d ticks (now %v)", s, max, c.State())
	return 0
}

func wantIgnored(t *testing.T, c *Controller, cmd Command) {
	t.Helper()
	var ie *IgnoredError
	if _, err := c.Command(cmd); !errors.As(err, &ie) {
		t.Fatalf("%v in %v: %v, want ignored", cmd, c.State(), err)
	}
}

func wantAccepted(t *testing.T, c *Controller, cmd Command) {
	t.Helper()
	if _, err := c.Command(cmd); err != nil {
		t.Fatalf("%v in %v: %v", cmd, c.State(), err)
	}
}

func TestController_FullCycle_IdleToWalkingAndBack(t *testing.T) {
	c, rec := newTestController(t, DefaultConfig())
	if out := mustTick(t, c); out.State != Idle || out.Sent || rec.goals != 0 || len(rec.calls) != 0 {
		t.Fatalf("idle tick: %+v, servo calls %v", out, rec.calls)
	}
	wantIgnored(t, c, CmdStandUp)
	wantIgnored(t, c, CmdSitDown)
	wantIgnored(t, c, CmdStandWalk)

	wantAccepted(t, c, CmdStartStop)
	if out := mustTick(t, c); out.State != Sitting || !out.Sent {
		t.Fatalf("after start: %+v", out)
	}
	if got := rec.take(); got != "speed 0.2; torque true" {
		t.Fatalf("servo calls on start: %q", got)
	}
	mustTick(t, c)
	if got := rec.take(); got != "" {
		t.Fatalf("repeated servo calls while sitting: %q", got)
	}
	wantIgnored(t, c, CmdStandWalk)

	// stop again from Sitting
	wantAccepted(t, c, CmdStartStop)
	if out := mustTick(t, c); out.State != Idle {
		t.Fatalf("after stop: %v", out.State)
	}
	if got := rec.take(); got != "torque false" {
		t.Fatalf("servo calls on stop: %q", got)
	}
	wantAccepted(t, c, CmdStartStop)
	mustTick(t, c)
	rec.take()

	wantAccepted(t, c, CmdStandUp)
	if out := mustTick(t, c); out.State != StandingUp {
		t.Fatalf("after stand_up: %v", out.State)
	}
	if got := rec.take(); got != "speed 0" {
		t.Fatalf("servo calls on stand up: %q", got)
	}
	wantIgnored(t, c, CmdStartStop)
	n := tickUntil(t, c, Walking, 200)
	// (0.05 + 0.135) / 0.002 = 92.5 -> the 93rd step reaches the height
	if n != 93 {
		t.Errorf("standing up took %d ticks, want 93", n)
	}
	for i, f := range c.feet {
		if f.Z != -0.135 {
			t.Fatalf("foot %d at z %v after standing up", i, f.Z)
		}
	}

	// walk forward: joints change every tick
	if err := c.SetVelocity(Velocity{X: 0.1}); err != nil {
		t.Fatal(err)
	}
	prev := c.Joints()
	moved := 0
	for k := 0; k < 100; k++ {
		out := mustTick(t, c)
		if out.State != Walking {
			t.Fatalf("left Walking at tick %d: %v", k, out.State)
		}
		if out.Joints != prev {
			moved++
		}
		prev = out.Joints
	}
	if moved < 95 {
		t.Fatalf("joints changed on %d of 100 walking ticks", moved)
	}

	// sit down: update_vel zeroes the command, the gait stops, then sits
	wantAccepted(t, c, CmdSitDown)
	tickUntil(t, c, SittingDown, 200)
	if !c.gait.IsStanding() {
		t.Fatalf("sitting down while the gait moves")
	}
	tickUntil(t, c, Sitting, 200)
	mustTick(t, c)
	for i, f := range c.feet {
		if n := c.cfg.Geometry.Neutral(i, 0.05); f.Sub(n).Norm() > 0.001 {
			t.Errorf("sitting foot %d at %+v, want %+v", i, f, n)
		}
	}
	if got := rec.take(); got != "speed 0.2" {
		t.Errorf("servo calls back in Sitting: %q", got)
	}
	wantAccepted(t, c, CmdStartStop)
	tickUntil(t, c, Idle, 2)
}

func TestController_StandWalk_PosesBodyInStanding(t *testing.T) {
	c, _ := newTestController(t, DefaultConfig())
	wantAccepted(t, c, CmdStartStop)
	wantAccepted(t, c, CmdStandUp)
	tickUntil(t, c, Walking, 200)
	wantAccepted(t, c, CmdStandWalk) // walking_cmd -> false
	if out := mustTick(t, c); out.State != Standing {
		t.Fatalf("stand_walk while the gait stands: %v", out.State)
	}
	max := c.cfg.Gait.MaxLinearSpeed()
	if err := c.SetVelocity(Velocity{X: max / 2, Y: -max / 4, Yaw: 0.25}); err != nil {
		t.Fatal(err)
	}
	feet := c.feet
	out := mustTick(t, c)
	if out.State != Standing || !out.Sent {
		t.Fatalf("posing tick: %+v", out)
	}
	want := Pose{Pitch: 0.2, Roll: -0.125, Yaw: 0.125}
	if math.Abs(out.Body.Pitch-want.Pitch) > 1e-12 || math.Abs(out.Body.Roll-want.Roll) > 1e-12 || math.Abs(out.Body.Yaw-want.Yaw) > 1e-12 {
		t.Fatalf("body pose %+v, want %+v", out.Body, want)
	}
	if c.feet != feet {
		t.Fatalf("feet moved while posing")
	}
	// back to walking levels the body
	wantAccepted(t, c, CmdStandWalk)
	if out := mustTick(t, c); out.State != Walking || out.Body != (Pose{}) {
		t.Fatalf("back to walking: %v body %+v", out.State, out.Body)
	}
	// walking -> standing waits for the gait to stand
	mustTick(t, c) // the gait starts moving
	wantAccepted(t, c, CmdStandWalk)
	if err := c.SetVelocity(Velocity{}); err != nil {
		t.Fatal(err)
	}
	if out := mustTick(t, c); out.State != Walking {
		t.Fatalf("left Walking while the gait moves: %v", out.State)
	}
	tickUntil(t, c, Standing, 200)
}

func TestController_OutOfRange_KeepsPreviousFeetAndJoints(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PitchGain = 3 // far beyond what the legs can follow
	c, rec := newTestController(t, cfg)
	wantAccepted(t, c, CmdStartStop)
	wantAccepted(t, c, CmdStandUp)
	tickUntil(t, c, Walking, 200)
	wantAccepted(t, c, CmdStandWalk)
	tickUntil(t, c, Standing, 2)
	joints, feet, goals := c.Joints(), c.feet, rec.goals
	if err := c.SetVelocity(Velocity{X: cfg.Gait.MaxLinearSpeed()}); err != nil {
		t.Fatal(err)
	}
	out, err := c.Tick()
	var oe *OutOfRangeError
	if !errors.As(err, &oe) {
		t.Fatalf("Tick error %v, want *OutOfRangeError", err)
	}
	if out.Sent || rec.goals != goals || out.Joints != joints || c.feet != feet || out.Body != (Pose{}) {
		t.Fatalf("out-of-range tick changed the output: %+v", out)
	}
	for _, v := range out.Joints {
		if math.IsNaN(v) {
			t.Fatal("NaN joint")
		}
	}
	if out.State != Standing {
		t.Fatalf("state %v", out.State)
	}
}

func TestController_SetVelocity_RejectsNonFinite(t *testing.T) {
	c, _ := newTestController(t, DefaultConfig())
	if err := c.SetVelocity(Velocity{X: 0.1}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []Velocity{{X: math.NaN()}, {Y: math.Inf(-1)}, {Yaw: math.Inf(1)}} {
		err := c.SetVelocity(v)
		if err == nil || !strings.Contains(err.Error(), "finite") {
			t.Errorf("SetVelocity(%+v) = %v", v, err)
		}
	}
	if c.vel != (Velocity{X: 0.1}) {
		t.Fatalf("velocity changed to %+v", c.vel)
	}
}

func TestController_VelocityWhileSitting_Zeroed(t *testing.T) {
	c, _ := newTestController(t, DefaultConfig())
	wantAccepted(t, c, CmdStartStop)
	if err := c.SetVelocity(Velocity{X: 0.2}); err != nil {
		t.Fatal(err)
	}
	if v := c.effectiveVelocity(); !v.IsZero() {
		t.Fatalf("effective velocity while sitting %+v", v)
	}
	wantAccepted(t, c, CmdStandUp)
	if v := c.effectiveVelocity(); v != (Velocity{X: 0.2}) {
		t.Fatalf("effective velocity when stood up %+v", v)
	}
}

func TestController_Unknown_FreesServosEveryTick(t *testing.T) {
	c, rec := newTestController(t, DefaultConfig())
	c.state = Unknown
	for k := 0; k < 2; k++ {
		if out := mustTick(t, c); out.State != Unknown || out.Sent {
			t.Fatalf("unknown tick %+v", out)
		}
	}
	if got := rec.take(); got != "torque false; torque false" || rec.goals != 0 {
		t.Fatalf("servo calls in Unknown: %q, %d goals", got, rec.goals)
	}
}

func TestNewController_RejectsInvalidConfig(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SitStep = 0
	if _, err := NewController(cfg, nil); err == nil || !strings.Contains(err.Error(), "SitStep") {
		t.Fatalf("NewController with SitStep 0: %v", err)
	}
	cfg = DefaultConfig()
	cfg.Geometry.FemurLength = math.NaN()
	if _, err := NewController(cfg, nil); err == nil {
		t.Fatal("NaN femur accepted")
	}
}

// BenchmarkControllerTick_Walking measures one 100 Hz control tick while
// walking and turning: gait step and IK of all six legs.
func BenchmarkControllerTick_Walking(b *testing.B) {
	c, err := NewController(DefaultConfig(), nil)
	if err != nil {
		b.Fatal(err)
	}
	c.Command(CmdStartStop)
	c.Command(CmdStandUp)
	for c.State() != Walking {
		if _, err := c.Tick(); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.SetVelocity(Velocity{X: 0.1, Y: 0.03, Yaw: 0.2}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Tick(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSolveIK measures the IK of six legs with a rotated body.
func BenchmarkSolveIK(b *testing.B) {
	g := DefaultGeometry()
	var feet Feet
	for i := range feet {
		feet[i] = g.Neutral(i, -g.WalkingHeight)
	}
	pose := Pose{Roll: 0.1, Pitch: -0.05, Yaw: 0.2}
	var j Joints
	for i := 0; i < b.N; i++ {
		if err := g.SolveIK(&feet, pose, &j); err != nil {
			b.Fatal(err)
		}
	}
}

func TestController_SetTuning(t *testing.T) {
	c, _ := newTestController(t, DefaultConfig())
	before := c.Config()
	tu := before.Tuning()
	for name, bad := range map[string]func(*Tuning){
		"NaN gain":       func(t *Tuning) { t.PitchGain = math.NaN() },
		"zero speed":     func(t *Tuning) { t.DistancePerStep = 0 },
		"Inf turn":       func(t *Tuning) { t.DphiMaxStanding = math.Inf(1) },
		"lift too high":  func(t *Tuning) { t.LiftHeight = 0.5 },
		"negative speed": func(t *Tuning) { t.DistancePerStep = -0.001 },
	} {
		x := tu
		bad(&x)
		if err := c.SetTuning(x); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if c.Config() != before {
		t.Fatal("refused tunings changed the config")
	}
	tu.PitchGain, tu.DistancePerStep = 0.2, 0.006
	if err := c.SetTuning(tu); err != nil {
		t.Fatal(err)
	}
	if got := c.Config().Tuning(); got != tu {
		t.Errorf("tuning %+v, want %+v", got, tu)
	}
	if got := c.gait.Config().MaxLinearSpeed(); math.Abs(got-0.006/math.Sqrt2*100) > 1e-12 {
		t.Errorf("gait max speed %v: the idle gait should take the new speed at once", got)
	}
}
