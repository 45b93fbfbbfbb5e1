package rsm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// fakeClock is a Clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time          { return c.t }
func (c *fakeClock) Advance(d time.Duration) { c.t = c.t.Add(d) }

// fakeBoot answers bootUpFinished with reply or err.
type fakeBoot struct {
	reply Reply
	err   error
	calls int
}

func (b *fakeBoot) BootUpFinished(context.Context) (Reply, error) {
	b.calls++
	return b.reply, b.err
}

// fakeGoal is one goal sent to fakeNav.
type fakeGoal struct {
	action    string
	pose      Pose
	state     NavState
	cancelled bool
}

func (g *fakeGoal) State() NavState { return g.state }
func (g *fakeGoal) Cancel(context.Context) error {
	g.cancelled = true
	g.state = NavFailed
	return nil
}

// fakeNav records goals; auto (if set) decides the final state of each new
// goal immediately.
type fakeNav struct {
	down  map[string]bool
	goals []*fakeGoal
	auto  func(action string, p Pose) NavState
}

func (n *fakeNav) Ready(action string) bool { return !n.down[action] }
func (n *fakeNav) Navigate(_ context.Context, action string, p Pose) (NavGoal, error) {
	g := &fakeGoal{action: action, pose: p, state: NavActive}
	if n.auto != nil {
		g.state = n.auto(action, p)
	}
	n.goals = append(n.goals, g)
	return g, nil
}
func (n *fakeNav) last() *fakeGoal {
	if len(n.goals) == 0 {
		return nil
	}
	return n.goals[len(n.goals)-1]
}

// fakePose is a settable PoseSource.
type fakePose struct {
	pose Pose
	err  error
}

func (p *fakePose) RobotPose() (Pose, error) { return p.pose, p.err }

// fakeReverser answers setNavigationToReverse.
type fakeReverser struct {
	reply Reply
	err   error
	calls []bool
}

func (r *fakeReverser) SetNavigationToReverse(_ context.Context, rev bool) (Reply, error) {
	r.calls = append(r.calls, rev)
	return r.reply, r.err
}

// recLog records log lines by level.
type recLog struct{ infos, warns, errors []string }

func (l *recLog) Infof(f string, a ...any)  { l.infos = append(l.infos, fmt.Sprintf(f, a...)) }
func (l *recLog) Warnf(f string, a ...any)  { l.warns = append(l.warns, fmt.Sprintf(f, a...)) }
func (l *recLog) Errorf(f string, a ...any) { l.errors = append(l.errors, fmt.Sprintf(f, a...)) }

func (l *recLog) errorsContaining(s string) int {
	n := 0
	for _, e := range l.errors {
		if strings.Contains(e, s) {
			n++
		}
	}
	return n
}

// harness is a state machine wired to a real Store and fakes.
type harness struct {
	t      testing.TB
	ctx    context.Context
	si     *StateInterface
	store  *Store
	clock  *fakeClock
	boot   *fakeBoot
	nav    *fakeNav
	pose   *fakePose
	rev    *fakeReverser
	runner *fakeRunner
	log    *recLog
	states []string // names announced on stateInfo
	// changes are the OnTransition calls: from, to and cause
	changes [][3]string
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	return newHarnessCfg(t, Config{})
}

func newHarnessCfg(t testing.TB, cfg Config) *harness {
	t.Helper()
	h := &harness{
		t: t, ctx: context.Background(),
		clock: &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		boot:  &fakeBoot{}, nav: &fakeNav{down: map[string]bool{}},
		pose: &fakePose{pose: Pose{Orientation: geom.Identity}}, rev: &fakeReverser{reply: ok("Mode set")},
		runner: &fakeRunner{down: map[string]bool{}},
		log:    &recLog{},
	}
	h.store = NewStore(StoreConfig{Pose: h.pose, Reverser: h.rev, Log: h.log})
	si, err := NewStateInterface(cfg, Deps{
		Store: h.store, Boot: h.boot, Nav: h.nav, Runner: h.runner, Clock: h.clock, Log: h.log,
		OnStateChange: func(name string) { h.states = append(h.states, name) },
		OnTransition:  func(from, to, cause string) { h.changes = append(h.changes, [3]string{from, to, cause}) },
	})
	if err != nil {
		t.Fatalf("NewStateInterface: %v", err)
	}
	h.si = si
	return h
}

// makeCurrent makes s the current state (OnSetup, OnEntry) without running
// OnActive.
func (h *harness) makeCurrent(s State) {
	h.t.Helper()
	h.si.Transition(s)
	if h.si.pending != s {
		h.t.Fatalf("makeCurrent(%s): not pending", s.Name())
	}
	if h.si.current != nil {
		h.si.current.OnExit(h.ctx)
	}
	h.si.current, h.si.pending = s, nil
	s.OnEntry(h.ctx)
}

func (h *harness) tick(n int) {
	for i := 0; i < n; i++ {
		h.si.Tick(h.ctx)
	}
}

func (h *harness) current() string { return h.si.StateName() }

func (h *harness) pendingName() string {
	if h.si.Pending() == nil {
		return ""
	}
	return h.si.Pending().Name()
}

func (h *harness) addWaypoints(wps ...Waypoint) {
	h.t.Helper()
	for _, w := range wps {
		if r := h.store.AddWaypoint(w, -1); !r.Success {
			h.t.Fatalf("AddWaypoint: %+v", r)
		}
	}
}

func at(x, y float64) Pose { return Pose{Position: geom.Vec3{X: x, Y: y}, Orientation: geom.Identity} }

func wp(x, y float64, routine string) Waypoint { return Waypoint{Pose: at(x, y), Routine: routine} }

func (h *harness) setGoal(mode NavigationMode, pos int64, routine string) {
	h.t.Helper()
	if r, _ := h.store.SetNavigationGoal(h.ctx, NavigationGoal{Goal: at(3, 4), Mode: mode, WaypointPosition: pos, Routine: routine}); !r.Success {
		h.t.Fatalf("SetNavigationGoal: %+v", r)
	}
}

var errDown = fmt.Errorf("service /rsm/x: %w", ErrUnavailable)

func TestHarnessFakesAreUsable(t *testing.T) {
	h := newHarness(t)
	if !errors.Is(errDown, ErrUnavailable) {
		t.Fatal("errDown must wrap ErrUnavailable")
	}
	if h.current() != "" {
		t.Fatalf("state before Start = %q, want none", h.current())
	}
}

func nan() float64 { z := 0.0; return z / z }
