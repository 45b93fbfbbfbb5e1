package simnode

import (
	"context"
	"fmt"
	"reflect"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/sim"
	"github.com/fsmnodes/fsmnodes/internal/viz"
	"github.com/fsmnodes/fsmnodes/internal/viz/viznode"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	visualization_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/visualization_msgs/msg"
)

// FrontierNodeName is the default name of the frontier detector.
const FrontierNodeName = "frontier_detector"

// SetupFrontier turns n into the exploration helper of RSM's additions:
// it finds frontiers in /map and publishes one goal per frontier on
// rsm/explorationGoals (geometry_msgs/PoseArray, frame map), and keeps the
// list of failed goals from rsm/explorationGoalStatus (FAILED appends the
// goal, REACHED clears the list, as the original additions node does) on
// /rsm/failedGoals. An empty goal array means exploration is complete. For
// RViz it draws the frontiers (cells, goals, failed goals) on
// explore/frontiers (visualization_msgs/MarkerArray, explore_lite's topic,
// transient local), whenever they change.
//
// In the Interrupt exploration mode (rsm/explorationMode true) it also
// publishes rsm/goalObsolete (std_msgs/Bool) with every goal update: true
// once no frontier cell is within exploration_goal_tolerance (m, in x and
// in y) of the exploration goal being driven to (rsm/explorationGoalStatus
// ACTIVE), so RSM's Navigation state gives the explored goal up and
// re-plans (sim.GoalWatch).
func SetupFrontier(_ context.Context, n *ros.Node) error {
	d := ros.NewDeclarer(n)
	minSize := param.Declare(d, "min_frontier_size", int64(5), param.Descriptor{
		Description: "smallest frontier, in cells, that becomes a goal (read-only: " + startupOnly + ")",
		ReadOnly:    true, ReadOnlyReason: startupOnly, IntegerRange: param.Ints(1, 1_000_000)}, nil)
	clearance := param.Declare(d, "clearance", 0.25, fixed("minimum distance of a goal from obstacles, m"), nil)
	every := rate(d, "rate", 1, "goal publications per second")
	maxCells := declareMapLimit(d)
	maxFailed := param.Declare(d, "max_failed_goals", int64(sim.DefaultMaxFailedGoals), param.Descriptor{
		Description: "most failed exploration goals kept and republished on rsm/failedGoals; a further one is refused and counted as " +
			ros.CounterCommandsRejected + " (read-only: " + startupOnly + ")",
		ReadOnly: true, ReadOnlyReason: startupOnly, IntegerRange: param.Ints(1, 100_000)}, nil)
	tol := param.Declare(d, "exploration_goal_tolerance", sim.DefaultGoalTolerance,
		fixed("m, in x and in y: an exploration goal with no frontier cell this close counts as explored (rsm/goalObsolete)"), nil)
	if err := d.Err(); err != nil {
		return err
	}
	watch, err := sim.NewGoalWatch(tol)
	if err != nil {
		return fmt.Errorf("parameter %w", err)
	}
	obsoletePub, err := ros.NewPublisher[std_msgs_msg.Bool](n, "rsm/goalObsolete", ros.QoSDefault)
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
	// explore_lite's topic for its frontier markers; kept for late joiners.
	markerPub, err := ros.NewPublisher[visualization_msgs_msg.MarkerArray](n, "explore/frontiers", ros.QoSLatched)
	if err != nil {
		return err
	}
	var lastMarkers []viz.Marker
	var grid *sim.Grid
	failed := sim.FailedGoals{Max: int(maxFailed)}
	var failedFull bool // said once until the list is cleared
	if err := subscribeMap(n, maxCells, func(g *sim.Grid) { grid = g }); err != nil {
		return err
	}
	if _, err := ros.NewSubscription(n, "rsm/explorationMode", ros.QoSDefault, func(m *std_msgs_msg.Bool) {
		watch.OnExplorationMode(m.Data)
	}); err != nil {
		return err
	}
	var badStatus bool // in a run of goal statuses with a NaN/Inf goal
	if _, err := ros.NewSubscription(n, "rsm/explorationGoalStatus", ros.QoSDefault, func(m *rsm_msgs_msg.GoalStatus) {
		err := watch.OnGoalStatus(sim.Point{X: m.Goal.Position.X, Y: m.Goal.Position.Y}, m.GoalStatus == rsm_msgs_msg.GoalStatus_ACTIVE)
		if err != nil {
			if !badStatus {
				n.Logger().Warnf("rsm/explorationGoalStatus: %v; goal ignored (said once until a good one arrives)", err)
			}
			badStatus = true
			return
		}
		badStatus = false
		switch m.GoalStatus {
		case rsm_msgs_msg.GoalStatus_REACHED:
			failed.Clear()
			failedFull = false
		case rsm_msgs_msg.GoalStatus_FAILED:
			if err := failed.Add(sim.Point{X: m.Goal.Position.X, Y: m.Goal.Position.Y}); err != nil {
				n.Counter(ros.CounterCommandsRejected).Inc()
				if !failedFull {
					n.Logger().Warnf("rsm/explorationGoalStatus: failed goal (%.2f, %.2f) refused: %v (said once until a goal is reached)",
						m.Goal.Position.X, m.Goal.Position.Y, err)
				}
				failedFull = true
			}
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
		frontiers := sim.FindFrontiers(grid, int(minSize), clearance)
		// Before the goals: a verdict on the previous goal then reaches
		// rsmNode while Calculate Goal (which ignores it) is still picking
		// the next goal from them.
		if publish, obsolete := watch.Obsolete(frontiers); publish {
			if err := obsoletePub.Publish(&std_msgs_msg.Bool{Data: obsolete}); err != nil {
				n.Logger().Warnf("publish rsm/goalObsolete: %v", err)
			}
		}
		for _, f := range frontiers {
			goals.Poses = append(goals.Poses, geometry_msgs_msg.Pose{
				Position: geometry_msgs_msg.Point{X: f.Goal.X, Y: f.Goal.Y}, Orientation: yawQuat(0)})
		}
		failedPts := failed.Points()
		failedPoses := make([]geometry_msgs_msg.Pose, len(failedPts))
		for i, f := range failedPts {
			failedPoses[i] = geometry_msgs_msg.Pose{Position: geometry_msgs_msg.Point{X: f.X, Y: f.Y}, Orientation: yawQuat(0)}
		}
		if ms := sim.FrontierMarkers(sim.FrameMap, grid.Resolution, frontiers, failedPts); lastMarkers == nil || !reflect.DeepEqual(ms, lastMarkers) {
			if err := markerPub.Publish(viznode.MarkerArray(ms)); err != nil {
				n.Logger().Warnf("publish explore/frontiers: %v", err)
			} else {
				lastMarkers = ms
			}
		}
		_ = goalsPub.Publish(goals)
		_ = failedPub.Publish(&geometry_msgs_msg.PoseArray{Header: header(t, sim.FrameMap), Poses: failedPoses})
	})
	return err
}
