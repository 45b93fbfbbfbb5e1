package simnode

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/cmdvel/cmdvelnode"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/sim"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// NavigatorNodeName is the default name of the navigator node.
const NavigatorNodeName = "navigator"

type (
	navGoal     = nav2_msgs_action.NavigateToPose_Goal
	navResult   = nav2_msgs_action.NavigateToPose_Result
	navFeedback = nav2_msgs_action.NavigateToPose_Feedback
)

// navigator is the state shared by the action goroutines and the node's
// subscriptions.
type navigator struct {
	n       *ros.Node
	cmdPub  *cmdvelnode.Publisher
	planPub *ros.Publisher[nav_msgs_msg.Path]
	rate    time.Duration

	mu       sync.Mutex
	grid     *sim.Grid
	pose     sim.Pose2D
	poseAt   time.Time          // when pose was received (zero: never)
	active   context.CancelFunc // the goal being executed, if any
	activeID action.GoalID
	limits   *param.Group[cmdvel.Limits] // max_linear_velocity, max_angular_velocity (live)
}

// SetupNavigator turns n into a small stand-in for Nav2: it serves
// navigate_to_pose (and navigate_to_pose_reverse, which drives backwards)
// with nav2_msgs/action/NavigateToPose, plans on /map with A*, follows the
// path with pure pursuit from /odom, sends no command that would drive the
// robot into an obstacle of /map (sim.Navigator.Update: it replans and
// steers to nearer path points instead; such control cycles are counted as
// collision_avoidance_cycles on /diagnostics), and publishes on the autonomy cmd_vel
// topic (parameter cmd_vel_topic, default autonomy/cmd_vel, as RSM's
// control mux expects) at most max_linear_velocity and
// max_angular_velocity (may be changed at run time). Goals it cannot reach
// are aborted with a reason in error_msg. A new goal preempts the running
// one, as Nav2 does. A goal whose action client goes away (its heartbeats
// stop for 1 s, ros.ActionServerOptions.ClientTimeout; or, for a client
// that sends none, action.ClientWatch), or whose /odom stops for 2 s (the robot's driver
// died or hangs), is aborted and the robot stopped. The control loop and
// these checks run on the node clock (sim time under use_sim_time). Every path it
// plans goes out on plan (nav_msgs/Path, frame map, transient local), and
// an empty path when the goal ends. It also serves
// rsm/setNavigationToReverse for RSM's service provider. With
// enable_stamped_cmd_vel its commands are geometry_msgs/TwistStamped, as
// Nav2's controller server sends them with that parameter: stamped with the
// node clock's now, frame robot_base_frame (base_link).
func SetupNavigator(_ context.Context, n *ros.Node) error {
	d := ros.NewDeclarer(n)
	cmdTopic := param.Declare(d, "cmd_vel_topic", "autonomy/cmd_vel", param.ReadOnly("where velocity commands go",
		"the publisher is created at start-up"), nil)
	every := rate(d, "control_rate", 20, "control loop rate, Hz")
	def := sim.DefaultNav()
	limits := cmdvelnode.DeclareLimits(d, cmdvel.Limits{Linear: def.MaxLinear, Angular: def.MaxAngular}, "the commanded velocity")
	stamped := cmdvelnode.DeclareStamped(d, cmdvelnode.ParamStamped, "cmd_vel_topic")
	baseFrame := cmdvelnode.DeclareFrame(d, "robot_base_frame", cmdvelnode.DefaultFrame)
	maxCells := declareMapLimit(d)
	if err := d.Err(); err != nil {
		return err
	}
	nv := &navigator{n: n, rate: every, limits: limits}
	// A goal takes new limits at its next control cycle, a new goal at its
	// start; say so when they are accepted (there is no cycle between goals).
	n.OnParametersChanged(func(ps []ros.Parameter) {
		for _, p := range ps {
			if p.Name == cmdvelnode.ParamMaxLinear || p.Name == cmdvelnode.ParamMaxAngular {
				l := limits.Get()
				n.Logger().Infof("velocity limits now %g m/s, %g rad/s", l.Linear, l.Angular)
				return
			}
		}
	})
	var err error
	if nv.cmdPub, err = cmdvelnode.Advertise(n, cmdTopic, cmdvelnode.PublisherOptions{Stamped: stamped, Frame: baseFrame}); err != nil {
		return err
	}
	// The plan, as Nav2's planner names it; kept for late joiners (RViz).
	if nv.planPub, err = ros.NewPublisher[nav_msgs_msg.Path](n, "plan", ros.QoSLatched); err != nil {
		return err
	}
	if err := subscribeMap(n, maxCells, func(g *sim.Grid) {
		nv.mu.Lock()
		nv.grid = g
		nv.mu.Unlock()
	}); err != nil {
		return err
	}
	if _, err := ros.NewSubscription(n, sim.TopicOdom, ros.QoSDefault, func(m *nav_msgs_msg.Odometry) {
		p := m.Pose.Pose
		yaw := quatYaw(p.Orientation)
		if !finite(p.Position.X, p.Position.Y, yaw) {
			return
		}
		nv.mu.Lock()
		nv.pose = sim.Pose2D{X: p.Position.X, Y: p.Position.Y, Theta: yaw}
		nv.poseAt = n.Clock().Now()
		nv.mu.Unlock()
	}); err != nil {
		return err
	}
	for _, a := range []struct {
		name    string
		reverse bool
	}{{"navigate_to_pose", false}, {"navigate_to_pose_reverse", true}} {
		name, reverse := a.name, a.reverse
		_, err := ros.NewActionServer(n, a.name, nav2_msgs_action.NavigateToPose,
			func(ctx context.Context, g *ros.ServerGoal[navGoal, navFeedback]) (*navResult, error) {
				return nv.execute(ctx, g, name, reverse)
			},
			ros.ActionServerOptions[navGoal]{AcceptGoal: func(_ action.GoalID, g *navGoal) error { return checkGoal(g) },
				ClientTimeout: clientTimeout})
		if err != nil {
			return err
		}
	}
	_, err = ros.NewService(n, "rsm/setNavigationToReverse", std_srvs_srv.SetBool,
		func(_ context.Context, req *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
			// Reverse driving has its own action (navigate_to_pose_reverse);
			// RSM's navigation state picks it, so there is nothing to switch.
			return &std_srvs_srv.SetBool_Response{Success: true, Message: "Mode set"}, nil
		})
	return err
}

