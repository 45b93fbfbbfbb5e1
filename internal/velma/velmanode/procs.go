package velmanode

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/fsm/fsmnode"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/lifecycle"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/rt"
	"github.com/fsmnodes/fsmnodes/internal/velma"
	"github.com/fsmnodes/fsmnodes/internal/velma/subsys"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
)

// Node names of the separate-process core agent (the original's
// subsystem names). The ROS interface keeps NodeName (velma_core), so the
// public interface stays /velma_core/....
const (
	VeBodyNodeName = "velma_core_ve_body"
	CSNodeName     = "velma_core_cs"
	SimNodeName    = "velma_sim"
)

// DefaultBufferDir is where the io buffers live unless the buffers
// parameter says otherwise.
const DefaultBufferDir = "/dev/shm"

// diagRate is how often each process publishes ~/diag. The ~/diag timers
// and the staleness check are wall timers: they watch real-time loops that
// run on the wall clock (velma.RealClock) whatever use_sim_time says, so
// they must keep reporting while a simulation's /clock is paused or gone.
const diagRate = 50

// ProcParams are the parameters of the separate processes beyond Params.
type ProcParams struct {
	Buffers            string        // buffer file prefix ("": DefaultBufferDir/fsmnodes_velma + domain + namespace)
	BodyStatusTimeout  time.Duration // ve_body.status_timeout
	BodyCommandTimeout time.Duration // ve_body.command_timeout
	CSStatusTimeout    time.Duration // cs.status_timeout
	CSTaskTimeout      time.Duration // cs.task_timeout
	RTLockMemory       bool          // rt.lock_memory
	RTPriority         int           // rt.priority (0: normal scheduler)
	RTCPU              int           // rt.cpu (-1: not pinned)
	RTRuntimePriority  int           // rt.runtime_priority (0: normal scheduler)
	RTGCPercent        int           // rt.gc_percent
	RTStackBytes       int           // rt.stack_bytes
}

// BufferPrefix returns the buffer prefix for a DDS domain and a node
// namespace: every process of one agent (one domain, one namespace) finds
// the same files, and agents of different domains or namespaces on one
// machine (two simulations, two robots) never share them.
// DefaultBufferDir/fsmnodes_velma on domain 0 without a namespace, plus
// _domain<N> on another domain and _<namespace> inside one.
func BufferPrefix(param string, domain uint32, namespace string) string {
	if param != "" {
		return param
	}
	p := DefaultBufferDir + "/fsmnodes_velma"
	if domain != 0 {
		p += "_domain" + strconv.FormatUint(uint64(domain), 10)
	}
	if ns := strings.Trim(namespace, "/"); ns != "" {
		p += "_" + strings.ReplaceAll(ns, "/", "_")
	}
	return p
}

