package velma_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/velma"
	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
)

const deg = math.Pi / 180

func tol(v float64, n int) []float64 {
	t := make([]float64, n)
	for i := range t {
		t[i] = v
	}
	return t
}

// readyRig brings the robot up with motors enabled and homed.
func readyRig(t *testing.T) *rig {
	r := newRig(t)
	r.bringUp(true)
	return r
}

func TestControl_JointTrajectory_FollowedWithinPathAndGoalTolerance(t *testing.T) {
	r := readyRig(t)
	q0, _ := r.rep.Status.BodyQ()
	mid, goal := q0, q0
	delta := [velma.BodyDOF]float64{0.3, 0.3, 0.2, -0.3, 0.35, 0.2, 0.2, 0.3, -0.3, -0.2, 0.3, -0.35, -0.2, -0.2, -0.3}
	for i := range goal {
		mid[i] = q0[i] + delta[i]/2
		goal[i] = q0[i] + delta[i]
	}
	vel := make([]float64, velma.BodyDOF)
	for i := range vel {
		vel[i] = delta[i] / 4 // mid-point velocity of a 4 s move
	}
	cmd := &velma.JointTrajectoryCommand{
		ID:    7,
		Start: 200 * time.Millisecond,
		Points: []velma.JointPoint{
			{Positions: mid[:], Velocities: vel, TimeFromStart: 2 * time.Second},
			{Positions: goal[:], Velocities: make([]float64, velma.BodyDOF), TimeFromStart: 4 * time.Second},
		},
		PathTolerance:     tol(5*deg, velma.BodyDOF),
		GoalTolerance:     tol(1*deg, velma.BodyDOF),
		GoalTimeTolerance: time.Second,
	}
	rep := r.step(&velma.TaskCommand{Jnt: cmd})
	if rep.CS.State != velma.CSJntImp || rep.CS.Jnt != (velma.TrajStatus{ID: 7, State: velma.TrajActive}) {
		t.Fatalf("cs %v jnt %v, want jnt_imp/active", rep.CS.State, rep.CS.Jnt)
	}
	maxErr := 0.0
	for i := 0; i < 3000 && !rep.CS.Jnt.State.Done(); i++ {
		rep = r.step(nil)
		if rep.BodyState != velma.BodyTransp || rep.CS.State != velma.CSJntImp {
			t.Fatalf("iteration %d: ve_body %v cs %v (faults %b)", i, rep.BodyState, rep.CS.State, rep.SC.FaultType)
		}
		q := r.sim.BodyQ()
		for j := range q {
			maxErr = math.Max(maxErr, math.Abs(q[j]-rep.CS.QDesired[j]))
		}
	}
	if rep.CS.Jnt.State != velma.TrajSucceeded {
		q := r.sim.BodyQ()
		t.Fatalf("trajectory ended %v; q %.4f goal %.4f", rep.CS.Jnt.State, q, goal)
	}
	q := r.sim.BodyQ()
	for j := range q {
		if e := math.Abs(q[j] - goal[j]); e > 1*deg {
			t.Errorf("joint %s ends %.4f rad from goal", velma.BodyJointNames[j], e)
		}
	}
	if maxErr > 5*deg {
		t.Fatalf("max tracking error %.4f rad exceeds path tolerance", maxErr)
	}
	t.Logf("max tracking error %.2f°", maxErr/deg)
}

func TestControl_JointTrajectory_PathToleranceViolation_Reported(t *testing.T) {
	r := readyRig(t)
	q0, _ := r.rep.Status.BodyQ()
	goal := q0
	goal[1] += 0.5
	cmd := &velma.JointTrajectoryCommand{ID: 3,
		Points:        []velma.JointPoint{{Positions: goal[:], TimeFromStart: 2 * time.Second}},
		PathTolerance: tol(5*deg, velma.BodyDOF)}
	r.step(&velma.TaskCommand{Jnt: cmd})
	var ext [velma.BodyDOF]float64
	ext[1] = -40 // hold the joint back
	r.sim.SetExternalTorque(ext)
	r.until(1500, "path violation", func(rep *velma.Report) bool { return rep.CS.Jnt.State == velma.TrajPathViolated })
}

