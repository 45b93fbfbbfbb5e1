package ros

import (
	"fmt"
	"sync"

	"github.com/fsmnodes/fsmnodes/internal/dds"
)

// QoSPolicyKind is a QoS policy as a QoS event names it
// (rmw_qos_policy_kind_t).
type QoSPolicyKind int

// QoS policy kinds that an incompatible-QoS event can name.
const (
	QoSPolicyInvalid QoSPolicyKind = iota
	QoSPolicyDurability
	QoSPolicyDeadline
	QoSPolicyLiveliness
	QoSPolicyReliability
	QoSPolicyHistory
	QoSPolicyLifespan
)

// String returns the name rclcpp prints for the policy
// (rclcpp::qos_policy_name_from_kind), e.g. "RELIABILITY_QOS_POLICY".
func (k QoSPolicyKind) String() string {
	switch k {
	case QoSPolicyDurability:
		return "DURABILITY_QOS_POLICY"
	case QoSPolicyDeadline:
		return "DEADLINE_QOS_POLICY"
	case QoSPolicyLiveliness:
		return "LIVELINESS_QOS_POLICY"
	case QoSPolicyReliability:
		return "RELIABILITY_QOS_POLICY"
	case QoSPolicyHistory:
		return "HISTORY_QOS_POLICY"
	case QoSPolicyLifespan:
		return "LIFESPAN_QOS_POLICY"
	}
	return "INVALID_QOS_POLICY"
}

// policyKind maps a DDS policy as rmw_cyclonedds does (others: invalid).
func policyKind(p dds.Policy) QoSPolicyKind {
	switch p {
	case dds.PolicyDurability:
		return QoSPolicyDurability
	case dds.PolicyDeadline:
		return QoSPolicyDeadline
	case dds.PolicyLiveliness:
		return QoSPolicyLiveliness
	case dds.PolicyReliability:
		return QoSPolicyReliability
	case dds.PolicyHistory:
		return QoSPolicyHistory
	case dds.PolicyLifespan:
		return QoSPolicyLifespan
	}
	return QoSPolicyInvalid
}

// IncompatibleQoSInfo is an incompatible-QoS event: a publisher and a
// subscription of the topic were found whose QoS cannot match, so no
// messages flow between them (rclcpp's QOSRequestedIncompatibleQoSInfo
// and QOSOfferedIncompatibleQoSInfo).
type IncompatibleQoSInfo struct {
	// TotalCount counts the incompatible endpoints found so far,
	// TotalCountChange those since the last event.
	TotalCount, TotalCountChange int
	// LastPolicyKind is the policy found incompatible last.
	LastPolicyKind QoSPolicyKind
}

// DeadlineMissedInfo is a deadline event: a subscription got no message,
// or a publisher sent none, within the QoS Deadline (rclcpp's
// QOSDeadlineRequestedInfo and QOSDeadlineOfferedInfo).
type DeadlineMissedInfo struct {
	TotalCount, TotalCountChange int
}

// LivelinessChangedInfo is a subscription's liveliness event: a matched
// publisher became alive or lost its liveliness (rclcpp's
// QOSLivelinessChangedInfo). The counts are of matched publishers.
type LivelinessChangedInfo struct {
	AliveCount, NotAliveCount             int
	AliveCountChange, NotAliveCountChange int
}

// LivelinessLostInfo is a publisher's liveliness event: it did not assert
// its liveliness within the QoS LivelinessLeaseDuration (rclcpp's
// QOSLivelinessLostInfo).
type LivelinessLostInfo struct {
	TotalCount, TotalCountChange int
}

