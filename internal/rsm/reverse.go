package rsm

import (
	"fmt"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// ReverseRelay is the reverse-driving part of the original's additions
// node, run by the cmd_vel_reverse node: it turns the velocity commands of
// a navigation stack that drives backwards into commands for the robot, and
// serves /rsm/setNavigationToReverse, which the service provider's
// setReverseMode needs.
//
// The reverse stack plans for a robot frame turned by π about z
// (<robot_frame>_reverse), so its forward is the robot's backward: every
// linear component is negated and the angular ones are kept (a turn about
// z is the same turn in both frames), as the original did. Every command of
// the reverse stack is converted, whatever the reverse mode says: the
// navigation state also sends goals to the reverse stack with reverse mode
// off, to get the robot unstuck, and an unconverted command would drive it
// the wrong way.
//
// Bad commands are never relayed: a NaN/Inf component turns the command
// into a stop (zero, as the mux does with a bad input), finite components
// beyond the limits are clamped (cmdvel.Guard).
type ReverseRelay struct {
	guard   *cmdvel.Guard
	reverse bool
	relayed [2]uint64 // commands relayed with reverse mode off, on
}

// NewReverseRelay returns a relay that clamps to lim (zero value: the
// mux's defaults, 1 m/s and 2 rad/s).
func NewReverseRelay(lim cmdvel.Limits) (*ReverseRelay, error) {
	if lim == (cmdvel.Limits{}) {
		lim = cmdvel.Limits{Linear: DefaultMaxLinearVelocity, Angular: DefaultMaxAngularVelocity}
	}
	g, err := cmdvel.NewGuard("reverse cmd_vel", lim)
	if err != nil {
		return nil, err
	}
	return &ReverseRelay{guard: g}, nil
}

// Command converts one command of the reverse stack received at now. The
// returned error is non-nil when the node should log (the first bad
// command of an episode, rate-limited); every bad command is counted.
func (r *ReverseRelay) Command(t Twist, now time.Time) (Twist, error) {
	res := r.guard.Check(twistOf(t), now)
	if res.Verdict == cmdvel.Rejected {
		return Twist{}, res.Report
	}
	out := fromCmdvel(res.Twist)
	out.Linear = geom.Vec3{X: -out.Linear.X, Y: -out.Linear.Y, Z: -out.Linear.Z}
	if r.reverse {
		r.relayed[1]++
	} else {
		r.relayed[0]++
	}
	return out, res.Report
}

// SetNavigationToReverse answers /rsm/setNavigationToReverse: it records
// the mode and answers "Mode set", as the original did. Nothing else needs
// switching: the navigation state picks the reverse action itself, and this
// relay converts the reverse stack's commands in either mode.
func (r *ReverseRelay) SetNavigationToReverse(reverse bool) Reply {
	r.reverse = reverse
	return ok("Mode set")
}

// Reverse reports the mode last set by SetNavigationToReverse.
func (r *ReverseRelay) Reverse() bool { return r.reverse }

// Relayed returns how many commands were relayed with reverse mode off
// (attempts to get unstuck) and on.
func (r *ReverseRelay) Relayed() (off, on uint64) { return r.relayed[0], r.relayed[1] }

// Rejected returns how many commands had a NaN/Inf component.
func (r *ReverseRelay) Rejected() uint64 { return r.guard.Rejected() }

// SetLimits changes the velocity limits (parameters max_linear_velocity and
// max_angular_velocity) for the next command; invalid limits are refused
// with the reason and change nothing.
func (r *ReverseRelay) SetLimits(lim cmdvel.Limits) error { return r.guard.SetLimits(lim) }

// Clamped returns how many commands were clamped to the limits.
func (r *ReverseRelay) Clamped() uint64 { return r.guard.Clamped() }

// String describes the relay for logs.
func (r *ReverseRelay) String() string {
	off, on := r.Relayed()
	return fmt.Sprintf("reverse mode %v, relayed %d (reverse mode off) + %d (on), rejected %d, clamped %d",
		r.reverse, off, on, r.Rejected(), r.Clamped())
}
