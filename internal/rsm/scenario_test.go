package rsm

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

const tickPeriod = 50 * time.Millisecond // 20 Hz, the default update_frequency

// step advances the clock by one period and ticks once.
func (h *harness) step() {
	h.clock.Advance(tickPeriod)
	h.si.Tick(h.ctx)
}

// runUntil ticks until cond holds; it fails the test after max ticks.
func (h *harness) runUntil(max int, what string, cond func() bool) {
	h.t.Helper()
	for i := 0; i < max; i++ {
		if cond() {
			return
		}
		h.step()
	}
	if !cond() {
		h.t.Fatalf("after %d ticks: not %s (state %q, stateInfo %v)", max, what, h.current(), h.states)
	}
}

func (h *harness) inState(name string) func() bool {
	return func() bool { return h.current() == name }
}

// booted starts the machine and lets Boot finish.
func (h *harness) booted() {
	h.t.Helper()
	h.boot.reply = ok("Finished")
	h.si.Start()
	h.runUntil(5, "Idle", h.inState("Idle"))
	h.states = nil
}

func TestBoot_WaitsForBootService_ThenIdle(t *testing.T) {
	h := newHarness(t)
	h.boot.reply = fail("Still booting ...")
	h.si.Start()
	h.tick(3)
	if h.current() != "Boot" {
		t.Fatalf("current = %q, want Boot", h.current())
	}
	h.boot.reply = ok("Finished")
	h.tick(1)
	if h.current() != "Idle" {
		t.Fatalf("current = %q, want Idle", h.current())
	}
	if want := []string{"Boot", "Idle"}; !reflect.DeepEqual(h.states, want) {
		t.Errorf("stateInfo = %v, want %v", h.states, want)
	}
	if h.boot.calls != 4 {
		t.Errorf("bootUpFinished calls = %d, want 4 (one per tick)", h.boot.calls)
	}
}

func TestBoot_MissingService_ReportedOnceWithWhatToStart(t *testing.T) {
	h := newHarness(t)
	h.boot.err = errDown
	h.si.Start()
	h.tick(50)
	// Within the grace period the nodes of a launch file may still be
	// starting: nothing is reported yet.
	if n := h.log.errorsContaining("/rsm/bootUpFinished"); n != 0 {
		t.Fatalf("reported within the grace period: %v", h.log.errors)
	}
	h.clock.Advance(bootReportGrace)
	h.tick(50)
	if n := h.log.errorsContaining("/rsm/bootUpFinished"); n != 1 {
		t.Fatalf("errors about the boot service = %d, want 1: %v", n, h.log.errors)
	}
	if h.log.errorsContaining("rsm_boot") != 1 {
		t.Errorf("error does not say what to start: %v", h.log.errors)
	}
	h.boot.err, h.boot.reply = nil, ok("Finished")
	h.tick(1)
	if h.current() != "Idle" {
		t.Errorf("current = %q, want Idle", h.current())
	}
	h.boot.err = errDown // a new burst is reported again (fresh Boot not needed: Idle now)
}

func TestBoot_EmergencyStop_ThenReleaseToIdle(t *testing.T) {
	h := newHarness(t)
	h.boot.reply = fail("Still booting ...")
	h.si.Start()
	h.tick(1)
	_ = h.si.OnOperationMode(h.ctx, OperationMode{EmergencyStop: true})
	h.tick(1)
	_ = h.si.OnOperationMode(h.ctx, OperationMode{})
	h.tick(1)
	if want := []string{"Boot", "Emergency Stop", "Idle"}; !reflect.DeepEqual(h.states, want) {
		t.Errorf("stateInfo = %v, want %v", h.states, want)
	}
}

func TestTeleoperation_ThenStopped_BackToIdle(t *testing.T) {
	h := newHarness(t)
	h.booted()
	for i := 0; i < 3; i++ {
		_ = h.si.OnOperationMode(h.ctx, OperationMode{Mode: ModeTeleoperation})
		h.step()
	}
	_ = h.si.OnOperationMode(h.ctx, OperationMode{Mode: ModeStopped})
	h.step()
	if want := []string{"Teleoperation", "Idle"}; !reflect.DeepEqual(h.states, want) {
		t.Errorf("stateInfo = %v, want %v", h.states, want)
	}
}

