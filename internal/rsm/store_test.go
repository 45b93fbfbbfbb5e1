package rsm

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

var bg = context.Background()

func storeWith(n int) *Store {
	s := NewStore(StoreConfig{})
	for i := 0; i < n; i++ {
		s.AddWaypoint(wp(float64(i), 0, ""), -1)
	}
	return s
}

func positionsX(s *Store) []float64 {
	var out []float64
	for _, w := range s.Waypoints().Waypoints {
		out = append(out, w.Pose.Position.X)
	}
	return out
}

// TestStore_Replies checks every waypoint service's reply text
// (docs/rsm.md#serviceprovidernode) for in-range and out-of-range positions.
func TestStore_Replies(t *testing.T) {
	oor := Reply{false, "Position out of waypoint array range"}
	tests := []struct {
		name  string
		call  func(s *Store) Reply
		want  Reply
		after []float64
	}{
		{"add at 1", func(s *Store) Reply { return s.AddWaypoint(wp(9, 0, ""), 1) },
			Reply{true, "Added waypoint successfully"}, []float64{0, 9, 1, 2}},
		{"add at 0", func(s *Store) Reply { return s.AddWaypoint(wp(9, 0, ""), 0) },
			Reply{true, "Added waypoint successfully"}, []float64{9, 0, 1, 2}},
		{"add -1 appends", func(s *Store) Reply { return s.AddWaypoint(wp(9, 0, ""), -1) },
			Reply{true, "Added waypoint successfully at the end"}, []float64{0, 1, 2, 9}},
		{"add 3 (=size) appends", func(s *Store) Reply { return s.AddWaypoint(wp(9, 0, ""), 3) },
			Reply{true, "Added waypoint successfully at the end"}, []float64{0, 1, 2, 9}},
		{"add NaN refused", func(s *Store) Reply { return s.AddWaypoint(wp(math.NaN(), 0, ""), -1) },
			Reply{false, "Waypoint rejected: pose position: vector (NaN, 0, 0): value is not finite (NaN or Inf)"}, []float64{0, 1, 2}},
		{"move 2", func(s *Store) Reply { return s.MoveWaypoint(2, at(7, 0)) },
			Reply{true, "Moved waypoint successfully"}, []float64{0, 1, 7}},
		{"move 3", func(s *Store) Reply { return s.MoveWaypoint(3, at(7, 0)) }, oor, []float64{0, 1, 2}},
		{"move -1", func(s *Store) Reply { return s.MoveWaypoint(-1, at(7, 0)) }, oor, []float64{0, 1, 2}},
		{"move Inf refused", func(s *Store) Reply { return s.MoveWaypoint(0, at(math.Inf(1), 0)) },
			Reply{false, "Waypoint rejected: pose position: vector (+Inf, 0, 0): value is not finite (NaN or Inf)"}, []float64{0, 1, 2}},
		{"remove 0", func(s *Store) Reply { return s.RemoveWaypoint(0) },
			Reply{true, "Removed waypoint successfully"}, []float64{1, 2}},
		{"remove 3", func(s *Store) Reply { return s.RemoveWaypoint(3) }, oor, []float64{0, 1, 2}},
		{"visited 1", func(s *Store) Reply { r, _ := s.WaypointVisited(bg, 1); return r },
			Reply{true, "Waypoint visited"}, []float64{0, 1, 2}},
		{"visited 5", func(s *Store) Reply { r, _ := s.WaypointVisited(bg, 5); return r }, oor, []float64{0, 1, 2}},
		{"unreachable 1", func(s *Store) Reply { return s.WaypointUnreachable(1) },
			Reply{true, "Waypoint unreachable"}, []float64{0, 1, 2}},
		{"unreachable -2", func(s *Store) Reply { return s.WaypointUnreachable(-2) }, oor, []float64{0, 1, 2}},
		{"routine 0", func(s *Store) Reply { return s.SetWaypointRoutine(0, "Reversing") },
			Reply{true, "Waypoint routine set"}, []float64{0, 1, 2}},
		{"routine 3", func(s *Store) Reply { return s.SetWaypointRoutine(3, "Reversing") }, oor, []float64{0, 1, 2}},
		{"reset", func(s *Store) Reply { r, _ := s.ResetWaypoints(bg); return r },
			Reply{true, "Waypoints reset"}, []float64{0, 1, 2}},
		{"mode PATROL", func(s *Store) Reply { r, _ := s.SetWaypointFollowingMode(bg, Patrol, true); return r },
			Reply{true, "Waypoint Following mode changed"}, []float64{0, 1, 2}},
		{"mode 3 refused", func(s *Store) Reply { r, _ := s.SetWaypointFollowingMode(bg, 3, true); return r },
			Reply{false, "Unknown waypoint following mode 3 (0 SINGLE, 1 ROUNDTRIP, 2 PATROL)"}, []float64{0, 1, 2}},
		{"exploration mode", func(s *Store) Reply { return s.SetExplorationMode(true) },
			Reply{true, "Exploration mode set"}, []float64{0, 1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := storeWith(3)
			if got := tt.call(s); got != tt.want {
				t.Errorf("reply = %+v, want %+v", got, tt.want)
			}
			if got := positionsX(s); !reflect.DeepEqual(got, tt.after) {
				t.Errorf("waypoints x = %v, want %v", got, tt.after)
			}
		})
	}
}

