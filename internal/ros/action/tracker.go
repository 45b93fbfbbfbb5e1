package action

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Errors of the Tracker; test with errors.Is.
var (
	ErrUnknownGoal   = errors.New("unknown goal")
	ErrDuplicateGoal = errors.New("goal id already in use")
)

// DefaultResultRetention is how long a finished goal's result is kept for
// get_result requests (rcl_action's default result_timeout, 15 minutes).
const DefaultResultRetention = 15 * time.Minute

// Info is the externally visible state of a goal (action_msgs/GoalStatus).
type Info struct {
	ID       GoalID
	Accepted time.Time
	Status   Status
}

// CancelCode is the return code of a cancel request
// (action_msgs/srv/CancelGoal ERROR_*).
type CancelCode int8

// Cancel return codes.
const (
	CancelErrorNone           CancelCode = 0
	CancelErrorRejected       CancelCode = 1
	CancelErrorUnknownGoalID  CancelCode = 2
	CancelErrorGoalTerminated CancelCode = 3
)

// ResultFunc receives a goal's final status and result. For an unknown (or
// expired) goal it gets StatusUnknown and the zero result.
type ResultFunc[R any] func(Status, R)

type goal[R any] struct {
	Info
	result   R
	finished time.Time
	waiters  []ResultFunc[R]
}

// Tracker keeps the goals of one action server: their status, their result
// once finished and the get_result callers waiting for it. It is safe for
// concurrent use; ResultFuncs are called without the lock held.
type Tracker[R any] struct {
	mu        sync.Mutex
	goals     map[GoalID]*goal[R]
	retention time.Duration
}

// NewTracker returns an empty tracker that keeps results for retention
// (DefaultResultRetention if retention <= 0).
func NewTracker[R any](retention time.Duration) *Tracker[R] {
	if retention <= 0 {
		retention = DefaultResultRetention
	}
	return &Tracker[R]{goals: map[GoalID]*goal[R]{}, retention: retention}
}

// Accept registers a new goal in status accepted.
func (t *Tracker[R]) Accept(id GoalID, at time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.goals[id]; ok {
		return fmt.Errorf("accept goal %s: %w", id, ErrDuplicateGoal)
	}
	t.goals[id] = &goal[R]{Info: Info{ID: id, Accepted: at, Status: StatusAccepted}}
	return nil
}

// Fire applies a non-terminal event (execute, cancel goal) and returns the
// new status. Terminal events go through Finish, which also stores the
// result.
func (t *Tracker[R]) Fire(id GoalID, ev Event) (Status, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g, ok := t.goals[id]
	if !ok {
		return StatusUnknown, fmt.Errorf("goal %s: %w", id, ErrUnknownGoal)
	}
	to, ok := Next(g.Status, ev)
	if !ok {
		return g.Status, &TransitionError{ID: id, From: g.Status, Event: ev}
	}
	if to.Terminal() {
		return g.Status, fmt.Errorf("goal %s: event %q finishes the goal; use Finish", id, ev)
	}
	g.Status = to
	return to, nil
}

// Finish applies a terminal event (succeed, abort, canceled), stores the
// result, and hands it to every waiting ResultFunc.
func (t *Tracker[R]) Finish(id GoalID, ev Event, result R, at time.Time) (Status, error) {
	t.mu.Lock()
	g, ok := t.goals[id]
	if !ok {
		t.mu.Unlock()
		return StatusUnknown, fmt.Errorf("goal %s: %w", id, ErrUnknownGoal)
	}
	to, ok := Next(g.Status, ev)
	if !ok || !to.Terminal() {
		from := g.Status
		t.mu.Unlock()
		return from, &TransitionError{ID: id, From: from, Event: ev}
	}
	g.Status = to
	g.result = result
	g.finished = at
	waiters := g.waiters
	g.waiters = nil
	t.mu.Unlock()
	for _, w := range waiters {
		w(to, result)
	}
	return to, nil
}

// Result calls f with the goal's status and result once the goal has
// finished: at once if it already has, else when Finish is called. For an
// unknown goal f is called at once with StatusUnknown.
func (t *Tracker[R]) Result(id GoalID, f ResultFunc[R]) {
	t.mu.Lock()
	g, ok := t.goals[id]
	switch {
	case !ok:
		t.mu.Unlock()
		var zero R
		f(StatusUnknown, zero)
	case g.Status.Terminal():
		st, res := g.Status, g.result
		t.mu.Unlock()
		f(st, res)
	default:
		g.waiters = append(g.waiters, f)
		t.mu.Unlock()
	}
}

// Status returns the status of a goal.
func (t *Tracker[R]) Status(id GoalID) (Status, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if g, ok := t.goals[id]; ok {
		return g.Status, true
	}
	return StatusUnknown, false
}

// List returns every goal still tracked (active, or finished and within
// the retention time), ordered by acceptance time and then id.
func (t *Tracker[R]) List() []Info {
	t.mu.Lock()
	out := make([]Info, 0, len(t.goals))
	for _, g := range t.goals {
		out = append(out, g.Info)
	}
	t.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Accepted.Equal(out[j].Accepted) {
			return out[i].Accepted.Before(out[j].Accepted)
		}
		return string(out[i].ID[:]) < string(out[j].ID[:])
	})
	return out
}

// Expire forgets goals that finished more than the retention time before
// now and returns their ids. Waiters of such goals cannot exist (they were
// served by Finish).
func (t *Tracker[R]) Expire(now time.Time) []GoalID {
	t.mu.Lock()
	defer t.mu.Unlock()
	var gone []GoalID
	for id, g := range t.goals {
		if g.Status.Terminal() && now.Sub(g.finished) >= t.retention {
			delete(t.goals, id)
			gone = append(gone, id)
		}
	}
	sort.Slice(gone, func(i, j int) bool { return string(gone[i][:]) < string(gone[j][:]) })
	return gone
}

// SelectCancel applies the selection rules of a CancelGoal request and
// returns the goals that may be canceled (those not yet finished and not
// already canceling), with the code to report if nothing is selected:
//
//   - zero id, zero before: every goal;
//   - zero id, before set: goals accepted at or before it;
//   - id set, zero before: that goal only (ErrorUnknownGoalID if unknown,
//     ErrorGoalTerminated if finished);
//   - both: that goal and goals accepted at or before it.
//
// The caller asks the user's cancel callback about each goal, moves the
// accepted ones to canceling with Fire(EventCancelGoal), and reports
// CancelErrorRejected when goals were selected but none was accepted.
func (t *Tracker[R]) SelectCancel(id GoalID, before time.Time) ([]Info, CancelCode) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Info
	code := CancelErrorNone
	if !id.IsZero() {
		g, ok := t.goals[id]
		switch {
		case !ok:
			code = CancelErrorUnknownGoalID
		case g.Status.Terminal():
			code = CancelErrorGoalTerminated
		case g.Status != StatusCanceling:
			out = append(out, g.Info)
		}
	}
	all := id.IsZero() && before.IsZero()
	if all || !before.IsZero() {
		for gid, g := range t.goals {
			if gid == id || g.Status.Terminal() || g.Status == StatusCanceling {
				continue
			}
			if all || !g.Accepted.After(before) {
				out = append(out, g.Info)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i].ID[:]) < string(out[j].ID[:]) })
	if len(out) > 0 {
		code = CancelErrorNone
	}
	return out, code
}