func xs(goals []*fakeGoal) []float64 {
	var out []float64
	for _, g := range goals {
		out = append(out, g.pose.Position.X)
	}
	return out
}

func TestExploration_Cycle_NearestReachableFrontier(t *testing.T) {
	h := newHarness(t)
	h.booted()
	h.pose.pose = at(0, 0)
	if r := h.si.StartStopExploration(h.ctx, true); !r.Success || r.Message != "Exploration started" {
		t.Fatalf("start = %+v", r)
	}
	h.step()
	if h.current() != "E: Calculate Goal" {
		t.Fatalf("current = %q", h.current())
	}
	frontiers := []Pose{at(5, 0), at(0, 2), at(1, 1)}
	failed := []Pose{at(1.01, 0.98)} // (1,1) failed before
	_ = h.si.OnExplorationGoals(frontiers)
	_ = h.si.OnFailedGoals(failed)
	h.step()
	if h.current() != "E: Navigation" {
		t.Fatalf("current = %q, want E: Navigation", h.current())
	}
	h.step() // goal sent
	g := h.nav.last()
	if g == nil || g.action != "navigate_to_pose" || g.pose.Position != (geom.Vec3{X: 0, Y: 2, Z: 0}) {
		t.Fatalf("goal = %+v, want (0,2) on navigate_to_pose", g)
	}
	if yaw := g.pose.Orientation.Yaw(); yaw < 1.5707 || yaw > 1.5709 {
		t.Errorf("goal yaw = %v, want π/2 (from robot towards goal)", yaw)
	}
	if st := h.store.ExplorationGoalStatus(); st.Status != GoalActive || st.Goal.Position != (geom.Vec3{X: 0, Y: 2, Z: 0}) {
		t.Errorf("exploration goal status = %+v, want ACTIVE at (0,2)", st)
	}
	g.state = NavSucceeded
	h.step()
	if h.current() != "E: Mapping Dummy" {
		t.Fatalf("current = %q, want E: Mapping Dummy", h.current())
	}
	if st := h.store.ExplorationGoalStatus().Status; st != GoalReached {
		t.Errorf("status after navigation = %v, want REACHED", st)
	}
	h.step()
	if h.current() != "E: Calculate Goal" {
		t.Fatalf("current = %q, want E: Calculate Goal", h.current())
	}
	want := []string{"E: Calculate Goal", "E: Navigation", "E: Mapping Dummy", "E: Calculate Goal"}
	if !reflect.DeepEqual(h.states, want) {
		t.Errorf("stateInfo = %v, want %v", h.states, want)
	}
	if r := h.si.StartStopExploration(h.ctx, false); !r.Success || r.Message != "Exploration stopped" {
		t.Errorf("stop = %+v", r)
	}
	h.step()
	if h.current() != "Idle" {
		t.Errorf("current = %q, want Idle", h.current())
	}
}

func TestExploration_NavigationFails_UnstuckOnce_ThenFailedAndNewGoal(t *testing.T) {
	h := newHarness(t)
	h.booted()
	h.nav.auto = func(string, Pose) NavState { return NavFailed }
	h.si.StartStopExploration(h.ctx, true)
	h.step()
	_ = h.si.OnExplorationGoals([]Pose{at(2, 0)})
	_ = h.si.OnFailedGoals(nil)
	h.runUntil(20, "back in calculate goal", func() bool {
		return len(h.states) > 2 && h.current() == "E: Calculate Goal"
	})
	actions := []string{}
	for _, g := range h.nav.goals {
		actions = append(actions, g.action)
	}
	want := []string{"navigate_to_pose", "navigate_to_pose_reverse", "navigate_to_pose"}
	if !reflect.DeepEqual(actions, want) {
		t.Errorf("goals sent to %v, want %v (one unstuck attempt)", actions, want)
	}
	if st := h.store.ExplorationGoalStatus().Status; st != GoalFailed {
		t.Errorf("exploration goal status = %v, want FAILED", st)
	}
}