func TestStore_FlagsAndModes(t *testing.T) {
	s := storeWith(3)
	s.WaypointVisited(bg, 0)
	s.WaypointUnreachable(1)
	s.SetWaypointRoutine(2, "Reversing")
	s.SetWaypointFollowingMode(bg, Roundtrip, true)
	a := s.Waypoints()
	if !a.Waypoints[0].Visited || !a.Waypoints[1].Unreachable || a.Waypoints[2].Routine != "Reversing" ||
		a.Mode != Roundtrip || !a.Reverse {
		t.Fatalf("array = %+v", a)
	}
	s.ResetWaypoints(bg)
	for i, w := range s.Waypoints().Waypoints {
		if w.Visited || w.Unreachable {
			t.Errorf("waypoint %d not reset: %+v", i, w)
		}
	}
	// Waypoints returns a copy.
	a.Waypoints[0].Routine = "changed"
	if s.Waypoints().Waypoints[0].Routine != "" {
		t.Error("Waypoints() shares its slice with the store")
	}
}

func TestStore_NavigationGoal(t *testing.T) {
	s := storeWith(2)
	g, _ := s.GetNavigationGoal(bg)
	if g.Mode != NavigationNone || g.WaypointPosition != -1 {
		t.Errorf("initial goal = %+v, want mode -1 position -1", g)
	}
	r, _ := s.SetNavigationGoal(bg, NavigationGoal{Goal: at(1, 2), Mode: NavigationWaypointFollowing, WaypointPosition: 1, Routine: "R"})
	if r != (Reply{true, "Navigation goal set"}) {
		t.Errorf("reply = %+v", r)
	}
	if g, _ := s.GetNavigationGoal(bg); g.WaypointPosition != 1 || g.Routine != "R" || g.Goal.Position.Y != 2 {
		t.Errorf("goal = %+v", g)
	}
	if r, _ := s.SetNavigationGoal(bg, NavigationGoal{Goal: at(math.NaN(), 0)}); r.Success {
		t.Error("NaN goal accepted")
	}
	if r, _ := s.SetNavigationGoal(bg, NavigationGoal{Goal: at(0, 0), Mode: 5}); r.Success {
		t.Error("mode 5 accepted")
	}
}

