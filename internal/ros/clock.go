package ros

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	rosgraph_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rosgraph_msgs/msg"
)

// Clock is a node's ROS clock (RCL_ROS_TIME): the system clock, or, while
// the node's use_sim_time parameter is true, the time last received on
// /clock (rosgraph_msgs/msg/Clock). Until the first /clock message arrives
// sim time is 0 (the Unix epoch), as in rclcpp. A Clock is safe for
// concurrent use.
type Clock struct {
	mu      sync.Mutex
	sim     bool
	simTime time.Time     // zero until the first /clock message
	changed chan struct{} // closed and replaced on every update
	wall    func() time.Time
	// source counts the switches between system and sim time; before is
	// the time the clock showed just before the last switch (timers keep
	// the rest of their period across a switch, as rcl's do).
	source uint64
	before time.Time
}

// NewClock returns a ROS clock that follows wall (time.Now if nil) until
// SetSimTime(true) is called.
func NewClock(wall func() time.Time) *Clock {
	if wall == nil {
		wall = time.Now
	}
	return &Clock{changed: make(chan struct{}), wall: wall}
}

// Now returns the current ROS time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nowLocked()
}

func (c *Clock) nowLocked() time.Time {
	if !c.sim {
		return c.wall()
	}
	if c.simTime.IsZero() {
		return time.Unix(0, 0)
	}
	return c.simTime
}

// IsSimTime reports whether the clock follows /clock.
func (c *Clock) IsSimTime() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sim
}

// SetSimTime switches between system time (false) and sim time (true).
// Waiters re-evaluate their deadlines at once.
func (c *Clock) SetSimTime(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sim == on {
		return
	}
	c.before = c.nowLocked()
	c.source++
	c.sim = on
	c.broadcastLocked()
}

// SetTime records a /clock sample. It is ignored unless sim time is on.
func (c *Clock) SetTime(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.sim {
		return
	}
	if t.IsZero() {
		t = time.Unix(0, 0)
	}
	c.simTime = t
	c.broadcastLocked()
}

// clockState is one reading of a Clock for a waiter.
type clockState struct {
	now     time.Time
	sim     bool
	changed <-chan struct{} // closed at the next update
	source  uint64          // count of system/sim switches
	before  time.Time       // the time just before the last switch
}

func (c *Clock) state() clockState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return clockState{now: c.nowLocked(), sim: c.sim, changed: c.changed, source: c.source, before: c.before}
}

// uninitialized reports whether t is the sim time shown before the first
// /clock message (0, as rcl's "clock not yet set").
func uninitialized(t time.Time) bool { return t.Equal(time.Unix(0, 0)) }

func (c *Clock) broadcastLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// WaitUntil blocks until the ROS time reaches t or ctx is done (then it
// returns ctx.Err()). On system time it sleeps; on sim time it wakes at
// every /clock sample, so a paused simulation pauses the waiter.
func (c *Clock) WaitUntil(ctx context.Context, t time.Time) error {
	for {
		c.mu.Lock()
		now, sim, ch := c.nowLocked(), c.sim, c.changed
		c.mu.Unlock()
		if !now.Before(t) {
			return nil
		}
		var timer *time.Timer
		var fire <-chan time.Time
		if !sim {
			timer = time.NewTimer(t.Sub(now))
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return ctx.Err()
		case <-ch:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// Sleep waits for d of ROS time (see WaitUntil).
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	return c.WaitUntil(ctx, c.Now().Add(d))
}

// Clock returns the node's ROS clock (sim-time aware; see Clock).
func (n *Node) Clock() *Clock { return n.ext.clock }

// clockReader is the node's /clock subscription. Unlike a Subscription it
// updates the Clock directly on the receive goroutine, so sim time moves on
// while the node's callback goroutine is busy (or waits on the clock) and
// before Spin.
type clockReader struct {
	r         *dds.Reader
	malformed atomic.Uint64
}

func newClockReader(n *Node, clk *Clock) (*clockReader, error) {
	ti := rosgraph_msgs_msg.Clock_TypeInfo
	t, err := n.ctx.part.Topic(ddsTopicName(topicPrefix, "/clock", "", false), ti.DDSName)
	if err != nil {
		return nil, fmt.Errorf("ros: /clock: %w", err)
	}
	q, err := QoSClock.ddsQoS([]byte(typeHashUserData(n.ctx.Distro(), ti.Hash)), false)
	if err != nil {
		return nil, fmt.Errorf("ros: /clock: %w", err)
	}
	cr := &clockReader{}
	limit := sampleLimit(ti, 0, 0, DefaultMaxSampleSize)
	size := newOversizeGuard(n, "sample on /clock", limit)
	cr.r, err = n.ctx.part.NewReader(t, withSampleLimit(q, limit), func(batch []dds.Sample) {
		for _, s := range batch {
			if size.dropped(&s) {
				continue
			}
			var m rosgraph_msgs_msg.Clock
			if err := rosidl.Unmarshal(s.Data, &m); err != nil {
				cr.malformed.Add(1)
				n.Counter(CounterMalformedSamples).Inc()
				continue
			}
			clk.SetTime(m.Clock.AsTime())
		}
	})
	if err != nil {
		return nil, fmt.Errorf("ros: /clock: %w", err)
	}
	if err := n.addEntity(cr); err != nil {
		return nil, err
	}
	return cr, nil
}

func (c *clockReader) gids() (readers, writers []dds.GUID) { return []dds.GUID{c.r.GUID()}, nil }
func (c *clockReader) close() error                        { return c.r.Close() }
