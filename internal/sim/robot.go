package sim

import (
	"fmt"
	"math"
)

// Pose2D is a planar pose: position in metres, heading in radians.
type Pose2D struct{ X, Y, Theta float64 }

// DiffDriveConfig holds the robot's limits and sensor.
type DiffDriveConfig struct {
	Radius        float64 // footprint radius, m
	MaxLinear     float64 // |v| limit, m/s
	MaxAngular    float64 // |w| limit, rad/s
	CmdTimeout    float64 // a command older than this (s) counts as zero
	ScanBeams     int     // beams over 360°
	ScanRange     float64 // max range, m
	ScanMinRange  float64
	MapUpdateRate int // update the seen map every N steps
}

// DefaultDiffDrive returns the configuration of the built-in robot (about a
// TurtleBot3 Burger).
func DefaultDiffDrive() DiffDriveConfig {
	return DiffDriveConfig{Radius: 0.18, MaxLinear: 0.5, MaxAngular: 1.5, CmdTimeout: 0.5,
		ScanBeams: 180, ScanRange: 3.5, ScanMinRange: 0.12, MapUpdateRate: 1}
}

// DiffDrive is a differential-drive robot in a Grid world. It is not safe
// for concurrent use; a node drives it from one goroutine.
type DiffDrive struct {
	cfg    DiffDriveConfig
	world  *Grid
	seen   *Grid
	pose   Pose2D
	v, w   float64 // current command
	cmdAge float64 // seconds since the last command
	// Odometry twist actually achieved in the last step.
	vAct, wAct float64
	wheelPos   [2]float64 // left, right wheel angle, rad
	wheelVel   [2]float64 // rad/s
	bumps      int
	steps      int
}

// NewDiffDrive places a robot at start in world. The seen map starts
// unknown and has the world's geometry.
func NewDiffDrive(cfg DiffDriveConfig, world *Grid, start Pose2D) (*DiffDrive, error) {
	if world.Blocked(start.X, start.Y, cfg.Radius, false) {
		return nil, fmt.Errorf("sim: start pose (%.2f, %.2f) is inside an obstacle", start.X, start.Y)
	}
	seen, err := NewGrid(world.Width, world.Height, world.Resolution, world.OriginX, world.OriginY, Unknown)
	if err != nil {
		return nil, err
	}
	d := &DiffDrive{cfg: cfg, world: world, seen: seen, pose: start, cmdAge: math.Inf(1)}
	d.updateSeen()
	return d, nil
}

// Command sets the velocity command (like a cmd_vel message). NaN or Inf
// values are rejected; out-of-range values are clamped to the limits.
func (d *DiffDrive) Command(v, w float64) error { return d.CommandAged(v, w, 0) }

// CommandAged sets a velocity command that was given age seconds ago (a
// stamped cmd_vel: now − its stamp): it holds for CmdTimeout − age more.
// A negative or NaN age counts as 0, an infinite one never holds; NaN or
// Inf velocities are rejected, out-of-range ones clamped, as by Command.
func (d *DiffDrive) CommandAged(v, w, age float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.IsNaN(w) || math.IsInf(w, 0) {
		return fmt.Errorf("sim: rejected cmd_vel (%v, %v): not finite", v, w)
	}
	if !(age > 0) {
		age = 0
	}
	d.v = clamp(v, d.cfg.MaxLinear)
	d.w = clamp(w, d.cfg.MaxAngular)
	d.cmdAge = age
	return nil
}

func clamp(x, lim float64) float64 { return math.Max(-lim, math.Min(lim, x)) }

// SetLimits changes MaxLinear and MaxAngular (both must be positive and
// finite); the command in force is clamped to the new limits.
func (d *DiffDrive) SetLimits(maxLinear, maxAngular float64) error {
	if !positive(maxLinear) || !positive(maxAngular) {
		return fmt.Errorf("sim: velocity limits (%v, %v) must be positive and finite", maxLinear, maxAngular)
	}
	d.cfg.MaxLinear, d.cfg.MaxAngular = maxLinear, maxAngular
	d.v, d.w = clamp(d.v, maxLinear), clamp(d.w, maxAngular)
	return nil
}

func positive(x float64) bool { return x > 0 && !math.IsInf(x, 0) }

