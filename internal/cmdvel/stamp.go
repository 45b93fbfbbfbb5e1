package cmdvel

import (
	"fmt"
	"sync/atomic"
	"time"
)

// The stamp rules of a stamped velocity command (geometry_msgs/TwistStamped,
// as Jazzy's diff_drive_controller, Nav2 with enable_stamped_cmd_vel and
// teleop_twist_joy with publish_stamped_twist send it). A command's age is
// now − header.stamp in the receiving node's clock (sim time under
// use_sim_time), and the input's command timeout says how old it may be:
//
//   - a zero stamp (never set) is taken as now, as diff_drive_controller
//     does; said once per input;
//   - a stamp older than the timeout (age ≥ timeout) is stale: the command
//     is ignored as if it had never come, as diff_drive_controller ignores
//     it, so the previous command times out as it would without it;
//   - a fresh stamp counts: the command holds until stamp + timeout (the
//     input's watchdog measures from the stamp, as diff_drive_controller's
//     update does), so a late command holds for less;
//   - a stamp in the future (the sender's clock is ahead) is accepted but
//     counts from its receipt, not from the stamp: diff_drive_controller
//     would let it hold until stamp + timeout, so a sender whose clock is
//     an hour ahead would keep the robot moving for an hour after it died.
//
// A zero timeout means the input has none: nothing is stale. The frame_id of
// a command is not interpreted (a velocity command is a twist of the robot's
// base, whatever the sender names its frame; diff_drive_controller does not
// read it either); it is passed on to the node for its logs.

// StampVerdict says how a Stamps check read a command's stamp.
type StampVerdict int

// Verdicts of Stamps.Check.
const (
	StampFresh  StampVerdict = iota // within the timeout: the command counts from its stamp
	StampZero                       // not set: taken as now
	StampFuture                     // ahead of now: accepted, counts from now
	StampStale                      // older than the timeout: ignore the command
)

// String names the verdict.
func (v StampVerdict) String() string {
	switch v {
	case StampFresh:
		return "fresh"
	case StampZero:
		return "zero"
	case StampFuture:
		return "future"
	case StampStale:
		return "stale"
	}
	return fmt.Sprintf("StampVerdict(%d)", int(v))
}

// IsZeroStamp reports whether t is an unset stamp: the zero time.Time or
// the Unix epoch (a builtin_interfaces/Time of 0 s, 0 ns).
func IsZeroStamp(t time.Time) bool { return t.IsZero() || t.Equal(time.Unix(0, 0)) }

// Stamps applies the stamp rules to the commands of one input and counts
// what it ignores. Like a Guard it is driven from one goroutine; its
// counters may be read from any.
type Stamps struct {
	input      string
	zeroSaid   bool
	stale      atomic.Uint64
	future     atomic.Uint64
	staleRep   reportState
	futureRep  reportState
	zeroStamps atomic.Uint64
}

// NewStamps returns the stamp check of the input named input (used in
// reports, e.g. "cmd_vel").
func NewStamps(input string) *Stamps { return &Stamps{input: input} }

// Stale returns how many commands were ignored as stale.
func (s *Stamps) Stale() uint64 { return s.stale.Load() }

// Future returns how many commands had a stamp in the future.
func (s *Stamps) Future() uint64 { return s.future.Load() }

// Zero returns how many commands had a zero stamp.
func (s *Stamps) Zero() uint64 { return s.zeroStamps.Load() }

// StampResult is what Stamps.Check made of a stamp.
type StampResult struct {
	// At is when the command counts as received for the input's timeout:
	// the stamp, or now for a zero or future stamp. Zero when stale.
	At      time.Time
	Verdict StampVerdict
	// Age is now − stamp (negative for a future stamp, 0 for a zero one).
	Age time.Duration
	// Report is non-nil when the node should log (Warn) now: the first
	// zero stamp of the input (once), the first stale or future stamp of
	// an episode (at most every ReportInterval, as Guard reports).
	Report error
}

// Check applies the rules to a command stamped stamp (IsZeroStamp: not
// set) received at now by an input whose commands hold for timeout (0:
// no timeout).
func (s *Stamps) Check(stamp, now time.Time, timeout time.Duration) StampResult {
	if IsZeroStamp(stamp) {
		s.zeroStamps.Add(1)
		s.staleRep.calm()
		s.futureRep.calm()
		r := StampResult{At: now, Verdict: StampZero}
		if !s.zeroSaid {
			s.zeroSaid = true
			r.Report = fmt.Errorf("%s: a command has a zero stamp; taking it as the time of receipt, "+
				"as diff_drive_controller does (said once)", s.input)
		}
		return r
	}
	age := now.Sub(stamp)
	if age < 0 {
		s.future.Add(1)
		s.staleRep.calm()
		err := fmt.Errorf("%s: a command is stamped %v ahead of this node's clock (its sender's clock is ahead, or one "+
			"of them runs on sim time and the other not); using it as received now", s.input, (-age).Round(time.Millisecond))
		return StampResult{At: now, Verdict: StampFuture, Age: age, Report: s.futureRep.note(now, err)}
	}
	s.futureRep.calm()
	if timeout > 0 && age >= timeout {
		s.stale.Add(1)
		err := fmt.Errorf("%s: ignoring a command stamped %v ago, older than the command timeout %v "+
			"(the sender or the network is late, or the clocks differ: use_sim_time on one side only?)",
			s.input, age.Round(time.Millisecond), timeout)
		return StampResult{Verdict: StampStale, Age: age, Report: s.staleRep.note(now, err)}
	}
	s.staleRep.calm()
	return StampResult{At: stamp, Verdict: StampFresh, Age: age}
}