// checkGoal rejects goals the navigator cannot interpret.
func checkGoal(g *navGoal) error {
	p := g.Pose.Pose
	if !finite(p.Position.X, p.Position.Y, p.Position.Z, p.Orientation.X, p.Orientation.Y, p.Orientation.Z, p.Orientation.W) {
		return errors.New("goal pose is not finite")
	}
	switch g.Pose.Header.FrameId {
	case "", sim.FrameMap, "/" + sim.FrameMap, sim.FrameOdom:
		return nil
	}
	return fmt.Errorf("goal frame %q is not %q", g.Pose.Header.FrameId, sim.FrameMap)
}

func (nv *navigator) stop() { _ = nv.cmdPub.Publish(cmdvel.Twist{}) }

// errClientLost aborts a goal whose action client has gone.
var errClientLost = errors.New("action client lost: goal aborted and the robot stopped")

// clientTimeout is how long the client of a running goal (rsmNode, the
// CLI) may send no heartbeat before the goal is aborted and the robot
// stopped (ros.ActionServerOptions.ClientTimeout): this does not wait for
// the client's DDS lease (Cyclone's default 10 s).
const clientTimeout = time.Second

// ctxEnd is what a goal returns when its context ends: errClientLost when
// the client's heartbeats stopped (the library counted and logged it),
// else ctx's error.
func ctxEnd(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), ros.ErrClientLost) {
		return errClientLost
	}
	return ctx.Err()
}

// odomTimeout is how old (in node time) the last /odom may be while a goal
// runs: older odometry means the robot's driver died or hangs, and steering
// on a stale pose would send it anywhere once the driver is back, so the
// goal is aborted and the robot stopped.
const odomTimeout = 2 * time.Second

// poseFresh reports whether the pose is recent enough to steer by; the
// caller holds nv.mu.
func (nv *navigator) poseFresh(now time.Time) bool {
	return !nv.poseAt.IsZero() && now.Sub(nv.poseAt) <= odomTimeout
}