func TestStore_NavigationGoalCompleted(t *testing.T) {
	type step struct {
		status GoalState
		nav    bool
	}
	tests := []struct {
		name      string
		mode      NavigationMode
		steps     []step
		wantMsg   string
		wantExp   GoalState
		visited   bool
		unreached bool
	}{
		{"exploration reached", NavigationExploration, []step{{GoalReached, true}}, "Exploration goal completed", GoalReached, false, false},
		{"exploration: mapping REACHED after nav REACHED keeps REACHED", NavigationExploration,
			[]step{{GoalReached, true}, {GoalFailed, false}}, "Exploration goal completed", GoalReached, false, false},
		{"exploration: ABORTED replaces REACHED", NavigationExploration,
			[]step{{GoalReached, true}, {GoalAborted, false}}, "Exploration goal completed", GoalAborted, false, false},
		{"exploration: non-navigation report on ACTIVE", NavigationExploration,
			[]step{{GoalFailed, false}}, "Exploration goal completed", GoalFailed, false, false},
		{"exploration: navigation report always", NavigationExploration,
			[]step{{GoalFailed, true}, {GoalReached, true}}, "Exploration goal completed", GoalReached, false, false},
		{"waypoint reached", NavigationWaypointFollowing, []step{{GoalReached, true}}, "Waypoint completed", GoalActive, true, false},
		{"waypoint failed", NavigationWaypointFollowing, []step{{GoalFailed, true}}, "Waypoint completed", GoalActive, false, true},
		{"waypoint aborted", NavigationWaypointFollowing, []step{{GoalAborted, true}}, "Waypoint completed", GoalActive, false, false},
		{"simple goal", NavigationSimpleGoal, []step{{GoalReached, true}}, "Navigation goal completed", GoalActive, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := storeWith(2)
			s.SetNavigationGoal(bg, NavigationGoal{Goal: at(4, 4), Mode: tt.mode, WaypointPosition: 1})
			var r Reply
			for _, st := range tt.steps {
				r, _ = s.NavigationGoalCompleted(bg, GoalStatus{Status: st.status}, st.nav)
			}
			if !r.Success || r.Message != tt.wantMsg {
				t.Errorf("reply = %+v, want true %q", r, tt.wantMsg)
			}
			if got := s.ExplorationGoalStatus(); got.Status != tt.wantExp {
				t.Errorf("exploration status = %v, want %v", got.Status, tt.wantExp)
			}
			w := s.Waypoints().Waypoints[1]
			if w.Visited != tt.visited || w.Unreachable != tt.unreached {
				t.Errorf("waypoint 1 = %+v", w)
			}
		})
	}
}

func TestStore_ReverseMode(t *testing.T) {
	tests := []struct {
		name     string
		reverser ReverseSwitcher
		want     Reply
	}{
		{"switch ok", &fakeReverser{reply: ok("Mode set")}, Reply{true, "Mode set"}},
		{"switch refused", &fakeReverser{reply: fail("no")}, Reply{false, "Mode not set"}},
		{"switch call fails", &fakeReverser{err: errors.New("timeout")}, Reply{false, "Unable to set reverse mode"}},
		{"no switch configured", nil, Reply{false, "Unable to set reverse mode"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStore(StoreConfig{Reverser: tt.reverser})
			if r := s.ReverseModeReply(); r != (Reply{false, "Forward mode active"}) {
				t.Errorf("initial = %+v", r)
			}
			if r, _ := s.SetReverseMode(bg, true); r != tt.want {
				t.Errorf("reply = %+v, want %+v", r, tt.want)
			}
			// The flag changes even if the downstream switch failed (original).
			if r := s.ReverseModeReply(); r != (Reply{true, "Reverse mode active"}) {
				t.Errorf("after = %+v", r)
			}
			if r, _ := s.SetReverseMode(bg, true); r != (Reply{false, "Already in requested mode"}) {
				t.Errorf("same mode = %+v", r)
			}
		})
	}
}

func TestStore_ExplorationModeAndRoutines(t *testing.T) {
	s := NewStore(StoreConfig{Routines: []string{"Reversing"}})
	if r := s.ExplorationModeReply(); r != (Reply{false, "Exploration mode returned"}) {
		t.Errorf("initial = %+v (default Finish)", r)
	}
	s.SetExplorationMode(true)
	if m, _ := s.GetExplorationMode(bg); !m || !s.ExplorationModeReply().Success {
		t.Error("Interrupt not stored")
	}
	if got := s.GetWaypointRoutines(); !reflect.DeepEqual(got, []string{"Reversing"}) {
		t.Errorf("routines = %v", got)
	}
}

func TestStore_RobotPose(t *testing.T) {
	if _, err := NewStore(StoreConfig{}).GetRobotPose(bg); err == nil {
		t.Error("no pose source: no error")
	}
	p := &fakePose{err: errors.New("no transform map -> base_link")}
	s := NewStore(StoreConfig{Pose: p})
	if _, err := s.GetRobotPose(bg); err == nil || !strings.Contains(err.Error(), "base_link") {
		t.Errorf("err = %v", err)
	}
	p.err, p.pose = nil, at(1, 2)
	if got, err := s.GetRobotPose(bg); err != nil || got != at(1, 2) {
		t.Errorf("pose = %v, %v", got, err)
	}
}

