package velmanode

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/velma"
	"github.com/fsmnodes/fsmnodes/internal/velma/sim"
	"github.com/fsmnodes/fsmnodes/internal/velma/subsys"
)

// TrajKind selects which trajectory a tracker follows.
type TrajKind int

// Trajectory kinds.
const (
	TrajJnt TrajKind = iota
	TrajHead
	TrajCartRight
	TrajCartLeft
)

// Snapshot is a copy of the agent's state after one iteration.
type Snapshot struct {
	Time   time.Time
	Report velma.Report // Report.CS is nil; use CS
	CS     velma.CSStatus
	Loop   velma.LoopStats
	// BodyCycle are the ve_body states of the last completed report
	// window (1/StateMaxRate), in the order they were first entered.
	BodyCycle []velma.BodyState
	// Stale is set by an interface runner (NewRemoteRunner) while cs's
	// status stops arriving: the rest of the snapshot is old.
	Stale    bool
	StaleWhy string // the state of cs's status buffer when it became stale
	// BodyOnly is set by an interface runner while cs is silent (from the
	// first exchange without its status) and ve_body's own records still
	// arrive (read from the buffer ve_body writes for cs): Report then
	// holds ve_body's current state, StatusSC and the effectors' status,
	// newer than CS, which is cs's last status (and, once Stale, must not
	// be shown as current).
	BodyOnly bool
}

// Hooks are called from the loop goroutine after an iteration; they must
// not block (publishing is fine).
type Hooks struct {
	// CSState is called whenever cs changes state (every change).
	CSState func(velma.CSState)
	// BodyState reports ve_body's states. Once per report window
	// (1/StateMaxRate) it is called with every state entered in the window,
	// in order, ending with the current one, when the set of states
	// differs from the last reported window's: each state ve_body enters
	// is reported, while a steady flip between two states (safe ↔
	// safe_st_ok while waiting, transp ↔ transp_st while running: ve_body
	// changes state every iteration) is reported once, not 500 times a
	// second.
	BodyState func(velma.BodyState)
	// CSLost is called by an interface runner once each time cs's status
	// stops arriving (Snapshot.Stale): cs's state is unknown from then on
	// until CSState reports it again.
	CSLost func(why string)
	// Iteration is called after every iteration of a one-process runner
	// (NewRunner) with ve_body's state after its status run and after its
	// command run, and cs's state: every state each machine passes
	// through, for the FSM introspection.
	Iteration func(afterStatus, body velma.BodyState, cs velma.CSState)
}

type tracker struct {
	kind TrajKind
	id   uint32
	ch   chan velma.TrajState
}

// Runner owns the agent, the simulator and the 500 Hz loop. Submit, Track,
// NextID and Snapshot are safe for concurrent use; Run and Step must not be
// called concurrently with each other.
type Runner struct {
	params Params
	sim    *sim.Sim
	eff    *effectorSwitch // the simulator behind its power switch (nil: remote)
	agent  *velma.Agent
	loop   *velma.Loop
	hooks  Hooks
	remote *subsys.Client // set: the agent runs in other processes
	heard  time.Time      // last status from cs (remote)
	bodyAt time.Time      // last record of ve_body's own (remote, while cs is silent)

	mu       sync.Mutex
	pending  velma.TaskCommand
	snap     Snapshot
	trackers []tracker
	nextID   uint32

	lastCS       velma.CSState
	bodyWindow   []velma.BodyState // states entered in this report window
	bodySet      uint32            // the same as bits
	lastBodySet  uint32            // bodySet of the last reported window
	bodyReported bool
	lastBodyPub  time.Time
	lastBody     velma.BodyState // last state reported
	lastStats    time.Time

	tuning func() velma.CSTuning // live cs tuning, read by Step (nil: fixed)
}

// SetTuner makes Step read cs's tuning from f every iteration and apply a
// change before the agent iterates. Call it before Run.
func (r *Runner) SetTuner(f func() velma.CSTuning) { r.tuning = f }

// NewRunner validates the parameters and builds the agent over the
// simulator.
func NewRunner(p Params, clock velma.Clock, hooks Hooks) (*Runner, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	s, err := sim.New(p.Sim)
	if err != nil {
		return nil, fmt.Errorf("velma runner: %w", err)
	}
	eff := &effectorSwitch{sim: s, on: true}
	a, err := velma.NewAgent(p.Agent, eff)
	if err != nil {
		return nil, fmt.Errorf("velma runner: %w", err)
	}
	window := int(10 / p.Period) // 10 s of periods
	l, err := velma.NewLoop(p.Agent.CS.Period, clock, window)
	if err != nil {
		return nil, fmt.Errorf("velma runner: %w", err)
	}
	// the first window starts in ve_body's initial state, idle
	return &Runner{params: p, sim: s, eff: eff, agent: a, loop: l, hooks: hooks, lastCS: -1,
		bodyWindow: []velma.BodyState{velma.BodyIdle}, bodySet: 1 << uint(velma.BodyIdle), lastBody: -1}, nil
}

