package sim

import (
	"errors"
	"fmt"
	"math"
)

// NavStatus is the state of a navigation goal.
type NavStatus int

// Navigation states.
const (
	NavIdle NavStatus = iota
	NavRunning
	NavSucceeded
	NavFailed
)

func (s NavStatus) String() string {
	switch s {
	case NavIdle:
		return "idle"
	case NavRunning:
		return "running"
	case NavSucceeded:
		return "succeeded"
	case NavFailed:
		return "failed"
	}
	return fmt.Sprintf("NavStatus(%d)", int(s))
}

// NavConfig tunes the Navigator.
type NavConfig struct {
	Planner         Planner
	GoalTolerance   float64 // m
	Lookahead       float64 // pure-pursuit lookahead, m
	MaxLinear       float64 // m/s
	MaxAngular      float64 // rad/s
	ReplanPeriod    float64 // s between replans on the updated map
	StuckTime       float64 // s without progress before a recovery replan
	MaxRecoveries   int     // recoveries before the goal fails
	Timeout         float64 // s; 0 = none
	Reverse         bool    // drive backwards (RSM's reverse mode)
	RotateThreshold float64 // heading error (rad) above which the robot turns in place
	// Footprint is the radius of the robot (m) for the collision check of
	// every command: the navigator does not send a motion that would bring
	// a disc of this radius into an obstacle of its map (see Update).
	Footprint float64
	// CollisionTime is how far ahead (s) a command is checked, at most up
	// to the path point it steers to; 0 (or Footprint 0) turns the check
	// off.
	CollisionTime float64
}

// DefaultNav returns settings that suit DefaultDiffDrive in DefaultWorld.
func DefaultNav() NavConfig {
	return NavConfig{
		Planner:       Planner{Radius: 0.24, UnknownFree: true},
		GoalTolerance: 0.2, Lookahead: 0.4, MaxLinear: 0.4, MaxAngular: 1.2,
		ReplanPeriod: 2, StuckTime: 8, MaxRecoveries: 3, Timeout: 300, RotateThreshold: 0.9,
		Footprint: DefaultDiffDrive().Radius, CollisionTime: 1,
	}
}

// Navigator drives a robot to a goal: it plans on the map it is given,
// follows the path with pure pursuit, sends no command that would drive
// into an obstacle of that map, replans as the map grows, and fails a goal
// that cannot be reached. It is the core of the built-in stand-in for
// Nav2's navigate_to_pose action.
type Navigator struct {
	cfg        NavConfig
	status     NavStatus
	reason     string
	goal       Point
	path       []Point
	elapsed    float64
	sinceplan  float64
	best       float64 // best distance to goal so far
	sinceBest  float64
	recoveries int
	plans      int // paths planned since Start
	avoided    int // cycles whose pursuit command would have collided
}

// NewNavigator returns an idle navigator.
func NewNavigator(cfg NavConfig) *Navigator { return &Navigator{cfg: cfg} }

// Start begins navigating to goal on map g from pose. It fails at once (and
// returns the error) if no path exists.
func (n *Navigator) Start(g *Grid, pose Pose2D, goal Point) error {
	*n = Navigator{cfg: n.cfg, status: NavRunning, goal: goal, best: math.Inf(1)}
	if err := n.replan(g, pose); err != nil {
		n.fail(err.Error())
		return err
	}
	return nil
}

// Cancel stops the current goal; the robot should be stopped by the caller.
func (n *Navigator) Cancel() {
	if n.status == NavRunning {
		n.status = NavIdle
		n.reason = "canceled"
	}
}

// SetLimits changes MaxLinear and MaxAngular (both must be positive and
// finite); the next Update uses them.
func (n *Navigator) SetLimits(maxLinear, maxAngular float64) error {
	if !positive(maxLinear) || !positive(maxAngular) {
		return fmt.Errorf("sim: velocity limits (%v, %v) must be positive and finite", maxLinear, maxAngular)
	}
	n.cfg.MaxLinear, n.cfg.MaxAngular = maxLinear, maxAngular
	return nil
}

// Status returns the state and, for failures, the reason.
func (n *Navigator) Status() (NavStatus, string) { return n.status, n.reason }

// Goal returns the current goal.
func (n *Navigator) Goal() Point { return n.goal }

// Path returns the rest of the current plan (points the robot has passed
// are dropped as it follows the path).
func (n *Navigator) Path() []Point { return n.path }

// Plans counts the paths planned since Start (the first plan and every
// replan), so a caller can publish each new plan once.
func (n *Navigator) Plans() int { return n.plans }