func TestStore_Persistence_SurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "waypoints.yaml")
	s := NewStore(StoreConfig{WaypointsFile: path})
	s.AddWaypoint(Waypoint{Pose: Pose{Position: geom.Vec3{X: 1.5, Y: -2, Z: 0.25}, Orientation: geom.QuatFromYaw(1)}, Routine: "Reversing"}, -1)
	s.AddWaypoint(wp(3, 4, ""), -1)
	s.WaypointUnreachable(1)
	s.SetWaypointFollowingMode(bg, Patrol, true)
	want := s.Waypoints()

	log := &recLog{}
	s2 := NewStore(StoreConfig{WaypointsFile: path, Log: log})
	if got := s2.Waypoints(); !reflect.DeepEqual(got, want) {
		t.Errorf("after restart = %+v\nwant %+v", got, want)
	}
	if len(log.errors) != 0 {
		t.Errorf("errors: %v", log.errors)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("files next to the waypoints file: %v (temporary files left?)", entries)
	}
	s2.RemoveWaypoint(0)
	s2.RemoveWaypoint(0)
	if got := NewStore(StoreConfig{WaypointsFile: path}).Waypoints().Waypoints; len(got) != 0 {
		t.Errorf("removals not persisted: %+v", got)
	}
}

func TestStore_Persistence_CorruptFileMovedAside(t *testing.T) {
	tests := []struct {
		name, content, reason string
	}{
		{"not yaml", "waypoints: [\x00", "parse"},
		{"wrong version", "version: 7\n", "version 7"},
		{"bad mode", "version: 1\nmode: 9\n", "mode 9"},
		{"NaN", "version: 1\nwaypoints:\n  - position: {x: .nan, y: 0, z: 0}\n    orientation: {w: 1}\n", "not finite"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "wp.yaml")
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			log := &recLog{}
			s := NewStore(StoreConfig{WaypointsFile: path, Log: log})
			if len(s.Waypoints().Waypoints) != 0 {
				t.Error("corrupt file loaded")
			}
			if len(log.errors) != 1 || !strings.Contains(log.errors[0], tt.reason) || !strings.Contains(log.errors[0], "moved to") {
				t.Fatalf("errors = %v, want one naming %q and the new place", log.errors, tt.reason)
			}
			moved, _ := filepath.Glob(path + ".corrupt-*")
			if len(moved) != 1 {
				t.Fatalf("moved files = %v", moved)
			}
			if data, _ := os.ReadFile(moved[0]); string(data) != tt.content {
				t.Error("moved file content changed")
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("corrupt file still in place: %v", err)
			}
			var ce *CorruptFileError
			if _, err := LoadWaypoints(moved[0]); !errors.As(err, &ce) {
				t.Errorf("LoadWaypoints(corrupt) = %v, want *CorruptFileError", err)
			}
		})
	}
}

func TestLoadWaypoints_MissingFileIsEmpty(t *testing.T) {
	a, err := LoadWaypoints(filepath.Join(t.TempDir(), "none.yaml"))
	if err != nil || len(a.Waypoints) != 0 {
		t.Errorf("= %+v, %v", a, err)
	}
}

func TestSaveWaypoints_UnwritableDirReportsError(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SaveWaypoints(filepath.Join(blocker, "wp.yaml"), WaypointArray{}); err == nil {
		t.Error("save under a regular file succeeded")
	}
}

