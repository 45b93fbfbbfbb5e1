package subsys

import (
	"fmt"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/iobuf"
	"github.com/fsmnodes/fsmnodes/internal/velma"
)

// CSOptions configure the cs process loop.
type CSOptions struct {
	Buffers Buffers
	// StatusTimeout is how long cs waits for ve_body's status before it
	// runs an iteration without it (¬veBodyStatusValid). ve_body owns the
	// clock and the safety decision, so this is generous (default 20 ms):
	// it only has to notice a dead ve_body.
	StatusTimeout time.Duration
	// TaskTimeout is how long the task source (the ROS interface) may stay
	// silent while a body motion runs before cs treats the motion as one
	// whose command source is lost (default 0.5 s).
	TaskTimeout time.Duration
	// (optional) Tuning returns cs's live tuning; Step reads it every
	// iteration and applies a change before computing (nil: fixed).
	Tuning func() velma.CSTuning
	// (optional) State is called by Step, on the loop goroutine, after
	// every iteration with cs's state (the FSM introspection). It must not
	// block.
	State func(velma.CSState)
}

// CSReport is cs's state for introspection.
type CSReport struct {
	Runs          uint64 // cs iterations
	BodyIteration uint64 // ve_body iteration of the last status used
	State         velma.CSState
	NoStatus      uint64 // iterations run without ve_body's status
	TaskSeq       uint64
	TaskLost      uint64 // task records overwritten before cs read them
	SourceLost    uint64 // motions ended because the task source went silent
	LastLostID    uint32
	BodyConnected bool
	TaskConnected bool
}

// CS is the velma_core_cs process loop: driven by ve_body's status
// records, it runs cs once per status and answers with a command for the
// same iteration.
type CS struct {
	opt CSOptions
	cs  *velma.CS

	stR   *iobuf.Reader[BodyStatus]
	taskR *iobuf.Reader[Task]
	cmdW  *iobuf.Writer[BodyCommand]
	outW  *iobuf.Writer[CSStatus]

	lastSt, lastTask uint64
	bodyRec          BodyStatus // the last good record
	readRec          BodyStatus // scratch: garbage after a refused read
	taskRec          Task
	cmdRec           BodyCommand
	outRec           CSStatus
	pending          velma.TaskCommand
	lastTaskAt       time.Time
	taskSeen, lost   bool
	runs             uint64

	// work is the loop's own report; it is copied to rep, which Report
	// reads, when mu is free (publish).
	work CSReport
	mu   sync.Mutex
	rep  CSReport
}

// NewCS creates cs's output buffers; the inputs are opened as their
// writers appear.
func NewCS(cfg velma.CSConfig, opt CSOptions) (*CS, error) {
	if opt.StatusTimeout <= 0 || opt.TaskTimeout <= 0 {
		return nil, fmt.Errorf("cs: status timeout %v and task timeout %v must be > 0", opt.StatusTimeout, opt.TaskTimeout)
	}
	core, err := velma.NewCS(cfg)
	if err != nil {
		return nil, err
	}
	c := &CS{opt: opt, cs: core}
	if c.cmdW, err = iobuf.Create[BodyCommand](opt.Buffers.Path(BodyCommandFile), loopSlots); err != nil {
		return nil, fmt.Errorf("cs: %w", err)
	}
	if c.outW, err = iobuf.Create[CSStatus](opt.Buffers.Path(CSStatusFile), loopSlots); err != nil {
		c.cmdW.Close()
		return nil, fmt.Errorf("cs: %w", err)
	}
	c.connect()
	return c, nil
}

func (c *CS) connect() {
	if c.stR == nil {
		if r, err := iobuf.Open[BodyStatus](c.opt.Buffers.Path(BodyStatusFile)); err == nil {
			c.stR, c.lastSt = r, r.Head()
		}
	}
	if c.taskR == nil {
		if r, err := iobuf.Open[Task](c.opt.Buffers.Path(TaskFile)); err == nil {
			c.taskR, c.lastTask = r, r.Head() // commands sent before cs started are not ours
		}
	}
}

// Close closes the buffers.
func (c *CS) Close() {
	c.cmdW.Close()
	c.outW.Close()
	if c.stR != nil {
		c.stR.Close()
	}
	if c.taskR != nil {
		c.taskR.Close()
	}
}

// Report returns cs's current state (any goroutine), as of one of the
// last iterations: the loop never waits for the lock a reader holds.
func (c *CS) Report() CSReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rep
}