// declareProc declares the process parameters (read-only) that the node
// uses: timeouts of its own subsystem and, with rtParams, the real-time
// measures.
func declareProc(n *ros.Node, who string, rtParams bool) (ProcParams, error) {
	const why = "the process's buffers, timeouts and real-time measures are set up at start-up"
	dl := ros.NewDeclarer(n)
	var pp ProcParams
	d := func(name string, def float64, desc string) time.Duration {
		return param.DeclareDuration(dl, name, time.Duration(def*float64(time.Second)), param.Descriptor{
			Description: desc + " (read-only: " + why + ")", ReadOnly: true, ReadOnlyReason: why,
			FloatRange: param.Floats(0, 10)}, func(t time.Duration) error {
			if t <= 0 {
				return errors.New("must be above 0 s")
			}
			return nil
		})
	}
	pp.Buffers = param.Declare(dl, "buffers", "", param.ReadOnly("prefix of the shared-memory buffers", why), nil)
	switch who {
	case VeBodyNodeName:
		pp.BodyStatusTimeout = d("ve_body.status_timeout", 0.002, "wait for the effectors' status each iteration [s]")
		pp.BodyCommandTimeout = d("ve_body.command_timeout", 0.002, "wait for cs's command each iteration [s]; beyond it ¬recvCommand")
	case CSNodeName:
		pp.CSStatusTimeout = d("cs.status_timeout", 0.02, "run without ve_body's status after this [s] (¬veBodyStatusValid)")
		pp.CSTaskTimeout = d("cs.task_timeout", 0.5, "a running body motion whose task source is silent this long lost its source [s]")
	}
	if rtParams {
		pp.RTLockMemory = param.Declare(dl, "rt.lock_memory", true, param.ReadOnly("mlockall the process", why), nil)
		pp.RTPriority = declarePriority(dl, why)
		pp.RTCPU = declareCPU(dl, why)
		pp.RTRuntimePriority = declareRuntimePriority(dl, why, 1)
		pp.RTGCPercent = int(param.Declare(dl, "rt.gc_percent", int64(400), param.ReadOnly("GOGC of the process", why), nil))
		stack := param.Declare(dl, "rt.stack_bytes", int64(256<<10), param.ReadOnly("loop goroutine stack pre-faulted [bytes]", why), nil)
		pp.RTStackBytes = int(max(0, min(stack, 8<<20)))
	}
	if err := dl.Err(); err != nil {
		return pp, err
	}
	pp.Buffers = BufferPrefix(pp.Buffers, n.Context().DomainID(), n.Namespace())
	return pp, nil
}

// declarePriority declares rt.priority (read-only), the SCHED_FIFO
// priority of the loop thread; 0 keeps the normal scheduler.
func declarePriority(dl *param.Declarer, why string) int {
	return int(param.Declare(dl, "rt.priority", int64(0), param.Descriptor{
		Description: "SCHED_FIFO priority of the loop thread, 1…99; 0 keeps the normal scheduler (read-only: " + why + ")",
		ReadOnly:    true, ReadOnlyReason: why, IntegerRange: param.Ints(0, 99)}, nil))
}

// declareCPU declares rt.cpu (read-only), the CPU the loop thread is
// pinned to; -1 leaves it free.
func declareCPU(dl *param.Declarer, why string) int {
	return int(param.Declare(dl, "rt.cpu", int64(-1), param.Descriptor{
		Description: "CPU the loop thread is pinned to; -1 leaves it free. velma.launch.xml pins the loops of ve_body, cs and velma_sim to one CPU, so that they wake each other without an inter-processor interrupt (read-only: " + why + ")",
		ReadOnly:    true, ReadOnlyReason: why, IntegerRange: param.Ints(-1, 1023)}, nil))
}

// declareRuntimePriority declares rt.runtime_priority (read-only) with its
// default: 1 in the loop processes, whose ROS side is light; 0 in
// velma_bridge, whose runtime threads also serve every ROS request, which
// must not run before the rest of the machine's work.
func declareRuntimePriority(dl *param.Declarer, why string, def int64) int {
	return int(param.Declare(dl, "rt.runtime_priority", def, param.Descriptor{
		Description: "SCHED_FIFO priority of the process's other Go threads while rt.priority > 0 (kept below it); 0 leaves them under the normal scheduler. The loop thread needs them to get its processor back after a system call, and under the normal scheduler they waited behind every busy process (read-only: " + why + ")",
		ReadOnly:    true, ReadOnlyReason: why, IntegerRange: param.Ints(0, 98)}, nil))
}

// runtimePriority is the priority of the runtime's other threads for a
// loop at priority: none without SCHED_FIFO, and always below the loop.
func runtimePriority(want, priority int) int {
	if priority <= 1 || want <= 0 {
		return 0
	}
	return min(want, priority-1)
}

func (pp ProcParams) rtOptions() rt.Options {
	return rt.Options{LockMemory: pp.RTLockMemory, Priority: pp.RTPriority, RuntimePriority: runtimePriority(pp.RTRuntimePriority, pp.RTPriority),
		PinCPU: pp.RTCPU >= 0, CPU: pp.RTCPU, GCPercent: pp.RTGCPercent, StackBytes: pp.RTStackBytes, ReserveP: true}
}

