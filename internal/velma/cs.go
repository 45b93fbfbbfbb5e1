package velma

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
	"github.com/fsmnodes/fsmnodes/internal/velma/la"
)

// CSConfig configures the control subsystem (defaults:
// docs/velma-model.md#controller-defaults).
type CSConfig struct {
	Period time.Duration // control period (2 ms)

	SafeStiffness float64 // joint stiffness in safe [Nm/rad] (5)
	SafeDamping   float64 // modal damping ratio in safe (1.9)

	JntStiffness [BodyDOF]float64 // default jnt_imp stiffness (torso 1000, arms 200)
	JntDamping   float64          // modal damping ratio in jnt_imp (0.5)

	CartStiffness [6]float64 // default wrist stiffness (1500 ×3 N/m, 150 ×3 Nm/rad)
	CartDamping   float64    // default ξ (0.35)

	CollisionDistance float64          // inSelfCollision below this surface distance [m] (0.04)
	RepulseDistance   float64          // repulsion activation distance [m] (0.15)
	RepulseForce      float64          // maximum repulsive force [N] (2)
	RepulseJntDamping [BodyDOF]float64 // joint damping of the repulsion stage

	LimitRange  float64          // joint-limit avoidance range [rad] (0.26)
	LimitTorque [BodyDOF]float64 // joint-limit avoidance maximum torque [Nm]

	HeadMaxVelocity float64 // head velocity limit [rad/s] (1.04)
}

// DefaultCSConfig returns the Velma defaults.
func DefaultCSConfig() CSConfig {
	c := CSConfig{
		Period:            2 * time.Millisecond,
		SafeStiffness:     5,
		SafeDamping:       1.9,
		JntDamping:        0.5,
		CartStiffness:     [6]float64{1500, 1500, 1500, 150, 150, 150},
		CartDamping:       0.35,
		CollisionDistance: 0.04,
		RepulseDistance:   0.15,
		RepulseForce:      2,
		RepulseJntDamping: [BodyDOF]float64{15, 10, 10, 5, 5, 2, 1, 1, 10, 10, 5, 5, 2, 1, 1},
		LimitRange:        0.26,
		LimitTorque:       [BodyDOF]float64{10, 10, 10, 10, 10, 10, 6, 6, 10, 10, 10, 10, 10, 6, 6},
		HeadMaxVelocity:   1.04,
	}
	c.JntStiffness[0] = 1000
	for i := 1; i < BodyDOF; i++ {
		c.JntStiffness[i] = 200
	}
	return c
}

// MaxHeadVelocity is the highest head_max_velocity Validate accepts, rad/s:
// about ten times the real head's limit, so a typo or an attacker's 1e308
// (or +Inf) never becomes the head's step.
const MaxHeadVelocity = 10.0

// Validate checks the configuration.
func (c *CSConfig) Validate() error {
	if c.Period <= 0 {
		return fmt.Errorf("cs config: period %v, want > 0", c.Period)
	}
	if !(c.SafeDamping >= 0.5 && c.SafeDamping <= 2) || !(c.JntDamping >= 0.5 && c.JntDamping <= 2) {
		return fmt.Errorf("cs config: joint damping ratios %g, %g, want 0.5…2", c.SafeDamping, c.JntDamping)
	}
	for i, k := range append(c.JntStiffness[:], c.SafeStiffness) {
		if !(k >= 0 && k <= 3000) {
			return fmt.Errorf("cs config: joint stiffness[%d] = %g, want 0…3000", i, k)
		}
	}
	for i, k := range c.CartStiffness {
		if !(k > 0 && k <= 5000) {
			return fmt.Errorf("cs config: cartesian stiffness[%d] = %g, want > 0 and ≤ 5000", i, k)
		}
	}
	if !(c.CartDamping > 0 && c.CartDamping <= 2) {
		return fmt.Errorf("cs config: cartesian damping %g, want 0…2", c.CartDamping)
	}
	if !(c.CollisionDistance >= 0 && c.RepulseDistance > c.CollisionDistance) {
		return fmt.Errorf("cs config: collision distances %g/%g, want 0 ≤ collision < repulse", c.CollisionDistance, c.RepulseDistance)
	}
	if !(c.HeadMaxVelocity > 0 && c.HeadMaxVelocity <= MaxHeadVelocity) {
		return fmt.Errorf("cs config: head_max_velocity %g, want > 0 and ≤ %g rad/s", c.HeadMaxVelocity, MaxHeadVelocity)
	}
	if !(c.LimitRange > 0) || math.IsInf(c.LimitRange, 0) {
		return fmt.Errorf("cs config: limit_range %g, want finite and > 0", c.LimitRange)
	}
	return nil
}

