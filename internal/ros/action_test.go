package ros

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

type (
	navGoal     = nav2_msgs_action.NavigateToPose_Goal
	navResult   = nav2_msgs_action.NavigateToPose_Result
	navFeedback = nav2_msgs_action.NavigateToPose_Feedback
)

// testNavServer serves "navigate_to_pose": behavior_tree "reject" is
// rejected; "abort" aborts; "loop" publishes feedback until canceled;
// "gated" publishes three feedbacks and succeeds once gate is closed;
// anything else publishes three feedbacks and succeeds with error_msg =
// behavior_tree.
func testNavServer(t *testing.T, n *Node, started chan<- action.GoalID, gate <-chan struct{}) *ActionServer[navGoal, navResult, navFeedback] {
	t.Helper()
	srv, err := NewActionServer(n, "navigate_to_pose", nav2_msgs_action.NavigateToPose,
		func(ctx context.Context, g *ServerGoal[navGoal, navFeedback]) (*navResult, error) {
			if started != nil {
				started <- g.ID()
			}
			switch g.Goal().BehaviorTree {
			case "abort":
				return &navResult{ErrorCode: 7, ErrorMsg: "cannot"}, errors.New("planned abort")
			case "loop":
				for i := 0; ; i++ {
					if err := g.PublishFeedback(&navFeedback{NumberOfRecoveries: int16(i)}); err != nil {
						return nil, err
					}
					select {
					case <-ctx.Done():
						return &navResult{ErrorMsg: "stopped"}, ErrGoalCanceled
					case <-time.After(10 * time.Millisecond):
					}
				}
			}
			for i := 3; i > 0; i-- {
				if err := g.PublishFeedback(&navFeedback{DistanceRemaining: float32(i)}); err != nil {
					return nil, err
				}
			}
			if g.Goal().BehaviorTree == "gated" {
				select {
				case <-gate:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return &navResult{ErrorMsg: g.Goal().BehaviorTree}, nil
		}, ActionServerOptions[navGoal]{
			AcceptGoal: func(_ action.GoalID, g *navGoal) error {
				if g.BehaviorTree == "reject" {
					return errors.New("rejected on request")
				}
				return nil
			},
			ResultRetention: time.Minute,
		})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func newNavClient(t *testing.T, n *Node) *ActionClient[navGoal, navResult, navFeedback] {
	t.Helper()
	cli, err := NewActionClient(n, "/navigate_to_pose", nav2_msgs_action.NavigateToPose)
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.WaitForServer(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	return cli
}

func TestAction_SucceedRejectAbortCancel(t *testing.T) {
	domainAction := testenv.Domain(t)
	srvNode := extNode(t, extContext(t, domainAction), "nav_server")
	started := make(chan action.GoalID, 8)
	gate := make(chan struct{})
	srv := testNavServer(t, srvNode, started, gate)
	cli := newNavClient(t, extNode(t, extContext(t, domainAction), "nav_client"))
	ctx := waitCtx(t)

	// Success with feedback: the goal finishes only after the client has
	// seen its three feedback messages.
	var fb atomic.Int32
	g, err := cli.SendGoal(ctx, &navGoal{BehaviorTree: "gated"}, func(f *navFeedback) {
		if fb.Add(1) == 3 {
			close(gate)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	res, st, err := g.Result(ctx)
	if err != nil || st != action.StatusSucceeded || res.ErrorMsg != "gated" || fb.Load() != 3 {
		t.Fatalf("Result = %+v, %v, %v after %d feedbacks", res, st, err, fb.Load())
	}
	if _, err := g.WaitForStatus(ctx, func(s action.Status) bool { return s == action.StatusSucceeded }); err != nil {
		t.Fatal(err)
	}
	// The result stays available.
	if res, st, err := g.Result(ctx); err != nil || st != action.StatusSucceeded || res.ErrorMsg != "gated" {
		t.Fatalf("second Result = %+v, %v, %v", res, st, err)
	}

	// Rejected.
	if _, err := cli.SendGoal(ctx, &navGoal{BehaviorTree: "reject"}, nil); !errors.Is(err, ErrGoalRejected) {
		t.Fatalf("SendGoal(reject) = %v", err)
	}

	// Aborted: the result still carries the execute function's values.
	res, st, err = cli.Execute(ctx, &navGoal{BehaviorTree: "abort"}, nil)
	if err != nil || st != action.StatusAborted || res.ErrorCode != 7 {
		t.Fatalf("abort: %+v, %v, %v", res, st, err)
	}

	// Canceled midway.
	for len(started) > 0 {
		<-started
	}
	seen := make(chan struct{}, 100)
	g, err = cli.SendGoal(ctx, &navGoal{BehaviorTree: "loop"}, func(*navFeedback) { seen <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-seen:
	case <-ctx.Done():
		t.Fatal("no feedback from the looping goal")
	}
	if err := g.Cancel(ctx); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	res, st, err = g.Result(ctx)
	if err != nil || st != action.StatusCanceled || res.ErrorMsg != "stopped" {
		t.Fatalf("canceled goal: %+v, %v, %v", res, st, err)
	}
	if err := g.Cancel(ctx); !errors.Is(err, ErrGoalTerminated) {
		t.Fatalf("second Cancel = %v, want ErrGoalTerminated", err)
	}
	infos := srv.Goals()
	if len(infos) != 3 {
		t.Fatalf("server tracks %d goals, want 3: %+v", len(infos), infos)
	}
}

func TestAction_UnknownGoalAndZeroDescriptors(t *testing.T) {
	domainAction := testenv.Domain(t)
	srvNode := extNode(t, extContext(t, domainAction), "nav_server2")
	testNavServer(t, srvNode, nil, nil)
	cli, err := NewActionClient(srvNode, "navigate_to_pose", nav2_msgs_action.NavigateToPose)
	if err != nil {
		t.Fatal(err)
	}
	ctx := waitCtx(t)
	if err := cli.WaitForServer(ctx); err != nil {
		t.Fatal(err)
	}
	ghost := &ClientGoal[navGoal, navResult, navFeedback]{c: cli, id: action.GoalID{9}}
	if _, st, err := ghost.Result(ctx); !errors.Is(err, ErrUnknownGoal) || st != action.StatusUnknown {
		t.Fatalf("Result of an unknown goal = %v, %v", st, err)
	}
	if err := ghost.Cancel(ctx); !errors.Is(err, ErrUnknownGoal) {
		t.Fatalf("Cancel of an unknown goal = %v", err)
	}
	// The descriptors carry the types statically; only a zero descriptor
	// (no generated type behind it) can still go wrong, and is refused.
	if _, err := NewActionClient(srvNode, "x", rosidl.Action[navGoal, navResult, navFeedback]{}); err == nil ||
		!strings.Contains(err.Error(), "zero descriptor") {
		t.Errorf("action client of a zero descriptor: %v", err)
	}
	if _, err := NewActionServer(srvNode, "x", rosidl.Action[navGoal, navResult, navFeedback]{},
		func(context.Context, *ServerGoal[navGoal, navFeedback]) (*navResult, error) { return nil, nil },
		ActionServerOptions[navGoal]{}); err == nil || !strings.Contains(err.Error(), "zero descriptor") {
		t.Errorf("action server of a zero descriptor: %v", err)
	}
	var zeroSrv rosidl.Service[std_srvs_srv.Trigger_Request, std_srvs_srv.Trigger_Response]
	if _, err := NewClient(srvNode, "x", zeroSrv); err == nil || !strings.Contains(err.Error(), "zero descriptor") {
		t.Errorf("client of a zero descriptor: %v", err)
	}
	if _, err := NewService(srvNode, "x", zeroSrv,
		func(context.Context, *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
			return nil, nil
		}); err == nil ||
		!strings.Contains(err.Error(), "zero descriptor") {
		t.Errorf("service of a zero descriptor: %v", err)
	}
}

func TestAction_ResultRetentionExpires(t *testing.T) {
	domainAction := testenv.Domain(t)
	n := extNode(t, extContext(t, domainAction), "retention_node")
	srv, err := NewActionServer(n, "short_memory", nav2_msgs_action.NavigateToPose,
		func(ctx context.Context, g *ServerGoal[navGoal, navFeedback]) (*navResult, error) {
			return &navResult{ErrorMsg: "done"}, nil
		}, ActionServerOptions[navGoal]{ResultRetention: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cli, err := NewActionClient(n, "short_memory", nav2_msgs_action.NavigateToPose)
	if err != nil {
		t.Fatal(err)
	}
	ctx := waitCtx(t)
	if err := cli.WaitForServer(ctx); err != nil {
		t.Fatal(err)
	}
	g, err := cli.SendGoal(ctx, &navGoal{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, st, err := g.Result(ctx); err != nil || st != action.StatusSucceeded || res.ErrorMsg != "done" {
		t.Fatalf("Result = %+v, %v, %v", res, st, err)
	}
	// Poll until the retained result is dropped; the deadline is a failure.
	for {
		_, _, err := g.Result(ctx)
		if errors.Is(err, ErrUnknownGoal) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("result still retained: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(srv.Goals()) != 0 {
		t.Fatalf("server still tracks %+v", srv.Goals())
	}
}

// TestAction_FirstFeedbackWaitsForTheClientsReader: a goal's first
// feedback, sent as soon as the goal starts, reaches a client whose
// feedback reader was created only after the goal was accepted (as a
// client's reader may still be undiscovered then): the server holds the
// first feedback until its feedback writer matched a reader of the
// participant that sent the goal. Before, the feedback went out at once
// on the volatile topic and was lost (ros2 action send_goal printed 3 of
// 4 feedback messages in CI).
func TestAction_FirstFeedbackWaitsForTheClientsReader(t *testing.T) {
	domain := testenv.Domain(t)
	srvNode := mustNode(t, newTestContext(t, domain), "fb_server", "")
	_, err := NewActionServer(srvNode, "navigate_to_pose", nav2_msgs_action.NavigateToPose,
		func(ctx context.Context, g *ServerGoal[navGoal, navFeedback]) (*navResult, error) {
			if err := g.PublishFeedback(&navFeedback{NumberOfRecoveries: 1}); err != nil {
				return nil, err
			}
			<-ctx.Done()
			return nil, ctx.Err()
		}, ActionServerOptions[navGoal]{})
	if err != nil {
		t.Fatal(err)
	}
	// The client, in a participant of its own, has only the send_goal
	// service at first.
	cliNode := mustNode(t, newTestContext(t, domain), "fb_client", "")
	sendGoal, err := NewClient(cliNode, "/navigate_to_pose/_action/send_goal", nav2_msgs_action.NavigateToPose_SendGoal)
	if err != nil {
		t.Fatal(err)
	}
	if err := sendGoal.WaitForService(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	req := &nav2_msgs_action.NavigateToPose_SendGoal_Request{}
	req.GoalId.Uuid = [16]byte{1, 2, 3}
	resp, err := sendGoal.Call(waitCtx(t), req)
	if err != nil || !resp.Accepted {
		t.Fatalf("send_goal: %+v %v", resp, err)
	}
	// Now the feedback reader.
	got := make(chan *nav2_msgs_action.NavigateToPose_FeedbackMessage, 1)
	if _, err := NewSubscription(cliNode, "/navigate_to_pose/_action/feedback", QoSDefault,
		func(m *nav2_msgs_action.NavigateToPose_FeedbackMessage) {
			select {
			case got <- m:
			default:
			}
		}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if m.GoalId.Uuid != req.GoalId.Uuid || m.Feedback.NumberOfRecoveries != 1 {
			t.Errorf("feedback %+v, want goal %x with number_of_recoveries 1", m, req.GoalId.Uuid)
		}
	case <-time.After(3 * feedbackMatchTimeout):
		t.Fatal("the first feedback never reached the client's reader")
	}
}
