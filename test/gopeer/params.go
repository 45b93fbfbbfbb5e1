package main

import (
	"context"
	"errors"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

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