// CSTuning is the part of CSConfig that may change while cs runs (live
// parameters of the node that runs cs): the stiffness and damping of the
// safe behaviour and the head velocity limit.
type CSTuning struct {
	SafeStiffness   float64 // cs.safe_stiffness [Nm/rad]
	SafeDamping     float64 // cs.safe_damping (modal damping ratio)
	HeadMaxVelocity float64 // cs.head_max_velocity [rad/s]
}

// Tuning returns the tuning part of c.
func (c CSConfig) Tuning() CSTuning {
	return CSTuning{SafeStiffness: c.SafeStiffness, SafeDamping: c.SafeDamping, HeadMaxVelocity: c.HeadMaxVelocity}
}

// WithTuning returns c with t applied.
func (c CSConfig) WithTuning(t CSTuning) CSConfig {
	c.SafeStiffness, c.SafeDamping, c.HeadMaxVelocity = t.SafeStiffness, t.SafeDamping, t.HeadMaxVelocity
	return c
}

// SetTuning changes the tuning for the next iteration; an invalid one is
// refused with the reason (as Validate gives it) and changes nothing.
func (c *CS) SetTuning(t CSTuning) error {
	cfg := c.cfg.WithTuning(t)
	if err := cfg.Validate(); err != nil {
		return err
	}
	c.cfg = cfg
	return nil
}

// Tuning returns the tuning in force.
func (c *CS) Tuning() CSTuning { return c.cfg.Tuning() }

// CSStatus is what cs reports after an iteration.
type CSStatus struct {
	State           CSState
	Step            CSStep // how the state was chosen this iteration
	InSelfCollision bool
	MinDistance     float64 // smallest checked surface distance [m]
	MotorsReady     bool
	Jnt             TrajStatus
	Head            TrajStatus
	Cart            [2]TrajStatus
	QDesired        [BodyDOF]float64 // jnt_imp setpoint (or hold pose in safe)
	HeadDesired     [HeadDOF]float64
	Wrist           [2]kin.Frame // measured wrist poses (torso_base)
	WristCmd        [2]kin.Frame // cart_imp setpoints
	Torque          [BodyDOF]float64
	BehaviourErr    error // why CURRENT_BEHAVIOR_OK became false
}

type cartWrist struct {
	spline   *cartSpline
	setpoint kin.Frame
	k, xi    [6]float64
	path     CartTolerance
	goal     CartTolerance
	goalTime float64
	status   TrajStatus
}

// CS is the control subsystem velma_core_cs.
type CS struct {
	cfg   CSConfig
	fsm   *CSFSM
	state CSState
	ok    bool // CURRENT_BEHAVIOR_OK for the next iteration
	t     float64
	col   kin.CollisionModel
	cbuf  []kin.Contact

	q, dq [BodyDOF]float64
	body  kin.Body
	mass  [2]kin.ArmMass
	tau   [BodyDOF]float64

	hold [BodyDOF]float64 // safe

	jnt struct {
		spline   *jointSpline
		qd, dqd  [BodyDOF]float64
		k        [BodyDOF]float64
		path     []float64
		goal     []float64
		final    []float64
		goalTime float64
		status   TrajStatus
	}
	cart [2]cartWrist
	head struct {
		spline   *jointSpline
		cmd      [HeadDOF]float64
		sq, sdq  [HeadDOF]float64
		path     []float64
		goal     []float64
		final    []float64
		goalTime float64
		status   TrajStatus
		active   bool
	}
	st      CSStatus
	wccLeft [][2]float64 // left wrist polygon (negated right)
	jimp    [2]jointImpWork
	cimp    cartImpWork
}

// jointImpWork is the per-arm scratch space of joint impedance.
type jointImpWork struct {
	work *la.ModalWork
	k, m la.Mat
}

// NewCS returns cs in its initial state idle.
func NewCS(cfg CSConfig) (*CS, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &CS{cfg: cfg, fsm: NewCSFSM(), state: CSIdle, ok: true, col: kin.DefaultCollisionModel(),
		wccLeft: negatePolygon(wccPolygonRight)}, nil
}

// State returns the current state.
func (c *CS) State() CSState { return c.state }

// Status returns the report of the last iteration.
func (c *CS) Status() *CSStatus { return &c.st }

// received holds the accepted commands of one iteration.
type received struct {
	cart  [2]*CartImpCommand
	jnt   *JointTrajectoryCommand
	head  *JointTrajectoryCommand
	relax bool
	lost  uint32
}

func (r *received) any() bool { return r.cart[0] != nil || r.cart[1] != nil }

