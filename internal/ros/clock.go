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

// Ticker calls f every period of ROS time until ctx is done, on the calling
// goroutine. Missed periods are skipped. If the ROS time jumps backwards (a
// restarted simulation) the schedule restarts from the new time.
func (c *Clock) Ticker(ctx context.Context, period time.Duration, f func()) error {
	if period <= 0 {
		period = time.Millisecond
	}
	last := c.Now()
	next := last.Add(period)
	for {
		c.mu.Lock()
		now, sim, ch := c.nowLocked(), c.sim, c.changed
		c.mu.Unlock()
		if now.Before(last) {
			next = now.Add(period)
		}
		last = now
		if !now.Before(next) {
			f()
			next = next.Add((now.Sub(next)/period + 1) * period)
			continue
		}
		var timer *time.Timer
		var fire <-chan time.Time
		if !sim {
			timer = time.NewTimer(next.Sub(now))
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

// ROSTimer calls a function every period of the node's ROS time, on the
// node's callback goroutine: with use_sim_time it follows /clock (a paused
// simulation pauses it), otherwise the system clock. At most one call is
// pending at a time; missed periods are skipped.
type ROSTimer struct {
	n       *Node
	cancel  context.CancelFunc
	done    chan struct{}
	pending atomic.Bool
}

// NewROSTimer creates a timer on the node's ROS clock (rclcpp's
// create_timer on the node clock). The first call is one period from now.
func (n *Node) NewROSTimer(period time.Duration, cb func()) (*ROSTimer, error) {
	if period <= 0 {
		return nil, fmt.Errorf("ros: NewROSTimer: period %v must be positive", period)
	}
	if cb == nil {
		return nil, fmt.Errorf("ros: NewROSTimer: nil callback")
	}
	ctx, cancel := context.WithCancel(n.runCtx)
	t := &ROSTimer{n: n, cancel: cancel, done: make(chan struct{})}
	run := func() {
		t.pending.Store(false)
		cb()
	}
	if err := n.addEntity(t); err != nil {
		cancel()
		return nil, err
	}
	go func() {
		defer close(t.done)
		_ = n.ext.clock.Ticker(ctx, period, func() {
			if t.pending.CompareAndSwap(false, true) {
				if n.Post(run) != nil {
					t.pending.Store(false)
				}
			}
		})
	}()
	return t, nil
}

func (t *ROSTimer) gids() (readers, writers []dds.GUID) { return nil, nil }

func (t *ROSTimer) close() error {
	t.cancel()
	<-t.done
	return nil
}

// Close stops the timer.
func (t *ROSTimer) Close() error {
	err := t.close()
	t.n.removeEntity(t)
	return err
}
