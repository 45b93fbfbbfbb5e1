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
	f := &frontierNode{n: n}
	f.minSize = int(param.Declare(d, "min_frontier_size", int64(5), param.Descriptor{
		Description: "smallest frontier, in cells, that becomes a goal (read-only: " + startupOnly + ")",
		ReadOnly:    true, ReadOnlyReason: startupOnly, IntegerRange: param.Ints(1, 1_000_000)}, nil))
	f.clearance = param.Declare(d, "clearance", 0.25, fixed("minimum distance of a goal from obstacles, m"), nil)
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
	var err error
	if f.watch, err = sim.NewGoalWatch(tol); err != nil {
		return fmt.Errorf("parameter %w", err)
	}
	f.failed = sim.FailedGoals{Max: int(maxFailed)}
	if err := f.advertise(); err != nil {
		return err
	}
	if err := subscribeMap(n, maxCells, func(g *sim.Grid) { f.grid = g }); err != nil {
		return err
	}
	if _, err := ros.NewSubscription(n, "rsm/explorationMode", ros.QoSDefault, func(m *std_msgs_msg.Bool) {
		f.watch.OnExplorationMode(m.Data)
	}); err != nil {
		return err
	}
	if _, err := ros.NewSubscription(n, "rsm/explorationGoalStatus", ros.QoSDefault, f.onGoalStatus); err != nil {
		return err
	}
	_, err = n.NewTimer(every, f.publish)
	return err
}

// frontierNode is frontier_detector's state; its callbacks run on the
// node's callback goroutine.
type frontierNode struct {
	n         *ros.Node
	minSize   int
	clearance float64
	watch     *sim.GoalWatch

	obsoletePub           *ros.Publisher[std_msgs_msg.Bool]
	goalsPub, failedPub   *ros.Publisher[geometry_msgs_msg.PoseArray]
	markerPub             *ros.Publisher[visualization_msgs_msg.MarkerArray]
	lastMarkers           []viz.Marker
	grid                  *sim.Grid // the last map; nil before the first
	failed                sim.FailedGoals
	failedFull, badStatus bool // said once until the list is cleared; in a run of goal statuses with a NaN/Inf goal
}

// advertise creates the publishers.
func (f *frontierNode) advertise() error {
	var err error
	if f.obsoletePub, err = ros.NewPublisher[std_msgs_msg.Bool](f.n, "rsm/goalObsolete", ros.QoSDefault); err != nil {
		return err
	}
	if f.goalsPub, err = ros.NewPublisher[geometry_msgs_msg.PoseArray](f.n, "rsm/explorationGoals", ros.QoSDefault); err != nil {
		return err
	}
	if f.failedPub, err = ros.NewPublisher[geometry_msgs_msg.PoseArray](f.n, "rsm/failedGoals", ros.QoSDefault); err != nil {
		return err
	}
	// explore_lite's topic for its frontier markers; kept for late joiners.
	f.markerPub, err = ros.NewPublisher[visualization_msgs_msg.MarkerArray](f.n, "explore/frontiers", ros.QoSLatched)
	return err
}

// onGoalStatus follows the exploration goal for the goal watch, and keeps
// the failed goals: FAILED appends the goal (refused and counted beyond
// max_failed_goals), REACHED clears the list.
func (f *frontierNode) onGoalStatus(m *rsm_msgs_msg.GoalStatus) {
	n := f.n
	err := f.watch.OnGoalStatus(sim.Point{X: m.Goal.Position.X, Y: m.Goal.Position.Y}, m.GoalStatus == rsm_msgs_msg.GoalStatus_ACTIVE)
	if err != nil {
		if !f.badStatus {
			n.Logger().Warnf("rsm/explorationGoalStatus: %v; goal ignored (said once until a good one arrives)", err)
		}
		f.badStatus = true
		return
	}
	f.badStatus = false
	switch m.GoalStatus {
	case rsm_msgs_msg.GoalStatus_REACHED:
		f.failed.Clear()
		f.failedFull = false
	case rsm_msgs_msg.GoalStatus_FAILED:
		if err := f.failed.Add(sim.Point{X: m.Goal.Position.X, Y: m.Goal.Position.Y}); err != nil {
			n.Counter(ros.CounterCommandsRejected).Inc()
			if !f.failedFull {
				n.Logger().Warnf("rsm/explorationGoalStatus: failed goal (%.2f, %.2f) refused: %v (said once until a goal is reached)",
					m.Goal.Position.X, m.Goal.Position.Y, err)
			}
			f.failedFull = true
		}
	}
}

// publish finds the frontiers of the last map and publishes the goal
// watch's verdict, the goals, the failed goals and (on change) the
// markers.
func (f *frontierNode) publish() {
	if f.grid == nil {
		return
	}
	n := f.n
	t := n.Clock().Now()
	goals := &geometry_msgs_msg.PoseArray{Header: header(t, sim.FrameMap)}
	frontiers := sim.FindFrontiers(f.grid, f.minSize, f.clearance)
	// Before the goals: a verdict on the previous goal then reaches
	// rsmNode while Calculate Goal (which ignores it) is still picking
	// the next goal from them.
	if publish, obsolete := f.watch.Obsolete(frontiers); publish {
		if err := f.obsoletePub.Publish(&std_msgs_msg.Bool{Data: obsolete}); err != nil {
			n.Logger().Warnf("publish rsm/goalObsolete: %v", err)
		}
	}
	for _, fr := range frontiers {
		goals.Poses = append(goals.Poses, geometry_msgs_msg.Pose{
			Position: geometry_msgs_msg.Point{X: fr.Goal.X, Y: fr.Goal.Y}, Orientation: yawQuat(0)})
	}
	failedPts := f.failed.Points()
	failedPoses := make([]geometry_msgs_msg.Pose, len(failedPts))
	for i, p := range failedPts {
		failedPoses[i] = geometry_msgs_msg.Pose{Position: geometry_msgs_msg.Point{X: p.X, Y: p.Y}, Orientation: yawQuat(0)}
	}
	if ms := sim.FrontierMarkers(sim.FrameMap, f.grid.Resolution, frontiers, failedPts); f.lastMarkers == nil || !reflect.DeepEqual(ms, f.lastMarkers) {
		if err := f.markerPub.Publish(viznode.MarkerArray(ms)); err != nil {
			n.Logger().Warnf("publish explore/frontiers: %v", err)
		} else {
			f.lastMarkers = ms
		}
	}
	_ = f.goalsPub.Publish(goals)
	_ = f.failedPub.Publish(&geometry_msgs_msg.PoseArray{Header: header(t, sim.FrameMap), Poses: failedPoses})
}
