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
}

// DefaultNav returns settings that suit DefaultDiffDrive in DefaultWorld.
func DefaultNav() NavConfig {
	return NavConfig{
		Planner:       Planner{Radius: 0.24, UnknownFree: true},
		GoalTolerance: 0.2, Lookahead: 0.4, MaxLinear: 0.4, MaxAngular: 1.2,
		ReplanPeriod: 2, StuckTime: 8, MaxRecoveries: 3, Timeout: 300, RotateThreshold: 0.9,
	}
}

// Navigator drives a robot to a goal: it plans on the map it is given,
// follows the path with pure pursuit, replans as the map grows, and fails a
// goal that cannot be reached. It is the core of the built-in stand-in for
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

// Path returns the rest of the current plan (points already passed are
// dropped as the robot follows it).
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
	if n.sinceplan >= n.cfg.ReplanPeriod {
		if err := n.replan(g, pose); err != nil {
			reason := err.Error()
			if errors.Is(err, ErrNoPath) {
				reason = "goal became unreachable: " + reason
			}
			n.fail(reason)
			return 0, 0
		}
	}
	return n.follow(pose)
}

// follow is pure pursuit on the current path.
func (n *Navigator) follow(pose Pose2D) (v, w float64) {
	// Drop path points already reached.
	for len(n.path) > 1 && math.Hypot(n.path[0].X-pose.X, n.path[0].Y-pose.Y) < n.cfg.Lookahead {
		n.path = n.path[1:]
	}
	target := n.goal
	if len(n.path) > 0 {
		target = n.path[0]
	}
	dx, dy := target.X-pose.X, target.Y-pose.Y
	heading := math.Atan2(dy, dx)
	facing := pose.Theta
	if n.cfg.Reverse {
		facing += math.Pi // the back of the robot leads
	}
	errA := wrap(heading - facing)
	w = clamp(2.0*errA, n.cfg.MaxAngular)
	if math.Abs(errA) > n.cfg.RotateThreshold {
		return 0, w
	}
	dist := math.Hypot(dx, dy)
	v = math.Min(n.cfg.MaxLinear, 0.8*dist+0.05) * math.Cos(errA)
	if n.cfg.Reverse {
		v = -v
	}
	return v, w
}

func wrap(a float64) float64 { return math.Atan2(math.Sin(a), math.Cos(a)) }
