package rosbridge

import (
	"fmt"
	"strconv"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
)

// DiagnosticsName is the name of the bridge's status on /diagnostics.
const DiagnosticsName = "foxglove_bridge: WebSocket clients"

// CounterClientDrops is the node counter (reported with the standard
// counters on /diagnostics) of messages dropped for clients that did not
// keep up.
const CounterClientDrops = "client_messages_dropped"

// startDiagnostics publishes the state of the WebSocket clients on
// /diagnostics every period, beside the node's standard counters: the
// number of clients, drops for slow clients (total and per client),
// samples dropped before they reached the bridge, and per client the
// subscriptions, messages sent and bytes waiting. The level is WARN while
// drops are happening.
func (b *Bridge) startDiagnostics(period time.Duration) error {
	pub, err := ros.NewPublisher[diagnostic_msgs_msg.DiagnosticArray](b.node, ros.DiagnosticsTopic, ros.QoSDiagnostics)
	if err != nil {
		return fmt.Errorf("diagnostics publisher: %w", err)
	}
	var lastDropped uint64
	_, err = b.node.NewWallTimer(period, func() {
		st := b.srv.Stats()
		rosDropped := b.subscriptionDrops()
		kv := func(k string, v any) diagnostic_msgs_msg.KeyValue {
			return diagnostic_msgs_msg.KeyValue{Key: k, Value: fmt.Sprint(v)}
		}
		status := diagnostic_msgs_msg.DiagnosticStatus{
			Level:      diagnostic_msgs_msg.DiagnosticStatus_OK,
			Name:       DiagnosticsName,
			HardwareId: b.node.FullyQualifiedName(),
			Values: []diagnostic_msgs_msg.KeyValue{
				kv("clients", len(st.Clients)),
				kv("dropped_total", st.Dropped),
				kv("ros_queue_dropped", rosDropped),
				kv("clients_lost", st.ClientsLost),
				kv("stale_discarded", st.StaleDiscarded),
			},
		}
		for _, c := range st.Clients {
			status.Values = append(status.Values,
				kv("client "+c.Addr+" subscriptions", c.Subscriptions),
				kv("client "+c.Addr+" sent", c.Sent),
				kv("client "+c.Addr+" dropped", c.Dropped),
				kv("client "+c.Addr+" queued_bytes", c.QueuedBytes),
				kv("client "+c.Addr+" lost", c.Lost))
		}
		status.Message = strconv.Itoa(len(st.Clients)) + " clients"
		if st.Dropped > lastDropped {
			status.Level = diagnostic_msgs_msg.DiagnosticStatus_WARN
			status.Message += fmt.Sprintf(", %d messages dropped for slow clients in the last %v", st.Dropped-lastDropped, period)
		}
		lastDropped = st.Dropped
		msg := &diagnostic_msgs_msg.DiagnosticArray{Status: []diagnostic_msgs_msg.DiagnosticStatus{status}}
		msg.Header.Stamp = builtin_interfaces_msg.TimeOf(b.node.Clock().Now())
		if err := pub.Publish(msg); err != nil {
			b.node.Logger().Warnf("publishing /diagnostics: %v", err)
		}
	})
	return err
}

// subscriptionDrops sums what the bridge's subscriptions dropped because
// their callback queue was full.
func (b *Bridge) subscriptionDrops() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.closedDrops
	for s := range b.subs {
		n += s.Dropped()
	}
	return n
}
