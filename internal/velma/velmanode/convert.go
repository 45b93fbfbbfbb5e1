package velmanode

import (
	"fmt"
	"math"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/velma"
	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	control_msgs_action "github.com/fsmnodes/fsmnodes/msgs/control_msgs/action"
	control_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/control_msgs/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	velma_msgs_action "github.com/fsmnodes/fsmnodes/msgs/velma_msgs/action"
	velma_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/velma_msgs/msg"
)

// FollowJointTrajectory error codes (control_msgs).
const (
	codeSuccessful            int32 = 0
	codeInvalidGoal           int32 = -1
	codeInvalidJoints         int32 = -2
	codePathToleranceViolated int32 = -4
	codeGoalToleranceViolated int32 = -5
	codeAborted               int32 = -6 // velma_msgs only
	codeRejected              int32 = -7 // velma_msgs only
)

// GoalError is a goal that cannot be turned into a command; Code is the
// action result's error_code.
type GoalError struct {
	Code int32
	Err  error
}

// Error returns the reason.
func (e *GoalError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *GoalError) Unwrap() error { return e.Err }

func goalErr(code int32, format string, a ...any) error {
	return &GoalError{Code: code, Err: fmt.Errorf(format, a...)}
}

// DurationOf converts a ROS duration, rejecting negative or malformed ones.
func DurationOf(d builtin_interfaces_msg.Duration) (time.Duration, error) {
	if d.Sec < 0 || d.Nanosec >= 1e9 {
		return 0, fmt.Errorf("duration %d s %d ns is negative or malformed", d.Sec, d.Nanosec)
	}
	return d.AsDuration(), nil
}

// StartDelay returns how long after now a goal stamped stamp starts
// (0 for a zero stamp or a stamp in the past).
func StartDelay(stamp builtin_interfaces_msg.Time, now time.Time) time.Duration {
	if stamp.Sec == 0 && stamp.Nanosec == 0 {
		return 0
	}
	t := time.Unix(int64(stamp.Sec), int64(stamp.Nanosec))
	if d := t.Sub(now); d > 0 && d < time.Minute {
		return d
	}
	return 0
}

// JointSet describes the joints one FollowJointTrajectory server drives.
type JointSet struct {
	Names  []string
	Limits []velma.JointLimit
}

// BodyJoints are the 15 joints of ~/spline_trajectory_action_joint.
var BodyJoints = JointSet{Names: velma.BodyJointNames[:], Limits: velma.BodyLimits[:]}

// HeadJoints are the 2 joints of ~/head_spline_trajectory_action_joint.
var HeadJoints = JointSet{Names: velma.HeadJointNames[:], Limits: velma.HeadLimits[:]}

// tolerances maps per-joint tolerances onto the set's order: a missing
// entry or 0 gives def, a negative value disables the check.
func tolerances(set JointSet, list []control_msgs_msg.JointTolerance, def float64) ([]float64, error) {
	out := make([]float64, len(set.Names))
	for i := range out {
		out[i] = def
	}
	for _, t := range list {
		if math.IsNaN(t.Position) || math.IsInf(t.Position, 0) {
			return nil, fmt.Errorf("tolerance of %q is not finite", t.Name)
		}
		idx := indexOf(set.Names, t.Name)
		if idx < 0 {
			return nil, fmt.Errorf("tolerance for unknown joint %q", t.Name)
		}
		switch {
		case t.Position < 0:
			out[idx] = 0
		case t.Position > 0:
			out[idx] = t.Position
		}
	}
	return out, nil
}

func indexOf(names []string, n string) int {
	for i, x := range names {
		if x == n {
			return i
		}
	}
	return -1
}