// logRT logs what the real-time measures achieved, clearly when one is not
// available.
func logRT(n *ros.Node, r rt.Result, o rt.Options) {
	if (o.LockMemory && !r.MemoryLocked) || (o.Priority > 0 && !r.FIFO) || (o.PinCPU && o.Priority > 0 && r.CPU < 0) || r.RuntimeErr != nil {
		n.Logger().Warnf("real-time measures incomplete: %v", r)
		return
	}
	n.Logger().Infof("real-time measures: %v", r)
}

// diagPublisher publishes one DiagnosticStatus on ~/diag.
type diagPublisher struct {
	n   *ros.Node
	pub *ros.Publisher[diagnostic_msgs_msg.DiagnosticArray]
	msg diagnostic_msgs_msg.DiagnosticArray
}

func newDiag(n *ros.Node) (*diagPublisher, error) {
	p, err := ros.NewPublisher[diagnostic_msgs_msg.DiagnosticArray](n, "~/diag", ros.QoSDefault)
	if err != nil {
		return nil, err
	}
	return &diagPublisher{n: n, pub: p}, nil
}

func (d *diagPublisher) publish(level byte, message string, kv ...string) {
	st := diagnostic_msgs_msg.DiagnosticStatus{Level: level, Name: d.n.Name(), Message: message, HardwareId: "velma"}
	for i := 0; i+1 < len(kv); i += 2 {
		st.Values = append(st.Values, diagnostic_msgs_msg.KeyValue{Key: kv[i], Value: kv[i+1]})
	}
	d.msg.Header.Stamp = builtin_interfaces_msg.TimeOf(d.n.Clock().Now())
	d.msg.Status = append(d.msg.Status[:0], st)
	if err := d.pub.Publish(&d.msg); err != nil {
		d.n.Logger().Warnf("publish diag: %v", err)
	}
}

// diagUint, diagFloat and diagSeconds format the values of ~/diag.
func diagUint(v uint64) string           { return strconv.FormatUint(v, 10) }
func diagFloat(v float64) string         { return strconv.FormatFloat(v, 'g', 6, 64) }
func diagSeconds(d time.Duration) string { return diagFloat(d.Seconds()) }

// RunVeBody runs the velma_core_ve_body node: ve_body's loop, the clock of
// the agent.
func RunVeBody(ctx context.Context, args []string) error {
	return ros.Run(ctx, args, VeBodyNodeName, setupVeBody)
}