func TestCalculateGoal_NoFrontierData_IdleAfterTimeout(t *testing.T) {
	h := newHarness(t)
	h.booted()
	h.si.StartStopExploration(h.ctx, true)
	h.step()
	h.runUntil(200, "Idle", h.inState("Idle"))
	if h.log.errorsContaining("no goal selected in time") != 1 {
		t.Errorf("errors = %v", h.log.errors)
	}
	if elapsed := len(h.states); elapsed != 2 {
		t.Errorf("stateInfo = %v", h.states)
	}
}

func TestCalculateGoal_AllFrontiersFailed_Idle(t *testing.T) {
	h := newHarness(t)
	h.booted()
	h.si.StartStopExploration(h.ctx, true)
	h.step()
	_ = h.si.OnExplorationGoals([]Pose{at(1, 1)})
	_ = h.si.OnFailedGoals([]Pose{at(1.04, 0.96)})
	h.step()
	if h.current() != "Idle" || h.log.errorsContaining("no more reachable goals") != 1 {
		t.Errorf("current %q, errors %v", h.current(), h.log.errors)
	}
}

func TestNearestGoal(t *testing.T) {
	tests := []struct {
		name      string
		robot     geom.Vec3
		frontiers []Pose
		failed    []Pose
		want      geom.Vec3
		found     bool
	}{
		{"none", geom.Vec3{}, nil, nil, geom.Vec3{}, false},
		{"nearest planar, z ignored", geom.Vec3{}, []Pose{at(3, 0), {Position: geom.Vec3{X: 0, Y: 1, Z: 50}}}, nil, geom.Vec3{X: 0, Y: 1, Z: 50}, true},
		{"failed within 0.05 skipped", geom.Vec3{}, []Pose{at(1, 0), at(2, 0)}, []Pose{at(1.049, -0.049)}, geom.Vec3{X: 2, Y: 0, Z: 0}, true},
		{"failed at 0.05 not skipped", geom.Vec3{}, []Pose{at(1, 0), at(2, 0)}, []Pose{at(1.05, 0)}, geom.Vec3{X: 1, Y: 0, Z: 0}, true},
		{"all failed", geom.Vec3{}, []Pose{at(1, 0)}, []Pose{at(1, 0)}, geom.Vec3{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, found := NearestGoal(tt.robot, tt.frontiers, tt.failed)
			if found != tt.found || (found && p.Position != tt.want) {
				t.Errorf("NearestGoal = %v, %v; want %v, %v", p.Position, found, tt.want, tt.found)
			}
		})
	}
}

// followWaypoints runs waypoint following with three waypoints (x = 1, 2,
// 3) and returns the x of the first n goals sent to navigation.
func followWaypoints(t *testing.T, mode WaypointMode, reverse bool, n int, fail func(x float64) bool) (*harness, []float64) {
	t.Helper()
	h := newHarness(t)
	h.booted()
	h.addWaypoints(wp(1, 0, ""), wp(2, 0, ""), wp(3, 0, ""))
	if r, _ := h.store.SetWaypointFollowingMode(h.ctx, mode, reverse); !r.Success {
		t.Fatalf("SetWaypointFollowingMode: %+v", r)
	}
	h.nav.auto = func(_ string, p Pose) NavState {
		if fail != nil && fail(p.Position.X) {
			return NavFailed
		}
		return NavSucceeded
	}
	if r := h.si.StartStopWaypointFollowing(h.ctx, true); !r.Success || r.Message != "Waypoint following started" {
		t.Fatalf("start = %+v", r)
	}
	h.runUntil(500, "enough goals or Idle", func() bool {
		return len(h.nav.goals) >= n || (len(h.states) > 1 && h.current() == "Idle")
	})
	return h, xs(h.nav.goals)
}