// execute runs one goal: it preempts the goal before it, waits for a map
// and a fresh pose, plans and drives until the goal is reached, fails or
// is cancelled, and leaves the robot stopped.
func (nv *navigator) execute(ctx context.Context, g *ros.ServerGoal[navGoal, navFeedback], name string, reverse bool) (*navResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer nv.takeOver(g.ID(), cancel)()

	cfg := sim.DefaultNav()
	cfg.Reverse = reverse
	limits := nv.limits.Get()
	cfg.MaxLinear, cfg.MaxAngular = limits.Linear, limits.Angular
	nav := sim.NewNavigator(cfg)
	target := sim.Point{X: g.Goal().Pose.Pose.Position.X, Y: g.Goal().Pose.Pose.Position.Y}
	log := nv.n.Logger()

	if err := nv.waitReady(ctx); err != nil {
		return nil, err
	}
	nv.mu.Lock()
	err := nav.Start(nv.grid, nv.pose, target)
	nv.mu.Unlock()
	if err != nil {
		log.Warnf("goal (%.2f, %.2f) rejected by the planner: %v", target.X, target.Y, err)
		return nil, err
	}
	nv.mu.Lock()
	start0 := nv.pose
	nv.mu.Unlock()
	nv.publishPlan(sim.PlanPoses(sim.Point{X: start0.X, Y: start0.Y}, nav.Path()))
	log.Infof("navigating to (%.2f, %.2f)%s", target.X, target.Y, map[bool]string{true: " in reverse"}[reverse])
	return nv.drive(ctx, g, name, nav, target, limits)
}

// takeOver makes goal id the active one, cancelling the goal before it
// (preemption). The function it returns, run when the goal ends, stops
// the robot and, unless a newer goal has taken over (it has its own plan
// out), withdraws the plan.
func (nv *navigator) takeOver(id action.GoalID, cancel context.CancelFunc) (release func()) {
	nv.mu.Lock()
	if nv.active != nil {
		nv.active() // preempt the previous goal
	}
	nv.active, nv.activeID = cancel, id
	nv.mu.Unlock()
	return func() {
		nv.mu.Lock()
		latest := nv.activeID == id
		if latest {
			nv.active = nil
		}
		nv.mu.Unlock()
		nv.stop()
		if latest {
			nv.publishPlan(nil)
		}
	}
}

