package velmanode

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/velma"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	control_msgs_action "github.com/fsmnodes/fsmnodes/msgs/control_msgs/action"
	control_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/control_msgs/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	trajectory_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/trajectory_msgs/msg"
	velma_msgs_action "github.com/fsmnodes/fsmnodes/msgs/velma_msgs/action"
	velma_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/velma_msgs/msg"
)

type stepper struct {
	t   *testing.T
	r   *Runner
	now time.Time
	cs  []velma.CSState
	bs  []velma.BodyState
}

func newStepper(t *testing.T) *stepper {
	s := &stepper{t: t, now: time.Unix(100, 0)}
	r, err := NewRunner(DefaultParams(), nil, Hooks{
		CSState:   func(c velma.CSState) { s.cs = append(s.cs, c) },
		BodyState: func(b velma.BodyState) { s.bs = append(s.bs, b) },
	})
	if err != nil {
		t.Fatal(err)
	}
	s.r = r
	return s
}

func (s *stepper) until(max int, what string, cond func(*Snapshot) bool) {
	s.t.Helper()
	for range max {
		s.now = s.now.Add(2 * time.Millisecond)
		s.r.Step(s.now)
		snap := s.r.Snapshot()
		if cond(&snap) {
			return
		}
	}
	snap := s.r.Snapshot()
	s.t.Fatalf("%s not reached (ve_body %v cs %v)", what, snap.Report.BodyState, snap.CS.State)
}

func TestRunner_BringUpMotorsAndJointGoal(t *testing.T) {
	s := newStepper(t)
	s.until(2000, "cs safe", func(sn *Snapshot) bool { return sn.CS.State == velma.CSSafe })
	s.steps(25) // reports come at the end of a 20 ms window
	// ve_body reported every state it went through, in order, and its
	// every-iteration flips (safe ↔ safe_st_ok, transp ↔ transp_st) once,
	// not per iteration
	want := []velma.BodyState{velma.BodyIdle, velma.BodySafeSt, velma.BodySafe, velma.BodySafeStOk,
		velma.BodyTransp, velma.BodyTranspSt}
	k := 0
	for _, b := range s.bs {
		if k < len(want) && b == want[k] {
			k++
		}
	}
	if k != len(want) || len(s.bs) > 16 || s.bs[len(s.bs)-1] != velma.BodyTransp {
		t.Fatalf("ve_body reports %v, want %v in this order (few reports, ending with transp)", s.bs, want)
	}
	n := len(s.bs)
	s.steps(500) // 1 s of the steady transp ↔ transp_st flip: nothing new
	if len(s.bs) != n {
		t.Fatalf("steady ve_body reported again: %v", s.bs[n:])
	}
	if c := s.r.Snapshot().BodyCycle; len(c) != 2 || c[0] != velma.BodyTransp || c[1] != velma.BodyTranspSt {
		t.Fatalf("body cycle %v, want [transp transp_st]", c)
	}
	if len(s.cs) != 2 || s.cs[0] != velma.CSIdle || s.cs[1] != velma.CSSafe {
		t.Fatalf("cs reports %v, want [idle safe]", s.cs)
	}
	s.r.Submit(&velma.TaskCommand{Motors: velma.MotorRequests{TorsoEnable: true, HeadPanEnable: true, HeadTiltEnable: true}})
	s.steps(2)
	s.r.Submit(&velma.TaskCommand{Motors: velma.MotorRequests{HeadPanHome: true, HeadTiltHome: true}})
	s.until(500, "motors ready", func(sn *Snapshot) bool { return sn.CS.MotorsReady })

	snap := s.r.Snapshot()
	q, _ := snap.Report.Status.BodyQ()
	goal := goalFor(q, 0.2)
	cmd, err := JointGoal(goal, BodyJoints, DefaultParams().Interface, 0, s.r.NextID())
	if err != nil {
		t.Fatal(err)
	}
	done := s.r.Track(TrajJnt, cmd.ID)
	s.r.Submit(&velma.TaskCommand{Jnt: cmd})
	var final velma.TrajState
	s.until(2000, "goal done", func(*Snapshot) bool {
		select {
		case final = <-done:
			return true
		default:
			return false
		}
	})
	if final != velma.TrajSucceeded {
		t.Fatalf("goal ended %v", final)
	}
	if s.cs[len(s.cs)-1] != velma.CSJntImp {
		t.Fatalf("cs reports %v, want jnt_imp last", s.cs)
	}
	// a second goal replaced by a third: the second is reported aborted
	id2, id3 := s.r.NextID(), s.r.NextID()
	c2, _ := JointGoal(goalFor(q, 0.1), BodyJoints, DefaultParams().Interface, 0, id2)
	c3, _ := JointGoal(goalFor(q, 0.0), BodyJoints, DefaultParams().Interface, 0, id3)
	d2, d3 := s.r.Track(TrajJnt, id2), s.r.Track(TrajJnt, id3)
	s.r.Submit(&velma.TaskCommand{Jnt: c2})
	s.steps(5)
	s.r.Submit(&velma.TaskCommand{Jnt: c3})
	s.steps(1)
	if st := <-d2; st != velma.TrajAborted {
		t.Fatalf("replaced goal ended %v, want aborted", st)
	}
	s.until(2000, "third goal", func(*Snapshot) bool { return len(d3) == 1 })
	if st := <-d3; st != velma.TrajSucceeded {
		t.Fatalf("third goal %v", st)
	}
}

