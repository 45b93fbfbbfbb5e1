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

// fakeRun is one RunState goal sent to fakeRunner; the test sets its
// status, result and feedback.
type fakeRun struct {
	action    string
	req       RunRequest
	status    RunStatus
	res       RunResult
	shown     string
	cancels   int
	cancelErr error
}

func (r *fakeRun) Status() (RunStatus, RunResult) { return r.status, r.res }
func (r *fakeRun) ShownName() string              { return r.shown }
func (r *fakeRun) Cancel(context.Context) error {
	r.cancels++
	return r.cancelErr
}

// fakeRunner records RunState goals; down lists actions without a server,
// err (if set) is what Run returns. hook answers CallHook (nil: the plugin
// node has no hook service); hooks records the requests.
type fakeRunner struct {
	down  map[string]bool
	err   error
	runs  []*fakeRun
	hook  func(HookRequest) (HookReply, error)
	hooks []HookRequest
}

func (f *fakeRunner) CallHook(_ context.Context, action string, req HookRequest) (HookReply, error) {
	if f.hook == nil {
		return HookReply{}, fmt.Errorf("service %s/hook: %w", action, ErrUnavailable)
	}
	f.hooks = append(f.hooks, req)
	return f.hook(req)
}

func (f *fakeRunner) Ready(action string) bool { return !f.down[action] }
func (f *fakeRunner) Run(_ context.Context, action string, req RunRequest) (RemoteRun, error) {
	if f.err != nil {
		return nil, f.err
	}
	r := &fakeRun{action: action, req: req}
	f.runs = append(f.runs, r)
	return r, nil
}

func (f *fakeRunner) last(t *testing.T) *fakeRun {
	t.Helper()
	if len(f.runs) == 0 {
		t.Fatal("no RunState goal was sent")
	}
	return f.runs[len(f.runs)-1]
}

const goalsAction = "/robot/goals"

// remoteHarness is a harness whose calculate-goal plugin is served by the
// RunState server goalsAction, with the remote state current.
func remoteHarness(t *testing.T, cfg Config) (*harness, *RemoteState) {
	t.Helper()
	if cfg.CalculateGoalPlugin == "" {
		cfg.CalculateGoalPlugin = ActionPluginPrefix + goalsAction
	}
	h := newHarnessCfg(t, cfg)
	h.makeCurrent(NewIdle())
	if r := h.si.StartStopExploration(h.ctx, true); !r.Success {
		t.Fatalf("start exploration: %+v", r)
	}
	h.tick(1)
	s, ok := h.si.Current().(*RemoteState)
	if !ok {
		t.Fatalf("current state %q (%T), want a RemoteState", h.current(), h.si.Current())
	}
	return h, s
}

func TestRemoteState_SendsGoalWithRequest(t *testing.T) {
	h, s := remoteHarness(t, Config{})
	if got, want := h.current(), "E: goals"; got != want {
		t.Fatalf("name before feedback = %q, want %q", got, want)
	}
	if s.Action() != goalsAction || s.StartedAs() != NextCalculateGoal {
		t.Fatalf("action %q started as %q", s.Action(), s.StartedAs())
	}
	if len(h.runner.runs) != 0 {
		t.Fatal("goal sent before the first OnActive")
	}
	h.tick(1)
	r := h.runner.last(t)
	want := RunRequest{StateName: NextCalculateGoal, Goal: Pose{Orientation: geom.Identity}, Interrupt: false}
	if r.action != goalsAction || r.req != want {
		t.Fatalf("goal to %q = %+v, want %+v", r.action, r.req, want)
	}
	h.tick(3)
	if len(h.runner.runs) != 1 {
		t.Fatalf("%d goals sent, want 1", len(h.runner.runs))
	}
}