// JointGoal converts a FollowJointTrajectory goal into a velma command for
// the given joints: every joint of the set must be named exactly once (any
// order), points must be finite, inside the limits and increasing in time.
func JointGoal(g *control_msgs_action.FollowJointTrajectory_Goal, set JointSet, def Interface, start time.Duration, id uint32) (*velma.JointTrajectoryCommand, error) {
	tr := &g.Trajectory
	n := len(set.Names)
	if len(g.MultiDofTrajectory.Points) > 0 {
		return nil, goalErr(codeInvalidGoal, "multi-DOF trajectories are not supported")
	}
	if len(tr.JointNames) != n {
		return nil, goalErr(codeInvalidJoints, "%d joint names, want the %d joints %v", len(tr.JointNames), n, set.Names)
	}
	perm := make([]int, n) // perm[k] = canonical index of the goal's joint k
	seen := make([]bool, n)
	for k, name := range tr.JointNames {
		idx := indexOf(set.Names, name)
		if idx < 0 || seen[idx] {
			return nil, goalErr(codeInvalidJoints, "joint %q unknown or repeated", name)
		}
		perm[k], seen[idx] = idx, true
	}
	if len(tr.Points) == 0 || len(tr.Points) > velma.MaxTrajectoryPoints {
		return nil, goalErr(codeInvalidGoal, "%d points, want 1…%d", len(tr.Points), velma.MaxTrajectoryPoints)
	}
	cmd := &velma.JointTrajectoryCommand{ID: id, Start: start}
	for i, p := range tr.Points {
		if len(p.Positions) != n || (len(p.Velocities) != 0 && len(p.Velocities) != n) || (len(p.Accelerations) != 0 && len(p.Accelerations) != n) {
			return nil, goalErr(codeInvalidGoal, "point %d: %d positions, %d velocities, %d accelerations for %d joints",
				i, len(p.Positions), len(p.Velocities), len(p.Accelerations), n)
		}
		t, err := DurationOf(p.TimeFromStart)
		if err != nil {
			return nil, goalErr(codeInvalidGoal, "point %d: %v", i, err)
		}
		jp := velma.JointPoint{Positions: make([]float64, n), TimeFromStart: t}
		if len(p.Velocities) == n {
			jp.Velocities = make([]float64, n)
		}
		if len(p.Accelerations) == n && jp.Velocities != nil {
			jp.Accelerations = make([]float64, n)
		}
		for k := range n {
			jp.Positions[perm[k]] = p.Positions[k]
			if jp.Velocities != nil {
				jp.Velocities[perm[k]] = p.Velocities[k]
			}
			if jp.Accelerations != nil {
				jp.Accelerations[perm[k]] = p.Accelerations[k]
			}
		}
		cmd.Points = append(cmd.Points, jp)
	}
	var err error
	if cmd.PathTolerance, err = tolerances(set, g.PathTolerance, def.JntPathTolerance); err != nil {
		return nil, goalErr(codeInvalidGoal, "path tolerance: %v", err)
	}
	if cmd.GoalTolerance, err = tolerances(set, g.GoalTolerance, def.JntGoalTolerance); err != nil {
		return nil, goalErr(codeInvalidGoal, "goal tolerance: %v", err)
	}
	gt, err := DurationOf(g.GoalTimeTolerance)
	if err != nil {
		return nil, goalErr(codeInvalidGoal, "goal_time_tolerance: %v", err)
	}
	if gt == 0 {
		gt = time.Duration(def.GoalTimeTolerance * float64(time.Second))
	}
	cmd.GoalTimeTolerance = gt
	if err := cmd.Validate(set.Limits); err != nil {
		return nil, goalErr(codeInvalidGoal, "%v", err)
	}
	return cmd, nil
}

// FrameOf converts a pose, normalising its quaternion; a zero or non-finite
// quaternion or position is an error.
func FrameOf(p geometry_msgs_msg.Pose) (kin.Frame, error) {
	o := p.Orientation
	for _, v := range []float64{o.W, o.X, o.Y, o.Z, p.Position.X, p.Position.Y, p.Position.Z} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return kin.Frame{}, fmt.Errorf("pose has a non-finite value")
		}
	}
	n := math.Sqrt(o.W*o.W + o.X*o.X + o.Y*o.Y + o.Z*o.Z)
	if n < 1e-6 {
		return kin.Frame{}, fmt.Errorf("pose orientation is a zero quaternion")
	}
	q := geom.Quat{W: o.W / n, X: o.X / n, Y: o.Y / n, Z: o.Z / n}
	return kin.Frame{R: q.Matrix(), P: geom.Vec3{X: p.Position.X, Y: p.Position.Y, Z: p.Position.Z}}, nil
}

// PoseOf converts a frame to a pose.
func PoseOf(f kin.Frame) geometry_msgs_msg.Pose {
	q := geom.QuatFromMatrix(f.R)
	var p geometry_msgs_msg.Pose
	p.Position.X, p.Position.Y, p.Position.Z = f.P.X, f.P.Y, f.P.Z
	p.Orientation.W, p.Orientation.X, p.Orientation.Y, p.Orientation.Z = q.W, q.X, q.Y, q.Z
	return p
}