func setupVeBody(_ context.Context, n *ros.Node) error {
	p, err := DeclareParams(n)
	if err != nil {
		return err
	}
	pp, err := declareProc(n, VeBodyNodeName, true)
	if err != nil {
		return err
	}
	period := time.Duration(p.Period * float64(time.Second))
	// ve_body's machine on ~/fsm/graph, ~/fsm/transition and ~/fsm/status,
	// fed by the loop with both runs of every iteration, as velma_bridge
	// feeds it (docs/fsm.md)
	fsmPub, err := fsmnode.New(n, velma.BodyGraph())
	if err != nil {
		return err
	}
	body := fsmPub.Machine(velma.BodyMachine)
	// The loop tells the machine only of changes: Observe takes a lock the
	// machine's publishing goroutine (normal scheduler) also takes, which
	// the real-time loop must not wait for every iteration.
	observed := velma.BodyState(-1)
	v, err := subsys.NewVeBody(p.Agent.VeBody, subsys.VeBodyOptions{Buffers: subsys.Buffers{Prefix: pp.Buffers},
		Period: period, StatusTimeout: pp.BodyStatusTimeout, CommandTimeout: pp.BodyCommandTimeout,
		States: func(afterStatus, state velma.BodyState) {
			for _, st := range [2]velma.BodyState{afterStatus, state} {
				if st != observed {
					observed = st
					body.Observe(st.String(), "")
				}
			}
		}})
	if err != nil {
		return err
	}
	n.Context().OnShutdown(func() error { v.Close(); return nil })
	d, err := newDiag(n)
	if err != nil {
		return err
	}
	log := n.Logger()
	var last subsys.VeBodyReport
	if _, err := n.NewWallTimer(time.Second/diagRate, func() {
		r := v.Report()
		level, msg := byte(diagnostic_msgs_msg.DiagnosticStatus_OK), r.State.String()
		switch {
		case r.SC.FaultType&velma.FaultCommHW != 0:
			level, msg = diagnostic_msgs_msg.DiagnosticStatus_ERROR, r.State.String()+": no status from the effectors (velma_sim)"
		case r.CmdLostAt != 0 && r.State.IsSafe():
			level, msg = diagnostic_msgs_msg.DiagnosticStatus_WARN, fmt.Sprintf("%v: no command from velma_core_cs since iteration %d", r.State, r.CmdLostAt)
		}
		d.publish(level, msg, "state", r.State.String(), "iteration", diagUint(r.Iteration),
			"last_cmd_iteration", diagUint(r.LastCmd), "cmd_lost_iteration", diagUint(r.CmdLostAt),
			"safe_entry_iteration", diagUint(r.SafeEntry), "safe_entry_last_cmd", diagUint(r.SafeEntryLast),
			"last_status_iteration", diagUint(r.LastStatus), "max_joint_speed", diagFloat(r.MaxJointSpeed),
			"cmd_missed", diagUint(r.CmdMissed), "status_missed", diagUint(r.StatusMissed),
			"fault_type", strconv.Itoa(int(r.SC.FaultType)), "faulty_module_id", strconv.Itoa(int(r.SC.FaultyModuleID)),
			"cs_connected", strconv.FormatBool(r.CSConnected), "sim_connected", strconv.FormatBool(r.SimConnected),
			"overruns", diagUint(r.Loop.Overruns), "period_p50", diagSeconds(r.Loop.P50), "period_p99", diagSeconds(r.Loop.P99),
			"period_p999", diagSeconds(r.Loop.P999), "period_max", diagSeconds(r.Loop.Max), "step_max", diagSeconds(r.Loop.MaxStep),
			"cmd_wait_max", diagSeconds(r.CmdWaitMax))
		// log the faults a user must know about, once per occurrence
		if r.SafeEntry != last.SafeEntry && r.SafeEntry != 0 {
			log.Warnf("ve_body left transp for safe at iteration %d (last command from cs at iteration %d)", r.SafeEntry, r.SafeEntryLast)
		}
		if r.SC.FaultType&velma.FaultCommHW != 0 && last.SC.FaultType&velma.FaultCommHW == 0 {
			log.Errorf("no status from the effectors (velma_sim) since iteration %d: ve_body %v, nothing commanded", r.LastStatus, r.State)
		}
		if r.SC.FaultType&velma.FaultCommHW == 0 && last.SC.FaultType&velma.FaultCommHW != 0 && last.Iteration != 0 {
			log.Infof("effector status back at iteration %d", r.Iteration)
		}
		last = r
	}); err != nil {
		return err
	}
	o := pp.rtOptions()
	n.Context().Go(func(ctx context.Context) error {
		res := rt.Prepare(o)
		logRT(n, res, o)
		err := v.Loop().Run(ctx, v.Step)
		log.Infof("ve_body loop stopped: %v", v.Report().Loop)
		return err
	})
	log.Infof("ve_body running at %.0f Hz over %s.*", 1/p.Period, pp.Buffers)
	return nil
}

// RunCS runs the velma_core_cs node: cs's loop, driven by ve_body.
func RunCS(ctx context.Context, args []string) error {
	return ros.Run(ctx, args, CSNodeName, setupCS)
}

