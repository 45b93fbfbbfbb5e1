package subsys

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/iobuf"
	"github.com/fsmnodes/fsmnodes/internal/velma"
)

// Ring lengths of the buffers.
const (
	loopSlots = 8  // per-iteration buffers
	taskSlots = 32 // task commands (100 Hz heartbeats and bursts of goals)
)

// reconnectEvery is how many iterations pass between attempts to open a
// buffer whose writer has not created it yet.
const reconnectEvery = 100

// awayAfter is how many iterations in a row a peer (velma_sim, cs) may
// send no record before ve_body counts it as away: it then no longer waits
// for the peer's record (it only looks whether one came), so the loop keeps
// its period while the peer is dead or frozen, and the peer's connected
// flag is false. Any record from the peer makes it present again, and
// ve_body waits for it from the next iteration.
const awayAfter = 10

// VeBodyOptions configure the ve_body process loop.
type VeBodyOptions struct {
	Buffers Buffers
	Period  time.Duration
	// StatusTimeout is how long an iteration waits for a new effector
	// status, CommandTimeout how long it waits for cs's command after
	// passing the status up (the original's buffer timeouts: 2 ms).
	StatusTimeout, CommandTimeout time.Duration
	Window                        int // periods kept for percentiles
	// (optional) States is called by Step, on the loop goroutine, after
	// every iteration with ve_body's state after its status run and after
	// its command run: every state the machine passes through (the FSM
	// introspection). It must not block.
	States func(afterStatus, state velma.BodyState)
}

// VeBodyReport is ve_body's state for introspection (the node's diag
// topic). Iteration numbers let tests reason in iterations rather than
// wall-clock time.
type VeBodyReport struct {
	Iteration     uint64
	State         velma.BodyState
	SC            velma.StatusSC
	LastCmd       uint64  // last iteration that had a valid cs command
	CmdLostAt     uint64  // first iteration of the current run without one (0: none)
	SafeEntry     uint64  // last iteration in which ve_body left transp for safe
	SafeEntryLast uint64  // LastCmd at that moment
	LastStatus    uint64  // last iteration with a new effector status
	MaxJointSpeed float64 // largest |q̇| of the 15 body joints in the last status
	CmdMissed     uint64
	StatusMissed  uint64
	// CSConnected and SimConnected: the peer's buffer is open and the
	// peer has written to it within the last awayAfter iterations.
	CSConnected  bool
	SimConnected bool
	// StatusTimeouts and CmdTimeouts count the iterations that waited the
	// whole StatusTimeout (CommandTimeout) for a record that did not come;
	// a peer that is away is not waited for.
	StatusTimeouts, CmdTimeouts uint64
	Loop                        velma.LoopStats
	CmdWaitMax                  time.Duration // longest wait for cs's command (since start)
	CmdWaitLast                 time.Duration
	EffStatusAnswer             uint64 // iteration the last effector status answered
}

// VeBody is the velma_core_ve_body process loop: it owns the clock and
// runs ve_body twice an iteration between the effectors' and cs's buffers.
type VeBody struct {
	opt  VeBodyOptions
	body *velma.VeBody
	loop *velma.Loop

	stW  *iobuf.Writer[BodyStatus]
	effW *iobuf.Writer[EffCommand]
	effR *iobuf.Reader[EffStatus]
	cmdR *iobuf.Reader[BodyCommand]

	lastEff, lastCmd uint64
	// iterations in a row without any record from velma_sim (effSilent)
	// and cs (cmdSilent); awayAfter or more: the peer is away
	effSilent, cmdSilent        int
	statusTimeouts, cmdTimeouts uint64
	effRec                      EffStatus
	stRec                       BodyStatus
	cmdRec                      BodyCommand
	outRec                      EffCommand
	diag                        BodyDiag
	lastStats                   time.Time
	prevState                   velma.BodyState

	waits      []time.Duration // ring of cs answer latencies (status published → command read)
	waitSorted []time.Duration
	nwait      int

	// work is the loop's own report; it is copied to rep, which Report
	// reads, when mu is free (publish).
	work VeBodyReport
	mu   sync.Mutex
	rep  VeBodyReport
}

