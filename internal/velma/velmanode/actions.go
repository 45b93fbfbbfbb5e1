package velmanode

import (
	"context"
	"errors"
	"fmt"
	"time"

	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	rosaction "github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/velma"
	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
	control_msgs_action "github.com/fsmnodes/fsmnodes/msgs/control_msgs/action"
	trajectory_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/trajectory_msgs/msg"
	velma_msgs_action "github.com/fsmnodes/fsmnodes/msgs/velma_msgs/action"
)

type (
	fjtGoal     = control_msgs_action.FollowJointTrajectory_Goal
	fjtResult   = control_msgs_action.FollowJointTrajectory_Result
	fjtFeedback = control_msgs_action.FollowJointTrajectory_Feedback
	ctGoal      = velma_msgs_action.CartesianTrajectory_Goal
	ctResult    = velma_msgs_action.CartesianTrajectory_Result
	ctFeedback  = velma_msgs_action.CartesianTrajectory_Feedback
)

// feedbackPeriod is how often a running goal publishes feedback.
const feedbackPeriod = 100 * time.Millisecond

// A running goal whose client is lost (its heartbeats stopped for
// clientTimeout, ros.ActionServerOptions.ClientTimeout; or, for a client
// that sends none, action.ClientWatch: no subscriber on the action's
// feedback and status topics for action.DefaultClientLostAfter, after
// there was one) has lost its command source: the goal is aborted, a body motion (jnt_imp, cart_imp) makes cs
// fault to idle and return to safe (velma.TaskCommand.SourceLost), a head
// motion stops where it is.

// maxGoalSize is the largest trajectory goal the actions accept, in bytes
// of CDR: a valid goal has at most velma.MaxTrajectoryPoints points of at
// most 15 joints (positions, velocities, accelerations and efforts: under
// 32 KiB with names and tolerances), so 1 MiB leaves a wide margin while a
// hostile 48 MB goal is dropped before it is decoded.
const maxGoalSize = 1 << 20

// clientTimeout is how long the client of a running goal may send no
// heartbeat before the goal is aborted (ros.ActionServerOptions.ClientTimeout).
const clientTimeout = time.Second

// actions serves the four trajectory actions.
func (b *Bridge) actions() error {
	for _, a := range []struct {
		name string
		set  JointSet
		kind TrajKind
	}{
		{"~/spline_trajectory_action_joint", BodyJoints, TrajJnt},
		{"~/head_spline_trajectory_action_joint", HeadJoints, TrajHead},
	} {
		if _, err := ros.NewActionServer(b.node, a.name, control_msgs_action.FollowJointTrajectory,
			b.executeJoint(a.name, a.set, a.kind), ros.ActionServerOptions[fjtGoal]{MaxGoalSize: maxGoalSize, ClientTimeout: clientTimeout}); err != nil {
			return err
		}
	}
	for _, a := range []struct {
		name string
		side kin.Side
	}{
		{"~/right_arm/cartesian_trajectory", kin.Right},
		{"~/left_arm/cartesian_trajectory", kin.Left},
	} {
		if _, err := ros.NewActionServer(b.node, a.name, velma_msgs_action.CartesianTrajectory,
			b.executeCart(a.name, a.side), ros.ActionServerOptions[ctGoal]{MaxGoalSize: maxGoalSize, ClientTimeout: clientTimeout}); err != nil {
			return err
		}
	}
	return nil
}