// Run is one cs iteration: it evaluates the FSM on ve_body's status and the
// task command (nil if none), runs the behaviour of the resulting state and
// returns the command for ve_body.
func (c *CS) Run(bs BodyStatus, task *TaskCommand) BodyCommand {
	c.t += c.cfg.Period.Seconds()
	var rx received
	if task != nil {
		c.accept(task, &rx)
	}
	p := CSPredicates{
		VeBodyStatusValid: bs.Valid,
		VeBodyInSafeState: bs.SC.SafeBehavior,
		CurrentBehaviorOK: c.ok,
		RecvCartImpCmd:    rx.any(),
		RecvJntImpCmd:     rx.jnt != nil,
		RecvRelaxCmd:      rx.relax,
	}
	n := 0
	for _, b := range []bool{p.RecvCartImpCmd, p.RecvJntImpCmd, p.RecvRelaxCmd} {
		if b {
			n++
		}
	}
	p.RecvOneCmd = n == 1
	if bs.Valid {
		c.q, c.dq = bs.BodyQ()
		c.body = kin.ForwardBody(c.q[:])
		c.cbuf = c.col.Contacts(&c.body, c.cfg.RepulseDistance, c.cbuf)
		c.st.MinDistance = math.Inf(1)
		for _, ct := range c.cbuf {
			c.st.MinDistance = math.Min(c.st.MinDistance, ct.Distance)
		}
		p.InSelfCollision = c.st.MinDistance < c.cfg.CollisionDistance
		p.MotorsReady = motorReady(&bs.Torso) && motorReady(&bs.HeadPan) && motorReady(&bs.HeadTilt)
		c.st.Wrist[0], c.st.Wrist[1] = c.body.Arm[0].Wrist(), c.body.Arm[1].Wrist()
	}
	step := c.fsm.Next(c.state, p)
	if step.Ended {
		c.exit(c.state, step.Next)
		prev := c.state
		c.state = step.Next
		c.enter(prev, &bs)
	}
	c.st.State, c.st.Step = c.state, step
	c.st.InSelfCollision, c.st.MotorsReady = p.InSelfCollision, p.MotorsReady
	c.dispatch(&rx)

	out := BodyCommand{Valid: true}
	err := c.behave(&bs)
	if err == nil && rx.lost != 0 {
		err = c.sourceLost(rx.lost)
	}
	if err == nil {
		for _, v := range c.tau {
			if !finite(v) {
				err = errors.New("non-finite joint torque")
				break
			}
		}
	}
	c.ok = err == nil
	c.st.BehaviourErr = err
	if err != nil {
		c.tau = [BodyDOF]float64{}
	}
	c.st.Torque = c.tau
	out.Torso.T, out.Torso.TValid = c.tau[0], true
	out.RArm.Valid, out.LArm.Valid = true, true
	copy(out.RArm.T[:], c.tau[1:8])
	copy(out.LArm.T[:], c.tau[8:15])
	if c.state == CSIdle {
		out.SC = ExitSafeState
	}
	if c.head.active {
		for i, m := range []*MotorCommand{&out.HeadPan, &out.HeadTilt} {
			m.Q, m.QValid = c.head.cmd[i], true
		}
	}
	if task != nil {
		m := task.Motors
		if m.TorsoEnable {
			out.Torso.Enable, out.Torso.EnableValid = true, true
		}
		if m.HeadPanEnable {
			out.HeadPan.Enable, out.HeadPan.EnableValid = true, true
		}
		if m.HeadTiltEnable {
			out.HeadTilt.Enable, out.HeadTilt.EnableValid = true, true
		}
		if m.HeadPanHome {
			out.HeadPan.HomingStart, out.HeadPan.HomingStartValid = true, true
		}
		if m.HeadTiltHome {
			out.HeadTilt.HomingStart, out.HeadTilt.HomingStartValid = true, true
		}
	}
	c.st.Jnt, c.st.Head, c.st.Cart[0], c.st.Cart[1] = c.jnt.status, c.head.status, c.cart[0].status, c.cart[1].status
	c.st.QDesired, c.st.HeadDesired = c.jnt.qd, c.head.cmd
	if c.state == CSSafe {
		c.st.QDesired = c.hold
	}
	c.st.WristCmd[0], c.st.WristCmd[1] = c.cart[0].setpoint, c.cart[1].setpoint
	return out
}