// Step advances the simulation by dt seconds. The motion is swept in
// steps of at most a quarter cell, so no speed carries the robot through a
// wall. It stops where it would touch an obstacle (a bump is counted) or,
// if it already touches one (the world changed around it), where it would
// get closer to it: a robot can always back away from or slide along what
// it touches. Turning in place is always possible (the footprint is a
// disc).
func (d *DiffDrive) Step(dt float64) {
	d.cmdAge += dt
	v, w := d.v, d.w
	if d.cmdAge > d.cfg.CmdTimeout {
		v, w = 0, 0
	}
	end := integrate(d.pose, v, w, dt)
	r := d.cfg.Radius
	n := int(math.Ceil(math.Abs(v) * dt / (d.world.Resolution / 4)))
	at, clear := d.pose, d.world.Clearance(d.pose.X, d.pose.Y, r, false)
	done := 0
	for k := 1; k <= n; k++ {
		p := integrate(d.pose, v, w, dt*float64(k)/float64(n))
		c := d.world.Clearance(p.X, p.Y, r, false)
		if c < r && c < clear {
			d.bumps++
			break
		}
		at, clear, done = p, c, k
	}
	if n > 0 {
		v *= float64(done) / float64(n) // the part of the motion achieved
	}
	d.pose = Pose2D{at.X, at.Y, end.Theta}
	d.vAct, d.wAct = v, w
	for i, side := range [2]float64{-1, 1} { // left, right
		d.wheelVel[i] = (v + side*w*WheelSeparation/2) / WheelRadius
		d.wheelPos[i] = math.Remainder(d.wheelPos[i]+d.wheelVel[i]*dt, 2*math.Pi)
	}
	d.steps++
	if d.cfg.MapUpdateRate > 0 && d.steps%d.cfg.MapUpdateRate == 0 {
		d.updateSeen()
	}
}

// integrate moves a unicycle exactly along its arc for dt.
func integrate(p Pose2D, v, w, dt float64) Pose2D {
	th := p.Theta + w*dt
	if math.Abs(w) < 1e-9 {
		p.X += v * dt * math.Cos(p.Theta)
		p.Y += v * dt * math.Sin(p.Theta)
	} else {
		p.X += v / w * (math.Sin(th) - math.Sin(p.Theta))
		p.Y -= v / w * (math.Cos(th) - math.Cos(p.Theta))
	}
	p.Theta = math.Atan2(math.Sin(th), math.Cos(th))
	return p
}

// Pose returns the true pose (the simulator's odometry is perfect, so odom
// and map frames coincide).
func (d *DiffDrive) Pose() Pose2D { return d.pose }

// Twist returns the velocity achieved in the last step.
func (d *DiffDrive) Twist() (v, w float64) { return d.vAct, d.wAct }

// Wheels returns the angles (rad, in [−π, π]) and angular velocities
// (rad/s) of the left and right wheel for the last step's motion; a
// positive angle rolls the robot forward.
func (d *DiffDrive) Wheels() (pos, vel [2]float64) { return d.wheelPos, d.wheelVel }

// Bumps returns how many steps a motion was blocked by an obstacle.
func (d *DiffDrive) Bumps() int { return d.bumps }

// Seen returns the map built so far (the caller must not modify it).
func (d *DiffDrive) Seen() *Grid { return d.seen }

// World returns the ground-truth world.
func (d *DiffDrive) World() *Grid { return d.world }

// Config returns the robot configuration.
func (d *DiffDrive) Config() DiffDriveConfig { return d.cfg }

// Scan returns the ranges of ScanBeams beams spread evenly over a full turn,
// starting straight ahead and going counter-clockwise; a beam that hits
// nothing within ScanRange reports +Inf (as a LaserScan does).
func (d *DiffDrive) Scan() []float32 {
	out := make([]float32, d.cfg.ScanBeams)
	for i := range out {
		a := d.pose.Theta + 2*math.Pi*float64(i)/float64(d.cfg.ScanBeams)
		r, hit := castRay(d.world, d.pose.X, d.pose.Y, a, d.cfg.ScanRange, nil)
		if hit {
			out[i] = float32(r)
		} else {
			out[i] = float32(math.Inf(1))
		}
	}
	return out
}

// updateSeen marks the cells each beam crosses as free and the cell it hits
// as occupied.
func (d *DiffDrive) updateSeen() {
	n := d.cfg.ScanBeams * 2
	for i := 0; i < n; i++ {
		a := d.pose.Theta + 2*math.Pi*float64(i)/float64(n)
		castRay(d.world, d.pose.X, d.pose.Y, a, d.cfg.ScanRange, d.seen)
	}
}

// castRay walks from (x, y) in direction a in steps of a quarter cell up to
// maxRange. It returns the distance to the first occupied cell and whether
// one was hit. If mark is non-nil, crossed cells are marked Free there and
// the hit cell Occupied.
func castRay(g *Grid, x, y, a, maxRange float64, mark *Grid) (float64, bool) {
	step := g.Resolution / 4
	ca, sa := math.Cos(a), math.Sin(a)
	for r := 0.0; r <= maxRange; r += step {
		px, py := x+r*ca, y+r*sa
		cx, cy := g.CellOf(px, py)
		if g.At(cx, cy) == Occupied {
			if mark != nil {
				mark.Set(cx, cy, Occupied)
			}
			return r, true
		}
		if mark != nil {
			mark.Set(cx, cy, Free)
		}
	}
	return maxRange, false
}
