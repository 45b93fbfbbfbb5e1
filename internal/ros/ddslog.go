package ros

import (
	"fmt"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
)

// CounterDDSLog counts the messages of Cyclone DDS's own log (errors,
// warnings, info) in the node's process (Cyclone's log is process-wide). Every
// node of a Context reports it once Cyclone has logged something; the
// messages themselves are logged by the Context at most once a second
// (ddsLogEvery), each line saying how many more came since the previous one.
const CounterDDSLog = "dds_log_messages"

const (
	// ddsLogPoll is how often the Context takes Cyclone's messages from
	// the ring of internal/dds (64 messages; more are counted, not kept).
	ddsLogPoll = 200 * time.Millisecond
	// ddsLogEvery is the shortest time between two logged lines.
	ddsLogEvery = time.Second
)

// ddsLogDrain holds the throttling state of drainDDSLog.
type ddsLogDrain struct {
	lastTotal uint64         // dds.CycloneLogStats().Total at the previous poll
	held      uint64         // messages since the last logged line
	heldMsg   dds.LogMessage // the most severe of them that was taken
	hasHeld   bool
	last      time.Time // when the last line was logged
}

// drainDDSLog takes Cyclone's own log from internal/dds until the Context
// shuts down: it counts the messages on every node (CounterDDSLog) and logs
// them throttled, instead of Cyclone's default of one stderr line per
// message (a peer sending garbage packets made that 1,000 lines a second).
func (c *Context) drainDDSLog() {
	var d ddsLogDrain
	t := time.NewTicker(ddsLogPoll)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case now := <-t.C:
			d.poll(c, now)
		}
	}
}

func (d *ddsLogDrain) poll(c *Context, now time.Time) {
	msgs := dds.TakeLog(1000)
	total := dds.CycloneLogStats().Total
	n := total - d.lastTotal
	d.lastTotal = total
	if n > 0 {
		c.mu.Lock()
		nodes := append([]*Node(nil), c.nodes...)
		c.mu.Unlock()
		for _, node := range nodes {
			node.Counter(CounterDDSLog).Add(n)
		}
		d.held += n
	}
	for _, m := range msgs {
		if !d.hasHeld || m.Level > d.heldMsg.Level {
			d.heldMsg, d.hasHeld = m, true
		}
	}
	if !d.hasHeld || (!d.last.IsZero() && now.Sub(d.last) < ddsLogEvery && !now.Before(d.last)) {
		return
	}
	text := "cyclonedds: " + d.heldMsg.Text
	if d.held > 1 {
		text += fmt.Sprintf(" (and %d more Cyclone DDS log messages since the last report; counted as %s)", d.held-1, CounterDDSLog)
	}
	switch {
	case benignDDSLog(d.heldMsg.Text):
		c.log.Debug(text)
	case d.heldMsg.Level == dds.LogInfo:
		c.log.Info(text)
	case d.heldMsg.Level == dds.LogWarning:
		c.log.Warn(text)
	default:
		c.log.Error(text)
	}
	d.held, d.hasHeld, d.last = 0, false, now
}

// benignDDSLog reports whether a Cyclone message says only what every
// loopback-only process meets (the "lo" interface has no multicast, so
// discovery is unicast, as configured): logged at debug level, not
// warned about on every CLI call. It is still counted.
func benignDDSLog(text string) bool {
	return strings.Contains(text, "is not multicast-capable: disabling multicast")
}