// sourceLost returns a behaviour error if id names the body motion that is
// running in the current state: a motion without its command source is a
// fault of the behaviour, which makes cs leave it through IN_ERROR.
func (c *CS) sourceLost(id uint32) error {
	running := func(s TrajStatus) bool { return s.ID == id && s.State == TrajActive }
	switch {
	case c.state == CSJntImp && running(c.jnt.status):
		return fmt.Errorf("jnt_imp: %w (motion %d)", ErrSourceLost, id)
	case c.state == CSCartImp && (running(c.cart[0].status) || running(c.cart[1].status)):
		return fmt.Errorf("cart_imp: %w (motion %d)", ErrSourceLost, id)
	}
	return nil
}

func motorReady(m *MotorStatus) bool { return m.Enabled && !m.HomingRequired && m.OK }

// accept validates the task's trajectory commands; invalid ones are reported
// as rejected and count as not received.
func (c *CS) accept(task *TaskCommand, rx *received) {
	for s := range 2 {
		if cmd := task.Cart[s]; cmd != nil {
			if cmd.Validate() != nil {
				c.cart[s].status = TrajStatus{cmd.ID, TrajRejected}
			} else {
				rx.cart[s] = cmd
			}
		}
	}
	if cmd := task.Jnt; cmd != nil {
		if cmd.Validate(BodyLimits[:]) != nil {
			c.jnt.status = TrajStatus{cmd.ID, TrajRejected}
		} else {
			rx.jnt = cmd
		}
	}
	if cmd := task.Head; cmd != nil {
		if cmd.Validate(HeadLimits[:]) != nil {
			c.head.status = TrajStatus{cmd.ID, TrajRejected}
		} else {
			rx.head = cmd
		}
	}
	rx.relax = task.Relax
	rx.lost = task.SourceLost
}

func abortIfActive(s *TrajStatus) {
	if s.State == TrajActive {
		s.State = TrajAborted
	}
}

func isMotion(s CSState) bool { return s == CSRelax || s == CSCartImp || s == CSJntImp }

// exit runs when the state from ends (even into itself).
func (c *CS) exit(from, to CSState) {
	if from == to {
		return
	}
	switch from {
	case CSJntImp:
		abortIfActive(&c.jnt.status)
		c.jnt.spline = nil
	case CSCartImp:
		for s := range 2 {
			abortIfActive(&c.cart[s].status)
			c.cart[s].spline = nil
		}
	}
	if isMotion(from) && !isMotion(to) {
		abortIfActive(&c.head.status)
		c.head.spline, c.head.active = nil, false
	}
}

// enter runs the entry actions of the new state.
func (c *CS) enter(prev CSState, bs *BodyStatus) {
	if prev == c.state {
		return
	}
	switch c.state {
	case CSSafe:
		c.hold = c.q
	case CSJntImp:
		c.jnt.qd, c.jnt.dqd = c.q, [BodyDOF]float64{}
		c.jnt.k = c.cfg.JntStiffness
	case CSCartImp:
		for s := range 2 {
			w := &c.cart[s]
			w.setpoint = c.body.Arm[s].Wrist()
			w.k = c.cfg.CartStiffness
			for i := range 6 {
				w.xi[i] = c.cfg.CartDamping
			}
		}
	}
	if isMotion(c.state) && !isMotion(prev) {
		c.head.cmd = [HeadDOF]float64{bs.HeadPan.Q, bs.HeadTilt.Q}
		c.head.active = true
	}
}

// dispatch hands this iteration's commands to the current behaviour, or
// rejects those it cannot take.
func (c *CS) dispatch(rx *received) {
	now := c.t
	if cmd := rx.jnt; cmd != nil {
		if c.state == CSJntImp {
			abortIfActive(&c.jnt.status)
			sp := newJointSpline(c.jnt.qd[:], c.jnt.dqd[:], now+cmd.Start.Seconds(), cmd.Points)
			c.jnt.spline = &sp
			if cmd.Stiffness != nil {
				for i, k := range cmd.Stiffness {
					if k > 0 {
						c.jnt.k[i] = k
					}
				}
			}
			c.jnt.path, c.jnt.goal = cmd.PathTolerance, cmd.GoalTolerance
			c.jnt.final = cmd.Points[len(cmd.Points)-1].Positions
			c.jnt.goalTime = cmd.GoalTimeTolerance.Seconds()
			c.jnt.status = TrajStatus{cmd.ID, TrajActive}
		} else {
			c.jnt.status = TrajStatus{cmd.ID, TrajRejected}
		}
	}
	for s := range 2 {
		cmd := rx.cart[s]
		if cmd == nil {
			continue
		}
		w := &c.cart[s]
		if c.state != CSCartImp {
			w.status = TrajStatus{cmd.ID, TrajRejected}
			continue
		}
		abortIfActive(&w.status)
		sp := newCartSpline(w.setpoint, now+cmd.Start.Seconds(), cmd.Points)
		w.spline = &sp
		for i := range 6 {
			if cmd.Stiffness[i] > 0 {
				w.k[i] = cmd.Stiffness[i]
			}
			if cmd.Damping[i] > 0 {
				w.xi[i] = cmd.Damping[i]
			}
		}
		w.path, w.goal, w.goalTime = cmd.PathTolerance, cmd.GoalTolerance, cmd.GoalTimeTolerance.Seconds()
		w.status = TrajStatus{cmd.ID, TrajActive}
	}
	if cmd := rx.head; cmd != nil {
		if !c.head.active {
			c.head.status = TrajStatus{cmd.ID, TrajRejected}
		} else {
			abortIfActive(&c.head.status)
			sp := newJointSpline(c.head.cmd[:], make([]float64, HeadDOF), now+cmd.Start.Seconds(), cmd.Points)
			c.head.spline = &sp
			c.head.path, c.head.goal = cmd.PathTolerance, cmd.GoalTolerance
			c.head.final = cmd.Points[len(cmd.Points)-1].Positions
			c.head.goalTime = cmd.GoalTimeTolerance.Seconds()
			c.head.status = TrajStatus{cmd.ID, TrajActive}
		}
	}
}

