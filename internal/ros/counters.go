package ros

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Names of the standard fault counters every node has. The client library
// increments all but commands_rejected itself; node code increments them too where it
// rejects or drops something on its own (a command with a NaN, a request it
// answers with success=false), and may add counters of its own with any
// other name.
const (
	// CounterMalformedSamples counts received samples, requests and
	// replies that could not be decoded (dropped).
	CounterMalformedSamples = "malformed_samples"
	// CounterOversizedSamples counts samples, requests and goals dropped
	// before decoding because they exceeded the entity's sample-size limit.
	CounterOversizedSamples = "oversized_samples"
	// CounterDroppedSamples counts messages a subscription dropped because
	// its keep-last queue was full (the newest are kept, as the QoS asks).
	CounterDroppedSamples = "dropped_samples"
	// CounterRequestsDropped counts service requests dropped because the
	// service's request queue was full, and responses that could not be
	// delivered (client gone, or never matched).
	CounterRequestsDropped = "requests_dropped"
	// CounterRequestsRejected counts requests that were answered but
	// refused: action goals rejected, service requests answered with
	// success=false because they were invalid.
	CounterRequestsRejected = "requests_rejected"
	// CounterCommandsRejected counts commands (topic messages such as
	// velocity commands) that node code refused or clamped.
	CounterCommandsRejected = "commands_rejected"
	// CounterCallbackPanics counts callbacks and action handlers that
	// panicked (Node.Panics).
	CounterCallbackPanics = "callback_panics"
)

// standardCounters lists the standard counters in the order they are
// reported.
var standardCounters = [...]string{
	CounterMalformedSamples,
	CounterOversizedSamples,
	CounterDroppedSamples,
	CounterRequestsDropped,
	CounterRequestsRejected,
	CounterCommandsRejected,
	CounterCallbackPanics,
}

// Counter is one monotonically increasing fault counter of a node. It is
// safe for concurrent use, and a nil *Counter ignores increments, so code
// that gets an optional counter need not check it.
type Counter struct {
	name string
	v    atomic.Uint64
}

// Inc adds one.
func (c *Counter) Inc() { c.Add(1) }

// Add adds n.
func (c *Counter) Add(n uint64) {
	if c != nil {
		c.v.Add(n)
	}
}

// Load returns the current value (0 for a nil Counter).
func (c *Counter) Load() uint64 {
	if c == nil {
		return 0
	}
	return c.v.Load()
}

// Name returns the counter's name.
func (c *Counter) Name() string {
	if c == nil {
		return ""
	}
	return c.name
}

// CounterValue is one counter in a snapshot.
type CounterValue struct {
	Name  string
	Value uint64
}

// counterSet holds a node's counters.
type counterSet struct {
	mu     sync.Mutex
	byName map[string]*Counter
}

func (s *counterSet) get(name string) *Counter {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.byName[name]; c != nil {
		return c
	}
	if s.byName == nil {
		s.byName = map[string]*Counter{}
	}
	c := &Counter{name: name}
	s.byName[name] = c
	return c
}

// snapshot returns the standard counters in their fixed order, then the
// others sorted by name.
func (s *counterSet) snapshot() []CounterValue {
	out := make([]CounterValue, 0, len(standardCounters))
	for _, name := range standardCounters {
		out = append(out, CounterValue{Name: name, Value: s.get(name).Load()})
	}
	s.mu.Lock()
	var extra []CounterValue
	for name, c := range s.byName {
		if !isStandardCounter(name) {
			extra = append(extra, CounterValue{Name: name, Value: c.Load()})
		}
	}
	s.mu.Unlock()
	sort.Slice(extra, func(i, j int) bool { return extra[i].Name < extra[j].Name })
	return append(out, extra...)
}

func isStandardCounter(name string) bool {
	for _, s := range standardCounters {
		if s == name {
			return true
		}
	}
	return false
}

// Counter returns the node's counter called name, creating it (at zero) on
// first use. The same name always gives the same Counter. Every counter is
// published on /diagnostics and shown by `fsmnodes node info`; the standard
// names are the Counter* constants. Behaviour code without ROS imports can
// be handed the counter's Inc method:
//
//	rejected := node.Counter(ros.CounterCommandsRejected)
//	filter := velocity.NewFilter(limits, rejected.Inc) // calls it per refused command
func (n *Node) Counter(name string) *Counter { return n.counters.get(name) }

// Counters returns a snapshot of the node's counters: the standard ones in
// a fixed order, then the others sorted by name.
func (n *Node) Counters() []CounterValue { return n.counters.snapshot() }

// throttle lets a repeated log line through at most once per interval and
// counts the ones it held back. The zero value is ready to use.
type throttle struct {
	mu         sync.Mutex
	last       time.Time
	suppressed uint64
}

// logThrottle is the interval of rate-limited warnings (once a second per
// entity and cause, as RCLCPP_WARN_THROTTLE with 1000 ms).
const logThrottle = time.Second

// allow reports whether a line may be logged now and how many were held
// back since the last one that was.
func (t *throttle) allow(now time.Time) (ok bool, suppressed uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.last.IsZero() && now.Sub(t.last) < logThrottle {
		t.suppressed++
		return false, 0
	}
	t.last = now
	s := t.suppressed
	t.suppressed = 0
	return true, s
}

// warnThrottled logs a warning through t: at most one line per second, and
// the next line that gets through says how many were held back.
func (n *Node) warnThrottled(t *throttle, format string, args ...any) {
	ok, suppressed := t.allow(time.Now())
	if !ok {
		return
	}
	if suppressed > 0 {
		format += " (%d similar messages suppressed)"
		args = append(args, suppressed)
	}
	n.Logger().Warnf(format, args...)
}