// TestRemoteState_Result covers every kind of next_state and every way a
// goal can end.
func TestRemoteState_Result(t *testing.T) {
	cases := []struct {
		name      string
		status    RunStatus
		res       RunResult
		wantState string // current state after the transition
		wantErr   string // substring of an error log; "" = no error
	}{
		{"idle", RunSucceeded, RunResult{NextIdle, "done"}, "Idle", ""},
		{"waypoint following", RunSucceeded, RunResult{NextWaypointFollowing, ""}, "W: Waypoint Following", ""},
		{"navigation plugin", RunSucceeded, RunResult{NextNavigation, "goal chosen"}, "E: Navigation", ""},
		{"mapping plugin", RunSucceeded, RunResult{NextMapping, ""}, "E: Mapping Dummy", ""},
		{"calculate goal plugin again", RunSucceeded, RunResult{NextCalculateGoal, ""}, "E: goals", ""},
		{"routine", RunSucceeded, RunResult{RoutinePrefix + "Reversing", ""}, "W: Reversing", ""},
		{"full plugin name", RunSucceeded, RunResult{MappingDummyStateName, ""}, "E: Mapping Dummy", ""},
		{"short plugin name", RunSucceeded, RunResult{"MappingDummyState", ""}, "E: Mapping Dummy", ""},
		{"other action", RunSucceeded, RunResult{ActionPluginPrefix + "/robot/stairs", ""}, "stairs", ""},
		{"unknown plugin", RunSucceeded, RunResult{"rsm::NopeState", "x"}, "Idle", `"rsm::NopeState" is not registered`},
		{"interrupt-only state", RunSucceeded, RunResult{"Teleoperation", ""}, "Idle", "not registered"},
		{"empty next state", RunSucceeded, RunResult{"", "forgot"}, "Idle", "empty name"},
		{"bad action name", RunSucceeded, RunResult{ActionPluginPrefix, ""}, "Idle", "want action:<action name>"},
		{"aborted", RunAborted, RunResult{"", "no frontier left"}, "Idle", "aborted the goal: no frontier left"},
		{"aborted without reason", RunAborted, RunResult{}, "Idle", "aborted the goal: no reason given"},
		{"canceled by the server", RunCanceled, RunResult{"", "shutting down"}, "Idle", "canceled the goal: shutting down"},
		{"lost", RunLost, RunResult{"", "get_result: decode error"}, "Idle", "goal lost: get_result: decode error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, _ := remoteHarness(t, Config{})
			h.setGoal(NavigationExploration, -1, "")
			h.tick(1)
			r := h.runner.last(t)
			r.status, r.res = c.status, c.res
			h.tick(1)
			if got := h.current(); got != c.wantState {
				t.Fatalf("state = %q, want %q (errors %q)", got, c.wantState, h.log.errors)
			}
			if c.wantErr == "" && len(h.log.errors) > 0 {
				t.Fatalf("unexpected errors: %q", h.log.errors)
			}
			if c.wantErr != "" && h.log.errorsContaining(c.wantErr) == 0 {
				t.Fatalf("no error containing %q: %q", c.wantErr, h.log.errors)
			}
			if c.wantErr != "" && c.status != RunSucceeded && h.log.errorsContaining("going to Idle") == 0 {
				t.Fatalf("the error does not say where the state machine goes: %q", h.log.errors)
			}
			if r.cancels != 0 {
				t.Fatalf("a finished goal was canceled %d times", r.cancels)
			}
			if c.res.Reason != "" && c.status == RunSucceeded && c.wantErr == "" {
				found := false
				for _, l := range h.log.infos {
					found = found || strings.Contains(l, c.res.Reason)
				}
				if !found {
					t.Fatalf("reason %q not logged: %q", c.res.Reason, h.log.infos)
				}
			}
		})
	}
}