// watch waits for command id to end, calling tick every feedbackPeriod. It
// returns the final state, or TrajAborted with errClientLost / ctx.Err().
func (b *Bridge) watch(ctx context.Context, action string, kind TrajKind, id uint32, tick func()) (velma.TrajState, error) {
	done := b.runner.Track(kind, id)
	tk := time.NewTicker(feedbackPeriod)
	defer tk.Stop()
	var client rosaction.ClientWatch
	listeners := func() int {
		n, _ := b.node.ActionListeners(action) // the name resolved when the server was made
		return n
	}
	client.Lost(listeners(), time.Now())
	for {
		select {
		case st := <-done:
			return st, nil
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), ros.ErrClientLost) { // its heartbeats stopped
				return velma.TrajAborted, errClientLost
			}
			return velma.TrajAborted, ctx.Err()
		case now := <-tk.C:
			tick()
			if b.runner.Snapshot().Stale {
				return velma.TrajAborted, errCSLost
			}
			if client.Lost(listeners(), now) {
				return velma.TrajAborted, errClientLost
			}
		}
	}
}

var errClientLost = errors.New("action client lost")

// errCSLost ends a goal whose motion nobody runs any more: the interface
// process no longer hears from velma_core_cs.
var errCSLost = errors.New("no status from velma_core_cs: the control subsystem stopped")

// codeOf returns the result code of a goal conversion error.
func codeOf(err error) int32 {
	var ge *GoalError
	if errors.As(err, &ge) {
		return ge.Code
	}
	return codeInvalidGoal
}

// holdJoints stops a joint motion where it is: a one-point trajectory to
// the current setpoint (body) or measured position (head).
func (b *Bridge) holdJoints(kind TrajKind) {
	snap := b.runner.Snapshot()
	id := b.runner.NextID()
	if kind == TrajHead {
		q := []float64{snap.Report.Status.HeadPan.Q, snap.Report.Status.HeadTilt.Q}
		b.runner.Submit(&velma.TaskCommand{Head: &velma.JointTrajectoryCommand{ID: id,
			Points: []velma.JointPoint{{Positions: q, TimeFromStart: 100 * time.Millisecond}}}})
		return
	}
	if snap.CS.State != velma.CSJntImp {
		return
	}
	q, _ := snap.Report.Status.BodyQ()
	b.runner.Submit(&velma.TaskCommand{Jnt: &velma.JointTrajectoryCommand{ID: id,
		Points: []velma.JointPoint{{Positions: q[:], TimeFromStart: 200 * time.Millisecond}}}})
}

func (b *Bridge) executeJoint(action string, set JointSet, kind TrajKind) ros.ExecuteFunc[fjtGoal, fjtResult, fjtFeedback] {
	log := b.node.Logger()
	return func(ctx context.Context, g *ros.ServerGoal[fjtGoal, fjtFeedback]) (*fjtResult, error) {
		goal := g.Goal()
		id := b.runner.NextID()
		cmd, err := JointGoal(goal, set, b.runner.Params().Interface, StartDelay(goal.Trajectory.Header.Stamp, b.node.Clock().Now()), id)
		if err != nil {
			return &fjtResult{ErrorCode: codeOf(err), ErrorString: err.Error()}, err
		}
		tc := &velma.TaskCommand{Jnt: cmd}
		if kind == TrajHead {
			tc = &velma.TaskCommand{Head: cmd}
		}
		b.runner.Submit(tc)
		final, err := b.watch(ctx, action, kind, id, func() { b.jointFeedback(g, set, kind) })
		if err != nil {
			switch {
			case errors.Is(err, errClientLost) && kind == TrajJnt:
				b.runner.Submit(&velma.TaskCommand{SourceLost: id})
				err = fmt.Errorf("%w: cs leaves jnt_imp for safe", err)
				log.Warnf("%s: action client gone mid-motion, cs goes safe", action)
			case errors.Is(err, errClientLost):
				b.holdJoints(kind)
				log.Warnf("%s: action client gone, head motion stopped", action)
			default:
				b.holdJoints(kind)
			}
			return &fjtResult{ErrorCode: codeAborted, ErrorString: err.Error()}, err
		}
		code, msg := ResultCode(final)
		if final == velma.TrajAborted {
			msg += ": " + AbortCause(b.runner.Snapshot(), kind, id)
		}
		res := &fjtResult{ErrorCode: code, ErrorString: msg}
		if final != velma.TrajSucceeded {
			return res, errors.New(msg)
		}
		return res, nil
	}
}