func TestWaypointFollowing_VisitOrder(t *testing.T) {
	tests := []struct {
		name    string
		mode    WaypointMode
		reverse bool
		n       int
		want    []float64
	}{
		{"SINGLE", Single, false, 99, []float64{1, 2, 3}},
		{"SINGLE reverse", Single, true, 99, []float64{3, 2, 1}},
		{"ROUNDTRIP", Roundtrip, false, 7, []float64{1, 2, 3, 1, 2, 3, 1}},
		{"PATROL", Patrol, false, 7, []float64{1, 2, 3, 2, 1, 2, 3}},
		{"PATROL reverse", Patrol, true, 7, []float64{3, 2, 1, 2, 3, 2, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, got := followWaypoints(t, tt.mode, tt.reverse, tt.n, nil)
			if len(got) > tt.n {
				got = got[:tt.n]
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("visit order = %v, want %v", got, tt.want)
			}
			if tt.mode == Single {
				if h.current() != "Idle" {
					t.Errorf("SINGLE ends in %q, want Idle", h.current())
				}
				want := []string{"W: Waypoint Following", "W: Navigation", "W: Waypoint Following", "W: Navigation",
					"W: Waypoint Following", "W: Navigation", "W: Waypoint Following", "Idle"}
				if !reflect.DeepEqual(h.states, want) {
					t.Errorf("stateInfo = %v, want %v", h.states, want)
				}
				for i, w := range h.store.Waypoints().Waypoints {
					if !w.Visited || w.Unreachable {
						t.Errorf("waypoint %d = %+v, want visited", i, w)
					}
				}
			}
		})
	}
}

func TestWaypointFollowing_FailedWaypointBecomesUnreachable(t *testing.T) {
	h, got := followWaypoints(t, Single, false, 99, func(x float64) bool { return x == 2 })
	// x=2 is tried on the forward action, once on the reverse action
	// (unstuck attempt) and once more forward before it is given up.
	if want := []float64{1, 2, 2, 2, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("goals = %v, want %v", got, want)
	}
	w := h.store.Waypoints().Waypoints
	if !w[0].Visited || w[1].Visited || !w[1].Unreachable || !w[2].Visited {
		t.Errorf("waypoints = %+v", w)
	}
	if h.current() != "Idle" {
		t.Errorf("current = %q", h.current())
	}
}

func TestWaypointFollowing_NoWaypoints_Idle(t *testing.T) {
	h := newHarness(t)
	h.booted()
	h.si.StartStopWaypointFollowing(h.ctx, true)
	h.tick(3)
	if want := []string{"W: Waypoint Following", "Idle"}; !reflect.DeepEqual(h.states, want) {
		t.Errorf("stateInfo = %v, want %v", h.states, want)
	}
}

func TestWaypointFollowing_ReversingRoutine_TogglesReverseAndMarksVisited(t *testing.T) {
	h := newHarness(t)
	h.booted()
	h.addWaypoints(wp(1, 0, "Reversing"), wp(2, 0, ""))
	h.nav.auto = func(string, Pose) NavState { return NavSucceeded }
	h.si.StartStopWaypointFollowing(h.ctx, true)
	h.runUntil(50, "Idle", func() bool { return len(h.states) > 1 && h.current() == "Idle" })
	want := []string{"W: Waypoint Following", "W: Navigation", "W: Reversing", "W: Waypoint Following",
		"W: Navigation", "W: Waypoint Following", "Idle"}
	if !reflect.DeepEqual(h.states, want) {
		t.Errorf("stateInfo = %v, want %v", h.states, want)
	}
	if rev, _ := h.store.GetReverseMode(h.ctx); !rev || !reflect.DeepEqual(h.rev.calls, []bool{true}) {
		t.Errorf("reverse = %v, setNavigationToReverse calls %v", rev, h.rev.calls)
	}
	if acts := []string{h.nav.goals[0].action, h.nav.goals[1].action}; acts[0] != "navigate_to_pose" || acts[1] != "navigate_to_pose_reverse" {
		t.Errorf("actions = %v, want forward then reverse", acts)
	}
	for i, w := range h.store.Waypoints().Waypoints {
		if !w.Visited {
			t.Errorf("waypoint %d not visited", i)
		}
	}
}