// behave runs the behaviour of the current state into c.tau.
func (c *CS) behave(bs *BodyStatus) error {
	c.tau = [BodyDOF]float64{}
	if c.state == CSIdle {
		return nil
	}
	if !bs.Valid {
		return errors.New("no ve_body status")
	}
	if isMotion(c.state) {
		c.headStep(bs)
	}
	switch c.state {
	case CSSafe:
		var k [BodyDOF]float64
		for i := range k {
			k[i] = c.cfg.SafeStiffness
		}
		var zero [BodyDOF]float64
		return c.jointImpedance(&k, c.cfg.SafeDamping, &c.hold, &zero)
	case CSRelax:
		c.repulse()
		c.wristConstraints()
		return nil
	case CSJntImp:
		c.jntStep()
		if err := c.jointImpedance(&c.jnt.k, c.cfg.JntDamping, &c.jnt.qd, &c.jnt.dqd); err != nil {
			return err
		}
		c.repulse()
		return nil
	case CSCartImp:
		if err := c.cartStep(); err != nil {
			return err
		}
		c.jointLimits()
		c.repulse()
		c.wristConstraints()
		return nil
	}
	return fmt.Errorf("no behaviour for state %v", c.state)
}

// jntStep advances the joint trajectory and checks its tolerances.
func (c *CS) jntStep() {
	j := &c.jnt
	if j.spline == nil {
		j.dqd = [BodyDOF]float64{}
		return
	}
	j.spline.Sample(c.t, j.qd[:], j.dqd[:])
	if j.status.State != TrajActive {
		return
	}
	end := j.spline.End()
	if c.t < end {
		for i, tol := range j.path {
			if tol > 0 && math.Abs(j.qd[i]-c.q[i]) > tol {
				j.status.State = TrajPathViolated
				j.qd, j.dqd, j.spline = c.q, [BodyDOF]float64{}, nil
				return
			}
		}
		return
	}
	if withinGoal(j.final, c.q[:], j.goal) {
		j.status.State = TrajSucceeded
	} else if c.t > end+j.goalTime {
		j.status.State = TrajGoalViolated
	}
}

func withinGoal(final, q, tol []float64) bool {
	for i, t := range tol {
		if t > 0 && math.Abs(final[i]-q[i]) > t {
			return false
		}
	}
	return true
}

// headStep advances the head trajectory through the velocity limiter.
func (c *CS) headStep(bs *BodyStatus) {
	h := &c.head
	if h.spline == nil {
		return
	}
	h.spline.Sample(c.t, h.sq[:], h.sdq[:])
	maxStep := c.cfg.HeadMaxVelocity * c.cfg.Period.Seconds()
	for i := range HeadDOF {
		h.cmd[i] += math.Max(-maxStep, math.Min(maxStep, h.sq[i]-h.cmd[i]))
	}
	if h.status.State != TrajActive {
		return
	}
	q := []float64{bs.HeadPan.Q, bs.HeadTilt.Q}
	end := h.spline.End()
	if c.t < end {
		for i, tol := range h.path {
			if tol > 0 && math.Abs(h.cmd[i]-q[i]) > tol {
				h.status.State = TrajPathViolated
				h.spline = nil
				return
			}
		}
		return
	}
	if withinGoal(h.final, q, h.goal) {
		h.status.State = TrajSucceeded
	} else if c.t > end+h.goalTime {
		h.status.State = TrajGoalViolated
	}
}
