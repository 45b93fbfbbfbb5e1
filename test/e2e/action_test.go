package e2e

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
)

type (
	navGoal     = nav2_msgs_action.NavigateToPose_Goal
	navResult   = nav2_msgs_action.NavigateToPose_Result
	navFeedback = nav2_msgs_action.NavigateToPose_Feedback
)

func navClient(t *testing.T, domain uint32) *ros.ActionClient[navGoal, navResult, navFeedback] {
	t.Helper()
	n, err := pnContext(t, domain).NewNode("nav_client", "")
	if err != nil {
		t.Fatal(err)
	}
	cli, err := ros.NewActionClient(n, "/navigate_to_pose", nav2_msgs_action.NavigateToPose)
	if err != nil {
		t.Fatal(err)
	}
	return cli
}

func TestAction_GoalFromAnotherProcess_FeedbackSuccessCancelReject(t *testing.T) {
	domainActions := testenv.Domain(t)
	startPeer(t, domainActions, "nav_server")
	cli := navClient(t, domainActions)
	ctx := pnWait(t)
	if err := cli.WaitForServer(ctx); err != nil {
		t.Fatal(err)
	}

	// Feedback, then success.
	var feedback atomic.Int32
	var lastDistance atomic.Value
	g, err := cli.SendGoal(ctx, &navGoal{BehaviorTree: "go"}, func(f *navFeedback) {
		feedback.Add(1)
		lastDistance.Store(f.DistanceRemaining)
	})
	if err != nil {
		t.Fatal(err)
	}
	res, st, err := g.Result(ctx)
	if err != nil || st != action.StatusSucceeded || res.ErrorMsg != "go@a" {
		t.Fatalf("Result = %+v, %v, %v; want SUCCEEDED with go@a", res, st, err)
	}
	pnWaitFor(t, ctx, "3 feedback messages", func() bool { return feedback.Load() >= 3 })
	if d := lastDistance.Load().(float32); d != 1 {
		t.Errorf("last feedback distance = %v, want 1", d)
	}
	if _, err := g.WaitForStatus(ctx, func(s action.Status) bool { return s == action.StatusSucceeded }); err != nil {
		t.Fatal(err)
	}

	// Canceled midway: wait for the goal's first feedback, then cancel.
	seen := make(chan struct{}, 100)
	g, err = cli.SendGoal(ctx, &navGoal{BehaviorTree: "loop"}, func(*navFeedback) { seen <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-seen:
	case <-ctx.Done():
		t.Fatal("no feedback from the running goal")
	}
	if st, err := g.WaitForStatus(ctx, func(s action.Status) bool { return s == action.StatusExecuting }); err != nil {
		t.Fatalf("status before cancel = %v, %v", st, err)
	}
	if err := g.Cancel(ctx); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	res, st, err = g.Result(ctx)
	if err != nil || st != action.StatusCanceled || res.ErrorMsg != "stopped@a" {
		t.Fatalf("canceled goal: %+v, %v, %v", res, st, err)
	}

	// Rejected.
	if _, err := cli.SendGoal(ctx, &navGoal{BehaviorTree: "reject"}, nil); !errors.Is(err, ros.ErrGoalRejected) {
		t.Fatalf("SendGoal(reject) = %v, want ErrGoalRejected", err)
	}
}

func TestAction_ClientOutlivesRestartedServer(t *testing.T) {
	domainActionRetry := testenv.Domain(t)
	first := startPeer(t, domainActionRetry, "nav_server", "a")
	cli := navClient(t, domainActionRetry)
	ctx := pnWait(t)
	if err := cli.WaitForServer(ctx); err != nil {
		t.Fatal(err)
	}
	res, st, err := cli.Execute(ctx, &navGoal{BehaviorTree: "one"}, nil)
	if err != nil || st != action.StatusSucceeded || res.ErrorMsg != "one@a" {
		t.Fatalf("first server: %+v, %v, %v", res, st, err)
	}
	first.stop()
	pnWaitFor(t, ctx, "the first server to disappear", func() bool { return !cli.ServerIsReady() })

	startPeer(t, domainActionRetry, "nav_server", "b")
	if err := cli.WaitForServer(ctx); err != nil {
		t.Fatal(err)
	}
	res, st, err = cli.Execute(ctx, &navGoal{BehaviorTree: "two"}, nil)
	if err != nil || st != action.StatusSucceeded || res.ErrorMsg != "two@b" {
		t.Fatalf("restarted server: %+v, %v, %v", res, st, err)
	}
}