// navigating puts a W: Navigation with an active goal in place.
func navigating(t *testing.T, cfg Config, op Mode) (*harness, *Navigation) {
	t.Helper()
	h := newHarnessCfg(t, cfg)
	h.addWaypoints(wp(1, 0, ""))
	h.setGoal(NavigationWaypointFollowing, 0, "")
	n := NewNavigation()
	h.makeCurrent(n)
	_ = h.si.OnOperationMode(h.ctx, OperationMode{Mode: op})
	h.step()
	if len(h.nav.goals) != 1 {
		t.Fatalf("goals sent = %d, want 1", len(h.nav.goals))
	}
	return h, n
}

func TestNavigation_Stuck_UnstuckAttempt_ThenFailed(t *testing.T) {
	h, _ := navigating(t, Config{}, ModeAutonomous)
	// Robot never moves. After 10 s: unstuck attempt on the reverse action.
	h.runUntil(400, "unstuck goal", func() bool { return len(h.nav.goals) == 2 })
	if g := h.nav.goals[1]; g.action != "navigate_to_pose_reverse" || !h.nav.goals[0].cancelled {
		t.Fatalf("unstuck goal on %q, first cancelled %v", g.action, h.nav.goals[0].cancelled)
	}
	start := h.clock.Now()
	h.runUntil(400, "goal resent forward", func() bool { return len(h.nav.goals) == 3 })
	if d := h.clock.Now().Sub(start); d < 5*time.Second || d > 5*time.Second+3*tickPeriod {
		t.Errorf("unstuck lasted %v, want 5 s", d)
	}
	if g := h.nav.goals[2]; g.action != "navigate_to_pose" || !h.nav.goals[1].cancelled {
		t.Errorf("resent on %q, unstuck goal cancelled %v", g.action, h.nav.goals[1].cancelled)
	}
	h.runUntil(400, "waypoint following", h.inState("W: Waypoint Following"))
	if !h.store.Waypoints().Waypoints[0].Unreachable {
		t.Error("stuck waypoint not marked unreachable")
	}
	if len(h.log.warns) == 0 || !strings.Contains(strings.Join(h.log.warns, "\n"), "stuck") {
		t.Errorf("no stuck warning: %v", h.log.warns)
	}
}

func TestNavigation_StuckTwice_AbortWhenStuck_Idle(t *testing.T) {
	cfg := Config{Navigation: NavigationConfig{NavigationTuning: NavigationTuning{AbortWhenStuck: true}}}
	h, _ := navigating(t, cfg, ModeAutonomous)
	h.runUntil(1000, "Idle", h.inState("Idle"))
	w := h.store.Waypoints().Waypoints[0]
	if w.Unreachable || w.Visited {
		t.Errorf("aborted waypoint changed: %+v", w)
	}
}

func TestNavigation_NotAutonomous_NeverStuck(t *testing.T) {
	h, _ := navigating(t, Config{}, ModeStopped)
	for i := 0; i < 1200; i++ { // 60 s
		h.step()
	}
	if len(h.nav.goals) != 1 || h.current() != "W: Navigation" {
		t.Errorf("goals %d, state %q: stuck detection ran while not AUTONOMOUS", len(h.nav.goals), h.current())
	}
}

func TestNavigation_Moving_NeverStuck(t *testing.T) {
	h, _ := navigating(t, Config{}, ModeAutonomous)
	for i := 0; i < 1200; i++ {
		h.pose.pose.Position.X += 0.03 // 0.6 m/s
		h.step()
	}
	if len(h.nav.goals) != 1 || h.current() != "W: Navigation" {
		t.Errorf("goals %d, state %q: moving robot declared stuck", len(h.nav.goals), h.current())
	}
}

func TestNavigation_ReverseModeChange_ResendsOnReverseAction(t *testing.T) {
	h, n := navigating(t, Config{}, ModeAutonomous)
	h.si.OnReverseMode(h.ctx, false) // unchanged: nothing
	if h.nav.goals[0].cancelled {
		t.Fatal("unchanged reverse mode cancelled the goal")
	}
	h.si.OnReverseMode(h.ctx, true)
	if !h.nav.goals[0].cancelled {
		t.Error("goal not cancelled on reverse change")
	}
	h.step()
	if len(h.nav.goals) != 2 || h.nav.goals[1].action != "navigate_to_pose_reverse" || n.Action() != "navigate_to_pose_reverse" {
		t.Errorf("goals = %d, last on %q", len(h.nav.goals), h.nav.last().action)
	}
}

