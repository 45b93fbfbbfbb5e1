package ros

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
)

// TestAction_CancelAllAndAccessors: two running goals are both canceled by
// CancelAll; the server's goals see CancelRequested; the client goals carry
// their ids, acceptance stamps and statuses; both ends know the action's
// fully qualified name.
func TestAction_CancelAllAndAccessors(t *testing.T) {
	domain := testenv.Domain(t)
	srvNode := extNode(t, extContext(t, domain), "loop_server")
	cancelSeen := make(chan action.GoalID, 2)
	srv, err := NewActionServer(srvNode, "loops", nav2_msgs_action.NavigateToPose,
		func(ctx context.Context, g *ServerGoal[navGoal, navFeedback]) (*navResult, error) {
			for {
				if err := g.PublishFeedback(&navFeedback{}); err != nil {
					return nil, err
				}
				select {
				case <-ctx.Done():
					if g.CancelRequested() {
						cancelSeen <- g.ID()
					}
					return &navResult{ErrorMsg: "stopped"}, ErrGoalCanceled
				case <-time.After(10 * time.Millisecond):
				}
			}
		}, ActionServerOptions[navGoal]{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if srv.Name() != "/loops" {
		t.Errorf("server Name() = %q", srv.Name())
	}
	cli, err := NewActionClient(extNode(t, extContext(t, domain), "loop_client"), "loops", nav2_msgs_action.NavigateToPose)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if cli.Name() != "/loops" {
		t.Errorf("client Name() = %q", cli.Name())
	}
	ctx := waitCtx(t)
	if err := cli.WaitForServer(ctx); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	var goals []*ClientGoal[navGoal, navResult, navFeedback]
	for i := 0; i < 2; i++ {
		g, err := cli.SendGoal(ctx, &navGoal{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if g.ID() == (action.GoalID{}) {
			t.Fatal("goal without id")
		}
		if d := g.Accepted().Sub(sent); d < -time.Second || d > time.Minute {
			t.Errorf("acceptance stamp %v is %v from the send", g.Accepted(), d)
		}
		goals = append(goals, g)
	}
	if goals[0].ID() == goals[1].ID() {
		t.Fatal("two goals share an id")
	}
	for _, g := range goals {
		if _, err := g.WaitForStatus(ctx, func(s action.Status) bool { return s == action.StatusExecuting }); err != nil {
			t.Fatalf("goal never executing: %v (status %v)", err, g.Status())
		}
	}
	canceling, err := cli.CancelAll(ctx, time.Time{})
	if err != nil {
		t.Fatalf("CancelAll: %v", err)
	}
	want := []string{goals[0].ID().String(), goals[1].ID().String()}
	var got []string
	for _, id := range canceling {
		got = append(got, id.String())
	}
	sort.Strings(want)
	sort.Strings(got)
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("CancelAll canceled %v, want %v", got, want)
	}
	for _, g := range goals {
		if _, st, err := g.Result(ctx); err != nil || st != action.StatusCanceled || g.Status() != action.StatusCanceled {
			t.Fatalf("goal %v: %v, %v (Status %v)", g.ID(), st, err, g.Status())
		}
	}
	for i := 0; i < 2; i++ {
		select {
		case <-cancelSeen:
		case <-ctx.Done():
			t.Fatal("the server's goals never saw CancelRequested")
		}
	}
}
