// Package cmdvel guards velocity commands (geometry_msgs/Twist, cmd_vel) on
// their way to a motor: a command with a NaN or infinite component is
// rejected, a finite one beyond the configured maxima is clamped. Every
// rejection and every clamp is counted; the node is told to log only the
// first of an episode (a run of bad commands ended by a good one), and no
// more often than once per ReportInterval, so a flood of bad commands
// costs counters, not log lines.
//
// The package has no ROS types; nodes convert their messages to Twist.
// A Guard is not safe for concurrent use (a node drives it from its
// callback goroutine); its counters may be read from any goroutine.
package cmdvel

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// ReportInterval is the shortest time between two reports of one kind
// (rejections or clamps) of a Guard.
const ReportInterval = 5 * time.Second

// Limits are the largest accepted magnitudes of each component of a
// command: parameters max_linear_velocity (m/s) and max_angular_velocity
// (rad/s).
type Limits struct {
	Linear  float64
	Angular float64
}

// Validate checks that both limits are positive and finite.
func (l Limits) Validate() error {
	for _, c := range []struct {
		name string
		v    float64
	}{{"max_linear_velocity", l.Linear}, {"max_angular_velocity", l.Angular}} {
		if !(c.v > 0) || math.IsInf(c.v, 0) {
			return fmt.Errorf("%s = %v: must be above 0 and finite", c.name, c.v)
		}
	}
	return nil
}

// Twist is a velocity command: linear (x, y, z) in m/s and angular (x, y,
// z) in rad/s, as geometry_msgs/Twist.
type Twist struct {
	Linear, Angular [3]float64
}

var componentNames = [6]string{"linear.x", "linear.y", "linear.z", "angular.x", "angular.y", "angular.z"}

func (t Twist) component(i int) float64 {
	if i < 3 {
		return t.Linear[i]
	}
	return t.Angular[i-3]
}

// Verdict says what a Guard did with a command.
type Verdict int

// Verdicts of Guard.Check.
const (
	Accepted Verdict = iota // within the limits, unchanged
	Clamped                 // finite but beyond a limit; components clamped
	Rejected                // NaN or Inf; not to be used
)

// String names the verdict.
func (v Verdict) String() string {
	switch v {
	case Accepted:
		return "accepted"
	case Clamped:
		return "clamped"
	case Rejected:
		return "rejected"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Guard checks the commands of one input (e.g. a cmd_vel subscription).
type Guard struct {
	input string
	lim   Limits

	rejected, clamped atomic.Uint64
	kinds             [2]reportState // Rejected-1 → index 1, Clamped-1 → index 0
}

// reportState decides when one kind of bad command is reported.
type reportState struct {
	inEpisode  bool
	pending    bool      // an episode started while reports were held back
	reported   bool      // something of this kind was reported at least once
	lastReport time.Time // when it was
	unreported uint64    // counted since the last report
}

// NewGuard returns a guard for the input named input (used in reports,
// e.g. "cmd_vel" or "autonomy cmd_vel") with limits lim.
func NewGuard(input string, lim Limits) (*Guard, error) {
	if err := lim.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", input, err)
	}
	return &Guard{input: input, lim: lim}, nil
}

// Limits returns the guard's limits.
func (g *Guard) Limits() Limits { return g.lim }

// SetLimits changes the limits (e.g. after a parameter change); invalid
// limits are refused and change nothing.
func (g *Guard) SetLimits(lim Limits) error {
	if err := lim.Validate(); err != nil {
		return fmt.Errorf("%s: %w", g.input, err)
	}
	g.lim = lim
	return nil
}

// Rejected returns how many commands were rejected (NaN/Inf).
func (g *Guard) Rejected() uint64 { return g.rejected.Load() }

// Clamped returns how many commands were clamped to the limits.
func (g *Guard) Clamped() uint64 { return g.clamped.Load() }

// Result is what Check made of a command.
type Result struct {
	// Twist is the command to use: the input, or the input with every
	// component clamped to ±max_linear_velocity / ±max_angular_velocity;
	// zero when rejected.
	Twist   Twist
	Verdict Verdict
	// Err says why the command was clamped or rejected (nil if accepted).
	Err error
	// Report is non-nil when the node should log (Warn) now: for the first
	// rejected or clamped command of an episode, at most once per
	// ReportInterval per kind (an episode that starts sooner is reported
	// by its first command after the interval, if it lasts that long). It
	// wraps Err and says how many commands it stands for.
	Report error
}

// Check classifies t received at now and counts it.
func (g *Guard) Check(t Twist, now time.Time) Result {
	for i := range 6 {
		if x := t.component(i); math.IsNaN(x) || math.IsInf(x, 0) {
			g.rejected.Add(1)
			g.kinds[0].calm()
			err := fmt.Errorf("%s rejected: %s is %v (only finite velocities are accepted)", g.input, componentNames[i], x)
			return Result{Verdict: Rejected, Err: err, Report: g.kinds[1].note(now, err)}
		}
	}
	g.kinds[1].calm()
	out := t
	var first string
	for i := range 3 {
		if c := clamp(out.Linear[i], g.lim.Linear); c != out.Linear[i] {
			if first == "" {
				first = fmt.Sprintf("%s = %g beyond max_linear_velocity %g", componentNames[i], out.Linear[i], g.lim.Linear)
			}
			out.Linear[i] = c
		}
		if c := clamp(out.Angular[i], g.lim.Angular); c != out.Angular[i] {
			if first == "" {
				first = fmt.Sprintf("%s = %g beyond max_angular_velocity %g", componentNames[3+i], out.Angular[i], g.lim.Angular)
			}
			out.Angular[i] = c
		}
	}
	if first == "" {
		g.kinds[0].calm()
		return Result{Twist: out, Verdict: Accepted}
	}
	g.clamped.Add(1)
	err := fmt.Errorf("%s clamped: %s", g.input, first)
	return Result{Twist: out, Verdict: Clamped, Err: err, Report: g.kinds[0].note(now, err)}
}

func clamp(x, lim float64) float64 { return math.Max(-lim, math.Min(lim, x)) }

// calm ends an episode of one kind.
func (s *reportState) calm() { s.inEpisode = false }

// note counts one bad command of a kind and returns the report to log, if
// any.
func (s *reportState) note(now time.Time, what error) error {
	s.unreported++
	if !s.inEpisode {
		s.inEpisode, s.pending = true, true
	}
	if !s.pending || (s.reported && now.Sub(s.lastReport) < ReportInterval && !now.Before(s.lastReport)) {
		return nil
	}
	n := s.unreported
	s.unreported, s.reported, s.lastReport, s.pending = 0, true, now, false
	if n > 1 {
		return fmt.Errorf("%w (%d such commands since the last report; further ones are counted and reported again after a good command, at most every %v)", what, n, ReportInterval)
	}
	return fmt.Errorf("%w (further ones are counted and reported again after a good command, at most every %v)", what, ReportInterval)
}