func TestRemoteState_ServerMissing(t *testing.T) {
	cases := []struct {
		name     string
		timeout  time.Duration
		wait     time.Duration
		wantIdle bool
	}{
		{"within the timeout", 3 * time.Second, 2 * time.Second, false},
		{"timeout reached", 3 * time.Second, 3 * time.Second, true},
		{"default timeout", 0, DefaultServerTimeout, true},
		{"waits for ever", -1, time.Hour, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Navigation: NavigationConfig{NavigationTuning: NavigationTuning{ServerTimeout: c.timeout}}}
			cfg.CalculateGoalPlugin = ActionPluginPrefix + goalsAction
			h := newHarnessCfg(t, cfg)
			h.runner.down[goalsAction] = true
			h.makeCurrent(NewIdle())
			h.si.StartStopExploration(h.ctx, true)
			h.tick(2)
			for step := time.Duration(0); step < c.wait; step += c.wait / 10 {
				h.clock.Advance(c.wait / 10)
				h.tick(1)
			}
			h.tick(1)
			if len(h.runner.runs) != 0 {
				t.Fatal("goal sent without a server")
			}
			if got := h.log.errorsContaining("no RunState server"); got < 1 {
				t.Fatalf("missing server not reported: %q", h.log.errors)
			}
			if c.wantIdle {
				if h.current() != "Idle" || h.log.errorsContaining("(action_server_timeout)") != 1 {
					t.Fatalf("state %q, errors %q; want Idle with the timeout named", h.current(), h.log.errors)
				}
				return
			}
			if h.current() != "E: goals" || h.log.errorsContaining("no RunState server") != 1 {
				t.Fatalf("state %q, errors %q; want still waiting, reported once", h.current(), h.log.errors)
			}
			// The server comes: the goal goes out and the recovery is said.
			h.runner.down[goalsAction] = false
			h.tick(1)
			if len(h.runner.runs) != 1 {
				t.Fatal("goal not sent once the server came")
			}
		})
	}
}

func TestRemoteState_ServerLeavesWhileRunning(t *testing.T) {
	h, _ := remoteHarness(t, Config{})
	h.tick(1)
	r := h.runner.last(t)
	h.runner.down[goalsAction] = true
	h.clock.Advance(remoteLostGrace / 2)
	h.tick(1)
	h.runner.down[goalsAction] = false // a blip: back in time
	h.clock.Advance(remoteLostGrace)
	h.tick(1)
	if h.current() != "E: goals" {
		t.Fatalf("a blip shorter than the grace ended the state: %q", h.current())
	}
	h.runner.down[goalsAction] = true
	h.tick(1)
	h.clock.Advance(remoteLostGrace)
	h.tick(1)
	if h.current() != "Idle" || h.log.errorsContaining("server left while the goal was running") != 1 {
		t.Fatalf("state %q, errors %q; want Idle with the reason", h.current(), h.log.errors)
	}
	if r.cancels != 1 {
		t.Fatalf("the lost goal was released (Cancel) %d times, want once", r.cancels)
	}
}

func TestRemoteState_RunErrors(t *testing.T) {
	h, _ := remoteHarness(t, Config{})
	h.runner.err = fmt.Errorf("send_goal: %w", ErrUnavailable)
	h.tick(3)
	if h.current() != "E: goals" || len(h.log.errors) != 0 {
		t.Fatalf("an unavailable server between Ready and Run must be retried: %q %q", h.current(), h.log.errors)
	}
	h.runner.err = errors.New("goal rejected by the action server")
	h.tick(1)
	if h.current() != "Idle" || h.log.errorsContaining("send goal: goal rejected") != 1 {
		t.Fatalf("state %q, errors %q; want Idle with the rejection", h.current(), h.log.errors)
	}
}

func TestRemoteState_NoRunner(t *testing.T) {
	cfg := Config{CalculateGoalPlugin: ActionPluginPrefix + goalsAction}
	h := newHarnessCfg(t, cfg)
	h.si.deps.Runner = nil
	if err := h.si.CheckPlugins(); err == nil || !strings.Contains(err.Error(), "no RunState action client") {
		t.Fatalf("CheckPlugins = %v", err)
	}
	h.makeCurrent(NewIdle())
	h.si.StartStopExploration(h.ctx, true)
	h.tick(1)
	if h.current() != "Idle" || h.log.errorsContaining("no RunState action client") != 1 {
		t.Fatalf("state %q, errors %q", h.current(), h.log.errors)
	}
}

