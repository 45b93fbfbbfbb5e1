package ros

import (
	"fmt"
	"sync"

	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"

	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	rcl_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/msg"
)

// extensions holds the per-node state of parameters, rosout and clock
// support (the Node keeps it in its ext field).
type extensions struct {
	clock  *Clock
	params paramState

	rosout      *publisher // nil with --disable-rosout-logs
	paramEvents *publisher

	clockMu  sync.Mutex
	clockSub *clockReader // /clock, while use_sim_time is true

	typeDesc typeDescState // ~/get_type_description (typedesc.go)

	diag *diagnostics // /diagnostics publisher; nil for hidden nodes
}

// initExtensions runs at node creation, before the node is announced:
// the /rosout publisher and logger sink, the /parameter_events publisher,
// the parameter store with this node's overrides (--params-file, -p), the
// use_sim_time parameter (and the /clock subscription when it is true), the
// six parameter services, the /diagnostics publisher of the node's counters
// (not for hidden nodes) and, unless start_type_description_service is
// false, ~/get_type_description.
func (n *Node) initExtensions() error {
	n.ext.clock = NewClock(nil)
	if rl := n.ctx.args.RosoutLogs; rl == nil || *rl {
		pub, err := newPublisher(n, "/rosout", rcl_interfaces_msg.Log_TypeInfo, QoSRosout, withoutDefaultEvents())
		if err != nil {
			return fmt.Errorf("rosout: %w", err)
		}
		n.ext.rosout = pub
		level := n.ctx.args.LevelFor(n.loggerName).ZapLevel()
		n.teeLogCore(newRosoutCore(level, func(m *rcl_interfaces_msg.Log) error { return pub.publish(m) }))
	}
	pe, err := newPublisher(n, "/parameter_events", rcl_interfaces_msg.ParameterEvent_TypeInfo, QoSParameterEvents)
	if err != nil {
		return fmt.Errorf("parameter events: %w", err)
	}
	n.ext.paramEvents = pe

	ov, err := n.ctx.args.overrides()
	if err != nil {
		return err
	}
	n.ext.params.store = param.NewStore(param.StoreOptions{
		Overrides:       ov.For(n.fqn),
		OverrideSources: ov.Sources(n.fqn),
		OnEvent:         n.onParamEvent,
	})
	if _, err := n.DeclareParameter("use_sim_time", false, ParamDescriptor{
		Description: "Follow /clock (rosgraph_msgs/msg/Clock) instead of the system clock",
	}); err != nil {
		return err
	}
	if err := n.initParamServices(); err != nil {
		return err
	}
	if err := n.initDiagnostics(); err != nil {
		return err
	}
	return n.initTypeDescriptionService()
}

// closeExtensions runs at node close, after the callback goroutine has
// stopped and before the entities (publishers, services, the /clock
// subscription, ROS timers) are closed by the node.
func (n *Node) closeExtensions() {
	if n.ext.diag != nil {
		n.ext.diag.stop()
	}
	n.ext.clockMu.Lock()
	n.ext.clockSub = nil
	n.ext.clockMu.Unlock()
}

// onParamEvent publishes every accepted parameter change on
// /parameter_events, applies use_sim_time, and posts the node's
// OnParametersChanged listeners. It runs with the store's change lock held.
func (n *Node) onParamEvent(ev param.Event) {
	msg := &rcl_interfaces_msg.ParameterEvent{
		Stamp:             builtin_interfaces_msg.TimeOf(n.ext.clock.Now()),
		Node:              n.fqn,
		NewParameters:     paramsToMsg(ev.New),
		ChangedParameters: paramsToMsg(ev.Changed),
		DeletedParameters: paramsToMsg(ev.Deleted),
	}
	if n.ext.paramEvents != nil {
		if err := n.ext.paramEvents.publish(msg); err != nil && !n.isClosed() {
			n.Logger().Warnf("publishing /parameter_events: %v", err)
		}
	}
	for _, p := range append(append([]Parameter(nil), ev.New...), ev.Changed...) {
		if p.Name == "use_sim_time" && p.Value.Type() == param.TypeBool {
			n.setSimTime(p.Value.Bool())
		}
	}
	n.notifyChanged(ev)
}

// setSimTime switches the node clock and creates or closes the /clock
// subscription (rclcpp's ClockQoS: best effort, keep last 1).
func (n *Node) setSimTime(on bool) {
	n.ext.clockMu.Lock()
	defer n.ext.clockMu.Unlock()
	n.ext.clock.SetSimTime(on)
	switch {
	case on && n.ext.clockSub == nil:
		sub, err := newClockReader(n, n.ext.clock)
		if err != nil {
			n.Logger().Errorf("use_sim_time: subscribing to /clock: %v", err)
			return
		}
		n.ext.clockSub = sub
	case !on && n.ext.clockSub != nil:
		err := n.ext.clockSub.close()
		n.removeEntity(n.ext.clockSub)
		if err != nil {
			n.Logger().Warnf("use_sim_time: closing the /clock subscription: %v", err)
		}
		n.ext.clockSub = nil
	}
}