// TestNavigation_GoalObsolete covers /rsm/goalObsolete in both exploration
// modes: only an exploration goal in the Interrupt mode is given up
// (ABORTED), then mapped if the robot moved, else re-planned at once; the
// Finish mode, other goal modes and false are ignored.
func TestNavigation_GoalObsolete(t *testing.T) {
	tests := []struct {
		name      string
		mode      NavigationMode
		interrupt bool // exploration mode Interrupt (else Finish)
		obsolete  bool
		moved     bool
		want      string // pending state, "" = the goal goes on
	}{
		{"Finish: obsolete ignored", NavigationExploration, false, true, false, ""},
		{"Finish, moved: obsolete ignored", NavigationExploration, false, true, true, ""},
		{"Interrupt: not obsolete", NavigationExploration, true, false, true, ""},
		{"Interrupt, not moved → calculate goal", NavigationExploration, true, true, false, "E: Calculate Goal"},
		{"Interrupt, moved → mapping", NavigationExploration, true, true, true, "E: Mapping Dummy"},
		{"Interrupt, waypoint goal: ignored", NavigationWaypointFollowing, true, true, true, ""},
		{"Interrupt, simple goal: ignored", NavigationSimpleGoal, true, true, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.store.SetExplorationMode(tt.interrupt)
			h.addWaypoints(wp(3, 4, ""))
			h.setGoal(tt.mode, 0, "")
			n := NewNavigation()
			h.makeCurrent(n)
			_ = h.si.OnOperationMode(h.ctx, OperationMode{Mode: ModeAutonomous})
			for i := 0; i < 12; i++ {
				if tt.moved {
					h.pose.pose.Position.X += 0.1
				}
				h.step()
			}
			goal := h.nav.last()
			h.si.OnGoalObsolete(h.ctx, tt.obsolete)
			if p := h.pendingName(); p != tt.want {
				t.Fatalf("pending = %q, want %q", p, tt.want)
			}
			h.step()
			if tt.want == "" {
				if goal.cancelled || h.current() != n.Name() {
					t.Errorf("goal cancelled %v, state %q: the goal should go on", goal.cancelled, h.current())
				}
				return
			}
			if !goal.cancelled {
				t.Error("the obsolete goal was not cancelled")
			}
			if st := h.store.ExplorationGoalStatus().Status; st != GoalAborted {
				t.Errorf("exploration goal status = %v, want ABORTED", st)
			}
		})
	}
}

func TestNavigation_ActionServerMissing_ReportedOnceAndWaits(t *testing.T) {
	h := newHarness(t)
	h.nav.down["navigate_to_pose"] = true
	h.setGoal(NavigationSimpleGoal, -1, "")
	h.makeCurrent(NewNavigation())
	h.tick(40)
	if len(h.nav.goals) != 0 || h.log.errorsContaining("navigate_to_pose") != 1 {
		t.Fatalf("goals %d, errors %v", len(h.nav.goals), h.log.errors)
	}
	h.nav.down["navigate_to_pose"] = false
	h.tick(1)
	if len(h.nav.goals) != 1 {
		t.Errorf("goal not sent once the server is up")
	}
}