// Issue 13: a failed save answered success=true (only a log line said it
// failed). Every change whose save fails now answers success=false with the
// reason; the change stays in memory and the next good save writes it.
func TestStore_Persistence_FailedSaveAnswersFalseWithReason(t *testing.T) {
	sid := func(s *Store) *Store {
		s.goal = NavigationGoal{Mode: NavigationWaypointFollowing, WaypointPosition: 0}
		return s
	}
	tests := []struct {
		name string
		call func(s *Store) Reply
		msg  string
		held func(s *Store) bool // the change is in memory
	}{
		{"addWaypoint", func(s *Store) Reply { return s.AddWaypoint(wp(7, 0, ""), -1) }, "Added waypoint successfully at the end",
			func(s *Store) bool { return len(s.Waypoints().Waypoints) == 2 }},
		{"addWaypoint at 0", func(s *Store) Reply { return s.AddWaypoint(wp(7, 0, ""), 0) }, "Added waypoint successfully",
			func(s *Store) bool { return s.Waypoints().Waypoints[0].Pose.Position.X == 7 }},
		{"moveWaypoint", func(s *Store) Reply { return s.MoveWaypoint(0, at(5, 5)) }, "Moved waypoint successfully",
			func(s *Store) bool { return s.Waypoints().Waypoints[0].Pose.Position.X == 5 }},
		{"removeWaypoint", func(s *Store) Reply { return s.RemoveWaypoint(0) }, "Removed waypoint successfully",
			func(s *Store) bool { return len(s.Waypoints().Waypoints) == 0 }},
		{"waypointVisited", func(s *Store) Reply { r, _ := s.WaypointVisited(bg, 0); return r }, "Waypoint visited",
			func(s *Store) bool { return s.Waypoints().Waypoints[0].Visited }},
		{"waypointUnreachable", func(s *Store) Reply { return s.WaypointUnreachable(0) }, "Waypoint unreachable",
			func(s *Store) bool { return s.Waypoints().Waypoints[0].Unreachable }},
		{"resetWaypoints", func(s *Store) Reply { r, _ := s.ResetWaypoints(bg); return r }, "Waypoints reset",
			func(s *Store) bool { return !s.Waypoints().Waypoints[0].Visited }},
		{"setWaypointFollowingMode", func(s *Store) Reply { r, _ := s.SetWaypointFollowingMode(bg, Patrol, true); return r }, "Waypoint Following mode changed",
			func(s *Store) bool { return s.Waypoints().Mode == Patrol }},
		{"setWaypointRoutine", func(s *Store) Reply { return s.SetWaypointRoutine(0, "Reversing") }, "Waypoint routine set",
			func(s *Store) bool { return s.Waypoints().Waypoints[0].Routine == "Reversing" }},
		{"navigationGoalCompleted REACHED", func(s *Store) Reply {
			r, _ := sid(s).NavigationGoalCompleted(bg, GoalStatus{Status: GoalReached}, true)
			return r
		}, "Waypoint completed", func(s *Store) bool { return s.Waypoints().Waypoints[0].Visited }},
		{"navigationGoalCompleted FAILED", func(s *Store) Reply {
			r, _ := sid(s).NavigationGoalCompleted(bg, GoalStatus{Status: GoalFailed}, true)
			return r
		}, "Waypoint completed", func(s *Store) bool { return s.Waypoints().Waypoints[0].Unreachable }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state", "waypoints.yaml")
			s := NewStore(StoreConfig{WaypointsFile: path, Log: &recLog{}})
			if r := s.AddWaypoint(wp(1, 0, ""), -1); !r.Success {
				t.Fatalf("first save: %+v", r)
			}
			if tt.name == "resetWaypoints" { // something to reset, saved
				_, _ = s.WaypointVisited(bg, 0)
			}
			// A regular file where the directory was: every save fails, even as root.
			if err := os.RemoveAll(filepath.Dir(path)); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Dir(path), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			r := tt.call(s)
			if r.Success || !strings.HasPrefix(r.Message, tt.msg+" in memory, but not saved: save waypoints "+path) {
				t.Errorf("reply %+v, want failure starting %q and the reason", r, tt.msg+" in memory, but not saved: ...")
			}
			if !tt.held(s) {
				t.Error("the change was not kept in memory")
			}
			// The directory is back: the next change writes everything.
			if err := os.Remove(filepath.Dir(path)); err != nil {
				t.Fatal(err)
			}
			if r := s.AddWaypoint(wp(9, 9, ""), -1); !r.Success {
				t.Fatalf("save after the fix: %+v", r)
			}
			if got := NewStore(StoreConfig{WaypointsFile: path}).Waypoints(); !reflect.DeepEqual(got, s.Waypoints()) {
				t.Errorf("file after the fix = %+v\nwant %+v", got, s.Waypoints())
			}
		})
	}
}