func wrench6(w geometry_msgs_msg.Wrench) [6]float64 {
	return [6]float64{w.Force.X, w.Force.Y, w.Force.Z, w.Torque.X, w.Torque.Y, w.Torque.Z}
}

func cartTol(t velma_msgs_msg.CartesianTolerance, def [2]float64) (velma.CartTolerance, error) {
	out := velma.CartTolerance{Position: def[0], Rotation: def[1]}
	for i, v := range []float64{t.Position, t.Rotation} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return out, fmt.Errorf("tolerance is not finite")
		}
		x := &out.Position
		if i == 1 {
			x = &out.Rotation
		}
		switch {
		case v < 0:
			*x = 0
		case v > 0:
			*x = v
		}
	}
	return out, nil
}

// CartGoal converts a CartesianTrajectory goal into a cart_imp command.
func CartGoal(g *velma_msgs_action.CartesianTrajectory_Goal, def Interface, start time.Duration, id uint32) (*velma.CartImpCommand, error) {
	if f := g.Header.FrameId; f != "" && f != "torso_base" {
		return nil, goalErr(codeInvalidGoal, "frame %q, want torso_base", f)
	}
	if len(g.Points) == 0 || len(g.Points) > velma.MaxTrajectoryPoints {
		return nil, goalErr(codeInvalidGoal, "%d points, want 1…%d", len(g.Points), velma.MaxTrajectoryPoints)
	}
	cmd := &velma.CartImpCommand{ID: id, Start: start, Stiffness: wrench6(g.Stiffness), Damping: wrench6(g.Damping)}
	for i, p := range g.Points {
		f, err := FrameOf(p.Pose)
		if err != nil {
			return nil, goalErr(codeInvalidGoal, "point %d: %v", i, err)
		}
		t, err := DurationOf(p.TimeFromStart)
		if err != nil {
			return nil, goalErr(codeInvalidGoal, "point %d: %v", i, err)
		}
		cmd.Points = append(cmd.Points, velma.CartPoint{Pose: f, TimeFromStart: t})
	}
	var err error
	if cmd.PathTolerance, err = cartTol(g.PathTolerance, def.CartPathTolerance); err != nil {
		return nil, goalErr(codeInvalidGoal, "path tolerance: %v", err)
	}
	if cmd.GoalTolerance, err = cartTol(g.GoalTolerance, def.CartGoalTolerance); err != nil {
		return nil, goalErr(codeInvalidGoal, "goal tolerance: %v", err)
	}
	gt, err := DurationOf(g.GoalTimeTolerance)
	if err != nil {
		return nil, goalErr(codeInvalidGoal, "goal_time_tolerance: %v", err)
	}
	if gt == 0 {
		gt = time.Duration(def.GoalTimeTolerance * float64(time.Second))
	}
	cmd.GoalTimeTolerance = gt
	if err := cmd.Validate(); err != nil {
		return nil, goalErr(codeInvalidGoal, "%v", err)
	}
	return cmd, nil
}

// ResultCode maps a final trajectory state to an action error code and text.
func ResultCode(s velma.TrajState) (int32, string) {
	switch s {
	case velma.TrajSucceeded:
		return codeSuccessful, ""
	case velma.TrajPathViolated:
		return codePathToleranceViolated, "path tolerance violated"
	case velma.TrajGoalViolated:
		return codeGoalToleranceViolated, "goal tolerance violated"
	case velma.TrajRejected:
		return codeRejected, "rejected by velma_core_cs (wrong state, motors not ready, self-collision or invalid)"
	}
	return codeAborted, "aborted: the behaviour ended or a newer goal replaced this one"
}

// AbortCause says why cs aborted motion id of kind, from the snapshot
// taken when the abort was seen: the goal's result and the log then name
// the cause (ResultCode's text alone does not say which).
func AbortCause(s Snapshot, kind TrajKind, id uint32) string {
	var tr velma.TrajStatus
	switch kind {
	case TrajJnt:
		tr = s.CS.Jnt
	case TrajHead:
		tr = s.CS.Head
	case TrajCartRight:
		tr = s.CS.Cart[0]
	case TrajCartLeft:
		tr = s.CS.Cart[1]
	}
	switch {
	case s.Stale:
		return "no status from velma_core_cs (" + s.StaleWhy + ")"
	case tr.ID != id && tr.ID != 0:
		return fmt.Sprintf("replaced by motion %d", tr.ID)
	case s.Report.BodyState.IsSafe():
		why := "ve_body (the safety layer) is " + s.Report.BodyState.String()
		if s.Report.SC.FaultType != 0 {
			why += fmt.Sprintf(", fault type %d of module %d", s.Report.SC.FaultType, s.Report.SC.FaultyModuleID)
		}
		return why
	case s.CS.BehaviourErr != nil:
		return "cs behaviour error: " + s.CS.BehaviourErr.Error()
	}
	return fmt.Sprintf("cs is %v", s.CS.State)
}

