package ros_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
)

// An action server runs each goal on its own goroutine, publishes feedback
// and stops when the goal is canceled.
func ExampleNewActionServer() {
	rc, err := ros.NewContext(ros.ContextOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rc.Close()
	node, err := rc.NewNode("navigator", "")
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = ros.NewActionServer(node, "navigate_to_pose", nav2_msgs_action.NavigateToPose,
		func(ctx context.Context, g *ros.ServerGoal[nav2_msgs_action.NavigateToPose_Goal, nav2_msgs_action.NavigateToPose_Feedback]) (*nav2_msgs_action.NavigateToPose_Result, error) {
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for remaining := float32(10); remaining > 0; remaining-- {
				if err := g.PublishFeedback(&nav2_msgs_action.NavigateToPose_Feedback{DistanceRemaining: remaining}); err != nil {
					return nil, err
				}
				select {
				case <-ctx.Done(): // canceled (or the node is closing)
					return &nav2_msgs_action.NavigateToPose_Result{}, ros.ErrGoalCanceled
				case <-tick.C:
				}
			}
			return &nav2_msgs_action.NavigateToPose_Result{}, nil
		}, ros.ActionServerOptions[nav2_msgs_action.NavigateToPose_Goal]{})
	if err != nil {
		fmt.Println(err)
	}
}

// An action client sends a goal, prints feedback and waits for the result.
func ExampleNewActionClient() {
	rc, err := ros.NewContext(ros.ContextOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rc.Close()
	node, err := rc.NewNode("commander", "")
	if err != nil {
		fmt.Println(err)
		return
	}
	cli, err := ros.NewActionClient(node, "/navigate_to_pose", nav2_msgs_action.NavigateToPose)
	if err != nil {
		fmt.Println(err)
		return
	}
	go func() { _ = rc.Spin(context.Background()) }() // feedback callbacks run on the node goroutine
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cli.WaitForServer(ctx); err != nil {
		fmt.Println(err)
		return
	}
	goal := &nav2_msgs_action.NavigateToPose_Goal{}
	goal.Pose.Header.FrameId = "map"
	goal.Pose.Pose.Position.X = 2
	res, status, err := cli.Execute(ctx, goal, func(f *nav2_msgs_action.NavigateToPose_Feedback) {
		fmt.Printf("%.1f m to go\n", f.DistanceRemaining)
	})
	fmt.Println(status, res, err)
}