// takeTasks merges every task record since the last iteration; it returns
// nil when there is nothing to pass to cs.
func (c *CS) takeTasks(now time.Time) *velma.TaskCommand {
	if c.taskR != nil {
		h := c.taskR.Head()
		for s := c.lastTask + 1; s <= h; s++ {
			if err := c.taskR.Read(s, &c.taskRec); err != nil {
				c.outRec.TaskLost++
				continue
			}
			c.taskSeen, c.lost, c.lastTaskAt = true, false, now
			cmd := c.taskRec.Command()
			if !cmd.Empty() {
				MergeTask(&c.pending, &cmd)
			}
		}
		if h > c.lastTask {
			c.lastTask = h
		}
	}
	if c.taskSeen && !c.lost && now.Sub(c.lastTaskAt) > c.opt.TaskTimeout {
		c.lost = true
		if id := runningMotion(c.cs.Status()); id != 0 {
			c.pending.SourceLost = id
			c.work.SourceLost++
			c.work.LastLostID = id
		}
	}
	if c.pending.Empty() {
		return nil
	}
	return &c.pending
}

// publish copies the loop's report for Report when no reader holds the
// lock; otherwise a later iteration does. The loop runs at real-time
// priority, and waiting for a lock held by a goroutine of the normal
// scheduler (the 50 Hz diagnostics) is a priority inversion that can make
// cs answer ve_body late. (Removing it changed no measured figure: the late
// answers seen at 2 ms have another cause, docs/velma.md.)
func (c *CS) publish() {
	if c.mu.TryLock() {
		c.rep = c.work
		c.mu.Unlock()
	}
}

// runningMotion returns the id of the body motion cs is running, or 0.
func runningMotion(st *velma.CSStatus) uint32 {
	switch st.State {
	case velma.CSJntImp:
		if st.Jnt.State == velma.TrajActive {
			return st.Jnt.ID
		}
	case velma.CSCartImp:
		for _, w := range st.Cart {
			if w.State == velma.TrajActive {
				return w.ID
			}
		}
	}
	return 0
}

// Step waits for ve_body's next status (at most StatusTimeout), runs one cs
// iteration and publishes the command and cs's status. It allocates
// nothing unless a task command with trajectories arrives.
func (c *CS) Step() {
	// Without ve_body's status buffer each run sleeps StatusTimeout, so
	// looking for it every run costs one failed open per sleep; waiting
	// reconnectEvery runs made cs find a ve_body started after it up to
	// 100 × StatusTimeout (2 s in the benchmark) late, every iteration of
	// that a missed command. The task buffer is optional: looked for now
	// and then.
	if c.stR == nil || (c.taskR == nil && c.runs%reconnectEvery == 0) {
		c.connect()
	}
	c.runs++
	if c.opt.Tuning != nil {
		if t := c.opt.Tuning(); t != c.cs.Tuning() {
			_ = c.cs.SetTuning(t) // checked by the parameters; a refused one keeps the old tuning
		}
	}
	got := false
	if c.stR != nil && c.stR.Wait(c.lastSt, c.opt.StatusTimeout) {
		if s := c.stR.Latest(&c.readRec); s > c.lastSt {
			c.lastSt, got = s, true
			c.bodyRec = c.readRec
		} else {
			c.lastSt = max(c.lastSt, c.stR.Head()) // a damaged record: skip it, do not spin on it
		}
	} else if c.stR == nil {
		time.Sleep(c.opt.StatusTimeout)
	}
	var bs velma.BodyStatus
	if got {
		bs = c.bodyRec.Status
	}
	task := c.takeTasks(time.Now())
	cmd := c.cs.Run(bs, task)
	c.pending = velma.TaskCommand{}
	if got {
		c.cmdRec.Iteration, c.cmdRec.Command = c.bodyRec.Iteration, cmd
		c.cmdW.Write(&c.cmdRec)
	}
	st := c.cs.Status()
	o := &c.outRec
	o.Iteration = 0
	if got {
		o.Iteration = c.bodyRec.Iteration
	}
	o.Runs, o.TaskSeq = c.runs, c.lastTask
	o.State, o.Step, o.Collision, o.MinDist, o.Motors = st.State, st.Step, st.InSelfCollision, st.MinDistance, st.MotorsReady
	o.Jnt, o.Head, o.Cart = st.Jnt, st.Head, st.Cart
	o.QDesired, o.HeadDes, o.Wrist, o.WristCmd, o.Torque = st.QDesired, st.HeadDesired, st.Wrist, st.WristCmd, st.Torque
	o.ErrLen = 0
	if st.BehaviourErr != nil {
		o.ErrLen = int32(copy(o.Err[:], st.BehaviourErr.Error()))
	}
	o.Body, o.BodyRecent = c.bodyRec, got
	c.outW.Write(o)

	r := &c.work
	r.Runs, r.State, r.TaskSeq, r.TaskLost = c.runs, st.State, c.lastTask, o.TaskLost
	if got {
		r.BodyIteration = c.bodyRec.Iteration
	} else {
		r.NoStatus++
	}
	r.BodyConnected, r.TaskConnected = c.stR != nil, c.taskR != nil
	c.publish()
	if c.opt.State != nil {
		c.opt.State(st.State)
	}
}
