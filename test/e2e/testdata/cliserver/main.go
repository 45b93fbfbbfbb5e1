// Command cliserver is the peer process of the CLI and launcher tests in
// test/e2e: one node (default /cli_test/cli_peer; --ros-args remaps apply)
// that serves ~/../set_bool as std_srvs/srv/SetBool (answers
// success=data, message "got <data>"), publishes std_msgs/String "ready"
// on the latched topic "status", declares the parameter "rate" (integer,
// default 10, range 1..100) and serves the action "navigate_to_pose"
// (nav2_msgs/action/NavigateToPose: one feedback with distance_remaining =
// goal x, then success with error_msg "reached <frame_id>"; goals with a
// negative x are rejected, goals with frame_id "slow" run until canceled).
// With $CLISERVER_PID_DIR set it writes its pid into that directory so
// tests can check it is gone after a launch.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cliserver:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if dir := os.Getenv("CLISERVER_PID_DIR"); dir != "" {
		pid := strconv.Itoa(os.Getpid())
		if err := os.WriteFile(filepath.Join(dir, "pid-"+pid), []byte(pid), 0o644); err != nil {
			return err
		}
	}
	rc, err := ros.NewContext(ros.ContextOptions{Args: args})
	if err != nil {
		return err
	}
	defer rc.Close()
	node, err := rc.NewNode("cli_peer", "/cli_test")
	if err != nil {
		return err
	}
	_, err = ros.NewService(node, "set_bool", std_srvs_srv.SetBool,
		func(_ context.Context, req *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
			return &std_srvs_srv.SetBool_Response{Success: req.Data, Message: fmt.Sprintf("got %v", req.Data)}, nil
		})
	if err != nil {
		return err
	}
	if _, err := node.DeclareParameter("rate", int64(10), ros.ParamDescriptor{
		Description: "test rate", IntegerRange: &param.IntegerRange{From: 1, To: 100}}); err != nil {
		return err
	}
	if err := serveAction(node); err != nil {
		return err
	}
	pub, err := ros.NewPublisher[std_msgs_msg.String](node, "status", ros.QoSLatched)
	if err != nil {
		return err
	}
	if err := pub.Publish(&std_msgs_msg.String{Data: "ready"}); err != nil {
		return err
	}
	fmt.Println("cliserver ready")
	return rc.Spin(context.Background())
}

type (
	navGoal     = nav2_msgs_action.NavigateToPose_Goal
	navResult   = nav2_msgs_action.NavigateToPose_Result
	navFeedback = nav2_msgs_action.NavigateToPose_Feedback
)

func serveAction(node *ros.Node) error {
	_, err := ros.NewActionServer(node, "navigate_to_pose", nav2_msgs_action.NavigateToPose,
		func(ctx context.Context, g *ros.ServerGoal[navGoal, navFeedback]) (*navResult, error) {
			goal := g.Goal()
			if err := g.PublishFeedback(&navFeedback{DistanceRemaining: float32(goal.Pose.Pose.Position.X)}); err != nil {
				return nil, err
			}
			if goal.Pose.Header.FrameId == "slow" {
				<-ctx.Done()
				return nil, ros.ErrGoalCanceled
			}
			return &navResult{ErrorMsg: "reached " + goal.Pose.Header.FrameId}, nil
		},
		ros.ActionServerOptions[navGoal]{AcceptGoal: func(_ action.GoalID, g *navGoal) error {
			if g.Pose.Pose.Position.X < 0 {
				return errors.New("negative x")
			}
			return nil
		}})
	return err
}