func (b *Bridge) jointFeedback(g *ros.ServerGoal[fjtGoal, fjtFeedback], set JointSet, kind TrajKind) {
	snap := b.runner.Snapshot()
	var fb fjtFeedback
	fb.Header.Stamp = builtin_interfaces_msg.TimeOf(b.node.Clock().Now())
	fb.JointNames = set.Names
	var desired, actual []float64
	if kind == TrajHead {
		desired = snap.CS.HeadDesired[:]
		actual = []float64{snap.Report.Status.HeadPan.Q, snap.Report.Status.HeadTilt.Q}
	} else {
		q, _ := snap.Report.Status.BodyQ()
		desired, actual = snap.CS.QDesired[:], q[:]
	}
	errv := make([]float64, len(desired))
	for i := range errv {
		errv[i] = desired[i] - actual[i]
	}
	fb.Desired = trajectory_msgs_msg.JointTrajectoryPoint{Positions: desired}
	fb.Actual = trajectory_msgs_msg.JointTrajectoryPoint{Positions: actual}
	fb.Error = trajectory_msgs_msg.JointTrajectoryPoint{Positions: errv}
	_ = g.PublishFeedback(&fb)
}

func (b *Bridge) executeCart(action string, side kin.Side) ros.ExecuteFunc[ctGoal, ctResult, ctFeedback] {
	kind := TrajCartRight
	if side == kin.Left {
		kind = TrajCartLeft
	}
	log := b.node.Logger()
	return func(ctx context.Context, g *ros.ServerGoal[ctGoal, ctFeedback]) (*ctResult, error) {
		goal := g.Goal()
		id := b.runner.NextID()
		cmd, err := CartGoal(goal, b.runner.Params().Interface, StartDelay(goal.Header.Stamp, b.node.Clock().Now()), id)
		if err != nil {
			return &ctResult{ErrorCode: codeOf(err), ErrorString: err.Error()}, err
		}
		var tc velma.TaskCommand
		tc.Cart[side] = cmd
		b.runner.Submit(&tc)
		final, err := b.watch(ctx, action, kind, id, func() {
			snap := b.runner.Snapshot()
			cur, des := snap.CS.Wrist[side], snap.CS.WristCmd[side]
			fb := ctFeedback{Desired: PoseOf(des), Actual: PoseOf(cur),
				PositionError: des.P.Sub(cur.P).Norm(), RotationError: geom.AngleBetween(des.R, cur.R)}
			fb.Header.Stamp, fb.Header.FrameId = builtin_interfaces_msg.TimeOf(b.node.Clock().Now()), "torso_base"
			_ = g.PublishFeedback(&fb)
		})
		if err != nil {
			if errors.Is(err, errClientLost) {
				b.runner.Submit(&velma.TaskCommand{SourceLost: id})
				err = fmt.Errorf("%w: cs leaves cart_imp for safe", err)
				log.Warnf("%s: action client gone mid-motion, cs goes safe", action)
			} else if snap := b.runner.Snapshot(); snap.CS.State == velma.CSCartImp {
				var hold velma.TaskCommand
				hold.Cart[side] = &velma.CartImpCommand{ID: b.runner.NextID(),
					Points: []velma.CartPoint{{Pose: snap.CS.Wrist[side], TimeFromStart: 200 * time.Millisecond}}}
				b.runner.Submit(&hold)
			}
			return &ctResult{ErrorCode: codeAborted, ErrorString: err.Error()}, err
		}
		code, msg := ResultCode(final)
		if final == velma.TrajAborted {
			msg += ": " + AbortCause(b.runner.Snapshot(), kind, id)
		}
		res := &ctResult{ErrorCode: code, ErrorString: msg}
		if final != velma.TrajSucceeded {
			return res, errors.New(msg)
		}
		return res, nil
	}
}