func TestRemoteState_FeedbackRenames(t *testing.T) {
	h, _ := remoteHarness(t, Config{})
	h.tick(1)
	r := h.runner.last(t)
	r.shown = "E: Goal List 1/3"
	h.tick(1)
	r.shown = "E: Goal List 1/3" // unchanged: no new announcement
	h.tick(2)
	r.shown = "E: bad\x00name"
	h.tick(2)
	r.shown = strings.Repeat("x", maxShownName+1)
	h.tick(1)
	want := []string{"Idle", "E: goals", "E: Goal List 1/3"}
	if fmt.Sprint(h.states) != fmt.Sprint(want) {
		t.Fatalf("stateInfo %q, want %q", h.states, want)
	}
	if h.log.errorsContaining("feedback state name ignored") != 1 {
		t.Fatalf("bad names must be reported once: %q", h.log.errors)
	}
	if h.si.StateName() != "E: Goal List 1/3" {
		t.Fatalf("StateName = %q", h.si.StateName())
	}
}

// TestRemoteState_Interrupts: every interrupt ends the state as the common
// pattern says and cancels the running goal once.
func TestRemoteState_Interrupts(t *testing.T) {
	cases := []struct {
		name   string
		shown  string
		i      Interrupt
		want   string // next state; "" = stays
		cancel bool
	}{
		{"e-stop", "E: x", EmergencyStopInterrupt, "Emergency Stop", true},
		{"teleoperation", "E: x", TeleoperationInterrupt, "Teleoperation", true},
		{"simple goal", "E: x", SimpleGoalInterrupt, "Navigation", true},
		{"simple goal stop, exploration", "E: x", SimpleGoalStopInterrupt, "", false},
		{"simple goal stop, simple goal", "G: x", SimpleGoalStopInterrupt, "Idle", true},
		{"interrupt end", "E: x", InterruptEnd, "", false},
	}
	for _, c := range cases {
		for _, resultToo := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/result in the same tick %v", c.name, resultToo), func(t *testing.T) {
				h, s := remoteHarness(t, Config{})
				h.tick(1)
				r := h.runner.last(t)
				r.shown = c.shown
				h.tick(1)
				s.OnInterrupt(h.ctx, c.i)
				if got := h.pendingName(); got != c.want {
					t.Fatalf("pending %q, want %q", got, c.want)
				}
				if resultToo { // the interrupt's target wins; the ended goal needs no cancel
					r.status, r.res = RunSucceeded, RunResult{NextState: NextNavigation}
				}
				h.tick(1)
				if c.want != "" && h.current() != c.want {
					t.Fatalf("current %q, want %q", h.current(), c.want)
				}
				wantCancel := c.cancel && !resultToo
				if got := r.cancels; (got == 1) != wantCancel || got > 1 {
					t.Fatalf("goal canceled %d times, want cancel=%v", got, wantCancel)
				}
			})
		}
	}
}