func TestControl_CartesianGoal_Reached(t *testing.T) {
	r := readyRig(t)
	start := r.rep.CS.Wrist[kin.Right]
	goal := kin.Frame{R: geom.RotZ(0.15).Mul(start.R), P: start.P.Add(geom.Vec3{X: 0.08, Y: -0.05, Z: 0.1})}
	cmd := &velma.CartImpCommand{
		ID:                11,
		Points:            []velma.CartPoint{{Pose: goal, TimeFromStart: 3 * time.Second}},
		PathTolerance:     velma.CartTolerance{Position: 0.05, Rotation: 0.2},
		GoalTolerance:     velma.CartTolerance{Position: 0.01, Rotation: 0.03},
		GoalTimeTolerance: 2 * time.Second,
	}
	rep := r.step(&velma.TaskCommand{Cart: [2]*velma.CartImpCommand{kin.Right: cmd}})
	if rep.CS.State != velma.CSCartImp {
		t.Fatalf("cs %v, want cart_imp", rep.CS.State)
	}
	leftStart := rep.CS.Wrist[kin.Left]
	for i := 0; i < 3000 && !rep.CS.Cart[kin.Right].State.Done(); i++ {
		rep = r.step(nil)
		if rep.BodyState != velma.BodyTransp || rep.CS.State != velma.CSCartImp {
			t.Fatalf("iteration %d: ve_body %v cs %v faults %b", i, rep.BodyState, rep.CS.State, rep.SC.FaultType)
		}
	}
	if s := rep.CS.Cart[kin.Right]; s.ID != 11 || s.State != velma.TrajSucceeded {
		t.Fatalf("right wrist %+v, want succeeded", s)
	}
	w := rep.CS.Wrist[kin.Right]
	if d := w.P.Sub(goal.P).Norm(); d > 0.01 {
		t.Fatalf("wrist %.4f m from goal", d)
	}
	if a := geom.AngleBetween(w.R, goal.R); a > 0.03 {
		t.Fatalf("wrist %.4f rad from goal orientation", a)
	}
	// the left wrist was told nothing and holds its pose
	if d := rep.CS.Wrist[kin.Left].P.Sub(leftStart.P).Norm(); d > 0.02 {
		t.Fatalf("left wrist drifted %.4f m", d)
	}
}

func TestControl_Relax_ArmMovesUnderExternalTorque(t *testing.T) {
	r := readyRig(t)
	rep := r.step(&velma.TaskCommand{Relax: true})
	if rep.CS.State != velma.CSRelax {
		t.Fatalf("cs %v, want relax", rep.CS.State)
	}
	q0 := r.sim.BodyQ()
	var ext [velma.BodyDOF]float64
	ext[1] = 4 // Nm on right_arm_0_joint
	r.sim.SetExternalTorque(ext)
	for range 250 {
		r.step(nil)
	}
	d1 := r.sim.BodyQ()[1] - q0[1]
	for range 250 {
		r.step(nil)
	}
	d2 := r.sim.BodyQ()[1] - q0[1]
	if d1 < 0.05 || d2 < d1+0.05 {
		t.Fatalf("right_arm_0 moved %.3f rad after 0.5 s and %.3f after 1 s; want free motion", d1, d2)
	}
	if r.rep.CS.State != velma.CSRelax || r.rep.BodyState != velma.BodyTransp {
		t.Fatalf("cs %v ve_body %v", r.rep.CS.State, r.rep.BodyState)
	}
	// the same torque in jnt_imp is resisted by the 200 Nm/rad stiffness
	r2 := readyRig(t)
	r2.step(&velma.TaskCommand{Jnt: holdCommand(r2, 1)})
	q0 = r2.sim.BodyQ()
	r2.sim.SetExternalTorque(ext)
	for range 500 {
		r2.step(nil)
	}
	if d := r2.sim.BodyQ()[1] - q0[1]; d > 0.04 {
		t.Fatalf("jnt_imp yielded %.3f rad to 4 Nm", d)
	}
}