func (s *stepper) steps(n int) {
	for range n {
		s.now = s.now.Add(2 * time.Millisecond)
		s.r.Step(s.now)
	}
}

// goalFor returns a goal moving right_arm_0 by dq over 1 s, joint names
// reversed to exercise the permutation.
func goalFor(q [velma.BodyDOF]float64, dq float64) *control_msgs_action.FollowJointTrajectory_Goal {
	g := control_msgs_action.NewFollowJointTrajectory_Goal()
	n := velma.BodyDOF
	pos := make([]float64, n)
	for k := range n {
		j := n - 1 - k
		g.Trajectory.JointNames = append(g.Trajectory.JointNames, velma.BodyJointNames[j])
		pos[k] = q[j]
		if j == 1 {
			pos[k] += dq
		}
	}
	g.Trajectory.Points = []trajectory_msgs_msg.JointTrajectoryPoint{{Positions: pos,
		TimeFromStart: builtin_interfaces_msg.Duration{Sec: 1}}}
	return g
}

func TestJointGoal_Conversion(t *testing.T) {
	var q [velma.BodyDOF]float64
	def := DefaultParams().Interface
	g := goalFor(q, 0.3)
	cmd, err := JointGoal(g, BodyJoints, def, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Points[0].Positions[1] != 0.3 || cmd.Points[0].Positions[0] != 0 {
		t.Fatalf("permutation wrong: %v", cmd.Points[0].Positions)
	}
	if cmd.PathTolerance[3] != def.JntPathTolerance || cmd.GoalTimeTolerance != time.Second {
		t.Fatalf("defaults not applied: %v %v", cmd.PathTolerance, cmd.GoalTimeTolerance)
	}
	g.PathTolerance = []control_msgs_msg.JointTolerance{{Name: "torso_0_joint", Position: 0.5}, {Name: "left_arm_6_joint", Position: -1}}
	cmd, _ = JointGoal(g, BodyJoints, def, 0, 4)
	if cmd.PathTolerance[0] != 0.5 || cmd.PathTolerance[14] != 0 {
		t.Fatalf("explicit tolerances: %v", cmd.PathTolerance)
	}

	bad := []struct {
		name string
		mod  func(g *control_msgs_action.FollowJointTrajectory_Goal)
		code int32
	}{
		{"missing joint", func(g *control_msgs_action.FollowJointTrajectory_Goal) {
			g.Trajectory.JointNames = g.Trajectory.JointNames[1:]
		}, codeInvalidJoints},
		{"repeated joint", func(g *control_msgs_action.FollowJointTrajectory_Goal) {
			g.Trajectory.JointNames[0] = g.Trajectory.JointNames[1]
		}, codeInvalidJoints},
		{"NaN position", func(g *control_msgs_action.FollowJointTrajectory_Goal) {
			g.Trajectory.Points[0].Positions[2] = math.NaN()
		}, codeInvalidGoal},
		{"beyond limit", func(g *control_msgs_action.FollowJointTrajectory_Goal) {
			g.Trajectory.Points[0].Positions[14] = 2 // torso limit 1.57
		}, codeInvalidGoal},
		{"no points", func(g *control_msgs_action.FollowJointTrajectory_Goal) { g.Trajectory.Points = nil }, codeInvalidGoal},
		{"bad duration", func(g *control_msgs_action.FollowJointTrajectory_Goal) {
			g.Trajectory.Points[0].TimeFromStart.Nanosec = 2e9
		}, codeInvalidGoal},
		{"unknown tolerance joint", func(g *control_msgs_action.FollowJointTrajectory_Goal) {
			g.GoalTolerance = []control_msgs_msg.JointTolerance{{Name: "x", Position: 1}}
		}, codeInvalidGoal},
	}
	for _, tc := range bad {
		g := goalFor(q, 0.3)
		tc.mod(g)
		_, err := JointGoal(g, BodyJoints, def, 0, 1)
		var ge *GoalError
		if !errors.As(err, &ge) || ge.Code != tc.code {
			t.Errorf("%s: %v, want code %d", tc.name, err, tc.code)
		}
	}
}

func TestCartGoal_Conversion(t *testing.T) {
	def := DefaultParams().Interface
	g := velma_msgs_action.NewCartesianTrajectory_Goal()
	var pose geometry_msgs_msg.Pose
	pose.Position.X, pose.Orientation.W, pose.Orientation.Z = 0.3, 2, 0 // unnormalised quaternion is fine
	g.Points = []velma_msgs_msg.CartesianTrajectoryPoint{{Pose: pose, TimeFromStart: builtin_interfaces_msg.Duration{Sec: 2}}}
	g.Stiffness.Force.X = 800
	cmd, err := CartGoal(g, def, 0, 9)
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Stiffness[0] != 800 || cmd.GoalTolerance.Position != def.CartGoalTolerance[0] || cmd.Points[0].Pose.R[0][0] != 1 {
		t.Fatalf("conversion: %+v", cmd)
	}
	g.Points[0].Pose.Orientation.W = 0
	if _, err := CartGoal(g, def, 0, 9); err == nil {
		t.Fatal("zero quaternion accepted")
	}
	g.Points[0].Pose.Orientation.W = 1
	g.Header.FrameId = "world"
	if _, err := CartGoal(g, def, 0, 9); err == nil {
		t.Fatal("wrong frame accepted")
	}
	g.Header.FrameId = ""
	g.Damping.Torque.Z = 7
	if _, err := CartGoal(g, def, 0, 9); err == nil {
		t.Fatal("damping 7 accepted")
	}
}

func TestStatusAndJointState_FromSnapshot(t *testing.T) {
	s := newStepper(t)
	s.until(2000, "cs safe", func(sn *Snapshot) bool { return sn.CS.State == velma.CSSafe })
	s.steps(25) // one more ve_body report window
	snap := s.r.Snapshot()
	var js sensor_msgs_msg.JointState
	JointStateOf(&snap, builtin_interfaces_msg.TimeOf(s.now), &js)
	if len(js.Name) != 17 || len(js.Position) != 17 || len(js.Velocity) != 17 || len(js.Effort) != 17 {
		t.Fatalf("joint state sizes %d/%d/%d/%d", len(js.Name), len(js.Position), len(js.Velocity), len(js.Effort))
	}
	if js.Name[1] != "right_arm_0_joint" || js.Position[1] != snap.Report.Status.RArm.Q[0] || js.Name[16] != "head_tilt_joint" {
		t.Fatalf("joint state content %v %v", js.Name, js.Position)
	}
	var st velma_msgs_msg.Status
	StatusOf(&snap, builtin_interfaces_msg.TimeOf(s.now), &st)
	if st.VeBodyState != "transp" || st.CsState != "safe" || st.SubsystemState != velma_msgs_msg.Status_STATE_SAFE || len(st.Motors) != 3 {
		t.Fatalf("status %+v", st)
	}
	if strings.Join(st.VeBodyCycle, " ") != "transp transp_st" {
		t.Fatalf("ve_body cycle %v, want [transp transp_st]", st.VeBodyCycle)
	}
	// the loop's timing goes out in seconds
	loop := snap
	loop.Loop = velma.LoopStats{Iterations: 9, Overruns: 4, P50: 2 * time.Millisecond, P99: 3 * time.Millisecond,
		Max: 5 * time.Millisecond, MaxStep: time.Millisecond}
	var lst velma_msgs_msg.Status
	StatusOf(&loop, builtin_interfaces_msg.TimeOf(s.now), &lst)
	if lst.Overruns != 4 || lst.LoopPeriodP50 != 0.002 || lst.LoopPeriodP99 != 0.003 || lst.LoopPeriodMax != 0.005 || lst.LoopStepMax != 0.001 {
		t.Fatalf("loop timing in status: %d %v %v %v %v", lst.Overruns, lst.LoopPeriodP50, lst.LoopPeriodP99, lst.LoopPeriodMax, lst.LoopStepMax)
	}
	if math.Abs(st.RightWrist.Position.Z-0.6141) > 1e-3 {
		t.Fatalf("right wrist z %.4f, want the initial pose 0.6141", st.RightWrist.Position.Z)
	}
}

// TestRunner_LiveTuning: the runner reads cs's tuning every iteration and
// applies a change at the next one; a tuning cs refuses keeps the old one.
func TestRunner_LiveTuning(t *testing.T) {
	s := newStepper(t)
	var mu sync.Mutex
	tune := DefaultParams().Agent.CS.Tuning()
	s.r.SetTuner(func() velma.CSTuning { mu.Lock(); defer mu.Unlock(); return tune })
	s.steps(1)
	if got := s.r.agent.CSTuning(); got != tune {
		t.Fatalf("tuning %+v, want the declared %+v", got, tune)
	}
	mu.Lock()
	tune.HeadMaxVelocity, tune.SafeStiffness = 0.5, 20
	mu.Unlock()
	s.steps(1)
	if got := s.r.agent.CSTuning(); got.HeadMaxVelocity != 0.5 || got.SafeStiffness != 20 {
		t.Errorf("after one iteration: %+v, want head_max_velocity 0.5, safe_stiffness 20", got)
	}
	mu.Lock()
	tune.SafeDamping = 3 // outside 0.5…2
	mu.Unlock()
	s.steps(1)
	if got := s.r.agent.CSTuning(); got.SafeDamping != DefaultParams().Agent.CS.SafeDamping {
		t.Errorf("refused damping applied: %+v", got)
	}
}

func TestCSConfig_SetTuningRefusesBadValues(t *testing.T) {
	p := DefaultParams()
	_ = p.Validate()
	cs, err := velma.NewCS(p.Agent.CS)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []velma.CSTuning{
		{SafeStiffness: math.NaN(), SafeDamping: 1, HeadMaxVelocity: 1},
		{SafeStiffness: 5, SafeDamping: 0.1, HeadMaxVelocity: 1},
		{SafeStiffness: 5, SafeDamping: 1, HeadMaxVelocity: 0},
		{SafeStiffness: 5000, SafeDamping: 1, HeadMaxVelocity: 1},
	} {
		if err := cs.SetTuning(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if cs.Tuning() != p.Agent.CS.Tuning() {
		t.Error("refused tunings changed cs")
	}
}