// SubscriptionEventCallbacks are a subscription's QoS event callbacks
// (rclcpp's SubscriptionEventCallbacks). They run on the node's callback
// goroutine; nil ones are not called, except IncompatibleQoS: without it,
// the subscription logs rclcpp's warning ("New publisher discovered on
// topic '...', offering incompatible QoS. ...").
type SubscriptionEventCallbacks struct {
	// Deadline: the requested deadline was missed.
	Deadline func(DeadlineMissedInfo)
	// Liveliness: a matched publisher's liveliness changed.
	Liveliness func(LivelinessChangedInfo)
	// IncompatibleQoS: a publisher offers less than the subscription
	// requests.
	IncompatibleQoS func(IncompatibleQoSInfo)
}

// PublisherEventCallbacks are a publisher's QoS event callbacks (rclcpp's
// PublisherEventCallbacks), run like SubscriptionEventCallbacks; without
// IncompatibleQoS the publisher logs rclcpp's warning ("New subscription
// discovered on topic '...', requesting incompatible QoS. ...").
type PublisherEventCallbacks struct {
	// Deadline: the offered deadline was missed.
	Deadline func(DeadlineMissedInfo)
	// Liveliness: the publisher lost its liveliness.
	Liveliness func(LivelinessLostInfo)
	// IncompatibleQoS: a subscription requests more than the publisher
	// offers.
	IncompatibleQoS func(IncompatibleQoSInfo)
}

// WithSubscriptionEvents sets a subscription's QoS event callbacks
// (SubscriptionOptions.event_callbacks in rclcpp).
func WithSubscriptionEvents(cb SubscriptionEventCallbacks) EndpointOption {
	return func(o *endpointOptions) { o.subEvents = &cb }
}

// WithPublisherEvents sets a publisher's QoS event callbacks
// (PublisherOptions.event_callbacks in rclcpp).
func WithPublisherEvents(cb PublisherEventCallbacks) EndpointOption {
	return func(o *endpointOptions) { o.pubEvents = &cb }
}

// withoutDefaultEvents keeps a publisher quiet about incompatible QoS, as
// rcl's own publishers (rosout, an action's status and feedback) are.
func withoutDefaultEvents() EndpointOption {
	return func(o *endpointOptions) { o.quietEvents = true }
}

// qosEvents moves one endpoint's DDS statuses to the node's callback
// goroutine: they are summed per kind until the posted task runs, so a
// burst (a short deadline missed again and again) costs one task.
type qosEvents struct {
	n      *Node
	handle func(dds.Status) // on the node goroutine
	wants  func(dds.StatusKind) bool

	mu        sync.Mutex
	pending   []dds.Status // at most one per kind
	scheduled bool
	closed    bool
}

func newQoSEvents(n *Node, wants func(dds.StatusKind) bool, handle func(dds.Status)) *qosEvents {
	return &qosEvents{n: n, wants: wants, handle: handle}
}

// push adds a status (receive goroutine); kinds nobody handles are
// dropped here, without a task.
func (e *qosEvents) push(s dds.Status) {
	if !e.wants(s.Kind) {
		return
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	merged := false
	for i := range e.pending {
		if p := &e.pending[i]; p.Kind == s.Kind {
			s.TotalCountChange += p.TotalCountChange
			s.AliveCountChange += p.AliveCountChange
			s.NotAliveCountChange += p.NotAliveCountChange
			*p = s
			merged = true
		}
	}
	if !merged {
		e.pending = append(e.pending, s)
	}
	post := !e.scheduled
	e.scheduled = true
	e.mu.Unlock()
	if post && e.n.Post(e.run) != nil {
		e.mu.Lock()
		e.scheduled = false
		e.mu.Unlock()
	}
}

// run hands the pending statuses to the handler (node goroutine).
func (e *qosEvents) run() {
	e.mu.Lock()
	ps := e.pending
	e.pending = nil
	e.scheduled = false
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return
	}
	for _, s := range ps {
		e.handle(s)
	}
}

// close drops pending statuses; no handler starts afterwards.
func (e *qosEvents) close() {
	e.mu.Lock()
	e.closed = true
	e.pending = nil
	e.mu.Unlock()
}