func setupCS(_ context.Context, n *ros.Node) error {
	p, live, err := declareParams(n, true)
	if err != nil {
		return err
	}
	pp, err := declareProc(n, CSNodeName, true)
	if err != nil {
		return err
	}
	// cs's machine, fed by the loop every iteration (docs/fsm.md)
	fsmPub, err := fsmnode.New(n, velma.CSGraph())
	if err != nil {
		return err
	}
	csm := fsmPub.Machine(velma.CSMachine)
	observed := velma.CSState(-1)
	c, err := subsys.NewCS(p.Agent.CS, subsys.CSOptions{Buffers: subsys.Buffers{Prefix: pp.Buffers},
		StatusTimeout: pp.CSStatusTimeout, TaskTimeout: pp.CSTaskTimeout, Tuning: live.Get,
		State: func(s velma.CSState) { // changes only, as ve_body's above
			if s != observed {
				observed = s
				csm.Observe(s.String(), "")
			}
		}})
	if err != nil {
		return err
	}
	n.Context().OnShutdown(func() error { c.Close(); return nil })
	d, err := newDiag(n)
	if err != nil {
		return err
	}
	log := n.Logger()
	var last subsys.CSReport
	if _, err := n.NewWallTimer(time.Second/diagRate, func() {
		r := c.Report()
		level, msg := byte(diagnostic_msgs_msg.DiagnosticStatus_OK), r.State.String()
		if !r.BodyConnected || r.NoStatus > last.NoStatus {
			level, msg = diagnostic_msgs_msg.DiagnosticStatus_WARN, r.State.String()+": no status from velma_core_ve_body"
		}
		d.publish(level, msg, "state", r.State.String(), "runs", diagUint(r.Runs), "body_iteration", diagUint(r.BodyIteration),
			"no_status", diagUint(r.NoStatus), "task_seq", diagUint(r.TaskSeq), "task_lost", diagUint(r.TaskLost),
			"source_lost", diagUint(r.SourceLost), "last_lost_id", diagUint(uint64(r.LastLostID)))
		if r.SourceLost > last.SourceLost {
			log.Warnf("the task source (velma_task_cs_ros_interface) is silent: motion %d lost its command source, cs leaves it through IN_ERROR", r.LastLostID)
		}
		last = r
	}); err != nil {
		return err
	}
	o := pp.rtOptions()
	n.Context().Go(func(ctx context.Context) error {
		res := rt.Prepare(o)
		logRT(n, res, o)
		for ctx.Err() == nil {
			c.Step()
		}
		return ctx.Err()
	})
	log.Infof("cs running over %s.* (cs idle)", pp.Buffers)
	return nil
}

// RunSim runs the velma_sim node: the simulated effectors in lock-step
// with ve_body. It is a managed (lifecycle) node: configure creates the
// simulator and its status buffer, activate starts answering ve_body,
// deactivate stops (ve_body gets no status, goes idle and commands nothing), cleanup and
// shutdown close the buffers. It configures and activates itself at
// start unless the parameter autostart is false.
func RunSim(ctx context.Context, args []string) error {
	return lifecycle.Run(ctx, args, SimNodeName, setupSim)
}

// simGate holds velma_sim's simulator (nil while unconfigured) and whether
// it steps; the loop steps it under mu, so a transition that returns has
// no step running.
type simGate struct {
	mu sync.Mutex
	sm *subsys.Sim
	on bool
}

// step runs one simulator step if the gate is on; false means it is not
// (the caller waits).
func (g *simGate) step(timeout time.Duration) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.on || g.sm == nil {
		return false
	}
	g.sm.Step(timeout)
	return true
}

func (g *simGate) set(sm *subsys.Sim, on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sm, g.on = sm, on
}