// TestNavigation_ActionServerTimeout: a missing action server (forward, or
// reverse while reverse mode is on) is waited for at most
// action_server_timeout; then the goal is given up (ABORTED, so no waypoint
// becomes unreachable) and the state goes to Idle with the reason.
func TestNavigation_ActionServerTimeout(t *testing.T) {
	tests := []struct {
		name       string
		timeout    time.Duration // 0: default 20 s
		reverse    bool
		mode       NavigationMode
		upAfter    time.Duration // the server appears after this (0: never)
		wantIdle   bool
		wantHint   string
		waitAtMost time.Duration
	}{
		{"forward missing, default timeout", 0, false, NavigationWaypointFollowing, 0, true, "start Nav2", 20 * time.Second},
		{"reverse missing", 0, true, NavigationWaypointFollowing, 0, true, "cmd_vel_reverse", 20 * time.Second},
		{"reverse missing, exploration", 3 * time.Second, true, NavigationExploration, 0, true, "setReverseMode false", 3 * time.Second},
		{"simple goal, server missing", 3 * time.Second, false, NavigationSimpleGoal, 0, true, "navigation_action", 3 * time.Second},
		{"server appears in time", 0, true, NavigationWaypointFollowing, 15 * time.Second, false, "", 0},
		{"timeout disabled: waits for ever", -1, true, NavigationWaypointFollowing, 0, false, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarnessCfg(t, Config{Navigation: NavigationConfig{NavigationTuning: NavigationTuning{ServerTimeout: tt.timeout}}})
			action := "navigate_to_pose"
			if tt.reverse {
				action = "navigate_to_pose_reverse"
				if r, _ := h.store.SetReverseMode(h.ctx, true); !r.Success {
					t.Fatalf("SetReverseMode: %+v", r)
				}
			}
			h.nav.down[action] = true
			h.addWaypoints(wp(3, 4, ""))
			h.setGoal(tt.mode, 0, "")
			h.makeCurrent(NewNavigation())
			name := h.current()
			start := h.clock.Now()
			for i := 0; i < 2*60*20 && h.current() == name; i++ { // two simulated minutes
				if tt.upAfter > 0 && h.clock.Now().Sub(start) >= tt.upAfter {
					h.nav.down[action] = false
				}
				h.step()
			}
			if !tt.wantIdle {
				if h.current() != name {
					t.Fatalf("state %q, want %q still", h.current(), name)
				}
				if tt.upAfter > 0 && (len(h.nav.goals) != 1 || h.nav.goals[0].action != action) {
					t.Errorf("goals %d, want one on %q once the server is up", len(h.nav.goals), action)
				}
				return
			}
			waited := h.clock.Now().Sub(start)
			if h.current() != "Idle" || waited < tt.waitAtMost || waited > tt.waitAtMost+3*tickPeriod {
				t.Fatalf("state %q after %v, want Idle after %v", h.current(), waited, tt.waitAtMost)
			}
			if h.log.errorsContaining("giving up") != 1 || h.log.errorsContaining(tt.wantHint) != 2 ||
				h.log.errorsContaining(action) != 2 {
				t.Errorf("errors %q: want one report and one giving-up line naming %q with %q", h.log.errors, action, tt.wantHint)
			}
			if w := h.store.Waypoints().Waypoints[0]; w.Unreachable || w.Visited {
				t.Errorf("waypoint changed: %+v", w)
			}
			if tt.mode == NavigationExploration {
				if st := h.store.ExplorationGoalStatus().Status; st != GoalAborted {
					t.Errorf("exploration goal status %v, want ABORTED", st)
				}
			}
		})
	}
}

func TestSimpleGoal_FromIdle_StopAndSuccess(t *testing.T) {
	h := newHarness(t)
	h.booted()
	_ = h.si.OnSimpleGoal(h.ctx, at(7, 7))
	h.step()
	if h.current() != "G: Navigation" {
		t.Fatalf("current = %q", h.current())
	}
	h.step()
	h.si.Stop2DNavGoal(h.ctx)
	h.step()
	if h.current() != "Idle" || !h.nav.last().cancelled {
		t.Fatalf("after stop: %q, cancelled %v", h.current(), h.nav.last().cancelled)
	}
	_ = h.si.OnSimpleGoal(h.ctx, at(8, 8))
	h.step()
	h.step()
	h.nav.last().state = NavSucceeded
	h.step()
	if h.current() != "Idle" {
		t.Errorf("after success: %q", h.current())
	}
	want := []string{"G: Navigation", "Idle", "G: Navigation", "Idle"}
	if !reflect.DeepEqual(h.states, want) {
		t.Errorf("stateInfo = %v, want %v", h.states, want)
	}
}