// watchSubscriptionEvents routes a reader's statuses to cb (and the
// default incompatible-QoS warning).
func watchSubscriptionEvents(n *Node, r *dds.Reader, topic string, cb *SubscriptionEventCallbacks) (*qosEvents, error) {
	var c SubscriptionEventCallbacks
	if cb != nil {
		c = *cb
	}
	wants := func(k dds.StatusKind) bool {
		return k == dds.IncompatibleQoS || k == dds.DeadlineMissed && c.Deadline != nil ||
			k == dds.LivelinessChanged && c.Liveliness != nil
	}
	e := newQoSEvents(n, wants, func(s dds.Status) {
		switch s.Kind {
		case dds.IncompatibleQoS:
			info := IncompatibleQoSInfo{TotalCount: int(s.TotalCount), TotalCountChange: int(s.TotalCountChange), LastPolicyKind: policyKind(s.LastPolicy)}
			if c.IncompatibleQoS != nil {
				c.IncompatibleQoS(info)
				return
			}
			n.Logger().Warnf("New publisher discovered on topic '%s', offering incompatible QoS. "+
				"No messages will be sent to it. Last incompatible policy: %s", topic, info.LastPolicyKind)
		case dds.DeadlineMissed:
			if c.Deadline != nil {
				c.Deadline(DeadlineMissedInfo{TotalCount: int(s.TotalCount), TotalCountChange: int(s.TotalCountChange)})
			}
		case dds.LivelinessChanged:
			if c.Liveliness != nil {
				c.Liveliness(LivelinessChangedInfo{AliveCount: int(s.AliveCount), NotAliveCount: int(s.NotAliveCount),
					AliveCountChange: int(s.AliveCountChange), NotAliveCountChange: int(s.NotAliveCountChange)})
			}
		}
	})
	if err := r.WatchStatus(e.push); err != nil {
		return nil, fmt.Errorf("ros: subscription on %s: %w", topic, err)
	}
	return e, nil
}

// watchPublisherEvents routes a writer's statuses to cb (and, unless
// quiet, the default incompatible-QoS warning).
func watchPublisherEvents(n *Node, w *dds.Writer, topic string, cb *PublisherEventCallbacks, quiet bool) (*qosEvents, error) {
	var c PublisherEventCallbacks
	if cb != nil {
		c = *cb
	}
	wants := func(k dds.StatusKind) bool {
		return k == dds.IncompatibleQoS && (c.IncompatibleQoS != nil || !quiet) ||
			k == dds.DeadlineMissed && c.Deadline != nil || k == dds.LivelinessLost && c.Liveliness != nil
	}
	e := newQoSEvents(n, wants, func(s dds.Status) {
		switch s.Kind {
		case dds.IncompatibleQoS:
			info := IncompatibleQoSInfo{TotalCount: int(s.TotalCount), TotalCountChange: int(s.TotalCountChange), LastPolicyKind: policyKind(s.LastPolicy)}
			if c.IncompatibleQoS != nil {
				c.IncompatibleQoS(info)
				return
			}
			if !quiet {
				n.Logger().Warnf("New subscription discovered on topic '%s', requesting incompatible QoS. "+
					"No messages will be sent to it. Last incompatible policy: %s", topic, info.LastPolicyKind)
			}
		case dds.DeadlineMissed:
			if c.Deadline != nil {
				c.Deadline(DeadlineMissedInfo{TotalCount: int(s.TotalCount), TotalCountChange: int(s.TotalCountChange)})
			}
		case dds.LivelinessLost:
			if c.Liveliness != nil {
				c.Liveliness(LivelinessLostInfo{TotalCount: int(s.TotalCount), TotalCountChange: int(s.TotalCountChange)})
			}
		}
	})
	if err := w.WatchStatus(e.push); err != nil {
		return nil, fmt.Errorf("ros: publisher on %s: %w", topic, err)
	}
	return e, nil
}