func TestControl_SelfCollision_EndsJntImp(t *testing.T) {
	r := readyRig(t)
	q0, _ := r.rep.Status.BodyQ()
	goal := q0
	// right hand towards the torso; the repulsion stage slows it down near
	// the torso, and if it stops short of the 0.04 m collision distance an
	// external push drives it in
	copy(goal[1:8], []float64{1.8, -1.7, 0, 2.0, 0, 0, 0})
	cmd := &velma.JointTrajectoryCommand{ID: 5, Points: []velma.JointPoint{{Positions: goal[:], TimeFromStart: 6 * time.Second}}}
	rep := r.step(&velma.TaskCommand{Jnt: cmd})
	for i := 0; i < 3200 && rep.CS.State == velma.CSJntImp; i++ {
		rep = r.step(nil)
	}
	var ext [velma.BodyDOF]float64
	ext[1], ext[2] = 10, -25
	r.sim.SetExternalTorque(ext)
	for i := 0; rep.CS.State == velma.CSJntImp; i++ {
		if i > 1000 {
			t.Fatalf("never left jnt_imp (min distance %.3f)", rep.CS.MinDistance)
		}
		rep = r.step(nil)
	}
	if rep.CS.State != velma.CSSafe || rep.CS.Step.InError || !rep.CS.InSelfCollision {
		t.Fatalf("left jnt_imp to %v (%+v, collision %v), want safe via self-collision", rep.CS.State, rep.CS.Step, rep.CS.InSelfCollision)
	}
	if rep.CS.Jnt.State == velma.TrajActive {
		t.Fatal("trajectory still active after leaving jnt_imp")
	}
	// in self-collision safe refuses jnt_imp but accepts relax
	rep = r.step(&velma.TaskCommand{Jnt: holdCommand(r, 6)})
	if rep.CS.State != velma.CSSafe || rep.CS.Jnt.State != velma.TrajRejected {
		t.Fatalf("cs %v jnt %v, want safe/rejected in self-collision", rep.CS.State, rep.CS.Jnt)
	}
	if rep = r.step(&velma.TaskCommand{Relax: true}); rep.CS.State != velma.CSRelax {
		t.Fatalf("cs %v, want relax", rep.CS.State)
	}
}

func TestControl_CartImp_NoCommandHolds_SelfCollisionEndsInSafe(t *testing.T) {
	r := readyRig(t)
	start := r.rep.CS.Wrist[kin.Right]
	hold := &velma.CartImpCommand{ID: 1, Points: []velma.CartPoint{{Pose: start, TimeFromStart: 100 * time.Millisecond}}}
	r.step(&velma.TaskCommand{Cart: [2]*velma.CartImpCommand{kin.Right: hold}})
	// no further command and no collision: τ_cart_imp is false, cs stays
	for range 500 {
		if rep := r.step(nil); rep.CS.State != velma.CSCartImp {
			t.Fatalf("cs %v without command, want cart_imp", rep.CS.State)
		}
	}
	// drive the right wrist slowly into the torso column
	into := kin.Frame{R: start.R, P: geom.Vec3{X: 0.12, Y: -0.12, Z: 0.85}}
	rep := r.step(&velma.TaskCommand{Cart: [2]*velma.CartImpCommand{kin.Right: {ID: 2,
		Points: []velma.CartPoint{{Pose: into, TimeFromStart: 5 * time.Second}}}}})
	for i := 0; rep.CS.State == velma.CSCartImp; i++ {
		if i > 4000 {
			t.Fatalf("never left cart_imp (min distance %.3f)", rep.CS.MinDistance)
		}
		rep = r.step(nil)
	}
	if rep.CS.State != velma.CSSafe || rep.CS.Step.InError || !rep.CS.InSelfCollision {
		t.Fatalf("left cart_imp to %v (%+v, ve_body %v faults %b), want safe via self-collision",
			rep.CS.State, rep.CS.Step, rep.BodyState, rep.SC.FaultType)
	}
}

func TestControl_Head_TrajectoryAndRejectionInSafe(t *testing.T) {
	r := readyRig(t)
	head := &velma.JointTrajectoryCommand{ID: 9,
		Points:        []velma.JointPoint{{Positions: []float64{0.5, -0.3}, TimeFromStart: time.Second}},
		GoalTolerance: tol(0.01, 2), GoalTimeTolerance: time.Second}
	if rep := r.step(&velma.TaskCommand{Head: head}); rep.CS.Head.State != velma.TrajRejected {
		t.Fatalf("head command in safe: %v, want rejected", rep.CS.Head.State)
	}
	r.step(&velma.TaskCommand{Relax: true})
	rep := r.step(&velma.TaskCommand{Head: head})
	for i := 0; i < 1500 && !rep.CS.Head.State.Done(); i++ {
		rep = r.step(nil)
	}
	if rep.CS.Head.State != velma.TrajSucceeded {
		t.Fatalf("head %v", rep.CS.Head.State)
	}
	if hq := r.sim.HeadQ(); math.Abs(hq[0]-0.5) > 0.01 || math.Abs(hq[1]+0.3) > 0.01 {
		t.Fatalf("head at %v", hq)
	}
}