// TestRemoteState_Hooks checks the start/stop services by the shown name's
// prefix.
func TestRemoteState_Hooks(t *testing.T) {
	type want struct {
		ok   bool
		msg  string
		next string
	}
	cases := []struct {
		shown                            string
		exStart, exStop, wpStart, wpStop want
	}{
		{"E: x",
			want{false, "Exploration running", ""}, want{true, "Exploration stopped", "Idle"},
			want{false, "Exploration running", ""}, want{false, "Exploration running", ""}},
		{"W: x",
			want{false, "Waypoint following running", ""}, want{false, "Waypoint following running", ""},
			want{false, "Waypoint following running", ""}, want{true, "Waypoint following stopped", "Idle"}},
		{"G: x",
			want{false, "Simple Goal running", ""}, want{false, "Simple Goal running", ""},
			want{false, "Simple Goal running", ""}, want{false, "Simple Goal running", ""}},
		{"Stairs",
			want{false, "Stairs running", ""}, want{false, "Stairs running", ""},
			want{false, "Stairs running", ""}, want{false, "Stairs running", ""}},
	}
	for _, c := range cases {
		for _, hk := range []struct {
			name string
			call func(State, context.Context) Reply
			w    want
		}{
			{"exploration start", State.OnExplorationStart, c.exStart},
			{"exploration stop", State.OnExplorationStop, c.exStop},
			{"waypoint start", State.OnWaypointFollowingStart, c.wpStart},
			{"waypoint stop", State.OnWaypointFollowingStop, c.wpStop},
		} {
			t.Run(c.shown+"/"+hk.name, func(t *testing.T) {
				h, s := remoteHarness(t, Config{})
				h.tick(1)
				r := h.runner.last(t)
				r.shown = c.shown
				h.tick(1)
				rep := hk.call(s, h.ctx)
				if rep.Success != hk.w.ok || rep.Message != hk.w.msg || h.pendingName() != hk.w.next {
					t.Fatalf("reply %+v pending %q, want %+v", rep, h.pendingName(), hk.w)
				}
				h.tick(1)
				if wantCancels := map[bool]int{true: 1, false: 0}[hk.w.next != ""]; r.cancels != wantCancels {
					t.Fatalf("goal canceled %d times, want %d", r.cancels, wantCancels)
				}
			})
		}
	}
}

func TestRemoteState_CancelErrorIsLogged(t *testing.T) {
	h, s := remoteHarness(t, Config{})
	h.tick(1)
	r := h.runner.last(t)
	r.cancelErr = errors.New("cancel_goal: timeout")
	s.OnInterrupt(h.ctx, EmergencyStopInterrupt)
	h.tick(1)
	if h.current() != "Emergency Stop" || len(h.log.warns) != 1 || !strings.Contains(h.log.warns[0], "cancel_goal: timeout") {
		t.Fatalf("state %q warns %q", h.current(), h.log.warns)
	}
}

// TestRemoteState_NavigationPlugin: a navigation plugin served remotely is
// named after the goal's mode and learns whether a simple goal (an
// interrupt) started it.
func TestRemoteState_NavigationPlugin(t *testing.T) {
	cases := []struct {
		mode      NavigationMode
		viaSimple bool
		want      string
	}{
		{NavigationExploration, false, "E: drive"},
		{NavigationWaypointFollowing, false, "W: drive"},
		{NavigationSimpleGoal, true, "G: drive"},
	}
	for _, c := range cases {
		t.Run(c.mode.String(), func(t *testing.T) {
			h := newHarnessCfg(t, Config{NavigationPlugin: ActionPluginPrefix + "drive"})
			h.makeCurrent(NewIdle())
			if c.viaSimple {
				if err := h.si.OnSimpleGoal(h.ctx, at(5, 6)); err != nil {
					t.Fatal(err)
				}
			} else {
				h.setGoal(c.mode, 0, "")
				h.si.Transition(h.si.Plugin(NavigationPlugin, ""))
			}
			h.tick(2)
			if h.current() != c.want {
				t.Fatalf("name %q, want %q", h.current(), c.want)
			}
			r := h.runner.last(t)
			if r.action != "drive" || r.req.StateName != NextNavigation || r.req.Interrupt != c.viaSimple {
				t.Fatalf("goal to %q: %+v", r.action, r.req)
			}
			wantGoal := at(3, 4)
			if c.viaSimple {
				wantGoal = at(5, 6)
			}
			if r.req.Goal != wantGoal {
				t.Fatalf("goal pose %+v, want %+v", r.req.Goal, wantGoal)
			}
		})
	}
}