// LatencyStats are percentiles of cs's answer latency: from ve_body
// publishing its status to reading cs's command for the same iteration
// (the round trip through two io buffers and cs's computation), over the
// loop's window. Iterations without an answer count with the full wait.
type LatencyStats struct {
	N                   int
	P50, P99, P999, Max time.Duration
}

// CmdLatency returns the answer latency percentiles. Call it from the loop
// goroutine or after the loop stopped; it allocates nothing.
func (v *VeBody) CmdLatency() LatencyStats {
	n := min(v.nwait, len(v.waits))
	if n == 0 {
		return LatencyStats{}
	}
	w := v.waitSorted[:n]
	copy(w, v.waits[:n])
	slices.Sort(w)
	return LatencyStats{N: n, P50: w[n/2], P99: w[min(n-1, n*99/100)], P999: w[min(n-1, n*999/1000)], Max: w[n-1]}
}

// NewVeBody creates ve_body's output buffers; the inputs are opened as
// their writers appear.
func NewVeBody(cfg velma.VeBodyConfig, opt VeBodyOptions) (*VeBody, error) {
	if opt.Period <= 0 || opt.StatusTimeout < 0 || opt.CommandTimeout < 0 {
		return nil, fmt.Errorf("ve_body: period %v and timeouts %v, %v must be > 0", opt.Period, opt.StatusTimeout, opt.CommandTimeout)
	}
	if opt.Window <= 0 {
		opt.Window = int(10 * time.Second / opt.Period)
	}
	l, err := velma.NewLoop(opt.Period, nil, opt.Window)
	if err != nil {
		return nil, fmt.Errorf("ve_body: %w", err)
	}
	v := &VeBody{opt: opt, body: velma.NewVeBody(cfg), loop: l, prevState: velma.BodyIdle,
		waits: make([]time.Duration, opt.Window), waitSorted: make([]time.Duration, opt.Window)}
	if v.stW, err = iobuf.Create[BodyStatus](opt.Buffers.Path(BodyStatusFile), loopSlots); err != nil {
		return nil, fmt.Errorf("ve_body: %w", err)
	}
	if v.effW, err = iobuf.Create[EffCommand](opt.Buffers.Path(EffCommandFile), loopSlots); err != nil {
		v.stW.Close()
		return nil, fmt.Errorf("ve_body: %w", err)
	}
	v.connect()
	return v, nil
}

// Loop returns the loop (for Run).
func (v *VeBody) Loop() *velma.Loop { return v.loop }

func (v *VeBody) connect() {
	if v.effR == nil {
		if r, err := iobuf.Open[EffStatus](v.opt.Buffers.Path(EffStatusFile)); err == nil {
			v.effR, v.lastEff = r, r.Head()
		}
	}
	if v.cmdR == nil {
		if r, err := iobuf.Open[BodyCommand](v.opt.Buffers.Path(BodyCommandFile)); err == nil {
			v.cmdR, v.lastCmd = r, r.Head()
		}
	}
}

// Close closes the buffers.
func (v *VeBody) Close() {
	v.stW.Close()
	v.effW.Close()
	if v.effR != nil {
		v.effR.Close()
	}
	if v.cmdR != nil {
		v.cmdR.Close()
	}
}

// Report returns ve_body's current state (any goroutine), as of one of
// the last iterations: the loop never waits for the lock a reader holds.
func (v *VeBody) Report() VeBodyReport {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.rep
}

