package velmanode

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/velma"
	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	control_msgs_action "github.com/fsmnodes/fsmnodes/msgs/control_msgs/action"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	trajectory_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/trajectory_msgs/msg"
	velma_msgs_action "github.com/fsmnodes/fsmnodes/msgs/velma_msgs/action"
	velma_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/velma_msgs/msg"
)

// bodyGoal moves right_arm_1 and left_arm_1 by dq in dur.
func bodyGoal(q [velma.BodyDOF]float64, dq float64, dur time.Duration) *control_msgs_action.FollowJointTrajectory_Goal {
	g := control_msgs_action.NewFollowJointTrajectory_Goal()
	g.Trajectory.JointNames = velma.BodyJointNames[:]
	p := q
	p[2] += dq
	p[9] -= dq
	g.Trajectory.Points = []trajectory_msgs_msg.JointTrajectoryPoint{{Positions: p[:],
		TimeFromStart: builtin_interfaces_msg.DurationOf(dur)}}
	return g
}

// Over DDS (a domain of its own): a FollowJointTrajectory goal from another
// participant succeeds while ~/cs/state shows jnt_imp; a Cartesian goal
// succeeds; cancelling and losing the client stop the motion.
func TestBridge_OverDDS_Actions(t *testing.T) {
	domain := testenv.Domain(t)
	t.Parallel()     // own ROS_DOMAIN_ID
	testenv.Heavy(t) // Velma's 500 Hz loops in processes of their own
	if testing.Short() {
		t.Skip("DDS test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second) // 9 s quiet; 50 s was not enough under make test
	defer cancel()
	srvCtx := newCtx(t, domain)
	n, err := srvCtx.NewNode(NodeName, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBridge(n)
	if err != nil {
		t.Fatal(err)
	}
	loopCtx, stopLoop := context.WithCancel(ctx)
	loopDone := make(chan error, 1)
	go func() { loopDone <- b.Run(loopCtx) }()
	defer func() { stopLoop(); <-loopDone }()
	go func() { _ = srvCtx.Spin(ctx) }()

	// bring up through the runner directly; the services are tested elsewhere
	r := b.Runner()
	waitFor(t, ctx, "cs safe", func() bool { return r.Snapshot().CS.State == velma.CSSafe })
	r.Submit(&velma.TaskCommand{Motors: velma.MotorRequests{TorsoEnable: true, HeadPanEnable: true, HeadTiltEnable: true}})
	waitFor(t, ctx, "enabled", func() bool { return r.Snapshot().Report.Status.HeadPan.Enabled })
	r.Submit(&velma.TaskCommand{Motors: velma.MotorRequests{HeadPanHome: true, HeadTiltHome: true}})
	waitFor(t, ctx, "motors ready", func() bool { return r.Snapshot().CS.MotorsReady })

	cliCtx := newCtx(t, domain)
	cn, err := cliCtx.NewNode("velma_action_client", "")
	if err != nil {
		t.Fatal(err)
	}
	var cs latest[string]
	if _, err := ros.NewSubscription(cn, "/velma_core/cs/state", ros.QoSLatched, func(m *std_msgs_msg.String) { cs.set(m.Data) }); err != nil {
		t.Fatal(err)
	}
	jc, err := ros.NewActionClient(cn, "/velma_core/spline_trajectory_action_joint", control_msgs_action.FollowJointTrajectory)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = cliCtx.Spin(ctx) }()
	if err := jc.WaitForServer(ctx); err != nil {
		t.Fatal(err)
	}

	// 1. a goal that succeeds; cs shows jnt_imp during the motion
	q0, _ := r.Snapshot().Report.Status.BodyQ()
	var fb atomic.Int32 // feedback may still be delivered after the result
	res, st, err := jc.Execute(ctx, bodyGoal(q0, 0.3, 1500*time.Millisecond), func(*control_msgs_action.FollowJointTrajectory_Feedback) { fb.Add(1) })
	if err != nil || st != action.StatusSucceeded || res.ErrorCode != 0 {
		t.Fatalf("goal: %+v %v %v", res, st, err)
	}
	if v, _ := cs.get(); v != "jnt_imp" {
		t.Fatalf("cs state %q during/after the goal, want jnt_imp", v)
	}
	if fb.Load() == 0 {
		t.Fatal("no feedback")
	}
	q1, _ := r.Snapshot().Report.Status.BodyQ()
	if math.Abs(q1[2]-q0[2]-0.3) > 0.02 {
		t.Fatalf("right_arm_1 moved %.3f, want 0.3", q1[2]-q0[2])
	}

	// 2. an invalid goal (joint beyond its limit) is aborted with INVALID_GOAL
	bad := bodyGoal(q1, 0, time.Second)
	bad.Trajectory.Points[0].Positions[0] = 3
	if res, st, err := jc.Execute(ctx, bad, nil); err != nil || st != action.StatusAborted || res.ErrorCode != codeInvalidGoal {
		t.Fatalf("invalid goal: %+v %v %v", res, st, err)
	}

	// 3. cancel mid-motion: the goal ends canceled and the arm stops short
	g, err := jc.SendGoal(ctx, bodyGoal(q1, 0.5, 3*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "right_arm_1 under way", func() bool { q, _ := r.Snapshot().Report.Status.BodyQ(); return q[2]-q1[2] > 0.05 })
	if err := g.Cancel(ctx); err != nil {
		res, st, _ := g.Result(ctx)
		t.Fatalf("cancel: %v (goal %v %+v)", err, st, res)
	}
	if _, st, err := g.Result(ctx); err != nil || st != action.StatusCanceled {
		t.Fatalf("cancelled goal: %v %v", st, err)
	}
	waitFor(t, ctx, "right_arm_1 at rest after the cancel", func() bool {
		_, dq := r.Snapshot().Report.Status.BodyQ()
		return math.Abs(dq[2]) < 0.01
	})
	q2, _ := r.Snapshot().Report.Status.BodyQ()
	if d := q2[2] - q1[2]; d < 0.02 || d > 0.45 {
		t.Fatalf("after cancel right_arm_1 moved %.3f, want a partial move", d)
	}

	// 3b. a head goal on ~/head_spline_trajectory_action_joint
	hc, err := ros.NewActionClient(cn, "/velma_core/head_spline_trajectory_action_joint", control_msgs_action.FollowJointTrajectory)
	if err != nil {
		t.Fatal(err)
	}
	if err := hc.WaitForServer(ctx); err != nil {
		t.Fatal(err)
	}
	hg := control_msgs_action.NewFollowJointTrajectory_Goal()
	hg.Trajectory.JointNames = []string{"head_tilt_joint", "head_pan_joint"}
	hg.Trajectory.Points = []trajectory_msgs_msg.JointTrajectoryPoint{{Positions: []float64{-0.2, 0.4},
		TimeFromStart: builtin_interfaces_msg.Duration{Sec: 1}}}
	if res, st, err := hc.Execute(ctx, hg, nil); err != nil || st != action.StatusSucceeded {
		t.Fatalf("head goal: %+v %v %v", res, st, err)
	}
	if s := r.Snapshot().Report.Status; math.Abs(s.HeadPan.Q-0.4) > 0.02 || math.Abs(s.HeadTilt.Q+0.2) > 0.02 {
		t.Fatalf("head at %.3f/%.3f, want 0.4/-0.2", s.HeadPan.Q, s.HeadTilt.Q)
	}

	// 4. a Cartesian goal for the right wrist
	cc, err := ros.NewActionClient(cn, "/velma_core/right_arm/cartesian_trajectory", velma_msgs_action.CartesianTrajectory)
	if err != nil {
		t.Fatal(err)
	}
	if err := cc.WaitForServer(ctx); err != nil {
		t.Fatal(err)
	}
	w := r.Snapshot().CS.Wrist[kin.Right]
	target := kin.Frame{R: w.R, P: w.P.Add(geom.Vec3{X: 0.05, Y: 0, Z: 0.05})}
	cg := velma_msgs_action.NewCartesianTrajectory_Goal()
	cg.Points = []velma_msgs_msg.CartesianTrajectoryPoint{{Pose: PoseOf(target), TimeFromStart: builtin_interfaces_msg.Duration{Sec: 2}}}
	cres, cst, err := cc.Execute(ctx, cg, nil)
	if err != nil || cst != action.StatusSucceeded {
		s := r.Snapshot()
		t.Fatalf("cartesian goal: %+v %v %v (cs %v step %+v motors ready %v collision %v (%.3f m) error %v; ve_body %v; loop %d iterations %d overruns; cs states %v)",
			cres, cst, err, s.CS.State, s.CS.Step, s.CS.MotorsReady, s.CS.InSelfCollision, s.CS.MinDistance, s.CS.BehaviourErr,
			s.Report.BodyState, s.Loop.Iterations, s.Loop.Overruns, cs.history())
	}
	if v, _ := cs.get(); v != "cart_imp" {
		t.Fatalf("cs state %q, want cart_imp", v)
	}
	if d := r.Snapshot().CS.Wrist[kin.Right].P.Sub(target.P).Norm(); d > 0.01 {
		t.Fatalf("wrist %.3f m from target", d)
	}

	// 5. the command source dies mid-motion: the goal is aborted, cs
	// faults out of jnt_imp (IN_ERROR → idle) and returns to safe, where the
	// arm comes to rest; ve_body stays transparent
	q3, _ := r.Snapshot().Report.Status.BodyQ()
	if _, err := jc.SendGoal(ctx, bodyGoal(q3, 0.5, 4*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "jnt_imp", func() bool { return r.Snapshot().CS.State == velma.CSJntImp })
	waitFor(t, ctx, "right_arm_1 under way", func() bool { q, _ := r.Snapshot().Report.Status.BodyQ(); return q[2]-q3[2] > 0.05 })
	_ = cliCtx.Close()
	waitFor(t, ctx, "cs safe", func() bool { return r.Snapshot().CS.State == velma.CSSafe })
	if s := r.Snapshot(); s.CS.Jnt.State != velma.TrajAborted || s.Report.BodyState != velma.BodyTransp {
		t.Fatalf("motion %v ve_body %v after the client died, want aborted/transp", s.CS.Jnt.State, s.Report.BodyState)
	}
	// In safe the arm comes to rest, short of the goal.
	waitFor(t, ctx, "the arm at rest in safe", func() bool {
		_, dq := r.Snapshot().Report.Status.BodyQ()
		return math.Abs(dq[2]) < 0.05
	})
	if q4, _ := r.Snapshot().Report.Status.BodyQ(); q4[2]-q3[2] > 0.45 {
		t.Fatalf("arm moved %.3f after its client died, want it stopped early", q4[2]-q3[2])
	}

	// 6. the same for a Cartesian goal whose client goes away
	cliCtx2 := newCtx(t, domain)
	cn2, err := cliCtx2.NewNode("velma_action_client2", "")
	if err != nil {
		t.Fatal(err)
	}
	cc2, err := ros.NewActionClient(cn2, "/velma_core/left_arm/cartesian_trajectory", velma_msgs_action.CartesianTrajectory)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = cliCtx2.Spin(ctx) }()
	if err := cc2.WaitForServer(ctx); err != nil {
		t.Fatal(err)
	}
	wl := r.Snapshot().CS.Wrist[kin.Left]
	cg2 := velma_msgs_action.NewCartesianTrajectory_Goal()
	cg2.Points = []velma_msgs_msg.CartesianTrajectoryPoint{{Pose: PoseOf(kin.Frame{R: wl.R, P: wl.P.Add(geom.Vec3{X: 0.1, Y: 0, Z: 0.1})}),
		TimeFromStart: builtin_interfaces_msg.Duration{Sec: 4}}}
	if _, err := cc2.SendGoal(ctx, cg2, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "cart_imp", func() bool { return r.Snapshot().CS.State == velma.CSCartImp })
	waitFor(t, ctx, "the left wrist under way", func() bool { return r.Snapshot().CS.Wrist[kin.Left].P.Sub(wl.P).Norm() > 0.01 })
	_ = cliCtx2.Close()
	waitFor(t, ctx, "cs safe after cart_imp", func() bool { return r.Snapshot().CS.State == velma.CSSafe })
	if s := r.Snapshot(); s.CS.Cart[kin.Left].State != velma.TrajAborted || s.Report.BodyState != velma.BodyTransp {
		t.Fatalf("motion %v ve_body %v after the client died, want aborted/transp", s.CS.Cart[kin.Left].State, s.Report.BodyState)
	}
}