func TestRemoteState_RoutinePlugins(t *testing.T) {
	cfg := Config{RoutinePlugins: map[string]string{"Stairs": ActionPluginPrefix + "/robot/stairs"}}
	h := newHarnessCfg(t, cfg)
	h.addWaypoints(wp(1, 0, "Stairs"), wp(2, 0, ""))
	h.nav.auto = func(string, Pose) NavState { return NavSucceeded }
	h.makeCurrent(NewIdle())
	h.si.StartStopWaypointFollowing(h.ctx, true)
	h.tick(5)
	if h.current() != "W: Stairs" {
		t.Fatalf("state %q (%q), want the routine's RemoteState", h.current(), h.states)
	}
	r := h.runner.last(t)
	if r.action != "/robot/stairs" || r.req.StateName != RoutinePrefix+"Stairs" {
		t.Fatalf("goal to %q: %+v", r.action, r.req)
	}
	// The routine reports its waypoint itself and goes back.
	if _, err := h.store.NavigationGoalCompleted(h.ctx, GoalStatus{Status: GoalReached}, false); err != nil {
		t.Fatal(err)
	}
	r.status, r.res = RunSucceeded, RunResult{NextState: NextWaypointFollowing, Reason: "climbed"}
	h.tick(3)
	wps, _ := h.store.GetWaypoints(h.ctx)
	if !wps.Waypoints[0].Visited || h.current() != "W: Navigation" {
		t.Fatalf("after the routine: state %q, waypoints %+v", h.current(), wps.Waypoints)
	}
	// A routine without an entry keeps the registry's name.
	if _, err := h.si.StateByName(RoutinePrefix + "Reversing"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.si.StateByName(RoutinePrefix + "Dance"); err == nil || !strings.Contains(err.Error(), "rsm::DanceRoutineState") {
		t.Fatalf("unknown routine: %v", err)
	}
}

func TestConfig_PluginNames(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		err  string
	}{
		{"action plugin", Config{CalculateGoalPlugin: "action:/a/b"}, ""},
		{"relative action", Config{MappingPlugin: "action:map_it"}, ""},
		{"empty action", Config{NavigationPlugin: "action:"}, "navigation_plugin"},
		{"blank in action", Config{MappingPlugin: "action:/a b"}, "mapping_plugin"},
		{"routine", Config{RoutinePlugins: map[string]string{"Stairs": "action:/s"}}, ""},
		{"routine without name", Config{RoutinePlugins: map[string]string{"": "action:/s"}}, "routine_plugins"},
		{"routine without plugin", Config{RoutinePlugins: map[string]string{"Stairs": ""}}, "routine_plugins"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("Validate = %v, want error containing %q", err, c.err)
			}
		})
	}
}

// TestRemoteState_ExplorationScenario drives exploration with a remote
// calculate-goal plugin that chooses a goal, then gives up: Idle →
// E: goals → E: Navigation → E: Mapping Dummy → E: goals → Idle.
func TestRemoteState_ExplorationScenario(t *testing.T) {
	h, _ := remoteHarness(t, Config{})
	h.nav.auto = func(string, Pose) NavState { return NavSucceeded }
	h.tick(1)
	// The plugin stores its goal through the service provider, then names
	// the navigation plugin.
	if _, err := h.store.SetNavigationGoal(h.ctx, NavigationGoal{Goal: at(7, 1), Mode: NavigationExploration, WaypointPosition: -1}); err != nil {
		t.Fatal(err)
	}
	r := h.runner.last(t)
	r.shown = "E: Goal List 1/1"
	r.status, r.res = RunSucceeded, RunResult{NextNavigation, "goal 1 of 1"}
	h.tick(6)
	if len(h.nav.goals) != 1 || h.nav.goals[0].pose != at(7, 1) {
		t.Fatalf("navigation goals %+v", h.nav.goals)
	}
	if len(h.runner.runs) != 2 {
		t.Fatalf("%d RunState goals, want 2 (the plugin is asked again after mapping)", len(h.runner.runs))
	}
	r2 := h.runner.last(t)
	if r2.req.Goal != at(7, 1) {
		t.Fatalf("second request carries goal %+v", r2.req.Goal)
	}
	r2.status, r2.res = RunSucceeded, RunResult{NextIdle, "all goals visited"}
	h.tick(1)
	want := []string{"Idle", "E: goals", "E: Goal List 1/1", "E: Navigation", "E: Mapping Dummy", "E: goals", "Idle"}
	if fmt.Sprint(h.states) != fmt.Sprint(want) {
		t.Fatalf("stateInfo %q\nwant      %q", h.states, want)
	}
	if len(h.log.errors) != 0 {
		t.Fatalf("errors: %q", h.log.errors)
	}
}

