package fault

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// observer watches the robots from the test process. It never subscribes
// to an action's feedback or status topic: that would make the test a
// listener of the navigator's goals and hide a lost action client.
type observer struct {
	n *ros.Node

	mu sync.Mutex
	// diffbot odometry
	odomAt, movedAt time.Time
	stillAt         time.Time // last odometry or mux command showing no motion
	pose            [2]float64
	twist           [2]float64
	maxSpeed        float64 // largest |linear.x| seen on odom since reset
	odometer        float64 // path length driven, summed over odometry poses
	// the mux's output on /diffbot/cmd_vel
	cmdAt, cmdNonzeroAt time.Time
	cmd                 geometry_msgs_msg.Twist
	maxCmd              float64 // largest |linear.x| seen since reset
	op                  rsm_msgs_msg.OperationMode
	opAt                time.Time
	modesSeen           map[uint8]bool // operation modes seen since reset
	state               string
	hexAt, velmaAt      time.Time
	// the latest counters each node published on /diagnostics
	counters map[string]map[string]uint64
}

func newObserver(t *testing.T, d *demo) *observer {
	t.Helper()
	dom := d.domain
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &dom, NoSignals: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	go func() { _ = rc.Spin(context.Background()) }()
	n, err := rc.NewNode("fault_suite", "")
	if err != nil {
		t.Fatal(err)
	}
	o := &observer{n: n, counters: map[string]map[string]uint64{}, modesSeen: map[uint8]bool{}}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ros.NewSubscription(n, "/diffbot/odom", ros.QoSDefault, func(m *nav_msgs_msg.Odometry) {
		now := time.Now()
		o.mu.Lock()
		defer o.mu.Unlock()
		p := [2]float64{m.Pose.Pose.Position.X, m.Pose.Pose.Position.Y}
		tw := [2]float64{m.Twist.Twist.Linear.X, m.Twist.Twist.Angular.Z}
		if tw != [2]float64{} || math.Hypot(p[0]-o.pose[0], p[1]-o.pose[1]) > 1e-4 {
			o.movedAt = now
		} else {
			o.stillAt = now
		}
		if !o.odomAt.IsZero() {
			o.odometer += math.Hypot(p[0]-o.pose[0], p[1]-o.pose[1])
		}
		o.odomAt, o.pose, o.twist = now, p, tw
		o.maxSpeed = math.Max(o.maxSpeed, math.Abs(tw[0]))
	}))
	must(ros.NewSubscription(n, "/diffbot/cmd_vel", ros.QoSDefault, func(m *geometry_msgs_msg.Twist) {
		now := time.Now()
		o.mu.Lock()
		defer o.mu.Unlock()
		o.cmdAt, o.cmd = now, *m
		if *m != (geometry_msgs_msg.Twist{}) {
			o.cmdNonzeroAt = now
		} else {
			o.stillAt = now
		}
		o.maxCmd = math.Max(o.maxCmd, math.Abs(m.Linear.X))
	}))
	must(ros.NewSubscription(n, "/diffbot/rsm/operationMode", ros.QoSDefault, func(m *rsm_msgs_msg.OperationMode) {
		o.mu.Lock()
		o.op, o.opAt = *m, time.Now()
		o.modesSeen[m.Mode] = true
		o.mu.Unlock()
	}))
	must(ros.NewSubscription(n, "/diffbot/rsm/stateInfo", ros.QoSDefault, func(m *std_msgs_msg.String) {
		o.mu.Lock()
		o.state = m.Data
		o.mu.Unlock()
	}))
	must(ros.NewSubscription(n, "/hexapod/joint_states", ros.QoSDefault, func(*sensor_msgs_msg.JointState) {
		o.mu.Lock()
		o.hexAt = time.Now()
		o.mu.Unlock()
	}))
	must(ros.NewSubscription(n, "/velma/joint_states", ros.QoSDefault, func(*sensor_msgs_msg.JointState) {
		o.mu.Lock()
		o.velmaAt = time.Now()
		o.mu.Unlock()
	}))
	must(ros.NewSubscription(n, ros.DiagnosticsTopic, ros.QoSDiagnosticsReader, func(m *diagnostic_msgs_msg.DiagnosticArray) {
		o.mu.Lock()
		defer o.mu.Unlock()
		for _, st := range m.Status {
			fqn, ok := strings.CutSuffix(st.Name, ": counters")
			if !ok {
				continue
			}
			c := map[string]uint64{}
			for _, kv := range st.Values {
				if v, err := strconv.ParseUint(kv.Value, 10, 64); err == nil {
					c[kv.Key] = v
				}
			}
			o.counters[fqn] = c
		}
	}))
	return o
}

// counter returns the latest value of a node's counter on /diagnostics.
func (o *observer) counter(fqn, name string) uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.counters[fqn][name]
}

// snapshot is a copy of the observed values.
type snapshot struct {
	odomAt, movedAt, stillAt, cmdAt, cmdNonzeroAt, opAt, hexAt, velmaAt time.Time
	pose, twist                                                         [2]float64
	cmd                                                                 geometry_msgs_msg.Twist
	op                                                                  rsm_msgs_msg.OperationMode
	state                                                               string
	maxSpeed, maxCmd                                                    float64
	odometer                                                            float64
}

func (o *observer) get() snapshot {
	o.mu.Lock()
	defer o.mu.Unlock()
	return snapshot{odomAt: o.odomAt, movedAt: o.movedAt, stillAt: o.stillAt, cmdAt: o.cmdAt, cmdNonzeroAt: o.cmdNonzeroAt, opAt: o.opAt,
		hexAt: o.hexAt, velmaAt: o.velmaAt, pose: o.pose, twist: o.twist, cmd: o.cmd, op: o.op, state: o.state,
		maxSpeed: o.maxSpeed, maxCmd: o.maxCmd, odometer: o.odometer}
}

// resetMax clears the largest speeds and the operation modes seen.
func (o *observer) resetMax() {
	o.mu.Lock()
	o.maxSpeed, o.maxCmd = 0, 0
	o.modesSeen = map[uint8]bool{}
	o.mu.Unlock()
}

// sawMode reports whether the mux published mode since the last resetMax.
func (o *observer) sawMode(mode uint8) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.modesSeen[mode]
}

// settle is how long the diffbot must show no motion, and the mux no
// non-zero command, to count as stopped.
const settle = 500 * time.Millisecond

// stoppedSince returns when the diffbot last moved or was commanded to:
// the later of the last odometry showing motion (a dead or frozen
// simulator sends none, so its robot stands) and the mux's last non-zero
// command (a dead mux sends none). The robot counts as stopped when a
// message showing no motion (odometry at rest or a zero command) came at
// least settle after that: silence alone is no proof, since a stall of a
// loaded machine delays every message (seen: a 0.5 s gap while the
// navigator still drove, "stopped" 0.52 s after a simulator was killed).
func (s snapshot) stoppedSince(now time.Time) (time.Time, bool) {
	at := s.movedAt
	if s.cmdNonzeroAt.After(at) {
		at = s.cmdNonzeroAt
	}
	return at, now.Sub(at) >= settle && s.stillAt.Sub(at) >= settle
}

// call calls a service of the demo with a bounded wait.
func call[Req, Resp any](t *testing.T, n *ros.Node, name string, srv rosidl.Service[Req, Resp], req *Req) (*Resp, error) {
	t.Helper()
	c, err := ros.NewClient(n, name, srv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.WaitForService(ctx); err != nil {
		return nil, err
	}
	return c.Call(ctx, req)
}
