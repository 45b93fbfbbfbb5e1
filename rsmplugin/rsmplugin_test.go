package rsmplugin_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/rsm"
	"github.com/fsmnodes/fsmnodes/rsmplugin"
)

// pauseMapping is a mapping plugin written only against rsmplugin, as a
// state of another module would be: it waits a number of ticks, reports
// the exploration goal reached and asks for the next goal.
type pauseMapping struct {
	rsmplugin.Base
	ticks, left int
	status      rsmplugin.GoalState
}

func newPauseMapping(ticks int) *pauseMapping {
	return &pauseMapping{Base: rsmplugin.NewBase("E: Pause Mapping"), ticks: ticks, left: ticks, status: rsmplugin.GoalAborted}
}

func (s *pauseMapping) OnActive(context.Context) {
	if s.Leaving() {
		return
	}
	if s.left--; s.left > 0 {
		return
	}
	s.status = rsmplugin.GoalReached
	s.NextPlugin(rsmplugin.CalculateGoalPlugin, "")
}

func (s *pauseMapping) OnExit(ctx context.Context) {
	_, _ = s.SI().Store().NavigationGoalCompleted(ctx, rsmplugin.GoalStatus{Status: s.status}, false)
}

func (s *pauseMapping) OnExplorationStart(context.Context) rsmplugin.Reply {
	return rsmplugin.Reply{Message: "Exploration running"}
}

func (s *pauseMapping) OnExplorationStop(context.Context) rsmplugin.Reply {
	s.Next(rsmplugin.NewIdle())
	return rsmplugin.Reply{Success: true, Message: "Exploration stopped"}
}

func (s *pauseMapping) OnWaypointFollowingStart(context.Context) rsmplugin.Reply {
	return rsmplugin.Reply{Message: "Exploration running"}
}

func (s *pauseMapping) OnWaypointFollowingStop(context.Context) rsmplugin.Reply {
	return rsmplugin.Reply{Message: "Exploration running"}
}

func (s *pauseMapping) OnInterrupt(_ context.Context, i rsmplugin.Interrupt) { s.CommonInterrupt(i) }

type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

type booted struct{}

func (booted) BootUpFinished(context.Context) (rsm.Reply, error) {
	return rsm.Reply{Success: true}, nil
}

// TestPluginOfAnotherPackage runs the state above as the mapping plugin:
// registered by name, chosen by the mapping_plugin parameter, it runs for
// its ticks, reports the goal reached and hands over to calculate goal; an
// interrupt in it follows the common pattern.
func TestPluginOfAnotherPackage(t *testing.T) {
	ctx := context.Background()
	reg := rsmplugin.DefaultRegistry()
	if err := reg.Register("mypkg::PauseMappingState", func() rsmplugin.State { return newPauseMapping(3) }); err != nil {
		t.Fatal(err)
	}
	store := rsm.NewStore(rsm.StoreConfig{})
	var shown []string
	si, err := rsm.NewStateInterface(rsm.Config{MappingPlugin: "mypkg::PauseMappingState"}, rsm.Deps{
		Store: store, Boot: booted{}, Clock: &clock{time.Unix(0, 0)}, Registry: reg,
		OnStateChange: func(n string) { shown = append(shown, n) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := si.CheckPlugins(); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetNavigationGoal(ctx, rsm.NavigationGoal{Mode: rsm.NavigationExploration, WaypointPosition: -1}); err != nil {
		t.Fatal(err)
	}
	si.Start()
	si.Tick(ctx) // Boot → Idle
	si.Transition(si.Plugin(rsmplugin.MappingPlugin, ""))
	si.Tick(ctx) // Idle → E: Pause Mapping
	for i := 0; i < 3; i++ {
		si.Tick(ctx)
	}
	want := []string{"Boot", "Idle", "E: Pause Mapping", "E: Calculate Goal"}
	if fmt.Sprint(shown) != fmt.Sprint(want) {
		t.Fatalf("states %q, want %q", shown, want)
	}
	st := store.ExplorationGoalStatus()
	if st.Status != rsmplugin.GoalReached {
		t.Fatalf("exploration goal status %v, want REACHED", st.Status)
	}
	// An e-stop in the plugin state: Emergency Stop, the goal ABORTED.
	si.Transition(si.Plugin(rsmplugin.MappingPlugin, ""))
	si.Tick(ctx)
	if err := si.OnOperationMode(ctx, rsm.OperationMode{EmergencyStop: true}); err != nil {
		t.Fatal(err)
	}
	si.Tick(ctx)
	if si.StateName() != "Emergency Stop" || store.ExplorationGoalStatus().Status != rsmplugin.GoalAborted {
		t.Fatalf("after the e-stop: %q, status %v", si.StateName(), store.ExplorationGoalStatus().Status)
	}
}

// A state_interface executable of your own with an extra plugin state:
// select it with mapping_plugin:=mypkg::PauseMappingState.
func ExampleRunStateInterface() {
	err := rsmplugin.RunStateInterface(context.Background(), os.Args[1:], func(r *rsmplugin.Registry) error {
		return r.Register("mypkg::PauseMappingState", func() rsmplugin.State { return newPauseMapping(20) })
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "state_interface:", err)
		os.Exit(1)
	}
}

// goHome is a calculate-goal state served by its own node: it sends the
// robot to the origin once, then ends exploration.
type goHome struct {
	store rsmplugin.DataStore
	done  bool
}

func (g *goHome) RunState(ctx context.Context, req rsmplugin.RunRequest, show func(string)) (rsmplugin.RunResult, error) {
	if g.done {
		return rsmplugin.RunResult{NextState: rsmplugin.NextIdle, Reason: "home already"}, nil
	}
	show("E: Go Home")
	home := rsmplugin.NavigationGoal{Goal: rsmplugin.Pose{Orientation: rsmplugin.Quat{W: 1}}, Mode: rsmplugin.NavigationExploration, WaypointPosition: -1}
	if _, err := g.store.SetNavigationGoal(ctx, home); err != nil {
		return rsmplugin.RunResult{}, err
	}
	g.done = true
	return rsmplugin.RunResult{NextState: rsmplugin.NextNavigation, Reason: "going home"}, nil
}

// A plugin node in Go: state_interface selects it with
// calculate_goal_plugin:=action:go_home.
func ExampleServe() {
	err := rsmplugin.Serve(context.Background(), os.Args[1:], "go_home_plugin", "go_home",
		func(store rsmplugin.DataStore) (rsmplugin.StateServer, error) { return &goHome{store: store}, nil })
	if err != nil {
		fmt.Fprintln(os.Stderr, "go_home_plugin:", err)
		os.Exit(1)
	}
}

// A plugin node with parameters of its own: where home is, set with
// --ros-args -p "home:=[1.0, 2.0]" or a params file.
func ExampleServeNode() {
	err := rsmplugin.ServeNode(context.Background(), os.Args[1:], "go_home_plugin", "go_home",
		func(n *rsmplugin.Node) (rsmplugin.StateServer, error) {
			home := rsmplugin.Param(n, "home", []float64{0, 0}, "x, y of home in the map frame", func(xy []float64) error {
				if len(xy) != 2 {
					return fmt.Errorf("want [x, y], got %d values", len(xy))
				}
				return nil
			})
			n.Log().Infof("home is at (%g, %g)", home[0], home[1])
			return &goHome{store: n.Store()}, nil
		})
	if err != nil {
		fmt.Fprintln(os.Stderr, "go_home_plugin:", err)
		os.Exit(1)
	}
}