// waitReady waits (bounded, in wall time: this is about the other
// processes being there) for a map and a pose that is fresh in node time
// (a paused simulation keeps it fresh).
func (nv *navigator) waitReady(ctx context.Context) error {
	clk := nv.n.Clock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		nv.mu.Lock()
		ready := nv.grid != nil && nv.poseFresh(clk.Now())
		nv.mu.Unlock()
		if ready {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("no /map or no fresh /odom within 10 s")
		}
		select {
		case <-ctx.Done():
			return ctxEnd(ctx)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// drive is the control loop of a planned goal. The loop, the odometry and
// client checks and the feedback run on the node clock: under
// use_sim_time the loop runs control_rate times per sim second, stands
// still while the simulation is paused, and a paused simulation (no
// /odom) is not a lost robot.
func (nv *navigator) drive(ctx context.Context, g *ros.ServerGoal[navGoal, navFeedback], name string,
	nav *sim.Navigator, target sim.Point, limits cmdvel.Limits) (*navResult, error) {
	log := nv.n.Logger()
	clk := nv.n.Clock()
	plans := nav.Plans()
	start := clk.Now()
	tick, err := clk.NewTicker(nv.rate)
	if err != nil {
		return nil, err
	}
	defer tick.Stop()
	lastFeedback := time.Time{}
	// Supervision: a goal whose client died (e.g. RSM's state machine was
	// killed) is aborted and the robot stopped, not driven on for nobody.
	var client action.ClientWatch
	listeners := func() int { l, _ := nv.n.ActionListeners(name); return l }
	client.Lost(listeners(), start)
	for {
		var now time.Time
		select {
		case <-ctx.Done():
			return nil, ctxEnd(ctx)
		case now = <-tick.C:
		}
		if client.Lost(listeners(), now) {
			nv.n.Counter(ros.CounterGoalsClientLost).Inc()
			log.Warnf("goal (%.2f, %.2f): %v", target.X, target.Y, errClientLost)
			return nil, errClientLost
		}
		v, w, pose, err := nv.step(now, nav, &limits)
		if err != nil {
			log.Warnf("goal (%.2f, %.2f): %v", target.X, target.Y, err)
			return nil, err
		}
		switch st, why := nav.Status(); st {
		case sim.NavSucceeded:
			log.Infof("goal (%.2f, %.2f) reached", target.X, target.Y)
			return &navResult{}, nil
		case sim.NavFailed:
			log.Warnf("goal (%.2f, %.2f) failed: %s", target.X, target.Y, why)
			return nil, errors.New(why)
		}
		if nav.Plans() != plans {
			plans = nav.Plans()
			nv.publishPlan(sim.PlanPoses(sim.Point{X: pose.X, Y: pose.Y}, nav.Path()))
		}
		_ = nv.cmdPub.Publish(cmdvel.Twist{Linear: [3]float64{v}, Angular: [3]float64{2: w}})
		if now.Sub(lastFeedback) >= 500*time.Millisecond || now.Before(lastFeedback) {
			lastFeedback = now
			nv.feedback(g, nav, now.Sub(start), now, pose)
		}
	}
}

// step is one control cycle at node time now: it aborts on stale
// odometry, takes velocity limits changed at run time (they apply from
// this cycle), and returns the velocities the navigator commands and the
// pose it steered by.
func (nv *navigator) step(now time.Time, nav *sim.Navigator, limits *cmdvel.Limits) (v, w float64, pose sim.Pose2D, err error) {
	nv.mu.Lock()
	if !nv.poseFresh(now) {
		age := now.Sub(nv.poseAt).Round(time.Millisecond)
		nv.mu.Unlock()
		nv.n.Counter("goals_aborted_odometry_lost").Inc()
		return 0, 0, pose, fmt.Errorf("no /odom for %v: goal aborted and the robot stopped", age)
	}
	if l := nv.limits.Get(); l != *limits {
		*limits = l
		_ = nav.SetLimits(l.Linear, l.Angular) // validated on the way in
	}
	avoided := nav.Avoided()
	v, w = nav.Update(nv.grid, nv.pose, nv.rate.Seconds())
	pose = nv.pose
	nv.mu.Unlock()
	if nav.Avoided() != avoided {
		nv.n.Counter("collision_avoidance_cycles").Inc()
	}
	return v, w, pose, nil
}

// feedback publishes the goal's feedback: time since it started driving,
// distance left and the pose.
func (nv *navigator) feedback(g *ros.ServerGoal[navGoal, navFeedback], nav *sim.Navigator, elapsed time.Duration, now time.Time, pose sim.Pose2D) {
	fb := &navFeedback{NavigationTime: builtin_interfaces_msg.DurationOf(elapsed),
		DistanceRemaining: float32(nav.DistanceRemaining(pose))}
	fb.CurrentPose.Header = header(now, sim.FrameMap)
	fb.CurrentPose.Pose.Position = geometry_msgs_msg.Point{X: pose.X, Y: pose.Y}
	fb.CurrentPose.Pose.Orientation = yawQuat(pose.Theta)
	_ = g.PublishFeedback(fb)
}

// publishPlan sends a path (nil: an empty one, nothing planned) in the map
// frame.
func (nv *navigator) publishPlan(poses []sim.PlanPose) {
	h := header(nv.n.Clock().Now(), sim.FrameMap)
	path := &nav_msgs_msg.Path{Header: h, Poses: make([]geometry_msgs_msg.PoseStamped, len(poses))}
	for i, p := range poses {
		path.Poses[i] = geometry_msgs_msg.PoseStamped{Header: h,
			Pose: geometry_msgs_msg.Pose{Position: geometry_msgs_msg.Point{X: p.X, Y: p.Y}, Orientation: yawQuat(p.Yaw)}}
	}
	if err := nv.planPub.Publish(path); err != nil {
		nv.n.Logger().Warnf("publish plan: %v", err)
	}
}
