// The modes test/ros2 runs beside real ROS 2 (rclcpp, rclpy, the ros2 CLI).

package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	example_interfaces_action "github.com/fsmnodes/fsmnodes/msgs/example_interfaces/action"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// oursTalker is the mode ours_talker.
func oursTalker(rc *ros.Context) error {
	n, err := rc.NewNode("ours_talker", "")
	if err != nil {
		return err
	}
	pub, err := ros.NewPublisher[std_msgs_msg.String](n, "/ours/chatter", ros.QoSDefault)
	if err != nil {
		return err
	}
	count := 0
	if _, err := n.NewTimer(100*time.Millisecond, func() {
		count++
		if err := pub.Publish(&std_msgs_msg.String{Data: fmt.Sprintf("ours %d", count)}); err != nil {
			n.Logger().Errorf("publish: %v", err)
		}
	}); err != nil {
		return err
	}
	latched, err := ros.NewPublisher[std_msgs_msg.String](n, "/ours/latched", ros.QoSLatched)
	if err != nil {
		return err
	}
	if err := latched.Publish(&std_msgs_msg.String{Data: "latched from ours"}); err != nil {
		return err
	}
	if _, err := ros.NewSubscription(n, "/ours/to_ours", ros.QoSDefault, func(m *std_msgs_msg.String) {
		fmt.Println("got: " + m.Data)
		n.Logger().Infof("got: %s", m.Data)
		n.Logger().Warnf("warned: %s", m.Data)
	}); err != nil {
		return err
	}
	return nil
}

type (
	fibGoal     = example_interfaces_action.Fibonacci_Goal
	fibResult   = example_interfaces_action.Fibonacci_Result
	fibFeedback = example_interfaces_action.Fibonacci_Feedback
)

// oursServer is the mode ours_server.
func oursServer(rc *ros.Context, introspection bool) error {
	n, err := rc.NewNode("ours_server", "")
	if err != nil {
		return err
	}
	if introspection {
		if err := n.DeclareIntrospectionParameters(); err != nil {
			return err
		}
	}
	if _, err := ros.NewService(n, "~/set", std_srvs_srv.SetBool, func(_ context.Context, req *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
		fmt.Printf("set %v\n", req.Data)
		return &std_srvs_srv.SetBool_Response{Success: req.Data, Message: fmt.Sprintf("set %v", req.Data)}, nil
	}); err != nil {
		return err
	}
	count := 0
	if _, err := ros.NewService(n, "~/trigger", std_srvs_srv.Trigger, func(_ context.Context, _ *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
		count++ // callbacks of one node never run concurrently
		return &std_srvs_srv.Trigger_Response{Success: true, Message: fmt.Sprintf("triggered %d", count)}, nil
	}); err != nil {
		return err
	}
	for _, p := range []struct {
		name string
		def  any
		d    ros.ParamDescriptor
	}{
		{"speed", 1.5, ros.ParamDescriptor{Description: "metres per second",
			FloatRange: &param.FloatRange{From: 0, To: 10}}},
		{"label", "ours", ros.ParamDescriptor{Description: "a name"}},
		{"enabled", true, ros.ParamDescriptor{}},
		{"limit", int64(7), ros.ParamDescriptor{ReadOnly: true}},
	} {
		if _, err := n.DeclareParameter(p.name, p.def, p.d); err != nil {
			return err
		}
	}
	_, err = ros.NewActionServer(n, "~/fibonacci", example_interfaces_action.Fibonacci,
		func(ctx context.Context, g *ros.ServerGoal[fibGoal, fibFeedback]) (*fibResult, error) {
			seq := []int32{0, 1}
			for i := 1; i < int(g.Goal().Order); i++ {
				seq = append(seq, seq[i]+seq[i-1])
				if err := g.PublishFeedback(&fibFeedback{Sequence: append([]int32(nil), seq...)}); err != nil {
					return nil, err
				}
				select {
				case <-ctx.Done():
					fmt.Println("fibonacci canceled")
					return &fibResult{Sequence: seq}, ros.ErrGoalCanceled
				case <-time.After(100 * time.Millisecond):
				}
			}
			fmt.Println("fibonacci succeeded")
			return &fibResult{Sequence: seq}, nil
		},
		ros.ActionServerOptions[fibGoal]{AcceptGoal: func(_ action.GoalID, g *fibGoal) error {
			fmt.Printf("fibonacci goal %d\n", g.Order)
			if g.Order < 0 {
				return errors.New("negative order")
			}
			return nil
		}})
	return err
}