// effectorSwitch is the power switch of a one-process runner's simulated
// effectors (a managed velma_bridge switches them with its lifecycle):
// off, they send no status, take no command and do not move, as when
// velma_sim is not running, so ve_body goes idle and commands nothing.
type effectorSwitch struct {
	mu  sync.Mutex
	sim *sim.Sim
	on  bool
}

func (e *effectorSwitch) ReadStatus() (velma.EffectorStatus, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.on {
		return velma.EffectorStatus{}, false
	}
	return e.sim.ReadStatus()
}

func (e *effectorSwitch) WriteCommand(c velma.EffectorCommand) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.on {
		e.sim.WriteCommand(c)
	}
}

func (e *effectorSwitch) Step() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.on {
		e.sim.Step()
	}
}

// PowerEffectors switches the simulated effectors of a one-process runner
// on or off; once it returns with false, no further command reaches them.
// Off, they neither answer nor move, and ve_body goes idle (no status
// from the effectors). A runner starts with them on; a remote runner has
// none (it returns false).
func (r *Runner) PowerEffectors(on bool) bool {
	if r.eff == nil {
		return false
	}
	r.eff.mu.Lock()
	r.eff.on = on
	r.eff.mu.Unlock()
	return true
}

// EffectorsPowered reports whether the simulated effectors are on.
func (r *Runner) EffectorsPowered() bool {
	if r.eff == nil {
		return false
	}
	r.eff.mu.Lock()
	defer r.eff.mu.Unlock()
	return r.eff.on
}

// staleAfter is how long an interface runner waits for cs's status before
// its snapshot counts as stale.
const staleAfter = 100 * time.Millisecond

// NewRemoteRunner returns the runner of the ROS interface process
// (velma_task_cs_ros_interface): commands go to cs through c, and the
// snapshot follows the status cs sends back (one per cs iteration) instead
// of an agent iterating in this process.
func NewRemoteRunner(p Params, hooks Hooks, c *subsys.Client) (*Runner, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Runner{params: p, hooks: hooks, remote: c, lastCS: -1,
		bodyWindow: []velma.BodyState{velma.BodyIdle}, bodySet: 1 << uint(velma.BodyIdle), lastBody: -1}, nil
}

// Params returns the validated parameters.
func (r *Runner) Params() Params { return r.params }

// NextID returns a fresh command id (never 0).
func (r *Runner) NextID() uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextID++
	return r.nextID
}

// Submit merges a command into the one the next iteration takes: newer
// trajectories replace older ones of the same kind, flags accumulate.
func (r *Runner) Submit(c *velma.TaskCommand) {
	r.mu.Lock()
	defer r.mu.Unlock()
	subsys.MergeTask(&r.pending, c)
}

// Track returns a channel that receives the final state of command id of
// the given kind (TrajAborted if a newer command of that kind replaced it).
// Ids must come from NextID.
func (r *Runner) Track(kind TrajKind, id uint32) <-chan velma.TrajState {
	ch := make(chan velma.TrajState, 1)
	r.mu.Lock()
	r.trackers = append(r.trackers, tracker{kind, id, ch})
	r.mu.Unlock()
	return ch
}

// Snapshot returns a copy of the latest iteration's state.
func (r *Runner) Snapshot() Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.snap
}

