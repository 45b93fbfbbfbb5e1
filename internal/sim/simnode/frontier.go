package simnode

import (
	"context"
	"math"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/sim"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
)

// FrontierNodeName is the default name of the frontier detector.
const FrontierNodeName = "frontier_detector"

// SetupFrontier turns n into the exploration helper of RSM's additions:
// it finds frontiers in /map and publishes one goal per frontier on
// rsm/explorationGoals (geometry_msgs/PoseArray, frame map), and keeps the
// list of failed goals from rsm/explorationGoalStatus (FAILED appends the
// goal, REACHED clears the list, as the original additions node does) on
// /rsm/failedGoals. An empty goal array means exploration is complete.
func SetupFrontier(_ context.Context, n *ros.Node) error {
	minSize, err := ros.DeclareParam(n, "min_frontier_size", int64(5), ros.ParamDescriptor{
		Description: "smallest frontier, in cells, that becomes a goal", ReadOnly: true, AdditionalConstraints: startupOnly})
	if err != nil {
		return err
	}
	clearance, err := declareFloat(n, "clearance", 0.25, "minimum distance of a goal from obstacles, m")
	if err != nil {
		return err
	}
	hz, err := declareFloat(n, "rate", 1, "goal publications per second")
	if err != nil {
		return err
	}
	every, err := period(hz, "rate")
	if err != nil {
		return err
	}
	goalsPub, err := ros.NewPublisher[geometry_msgs_msg.PoseArray](n, "rsm/explorationGoals", ros.QoSDefault)
	if err != nil {
		return err
	}
	failedPub, err := ros.NewPublisher[geometry_msgs_msg.PoseArray](n, "rsm/failedGoals", ros.QoSDefault)
	if err != nil {
		return err
	}
	var grid *sim.Grid
	var failed []geometry_msgs_msg.Pose
	if _, err := ros.NewSubscription(n, sim.TopicMap, ros.QoSLatched, func(m *nav_msgs_msg.OccupancyGrid) {
		g, err := gridFromMsg(m)
		if err != nil {
			n.Logger().Warnf("ignoring /map: %v", err)
			return
		}
		grid = g
	}); err != nil {
		return err
	}
	if _, err := ros.NewSubscription(n, "rsm/explorationGoalStatus", ros.QoSDefault, func(m *rsm_msgs_msg.GoalStatus) {
		switch m.GoalStatus {
		case rsm_msgs_msg.GoalStatus_REACHED:
			failed = failed[:0]
		case rsm_msgs_msg.GoalStatus_FAILED:
			for _, f := range failed {
				if math.Hypot(f.Position.X-m.Goal.Position.X, f.Position.Y-m.Goal.Position.Y) < 1e-3 {
					return
				}
			}
			failed = append(failed, m.Goal)
		}
	}); err != nil {
		return err
	}
	_, err = n.NewTimer(every, func() {
		if grid == nil {
			return
		}
		t := n.Clock().Now()
		goals := &geometry_msgs_msg.PoseArray{Header: header(t, sim.FrameMap)}
		for _, f := range sim.FindFrontiers(grid, int(minSize), clearance) {
			goals.Poses = append(goals.Poses, geometry_msgs_msg.Pose{
				Position: geometry_msgs_msg.Point{X: f.Goal.X, Y: f.Goal.Y}, Orientation: yawQuat(0)})
		}
		_ = goalsPub.Publish(goals)
		_ = failedPub.Publish(&geometry_msgs_msg.PoseArray{Header: header(t, sim.FrameMap),
			Poses: append([]geometry_msgs_msg.Pose(nil), failed...)})
	})
	return err
}