// JointStateNames are the joints of /joint_states: torso, right arm,
// left arm, head pan, head tilt.
var JointStateNames = append(append([]string(nil), velma.BodyJointNames[:]...), velma.HeadJointNames[:]...)

// JointStateOf fills a JointState from a snapshot.
func JointStateOf(s *Snapshot, stamp builtin_interfaces_msg.Time, m *sensor_msgs_msg.JointState) {
	st := &s.Report.Status
	q, dq := st.BodyQ()
	m.Header.Stamp, m.Header.FrameId = stamp, ""
	m.Name = JointStateNames
	m.Position = append(m.Position[:0], q[:]...)
	m.Position = append(m.Position, st.HeadPan.Q, st.HeadTilt.Q)
	m.Velocity = append(m.Velocity[:0], dq[:]...)
	m.Velocity = append(m.Velocity, st.HeadPan.DQ, st.HeadTilt.DQ)
	m.Effort = append(m.Effort[:0], s.Report.Command.Torso.T)
	m.Effort = append(m.Effort, st.RArm.T[:]...)
	m.Effort = append(m.Effort, st.LArm.T[:]...)
	m.Effort = append(m.Effort, 0, 0)
}

func motorMsg(name string, m *velma.MotorStatus) velma_msgs_msg.MotorState {
	return velma_msgs_msg.MotorState{Name: name, Position: m.Q, Velocity: m.DQ, Enabled: m.Enabled,
		HomingRequired: m.HomingRequired, HomingInProgress: m.HomingInProgress, Ok: m.OK}
}

// StatusOf fills a velma_msgs/Status from a snapshot.
func StatusOf(s *Snapshot, stamp builtin_interfaces_msg.Time, m *velma_msgs_msg.Status) {
	r, cs := &s.Report, &s.CS
	m.Header.Stamp, m.Header.FrameId = stamp, "torso_base"
	m.VeBodyState = r.BodyState.String()
	m.CsState = cs.State.String()
	m.SubsystemState = uint32(cs.State)
	m.SafeBehavior, m.Error = r.SC.SafeBehavior, r.SC.Error
	m.FaultType, m.FaultyModuleId = r.SC.FaultType, r.SC.FaultyModuleID
	m.Motors = append(m.Motors[:0],
		motorMsg("torso_0_joint", &r.Status.Torso),
		motorMsg("head_pan_joint", &r.Status.HeadPan),
		motorMsg("head_tilt_joint", &r.Status.HeadTilt))
	m.MotorsReady = cs.MotorsReady
	m.RightArm = velma_msgs_msg.ArmState{Ok: r.Status.RArm.OK, InCommandState: r.Status.RArm.InCmdState,
		TorqueMeasured: r.Status.RArm.T, TorqueCommanded: r.Command.RArm.T}
	m.LeftArm = velma_msgs_msg.ArmState{Ok: r.Status.LArm.OK, InCommandState: r.Status.LArm.InCmdState,
		TorqueMeasured: r.Status.LArm.T, TorqueCommanded: r.Command.LArm.T}
	m.RightWrist, m.LeftWrist = PoseOf(cs.Wrist[0]), PoseOf(cs.Wrist[1])
	m.RightWristCmd, m.LeftWristCmd = PoseOf(cs.WristCmd[0]), PoseOf(cs.WristCmd[1])
	m.InSelfCollision = cs.InSelfCollision
	m.MinDistance = cs.MinDistance
	if math.IsInf(m.MinDistance, 0) {
		m.MinDistance = -1 // nothing within the repulsion distance / no status
	}
	m.Iteration, m.Overruns = r.Iteration, s.Loop.Overruns
	m.VeBodyCycle = m.VeBodyCycle[:0]
	for _, b := range s.BodyCycle {
		m.VeBodyCycle = append(m.VeBodyCycle, b.String())
	}
	m.LoopPeriodP50, m.LoopPeriodP99 = s.Loop.P50.Seconds(), s.Loop.P99.Seconds()
	m.LoopPeriodMax, m.LoopStepMax = s.Loop.Max.Seconds(), s.Loop.MaxStep.Seconds()
}