// Step is one iteration (the loop's step function; it allocates nothing
// once both inputs are connected).
func (v *VeBody) Step(now time.Time) bool {
	it := v.diag.Loop.Iterations + 1
	if (v.effR == nil || v.cmdR == nil) && it%reconnectEvery == 1 {
		v.connect()
	}
	// status run: a new effector status since the last iteration
	ok := false
	if v.effR != nil {
		wait := v.opt.StatusTimeout
		if v.effSilent >= awayAfter {
			wait = 0 // away: only look
		}
		if v.effR.Wait(v.lastEff, wait) {
			v.effSilent = 0
			if s := v.effR.Latest(&v.effRec); s > v.lastEff {
				v.lastEff, ok = s, v.effRec.Valid
			} else {
				v.lastEff = max(v.lastEff, v.effR.Head()) // a damaged record: skip it
			}
		} else {
			v.effSilent++
			if wait > 0 {
				v.statusTimeouts++
			}
		}
	}
	if !ok {
		v.diag.StatusMissed++
	}
	bs := v.body.RunStatus(v.effRec.Status, ok)
	v.diag.StatusState = v.body.State()
	v.stRec.Iteration = it
	v.stRec.Status = bs
	v.stRec.Effector = v.body.LastStatus()
	v.stRec.SC = v.body.SC()
	v.stRec.Diag = v.diag
	v.stW.Write(&v.stRec)

	// command run: cs's answer to this iteration's status
	var cmd velma.BodyCommand
	waitStart := time.Now()
	if v.cmdR != nil {
		away := v.cmdSilent >= awayAfter
		heard := false
		for {
			left := v.opt.CommandTimeout - time.Since(waitStart)
			if away {
				left = 0 // only look
			}
			if !v.cmdR.Wait(v.lastCmd, left) {
				if !heard && !away {
					v.cmdTimeouts++
				}
				break
			}
			heard = true
			s := v.cmdR.Latest(&v.cmdRec)
			if s <= v.lastCmd {
				v.lastCmd = max(v.lastCmd, v.cmdR.Head())
				break // damaged record: treat as missing
			}
			v.lastCmd = s
			if v.cmdRec.Iteration == it {
				cmd = v.cmdRec.Command
				break
			}
			// an answer to an older iteration (cs was late): keep waiting
		}
		if heard { // cs is there, late or not: wait for it again
			v.cmdSilent = 0
		} else {
			v.cmdSilent++
		}
	}
	wait := time.Since(waitStart)
	v.waits[v.nwait%len(v.waits)] = wait
	v.nwait++
	if !cmd.Valid {
		v.diag.CmdMissed++
	}
	out, send := v.body.RunCommand(cmd)
	v.outRec.Iteration, v.outRec.Send, v.outRec.Command = it, send, out
	v.effW.Write(&v.outRec)

	state := v.body.State()
	v.diag.State, v.diag.Sent, v.diag.Command = state, send, out
	v.diag.Loop.Iterations, v.diag.Loop.Overruns = v.loop.Counts()
	v.diag.Loop.Iterations++ // this one
	var stats velma.LoopStats
	fullStats := now.Sub(v.lastStats) >= time.Second
	if fullStats {
		stats, v.lastStats = v.loop.Stats(), now
		v.diag.Loop = LoopFiguresOf(stats)
		v.diag.Loop.Iterations = it
	}
	_, dq := v.body.LastStatus().BodyQ()
	speed := 0.0
	for _, x := range dq {
		speed = math.Max(speed, math.Abs(x))
	}

	r := &v.work
	r.Iteration, r.State, r.SC = it, state, v.body.SC()
	if cmd.Valid {
		r.LastCmd, r.CmdLostAt = it, 0
	} else if r.CmdLostAt == 0 {
		r.CmdLostAt = it
	}
	if state == velma.BodySafe && (v.prevState == velma.BodyTransp || v.diag.StatusState == velma.BodyTranspSt) {
		r.SafeEntry, r.SafeEntryLast = it, r.LastCmd
	}
	if ok {
		r.LastStatus, r.EffStatusAnswer = it, v.effRec.Answer
	}
	r.MaxJointSpeed = speed
	r.CmdMissed, r.StatusMissed = v.diag.CmdMissed, v.diag.StatusMissed
	r.CSConnected = v.cmdR != nil && v.cmdSilent < awayAfter
	r.SimConnected = v.effR != nil && v.effSilent < awayAfter
	r.StatusTimeouts, r.CmdTimeouts = v.statusTimeouts, v.cmdTimeouts
	if fullStats {
		r.Loop = stats
	}
	r.Loop.Iterations, r.Loop.Overruns = it, v.diag.Loop.Overruns
	r.CmdWaitLast = wait
	r.CmdWaitMax = max(r.CmdWaitMax, wait)
	if v.mu.TryLock() { // a reader holds it: a later iteration publishes (see CS.publish)
		v.rep = v.work
		v.mu.Unlock()
	}
	v.prevState = state
	if v.opt.States != nil {
		v.opt.States(v.diag.StatusState, state)
	}
	return true
}