func TestControl_Relax_WristConstraintKeepsQ5Q6InTheirRegion(t *testing.T) {
	r := readyRig(t)
	r.step(&velma.TaskCommand{Relax: true})
	var ext [velma.BodyDOF]float64
	ext[6] = 3 // Nm on right_arm_5_joint, towards the forbidden notch at q5 ≈ 0.04
	r.sim.SetExternalTorque(ext)
	worst := 0.0
	for range 1500 {
		r.step(nil)
		q := r.sim.BodyQ()
		if in, d := velma.WristRegion(kin.Right, q[6], q[7]); !in {
			worst = math.Max(worst, d)
		}
	}
	q := r.sim.BodyQ()
	if q[6] < 0.1 {
		t.Fatalf("right_arm_5 at %.3f: the push should have moved it along the region's edge", q[6])
	}
	if worst > 0.05 {
		t.Fatalf("(q5, q6) left the wrist region by %.3f rad", worst)
	}
}

// A lost command source mid-motion is a behaviour fault: the iteration that
// learns of it reports the error, the next ends the state with IN_ERROR →
// idle, and cs returns to safe, where the arm comes to rest at the pose it
// had; ve_body stays transparent throughout. A stale ID is ignored.
func TestControl_SourceLostMidMotion_IdleThenSafe(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state velma.CSState
		start func(r *rig) *velma.TaskCommand
		traj  func(rep *velma.Report) velma.TrajStatus
	}{
		{"jnt_imp", velma.CSJntImp, func(r *rig) *velma.TaskCommand {
			q, _ := r.rep.Status.BodyQ()
			goal := q
			goal[2] += 0.5
			return &velma.TaskCommand{Jnt: &velma.JointTrajectoryCommand{ID: 7,
				Points: []velma.JointPoint{{Positions: goal[:], TimeFromStart: 3 * time.Second}}}}
		}, func(rep *velma.Report) velma.TrajStatus { return rep.CS.Jnt }},
		{"cart_imp", velma.CSCartImp, func(r *rig) *velma.TaskCommand {
			w := r.rep.CS.Wrist[kin.Right]
			to := kin.Frame{R: w.R, P: w.P.Add(geom.Vec3{X: 0.1, Y: 0, Z: 0.1})}
			return &velma.TaskCommand{Cart: [2]*velma.CartImpCommand{kin.Right: {ID: 7,
				Points: []velma.CartPoint{{Pose: to, TimeFromStart: 3 * time.Second}}}}}
		}, func(rep *velma.Report) velma.TrajStatus { return rep.CS.Cart[kin.Right] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := readyRig(t)
			rep := r.step(tc.start(r))
			for range 500 { // 1 s of motion
				rep = r.step(nil)
			}
			if rep.CS.State != tc.state || tc.traj(rep).State != velma.TrajActive {
				t.Fatalf("cs %v motion %+v, want %v with the motion active", rep.CS.State, tc.traj(rep), tc.state)
			}
			// a stale id changes nothing
			if rep = r.step(&velma.TaskCommand{SourceLost: 6}); rep.CS.BehaviourErr != nil || rep.CS.State != tc.state {
				t.Fatalf("stale id: cs %v error %v", rep.CS.State, rep.CS.BehaviourErr)
			}
			rep = r.step(&velma.TaskCommand{SourceLost: 7})
			if !errors.Is(rep.CS.BehaviourErr, velma.ErrSourceLost) || rep.CS.State != tc.state {
				t.Fatalf("cs %v error %v, want %v reporting %v", rep.CS.State, rep.CS.BehaviourErr, tc.state, velma.ErrSourceLost)
			}
			if rep = r.step(nil); rep.CS.State != velma.CSIdle || !rep.CS.Step.InError {
				t.Fatalf("cs %v (%+v), want idle via IN_ERROR", rep.CS.State, rep.CS.Step)
			}
			if st := tc.traj(rep); st.ID != 7 || st.State != velma.TrajAborted {
				t.Fatalf("motion %+v, want 7 aborted", st)
			}
			if rep = r.step(nil); rep.CS.State != velma.CSSafe {
				t.Fatalf("cs %v, want safe", rep.CS.State)
			}
			q0, _ := rep.Status.BodyQ()
			for range 500 {
				if rep = r.step(nil); rep.CS.State != velma.CSSafe || rep.BodyState != velma.BodyTransp {
					t.Fatalf("cs %v ve_body %v, want safe/transp", rep.CS.State, rep.BodyState)
				}
			}
			q1, dq1 := rep.Status.BodyQ()
			for i := range q1 {
				if math.Abs(q1[i]-q0[i]) > 0.05 || math.Abs(dq1[i]) > 0.02 {
					t.Fatalf("joint %d moved %.3f rad (%.3f rad/s) in safe, want it at rest", i, q1[i]-q0[i], dq1[i])
				}
			}
		})
	}
}
