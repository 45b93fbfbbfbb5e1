package simnode

import (
	"strconv"
	"sync"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
)

// counters watches /diagnostics on n for the counters node (a fully
// qualified name) reports. Its get returns a counter's last value (0
// before any), heard whether any report of node came yet.
type counters struct {
	mu    sync.Mutex
	vals  map[string]uint64
	heard bool
}

func watchCounters(t *testing.T, n *ros.Node, node string) *counters {
	t.Helper()
	c := &counters{vals: map[string]uint64{}}
	if _, err := ros.NewSubscription(n, ros.DiagnosticsTopic, ros.QoSDiagnosticsReader, func(m *diagnostic_msgs_msg.DiagnosticArray) {
		for _, st := range m.Status {
			if st.Name != ros.DiagnosticsStatusName(node) {
				continue
			}
			c.mu.Lock()
			c.heard = true
			for _, kv := range st.Values {
				if v, err := strconv.ParseUint(kv.Value, 10, 64); err == nil {
					c.vals[kv.Key] = v
				}
			}
			c.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *counters) get(name string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.vals[name]
}

func (c *counters) heardFrom() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.heard
}
