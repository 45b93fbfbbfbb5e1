package velmanode

import (
	"context"

	"github.com/fsmnodes/fsmnodes/internal/fsm/fsmnode"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/lifecycle"
	"github.com/fsmnodes/fsmnodes/internal/rt"
	"github.com/fsmnodes/fsmnodes/internal/velma"
)

// NodeName is the default node name of velma_bridge.
const NodeName = "velma_core"

// Run runs the velma_core node until SIGINT/SIGTERM or ctx is done. args
// is the command line without the program name (--ros-args are parsed).
func Run(ctx context.Context, args []string) error {
	return lifecycle.Run(ctx, args, NodeName, Setup)
}

// Setup creates the bridge on the managed node l and starts its 500 Hz
// loop as a background loop of the node's Context (the template of
// lifecycle.Run). The lifecycle switches the simulated effectors: they are
// powered only while l is active (activate powers them, deactivate,
// cleanup and shutdown switch them off; configure has nothing to open, the
// simulator is part of the process). The agent and its ROS interface run
// in every state; while the effectors are off ve_body goes idle and commands nothing, as with
// velma_sim not running in the multi-process launch.
func Setup(_ context.Context, l *lifecycle.Node) error {
	n := l.Node()
	b, err := NewBridge(n)
	if err != nil {
		return err
	}
	b.runner.PowerEffectors(false)
	fsmPub, err := fsmnode.NewManaged(l, velma.BodyGraph(), velma.CSGraph())
	if err != nil {
		return err
	}
	b.EnableFSM(fsmPub)
	log := n.Logger()
	power := func(on bool) func(lifecycle.State) lifecycle.Result {
		return func(lifecycle.State) lifecycle.Result {
			if b.runner.EffectorsPowered() != on {
				b.runner.PowerEffectors(on)
				log.Infof("simulated effectors %s", map[bool]string{true: "powered", false: "off: ve_body commands nothing"}[on])
			}
			return lifecycle.Success
		}
	}
	l.OnActivate(power(true))
	l.OnDeactivate(power(false))
	l.OnCleanup(power(false))
	l.OnShutdown(power(false))
	l.OnError(power(false))
	// The loop thread under SCHED_FIFO (rt.priority, 20 in
	// velma.launch.xml), as the separate processes' loops: the node's
	// callbacks (a storm of service calls) then wait for the loop, not the
	// loop for them.
	const why = "the loop thread is prepared at start-up"
	dl := ros.NewDeclarer(n)
	prio := declarePriority(dl, why)
	cpu := declareCPU(dl, why)
	rtp := declareRuntimePriority(dl, why, 0)
	if err := dl.Err(); err != nil {
		return err
	}
	o := rt.Options{Priority: prio, RuntimePriority: runtimePriority(rtp, prio), PinCPU: cpu >= 0, CPU: cpu, StackBytes: 256 << 10, ReserveP: true}
	n.Context().Go(func(ctx context.Context) error {
		// rt pins only a SCHED_FIFO thread: without a priority there is
		// nothing to prepare
		if o.Priority > 0 {
			res := rt.Prepare(o)
			logRT(n, res, o)
		}
		return b.Run(ctx)
	})
	n.Logger().Infof("velma core agent running at %.0f Hz (ve_body idle, cs idle)", 1/b.runner.Params().Period)
	return nil
}