// TestRemoteState_PluginHooks: while its goal runs, a plugin node with a
// hook service answers the start/stop requests and interrupts itself, as a
// pluginlib state's hooks did: it stays (the goal goes on), names the next
// state (the goal is canceled), or declines. A declined request, a failed
// call and an unknown next state get the common handling (the last two
// logged, a failing service once per burst). Before the goal runs and
// after it ended nobody is asked.
func TestRemoteState_PluginHooks(t *testing.T) {
	type call struct {
		hook Hook
		i    Interrupt
	}
	do := func(s *RemoteState, ctx context.Context, c call) Reply {
		switch c.hook {
		case HookExplorationStart:
			return s.OnExplorationStart(ctx)
		case HookExplorationStop:
			return s.OnExplorationStop(ctx)
		case HookWaypointFollowingStart:
			return s.OnWaypointFollowingStart(ctx)
		case HookWaypointFollowingStop:
			return s.OnWaypointFollowingStop(ctx)
		}
		s.OnInterrupt(ctx, c.i)
		return Reply{}
	}
	custom := Reply{Success: true, Message: "Stairs: finishing the flight first"}
	hookErr := errors.New("service /robot/goals/hook: timeout")
	cases := []struct {
		name    string
		call    call
		reply   HookReply
		err     error
		want    Reply  // start/stop answer
		pending string // "" = stays
		errLogs int
	}{
		// Handled: the plugin's answer, staying or going where it says.
		{"exploration start, stay", call{HookExplorationStart, 0}, HookReply{Handled: true, Reply: custom}, nil, custom, "", 0},
		{"exploration stop, stay", call{HookExplorationStop, 0}, HookReply{Handled: true, Reply: custom}, nil, custom, "", 0},
		{"exploration stop, to mapping", call{HookExplorationStop, 0}, HookReply{Handled: true, Reply: custom, NextState: NextMapping}, nil, custom, "E: Mapping Dummy", 0},
		{"waypoint start, to waypoint following", call{HookWaypointFollowingStart, 0}, HookReply{Handled: true, Reply: custom, NextState: NextWaypointFollowing}, nil, custom, "W: Waypoint Following", 0},
		{"waypoint stop, to Idle", call{HookWaypointFollowingStop, 0}, HookReply{Handled: true, Reply: custom, NextState: NextIdle}, nil, custom, "Idle", 0},
		{"e-stop ignored", call{HookInterrupt, EmergencyStopInterrupt}, HookReply{Handled: true}, nil, Reply{}, "", 0},
		{"teleoperation to Idle", call{HookInterrupt, TeleoperationInterrupt}, HookReply{Handled: true, NextState: NextIdle}, nil, Reply{}, "Idle", 0},
		{"simple goal stop to Idle", call{HookInterrupt, SimpleGoalStopInterrupt}, HookReply{Handled: true, NextState: NextIdle}, nil, Reply{}, "Idle", 0},
		{"simple goal ignored", call{HookInterrupt, SimpleGoalInterrupt}, HookReply{Handled: true}, nil, Reply{}, "", 0},
		// Declined: the common handling of an "E:" state.
		{"exploration start declined", call{HookExplorationStart, 0}, HookReply{Reply: custom}, nil, Reply{Message: "Exploration running"}, "", 0},
		{"exploration stop declined", call{HookExplorationStop, 0}, HookReply{NextState: NextMapping}, nil, Reply{Success: true, Message: "Exploration stopped"}, "Idle", 0},
		{"e-stop declined", call{HookInterrupt, EmergencyStopInterrupt}, HookReply{}, nil, Reply{}, "Emergency Stop", 0},
		// Failed call or unknown next state: common handling, logged.
		{"exploration stop, call fails", call{HookExplorationStop, 0}, HookReply{}, hookErr, Reply{Success: true, Message: "Exploration stopped"}, "Idle", 1},
		{"teleoperation, call fails", call{HookInterrupt, TeleoperationInterrupt}, HookReply{}, hookErr, Reply{}, "Teleoperation", 1},
		{"waypoint stop, unknown next state", call{HookWaypointFollowingStop, 0}, HookReply{Handled: true, Reply: custom, NextState: "Nowhere"}, nil, Reply{Message: "Exploration running"}, "", 1},
		{"e-stop, unknown next state", call{HookInterrupt, EmergencyStopInterrupt}, HookReply{Handled: true, NextState: "Teleoperation"}, nil, Reply{}, "Emergency Stop", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, s := remoteHarness(t, Config{})
			h.runner.hook = func(HookRequest) (HookReply, error) { return c.reply, c.err }
			h.tick(1)
			r := h.runner.last(t)
			r.shown = "E: Stairs"
			h.tick(1)
			rep := do(s, h.ctx, c.call)
			if c.call.hook != HookInterrupt && rep != c.want {
				t.Errorf("reply %+v, want %+v", rep, c.want)
			}
			if got := h.pendingName(); got != c.pending {
				t.Errorf("pending %q, want %q", got, c.pending)
			}
			want := []HookRequest{{Hook: c.call.hook, Interrupt: c.call.i, StateName: NextCalculateGoal}}
			if fmt.Sprint(h.runner.hooks) != fmt.Sprint(want) {
				t.Errorf("hook requests %+v, want %+v", h.runner.hooks, want)
			}
			if got := h.log.errorsContaining("/robot/goals"); got != c.errLogs {
				t.Errorf("%d error logs naming the plugin, want %d: %q", got, c.errLogs, h.log.errors)
			}
			h.tick(1)
			if wantCancels := map[bool]int{true: 1, false: 0}[c.pending != ""]; r.cancels != wantCancels {
				t.Errorf("goal canceled %d times, want %d", r.cancels, wantCancels)
			}
			if c.pending == "" && h.current() != "E: Stairs" {
				t.Errorf("current %q, want the plugin state still", h.current())
			}
		})
	}

	t.Run("a failing hook service is logged once per burst", func(t *testing.T) {
		h, s := remoteHarness(t, Config{})
		var fail bool
		h.runner.hook = func(HookRequest) (HookReply, error) {
			if fail {
				return HookReply{}, hookErr
			}
			return HookReply{Handled: true, Reply: custom}, nil
		}
		h.tick(2)
		fail = true
		for i := 0; i < 3; i++ {
			if rep := s.OnExplorationStart(h.ctx); rep.Success {
				t.Fatalf("failed hook answered %+v, want the common refusal", rep)
			}
		}
		fail = false
		if rep := s.OnExplorationStart(h.ctx); rep != custom {
			t.Fatalf("recovered hook answered %+v", rep)
		}
		if len(h.log.errors) != 1 || len(h.log.infos) == 0 || !strings.Contains(h.log.infos[len(h.log.infos)-1], "hooks answer again") {
			t.Fatalf("errors %q infos %q, want one error and the recovery", h.log.errors, h.log.infos)
		}
	})

	t.Run("nobody is asked before the goal runs or after it ended", func(t *testing.T) {
		h, s := remoteHarness(t, Config{})
		h.runner.hook = func(HookRequest) (HookReply, error) { return HookReply{Handled: true, Reply: custom}, nil }
		if rep := s.OnExplorationStart(h.ctx); rep.Success { // no goal sent yet
			t.Fatalf("before the goal: %+v", rep)
		}
		h.tick(1)
		r := h.runner.last(t)
		r.status, r.res = RunSucceeded, RunResult{NextState: NextMapping}
		if rep := s.OnExplorationStart(h.ctx); rep.Success { // the goal ended
			t.Fatalf("after the goal: %+v", rep)
		}
		if len(h.runner.hooks) != 0 {
			t.Fatalf("hook requests %+v, want none", h.runner.hooks)
		}
	})
}