// DistanceRemaining is the length of the rest of the path.
func (n *Navigator) DistanceRemaining(pose Pose2D) float64 {
	if len(n.path) == 0 {
		return math.Hypot(n.goal.X-pose.X, n.goal.Y-pose.Y)
	}
	d := 0.0
	prev := Point{pose.X, pose.Y}
	for _, p := range n.path {
		d += math.Hypot(p.X-prev.X, p.Y-prev.Y)
		prev = p
	}
	return d
}

func (n *Navigator) fail(reason string) {
	n.status = NavFailed
	n.reason = reason
	n.path = nil
}

func (n *Navigator) replan(g *Grid, pose Pose2D) error {
	path, err := n.cfg.Planner.Plan(g, Point{pose.X, pose.Y}, n.goal)
	if err != nil {
		return err
	}
	n.path = path[1:]
	n.sinceplan = 0
	n.plans++
	return nil
}

// Update advances the navigator by dt seconds given the robot's pose and
// the current map, and returns the velocity command to send.
//
// The command is pure pursuit of the path point Lookahead ahead, checked,
// as Nav2's controllers check theirs, against the map (collides): driven
// for CollisionTime, at most up to that point, the Footprint disc must not
// touch an occupied cell. A command that would makes the navigator replan
// at once on this map (the path may predate a wall just seen, and pursuit
// of a point beyond a corner cuts the corner) and steer to nearer points
// of the path, turning in place where needed; if even the nearest point
// cannot be driven to, it turns to face it and backs away from the
// obstacle, or else stands still. A robot that already touches an
// obstacle may make any motion that does not bring it closer.
func (n *Navigator) Update(g *Grid, pose Pose2D, dt float64) (v, w float64) {
	if n.status != NavRunning {
		return 0, 0
	}
	n.elapsed += dt
	n.sinceplan += dt
	d := math.Hypot(n.goal.X-pose.X, n.goal.Y-pose.Y)
	if d <= n.cfg.GoalTolerance {
		n.status = NavSucceeded
		n.path = nil
		return 0, 0
	}
	if n.cfg.Timeout > 0 && n.elapsed > n.cfg.Timeout {
		n.fail(fmt.Sprintf("timed out after %.0f s", n.cfg.Timeout))
		return 0, 0
	}
	if d < n.best-0.05 {
		n.best, n.sinceBest = d, 0
	} else {
		n.sinceBest += dt
	}
	if n.sinceBest > n.cfg.StuckTime {
		n.recoveries++
		n.sinceBest = 0
		if n.recoveries > n.cfg.MaxRecoveries {
			n.fail(fmt.Sprintf("no progress after %d recoveries", n.cfg.MaxRecoveries))
			return 0, 0
		}
		n.sinceplan = math.Inf(1) // force a replan
	}
	if n.sinceplan >= n.cfg.ReplanPeriod && !n.replanOrFail(g, pose) {
		return 0, 0
	}
	n.prune(pose)
	if v, w, ok := n.steer(g, pose, n.cfg.Lookahead); ok {
		return v, w
	}
	n.avoided++
	if n.sinceplan >= minAvoidReplan {
		if !n.replanOrFail(g, pose) {
			return 0, 0
		}
		n.prune(pose)
	}
	for _, la := range [...]float64{n.cfg.Lookahead, n.cfg.Lookahead / 2, 0} {
		if v, w, ok := n.steer(g, pose, la); ok {
			return v, w
		}
	}
	return n.escape(g, pose)
}

// minAvoidReplan is the shortest time (s) between two replans forced by a
// command that would collide: maps come a few times a second, so planning
// more often finds nothing new.
const minAvoidReplan = 0.5

// replanOrFail replans from pose on g; if that fails, the goal fails and it
// returns false.
func (n *Navigator) replanOrFail(g *Grid, pose Pose2D) bool {
	err := n.replan(g, pose)
	if err == nil {
		return true
	}
	reason := err.Error()
	if errors.Is(err, ErrNoPath) {
		reason = "goal became unreachable: " + reason
	}
	n.fail(reason)
	return false
}

// Avoided counts the control cycles since Start whose pure-pursuit command
// would have run into an obstacle of the map and was replaced.
func (n *Navigator) Avoided() int { return n.avoided }

// prune drops the path points the robot has passed: the first point goes
// while the next one is no farther from the robot.
func (n *Navigator) prune(pose Pose2D) {
	for len(n.path) > 1 && distTo(pose, n.path[1]) <= distTo(pose, n.path[0]) {
		n.path = n.path[1:]
	}
}

