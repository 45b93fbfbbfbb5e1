package ros

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// DiagnosticsTopic is where every (non-hidden) node publishes its counters.
const DiagnosticsTopic = "/diagnostics"

// DiagnosticsPeriod is how often a node publishes its counters
// (diagnostic_updater's default period).
const DiagnosticsPeriod = time.Second

// QoSDiagnostics is the QoS of the /diagnostics publishers: reliable, keep
// last 1 like diagnostic_updater's, but transient local so that a tool
// joining late (`fsmnodes node info`) gets every node's latest counters at
// once. Volatile subscribers such as the diagnostic aggregator match it.
//
// A subscriber should keep more than one message (QoSDiagnosticsReader):
// every node publishes on the one topic, about at the same moment, and a
// keep-last-1 reader keeps only the newest of two samples that arrive
// together from different nodes.
var QoSDiagnostics = QoS{History: HistoryKeepLast, Depth: 1, Reliability: ReliabilityReliable, Durability: DurabilityTransientLocal}

// QoSDiagnosticsReader is QoSDiagnostics with room for the reports of many
// nodes (keep last 1000), for subscribers of /diagnostics.
var QoSDiagnosticsReader = QoSDiagnostics.KeepLast(1000)

// DiagnosticsStatusName returns the DiagnosticStatus name under which the
// node with the given fully qualified name reports its counters.
func DiagnosticsStatusName(nodeFQN string) string { return nodeFQN + ": counters" }

// hubDropper is an entity whose DDS reader queue may drop samples before
// they reach the entity (keep-last bound of internal/dds).
type hubDropper interface{ hubDropped() uint64 }

// diagnostics publishes a node's counters on /diagnostics once per
// DiagnosticsPeriod, from its own timer (not the callback goroutine, so a
// stuck callback does not silence them).
type diagnostics struct {
	n   *Node
	pub *publisher

	mu      sync.Mutex
	t       *time.Timer
	stopped bool
	prev    map[string]uint64
	hubSeen map[entity]uint64
}

// initDiagnostics creates the /diagnostics publisher and starts the
// periodic report, for nodes that are not hidden.
func (n *Node) initDiagnostics() error {
	if IsHiddenName(n.name) {
		return nil
	}
	pub, err := newPublisher(n, DiagnosticsTopic, diagnostic_msgs_msg.DiagnosticArray_TypeInfo, QoSDiagnostics)
	if err != nil {
		return fmt.Errorf("diagnostics: %w", err)
	}
	d := &diagnostics{n: n, pub: pub, hubSeen: map[entity]uint64{}}
	d.mu.Lock()
	d.t = time.AfterFunc(DiagnosticsPeriod, d.tick)
	d.mu.Unlock()
	n.ext.diag = d
	return nil
}

func (d *diagnostics) tick() {
	d.publish()
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.stopped {
		d.t.Reset(DiagnosticsPeriod)
	}
}

func (d *diagnostics) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = true
	d.t.Stop()
}

// collectHubDrops adds the samples the DDS layer dropped for the node's
// readers since the last report to dropped_samples.
func (d *diagnostics) collectHubDrops() {
	n := d.n
	n.mu.Lock()
	ents := append([]entity(nil), n.entities...)
	n.mu.Unlock()
	seen := make(map[entity]uint64, len(d.hubSeen))
	for _, e := range ents {
		hd, ok := e.(hubDropper)
		if !ok {
			continue
		}
		v := hd.hubDropped()
		if v > d.hubSeen[e] {
			n.Counter(CounterDroppedSamples).Add(v - d.hubSeen[e])
		}
		seen[e] = v
	}
	d.hubSeen = seen
}

// status builds the node's DiagnosticStatus: every counter as a key/value;
// level WARN, naming the counters that grew, when any grew since the
// previous report, else OK.
func (d *diagnostics) status() diagnostic_msgs_msg.DiagnosticStatus {
	d.collectHubDrops()
	vals := d.n.Counters()
	st := diagnostic_msgs_msg.DiagnosticStatus{
		Level:  diagnostic_msgs_msg.DiagnosticStatus_OK,
		Name:   DiagnosticsStatusName(d.n.fqn),
		Values: make([]diagnostic_msgs_msg.KeyValue, 0, len(vals)),
	}
	var grew []string
	cur := make(map[string]uint64, len(vals))
	for _, v := range vals {
		st.Values = append(st.Values, diagnostic_msgs_msg.KeyValue{Key: v.Name, Value: strconv.FormatUint(v.Value, 10)})
		cur[v.Name] = v.Value
		if v.Value > d.prev[v.Name] {
			grew = append(grew, fmt.Sprintf("%s +%d", v.Name, v.Value-d.prev[v.Name]))
		}
	}
	d.prev = cur
	if len(grew) > 0 {
		st.Level = diagnostic_msgs_msg.DiagnosticStatus_WARN
		st.Message = strings.Join(grew, ", ")
	} else {
		st.Message = "no new faults"
	}
	return st
}

func (d *diagnostics) publish() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	msg := &diagnostic_msgs_msg.DiagnosticArray{
		Header: std_msgs_msg.Header{Stamp: builtin_interfaces_msg.TimeOf(d.n.ext.clock.Now())},
		Status: []diagnostic_msgs_msg.DiagnosticStatus{d.status()},
	}
	if err := d.pub.publish(msg); err != nil && !errors.Is(err, ErrClosed) && !d.n.isClosed() {
		d.n.Logger().Warnf("publishing %s: %v", DiagnosticsTopic, err)
	}
}