func TestSimpleGoal_WhileNavigating_FreshNavigationReadsNewGoal(t *testing.T) {
	h, _ := navigating(t, Config{}, ModeAutonomous)
	_ = h.si.OnSimpleGoal(h.ctx, at(9, 9))
	h.step()
	if h.current() != "G: Navigation" {
		t.Fatalf("current = %q", h.current())
	}
	h.step()
	if g := h.nav.last(); g.pose.Position != (geom.Vec3{X: 9, Y: 9, Z: 0}) || !h.nav.goals[0].cancelled {
		t.Errorf("new goal %v, old cancelled %v", g.pose.Position, h.nav.goals[0].cancelled)
	}
}

// TestSimpleGoal_FromEveryState_DrivesToTheSimpleGoal sends a simple goal
// while each state is current: the fresh navigation state must drive to
// that goal and name itself "G: Navigation". (Regression: "E: Calculate
// Goal" stored its own, unset exploration goal on exit, as the original
// did, so the robot drove to (0,0) instead.)
func TestSimpleGoal_FromEveryState_DrivesToTheSimpleGoal(t *testing.T) {
	for _, sc := range stateCases() {
		switch sc.name {
		case "Boot", "Emergency Stop", "Teleoperation":
			continue // simple goals are not taken there (TestStates_Interrupts)
		}
		t.Run(sc.name, func(t *testing.T) {
			h := newHarness(t)
			_ = h.si.OnOperationMode(h.ctx, OperationMode{Mode: ModeAutonomous})
			s := sc.setup(h)
			h.makeCurrent(s)
			_ = h.si.OnExplorationGoals([]Pose{at(1, 0)}) // Calculate Goal has a frontier to pick
			_ = h.si.OnFailedGoals(nil)
			sent := len(h.nav.goals)
			if err := h.si.OnSimpleGoal(h.ctx, at(5, 6)); err != nil {
				t.Fatal(err)
			}
			h.runUntil(5, "G: Navigation", h.inState("G: Navigation"))
			h.runUntil(5, "goal sent", func() bool { return len(h.nav.goals) > sent })
			if g := h.nav.last(); g.pose.Position != (geom.Vec3{X: 5, Y: 6, Z: 0}) {
				t.Errorf("goal sent to %v, want the simple goal (5,6)", g.pose.Position)
			}
			if g, _ := h.store.GetNavigationGoal(h.ctx); g.Mode != NavigationSimpleGoal || g.Goal.Position != (geom.Vec3{X: 5, Y: 6, Z: 0}) {
				t.Errorf("stored navigation goal = %+v, want the simple goal", g)
			}
		})
	}
}

// TestNavigation_TuningChangedWhileNavigating: a shorter idle timer set
// while the robot stands still takes effect at the next tick; a refused
// tuning changes nothing.
func TestNavigation_TuningChangedWhileNavigating(t *testing.T) {
	h, _ := navigating(t, Config{}, ModeAutonomous)
	start := h.clock.Now()
	for i := 0; i < 20; i++ { // 1 s standing still, far below the 10 s default
		h.step()
	}
	if err := h.si.SetNavigationTuning(NavigationTuning{PoseTolerance: nan()}); err == nil ||
		!strings.Contains(err.Error(), "pose_tolerance") {
		t.Errorf("NaN pose_tolerance: %v, want refused naming it", err)
	}
	if err := h.si.SetNavigationTuning(NavigationTuning{IdleTimer: 2 * time.Second, UnstuckTimer: time.Second}); err != nil {
		t.Fatal(err)
	}
	if got := h.si.Config().Navigation.IdleTimer; got != 2*time.Second {
		t.Fatalf("idle timer %v after the change", got)
	}
	h.runUntil(400, "unstuck goal", func() bool { return len(h.nav.goals) == 2 })
	if d := h.clock.Now().Sub(start); d > 2*time.Second+6*tickPeriod {
		t.Errorf("stuck detected after %v, want about 2 s (the new idle_timer_duration)", d)
	}
	unstuck := h.clock.Now()
	h.runUntil(400, "goal resent", func() bool { return len(h.nav.goals) == 3 })
	if d := h.clock.Now().Sub(unstuck); d > time.Second+3*tickPeriod {
		t.Errorf("unstuck lasted %v, want the new 1 s", d)
	}
}