// target returns the first path point at least la from the robot, or the
// last one (the goal).
func (n *Navigator) target(pose Pose2D, la float64) Point {
	for _, p := range n.path {
		if distTo(pose, p) >= la {
			return p
		}
	}
	if len(n.path) > 0 {
		return n.path[len(n.path)-1]
	}
	return n.goal
}

func distTo(pose Pose2D, p Point) float64 { return math.Hypot(p.X-pose.X, p.Y-pose.Y) }

// steer returns the pure-pursuit command towards the path point la ahead
// and whether it is free of collisions (turning in place always is).
func (n *Navigator) steer(g *Grid, pose Pose2D, la float64) (v, w float64, ok bool) {
	t := n.target(pose, la)
	v, w = n.pursue(pose, t)
	return v, w, v == 0 || !n.collides(g, pose, v, w, distTo(pose, t))
}

// pursue steers towards target: turn in place while the heading error is
// above RotateThreshold, else drive along an arc, slower for a larger
// error and near the goal.
func (n *Navigator) pursue(pose Pose2D, target Point) (v, w float64) {
	errA := n.headingError(pose, target)
	w = clamp(2.0*errA, n.cfg.MaxAngular)
	if math.Abs(errA) > n.cfg.RotateThreshold {
		return 0, w
	}
	v = math.Min(n.cfg.MaxLinear, 0.8*distTo(pose, n.goal)+0.05) * math.Cos(errA)
	if n.cfg.Reverse {
		v = -v
	}
	return v, w
}

// headingError is the angle from the robot's leading side (its back in
// reverse mode) to the direction of target.
func (n *Navigator) headingError(pose Pose2D, target Point) float64 {
	facing := pose.Theta
	if n.cfg.Reverse {
		facing += math.Pi // the back of the robot leads
	}
	return wrap(math.Atan2(target.Y-pose.Y, target.X-pose.X) - facing)
}

// Escape manoeuvre: the heading error (rad) to the nearest path point below
// which the robot backs away instead of turning further, and how fast
// (a share of MaxLinear) and how far (m) it backs.
const (
	escapeAlign = 0.2
	backupShare = 0.25
	backupReach = 0.1
)

// escape is the last resort when no path point can be driven to: turn to
// face the nearest one, then back away (with the leading side ahead, so
// forwards in reverse mode) as far as that does not collide either, else
// stand still.
func (n *Navigator) escape(g *Grid, pose Pose2D) (v, w float64) {
	errA := n.headingError(pose, n.target(pose, 0))
	if math.Abs(errA) > escapeAlign {
		return 0, clamp(2.0*errA, n.cfg.MaxAngular)
	}
	v = -backupShare * n.cfg.MaxLinear
	if n.cfg.Reverse {
		v = -v
	}
	if n.collides(g, pose, v, 0, backupReach) {
		return 0, 0
	}
	return v, 0
}

// collides reports whether the command (v, w), driven from pose for
// CollisionTime but no farther than reach metres, would bring the Footprint
// disc into an occupied cell of g, or closer than a tenth of a cell to one
// (a margin for the sampling and for the pose being a control cycle old).
// From a pose already within that margin, or touching, the motion may not
// bring the robot closer than it is, not even in its first millimetre (an
// arc that starts towards the obstacle and then curves away would be
// refused by the simulator). The arc is sampled every eighth of a cell;
// unknown cells do not count (the planner may cross them).
func (n *Navigator) collides(g *Grid, pose Pose2D, v, w, reach float64) bool {
	fp := n.cfg.Footprint
	if fp <= 0 || n.cfg.CollisionTime <= 0 || v == 0 {
		return false
	}
	s := math.Min(math.Abs(v)*n.cfg.CollisionTime, reach)
	if !(s > 0) {
		return false
	}
	limit := fp + g.Resolution/10
	floor := g.Clearance(pose.X, pose.Y, limit, false)
	closer := func(dist float64) bool {
		p := integrate(pose, v, w, dist/math.Abs(v))
		return g.Clearance(p.X, p.Y, limit, false) < floor-1e-9
	}
	if floor < limit && (closer(math.Min(1e-4, s)) || closer(math.Min(1e-3, s))) {
		return true // heads towards what it touches, if only at first
	}
	steps := int(math.Ceil(s / (g.Resolution / 8)))
	for k := 1; k <= steps; k++ {
		if closer(s * float64(k) / float64(steps)) {
			return true
		}
	}
	return false
}

func wrap(a float64) float64 { return math.Atan2(math.Sin(a), math.Cos(a)) }