func setupSim(_ context.Context, l *lifecycle.Node) error {
	n := l.Node()
	p, err := DeclareParams(n)
	if err != nil {
		return err
	}
	pp, err := declareProc(n, SimNodeName, true)
	if err != nil {
		return err
	}
	log := n.Logger()
	var g simGate
	if _, err := fsmnode.NewManaged(l); err != nil {
		return err
	}
	var sm *subsys.Sim // the configured simulator (transitions only)
	l.OnConfigure(func(lifecycle.State) lifecycle.Result {
		s, err := subsys.NewSim(p.Sim, subsys.Buffers{Prefix: pp.Buffers})
		if err != nil {
			log.Errorf("configure: %v", err)
			return lifecycle.Failure
		}
		sm = s
		g.set(sm, false)
		return lifecycle.Success
	})
	l.OnActivate(func(lifecycle.State) lifecycle.Result { g.set(sm, true); return lifecycle.Success })
	l.OnDeactivate(func(lifecycle.State) lifecycle.Result { g.set(sm, false); return lifecycle.Success })
	release := func(lifecycle.State) lifecycle.Result {
		g.set(nil, false)
		if sm != nil {
			sm.Close()
			sm = nil
		}
		return lifecycle.Success
	}
	l.OnCleanup(release)
	l.OnShutdown(release)
	l.OnError(release)
	d, err := newDiag(n)
	if err != nil {
		return err
	}
	if _, err := n.NewWallTimer(time.Second/diagRate, func() {
		if !l.Active() || sm == nil {
			d.publish(diagnostic_msgs_msg.DiagnosticStatus_WARN, l.State().Label+": the effectors do not answer (ve_body commands nothing)")
			return
		}
		r := sm.Report()
		d.publish(diagnostic_msgs_msg.DiagnosticStatus_OK, "running", "steps", diagUint(r.Steps), "answer", diagUint(r.Answer),
			"connected", strconv.FormatBool(r.Connected))
	}); err != nil {
		return err
	}
	o := pp.rtOptions()
	n.Context().Go(func(ctx context.Context) error {
		res := rt.Prepare(o)
		logRT(n, res, o)
		for ctx.Err() == nil {
			if !g.step(20 * time.Millisecond) {
				select {
				case <-ctx.Done():
				case <-time.After(10 * time.Millisecond):
				}
			}
		}
		return ctx.Err()
	})
	n.Logger().Infof("simulated effectors over %s.*", pp.Buffers)
	return nil
}

// RunInterface runs the ROS interface agent velma_task_cs_ros_interface
// as the node velma_core: the actions, services and topics of velma_bridge,
// served over velma_core_cs's buffers.
func RunInterface(ctx context.Context, args []string) error {
	return ros.Run(ctx, args, NodeName, setupInterface)
}

func setupInterface(_ context.Context, n *ros.Node) error {
	pp, err := declareProc(n, NodeName, false)
	if err != nil {
		return err
	}
	c, err := subsys.NewClient(subsys.Buffers{Prefix: pp.Buffers})
	if err != nil {
		return err
	}
	b, err := NewInterface(n, c)
	if err != nil {
		c.Close()
		return err
	}
	n.Context().OnShutdown(func() error { c.Close(); return nil })
	stale := false
	if _, err := n.NewWallTimer(100*time.Millisecond, func() {
		snap := b.runner.Snapshot()
		switch {
		case snap.Stale && !stale:
			n.Logger().Warnf("no status from velma_core_cs (%s): goals end, services refuse, ~/cs/state unknown, ~/status paused; ve_body's state and joint_states come from ve_body's own buffer while it runs", snap.StaleWhy)
		case !snap.Stale && stale:
			n.Logger().Infof("velma_core_cs status back (cs %v, ve_body %v)", snap.CS.State, snap.Report.BodyState)
		}
		stale = snap.Stale
	}); err != nil {
		return err
	}
	n.Context().Go(b.Run)
	n.Logger().Infof("ROS interface of the velma core agent over %s.*", pp.Buffers)
	return nil
}