// Run runs the loop until ctx is done, on a goroutine locked to its OS
// thread (fewer migrations, steadier period).
func (r *Runner) Run(ctx context.Context) error {
	if r.remote != nil {
		for ctx.Err() == nil {
			r.stepRemote()
		}
		return ctx.Err()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return r.loop.Run(ctx, func(now time.Time) bool {
		r.Step(now)
		return true
	})
}

// Step runs one iteration at time now.
func (r *Runner) Step(now time.Time) {
	r.mu.Lock()
	task := r.pending
	r.pending = velma.TaskCommand{}
	r.mu.Unlock()
	var tp *velma.TaskCommand
	if !task.Empty() {
		tp = &task
	}
	if r.tuning != nil {
		if t := r.tuning(); t != r.agent.CSTuning() {
			_ = r.agent.SetCSTuning(t) // checked by the parameters; a refused one keeps the old tuning
		}
	}
	rep := r.agent.Iterate(tp)
	r.record(now, rep, nil)
	if r.hooks.Iteration != nil {
		r.hooks.Iteration(rep.StatusState, rep.BodyState, rep.CS.State)
	}
}

// stepRemote sends the pending command (or a heartbeat) to cs and takes
// cs's next status, if one comes within 10 ms.
func (r *Runner) stepRemote() {
	r.mu.Lock()
	task := r.pending
	r.pending = velma.TaskCommand{}
	r.mu.Unlock()
	var tp *velma.TaskCommand
	if !task.Empty() {
		tp = &task
	}
	rep, loop, ok := r.remote.Exchange(tp, 10*time.Millisecond)
	now := time.Now()
	if ok {
		r.heard, r.bodyAt = now, time.Time{}
		r.record(now, rep, &loop)
		return
	}
	// cs silent for this exchange: ve_body's own records are newer than
	// cs's last status (and the only news while cs is gone)
	if rep, loop, ok := r.remote.Body(); ok {
		r.bodyAt = now
		r.recordBody(now, rep, &loop)
	} else if !r.bodyAt.IsZero() && now.Sub(r.bodyAt) > staleAfter {
		r.bodyAt = time.Time{}
		r.mu.Lock()
		r.snap.BodyOnly = false // ve_body silent too
		r.mu.Unlock()
	}
	if !r.heard.IsZero() && now.Sub(r.heard) <= staleAfter {
		return
	}
	r.mu.Lock()
	lost := !r.snap.Stale
	if lost {
		r.snap.StaleWhy = r.remote.State()
	}
	r.snap.Stale = true
	why := r.snap.StaleWhy
	r.mu.Unlock()
	if lost {
		r.lastCS = -1 // report cs's state again when it is back
		if r.hooks.CSLost != nil {
			r.hooks.CSLost(why)
		}
	}
}

// recordBody keeps ve_body's own record (cs silent) in the snapshot and
// reports ve_body's states; cs's part of the snapshot stays as it was.
func (r *Runner) recordBody(now time.Time, rep *velma.Report, loop *velma.LoopStats) {
	r.mu.Lock()
	r.snap.Time = now
	r.snap.BodyOnly = true
	r.snap.Report = *rep
	r.snap.Report.CS = nil
	r.snap.Loop = *loop
	r.mu.Unlock()
	r.reportBody(now, rep.StatusState, rep.BodyState)
}

// record keeps one iteration's report in the snapshot, resolves trackers
// and calls the hooks. loop (remote runners) gives ve_body's loop figures.
func (r *Runner) record(now time.Time, rep *velma.Report, loop *velma.LoopStats) {
	r.mu.Lock()
	r.snap.Time = now
	r.snap.Stale, r.snap.BodyOnly = false, false
	r.snap.Report = *rep
	r.snap.Report.CS = nil
	r.snap.CS = *rep.CS
	switch {
	case loop != nil:
		r.snap.Loop = *loop
	case now.Sub(r.lastStats) >= time.Second:
		// percentiles sort the whole window: refresh them once a second only
		r.snap.Loop, r.lastStats = r.loop.Stats(), now
	default:
		r.snap.Loop.Iterations, r.snap.Loop.Overruns = r.loop.Counts()
	}
	r.checkTrackers(rep.CS)
	r.mu.Unlock()

	if rep.CS.State != r.lastCS {
		r.lastCS = rep.CS.State
		if r.hooks.CSState != nil {
			r.hooks.CSState(rep.CS.State)
		}
	}
	r.reportBody(now, rep.StatusState, rep.BodyState)
}

// reportBody keeps the states of the current report window (ve_body runs
// twice an iteration: its state after the status run, then after the
// command run, the current one) and reports them when the window ends
// (see Hooks.BodyState).
func (r *Runner) reportBody(now time.Time, afterStatus, cur velma.BodyState) {
	for _, st := range [2]velma.BodyState{afterStatus, cur} {
		if bit := uint32(1) << uint(st); r.bodySet&bit == 0 {
			r.bodySet |= bit
			r.bodyWindow = append(r.bodyWindow, st)
		}
	}
	minGap := time.Duration(float64(time.Second) / r.params.Interface.StateMaxRate)
	if r.bodyReported && now.Sub(r.lastBodyPub) < minGap {
		return
	}
	r.mu.Lock()
	r.snap.BodyCycle = append(r.snap.BodyCycle[:0:0], r.bodyWindow...)
	r.mu.Unlock()
	if r.bodySet != r.lastBodySet {
		r.lastBodySet, r.bodyReported, r.lastBodyPub = r.bodySet, true, now
		report := r.bodyWindow
		if report[0] == r.lastBody {
			report = report[1:] // where the window started was reported before
		}
		if report = append(report, cur); len(report) > 1 && report[len(report)-2] == cur {
			report = report[:len(report)-1]
		}
		if r.hooks.BodyState != nil {
			for _, s := range report { // ends with the current state: the latched one
				r.hooks.BodyState(s)
			}
		}
		r.lastBody = cur
	} else {
		r.lastBodyPub = now
	}
	r.bodyWindow = append(r.bodyWindow[:0], cur)
	r.bodySet = uint32(1) << uint(cur)
}

func statusOf(cs *velma.CSStatus, k TrajKind) velma.TrajStatus {
	switch k {
	case TrajJnt:
		return cs.Jnt
	case TrajHead:
		return cs.Head
	case TrajCartRight:
		return cs.Cart[0]
	}
	return cs.Cart[1]
}

// checkTrackers resolves trackers whose command finished or was replaced.
// Called with r.mu held.
func (r *Runner) checkTrackers(cs *velma.CSStatus) {
	kept := r.trackers[:0]
	for _, t := range r.trackers {
		st := statusOf(cs, t.kind)
		switch {
		case st.ID == t.id && st.State.Done():
			t.ch <- st.State
		case st.ID > t.id:
			t.ch <- velma.TrajAborted
		default:
			kept = append(kept, t)
			continue
		}
	}
	r.trackers = kept
}
