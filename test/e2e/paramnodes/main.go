// Command paramnodes is the peer process of the parameter and action tests
// in test/e2e (params_test.go, action_test.go). It runs one node, chosen by
// the first argument, until SIGINT/SIGTERM:
//
//	paramnodes params       node "param_node" declaring
//	                          rate   double, default 10.0, range 0..100
//	                          mode   string, default "slow"
//	                          ids    integer array, default [1]
//	                          limit  integer, default 10; a validator rejects
//	                                 values above 100 ("limit must not exceed 100")
//	                          frame  string, read-only, default "map"
//	                        and publishing every accepted change as
//	                        "name=value" on ~/changed (std_msgs/String).
//	paramnodes sim          node "sim_node" with a timer on its ROS clock
//	                        (period 1 s) that publishes the clock's time
//	                        in seconds on ~/tick (std_msgs/Float64); run it
//	                        with -p use_sim_time:=true to follow /clock.
//	paramnodes nav_server   node "nav_server": action navigate_to_pose
//	                        (nav2_msgs/action/NavigateToPose). Goals with
//	                        behavior_tree "reject" are rejected; "loop"
//	                        publishes feedback every 20 ms until canceled;
//	                        others publish three feedbacks and succeed
//	                        with error_msg = behavior_tree + "@" + the
//	                        server's instance (argument 2, default "a").
//
// A declaration error (bad --params-file, wrongly typed -p) ends the process
// with exit status 1 and the error on stderr. Further arguments
// (--ros-args ...) go to the ROS context; the domain comes from
// ROS_DOMAIN_ID.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "paramnodes:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: paramnodes params|nav_server [instance] [--ros-args ...]")
	}
	mode, rest := args[0], args[1:]
	parsed, err := ros.ParseArgs(rest)
	if err != nil {
		return err
	}
	plain := parsed.User // the arguments outside --ros-args
	rc, err := ros.NewContext(ros.ContextOptions{Args: rest})
	if err != nil {
		return err
	}
	defer rc.Close()
	switch mode {
	case "params":
		err = params(rc)
	case "sim":
		err = sim(rc)
	case "nav_server":
		instance := "a"
		if len(plain) > 0 {
			instance = plain[0]
		}
		err = navServer(rc, instance)
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		return err
	}
	return rc.Spin(context.Background())
}

func params(rc *ros.Context) error {
	n, err := rc.NewNode("param_node", "")
	if err != nil {
		return err
	}
	if _, err := ros.DeclareParam(n, "rate", 10.0, ros.ParamDescriptor{
		Description: "loop rate in Hz", FloatRange: &param.FloatRange{From: 0, To: 100},
	}); err != nil {
		return err
	}
	if _, err := ros.DeclareParam(n, "mode", "slow", ros.ParamDescriptor{}); err != nil {
		return err
	}
	if _, err := ros.DeclareParam(n, "ids", []int64{1}, ros.ParamDescriptor{}); err != nil {
		return err
	}
	if _, err := ros.DeclareParam(n, "limit", int64(10), ros.ParamDescriptor{}); err != nil {
		return err
	}
	if _, err := ros.DeclareParam(n, "frame", "map", ros.ParamDescriptor{ReadOnly: true}); err != nil {
		return err
	}
	n.OnSetParameters(func(ps []ros.Parameter) error {
		for _, p := range ps {
			if p.Name == "limit" && p.Value.Integer() > 100 {
				return errors.New("limit must not exceed 100")
			}
		}
		return nil
	})
	pub, err := ros.NewPublisher[std_msgs_msg.String](n, "~/changed", ros.QoSDefault.KeepLast(100))
	if err != nil {
		return err
	}
	n.OnParametersChanged(func(ps []ros.Parameter) {
		for _, p := range ps {
			n.Logger().Infof("parameter %s changed to %s", p.Name, p.Value)
			if err := pub.Publish(&std_msgs_msg.String{Data: p.Name + "=" + p.Value.String()}); err != nil {
				n.Logger().Errorf("publish: %v", err)
			}
		}
	})
	return nil
}

func sim(rc *ros.Context) error {
	n, err := rc.NewNode("sim_node", "")
	if err != nil {
		return err
	}
	pub, err := ros.NewPublisher[std_msgs_msg.Float64](n, "~/tick", ros.QoSDefault.KeepLast(100))
	if err != nil {
		return err
	}
	_, err = n.NewTimer(time.Second, func() {
		now := n.Clock().Now()
		if err := pub.Publish(&std_msgs_msg.Float64{Data: float64(now.UnixNano()) / 1e9}); err != nil {
			n.Logger().Errorf("publish: %v", err)
		}
	})
	return err
}

type (
	navGoal     = nav2_msgs_action.NavigateToPose_Goal
	navResult   = nav2_msgs_action.NavigateToPose_Result
	navFeedback = nav2_msgs_action.NavigateToPose_Feedback
)

func navServer(rc *ros.Context, instance string) error {
	n, err := rc.NewNode("nav_server", "")
	if err != nil {
		return err
	}
	_, err = ros.NewActionServer(n, "navigate_to_pose", nav2_msgs_action.NavigateToPose,
		func(ctx context.Context, g *ros.ServerGoal[navGoal, navFeedback]) (*navResult, error) {
			if g.Goal().BehaviorTree == "loop" {
				for i := 0; ; i++ {
					if err := g.PublishFeedback(&navFeedback{NumberOfRecoveries: int16(i)}); err != nil {
						return nil, err
					}
					select {
					case <-ctx.Done():
						return &navResult{ErrorMsg: "stopped@" + instance}, ros.ErrGoalCanceled
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
			for i := 3; i > 0; i-- {
				if err := g.PublishFeedback(&navFeedback{DistanceRemaining: float32(i)}); err != nil {
					return nil, err
				}
			}
			return &navResult{ErrorMsg: g.Goal().BehaviorTree + "@" + instance}, nil
		}, ros.ActionServerOptions[navGoal]{
			AcceptGoal: func(_ action.GoalID, g *navGoal) error {
				if g.BehaviorTree == "reject" {
					return errors.New("rejected on request")
				}
				return nil
			},
		})
	return err
}
