package foxglove

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// A client is supervised when Options.ClientTimeout is set: the server
// pings it every ClientTimeout/4, one ping at a time (a browser answers
// WebSocket pings by itself, whatever its page is doing), and counts every frame it receives,
// pongs included, as hearing from it. On Linux, TCP's count of the bytes
// the client acknowledged growing counts too: a page that reads slowly
// (a busy machine, a slow link) answers a ping only once it has read what
// was queued before it, which can take longer than ClientTimeout, yet its
// link is up. A client heard from for none of ClientTimeout is lost: its
// link has dropped or stalled, or it reads nothing, although TCP keeps the
// connection open. Then
//
//   - Session.Silent's channel closes, so a backend can end what the
//     client started and must not go on without it (rosbridge cancels the
//     action goals it sent);
//   - what the client sent meanwhile is discarded when it arrives:
//     published messages (counted), service calls and parameter sets
//     (refused). TCP delivers what the page sent into the dead link, in
//     order, once the link is back; a teleop command held in the sender's
//     socket for seconds would otherwise reach the robot as if new.
//
// The client is heard again when it answers a ping sent after it was
// declared lost. TCP keeps the client's frames in order, and the client
// received that ping only after the link came back, so everything it
// sent into the dead link arrived before that answer: from then on its
// requests are fresh and taken again.
//
// CountClientLost counts the clients declared lost and CountStaleDiscarded
// what they sent meanwhile (Options.OnCount).
const (
	CountClientLost       = "client_lost"
	CountStaleDiscarded   = "client_stale_discarded"
	pingsPerClientTimeout = 4
)

// Session is what a Backend learns about the client a request comes from:
// SessionOf(ctx) in Backend.CallService.
type Session struct {
	addr string
	done <-chan struct{}

	mu     sync.Mutex
	silent chan struct{} // closed while the client is lost; replaced when it is heard again
}

func newSession(addr string, done <-chan struct{}) *Session {
	return &Session{addr: addr, done: done, silent: make(chan struct{})}
}

// Addr is the client's remote address.
func (s *Session) Addr() string { return s.addr }

// Done is closed when the client has disconnected.
func (s *Session) Done() <-chan struct{} { return s.done }

// Silent returns a channel that is closed when the client is next
// declared lost (heard from for none of Options.ClientTimeout), or
// already closed while it is lost. It is never closed when the server
// does not supervise its clients.
func (s *Session) Silent() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.silent
}

func (s *Session) markSilent() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.silent)
}

func (s *Session) markHeard() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.silent = make(chan struct{})
}

type sessionKey struct{}

// SessionOf returns the session of the client whose request ctx belongs
// to (Backend.CallService), or nil.
func SessionOf(ctx context.Context) *Session {
	s, _ := ctx.Value(sessionKey{}).(*Session)
	return s
}

// liveness is a client's supervision state.
type liveness struct {
	lastHeard atomic.Int64 // Unix ns of the last frame received (or bytes acknowledged)

	acked     func() (uint64, bool) // bytes the client acknowledged (nil: unknown)
	lastAcked uint64                // by supervise only

	mu        sync.Mutex
	lost      bool
	lostAt    time.Time
	lostAfter uint64 // pings started before the client was declared lost
	pings     uint64 // pings started (by pingLoop)
	discarded uint64 // what the client sent while lost (this episode)
}

// heard records a frame from the client.
func (c *client) heard() { c.live.lastHeard.Store(time.Now().UnixNano()) }

// discardIfLost reports whether the client is lost now, counting what
// (a message or request) it sent as discarded if so.
func (c *client) discardIfLost() bool {
	l := &c.live
	l.mu.Lock()
	lost := l.lost
	if lost {
		l.discarded++
	}
	l.mu.Unlock()
	if lost {
		c.s.staleDiscarded.Add(1)
		c.s.count(CountStaleDiscarded)
	}
	return lost
}

// supervise declares the client lost when nothing came from it for
// ClientTimeout, checking every ClientTimeout/4, while pingLoop pings it,
// until it disconnects.
func (c *client) supervise() {
	timeout := c.s.opts.ClientTimeout
	interval := timeout / pingsPerClientTimeout
	c.s.wg.Add(1)
	go func() {
		defer c.s.wg.Done()
		c.pingLoop(interval)
	}()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
		}
		l := &c.live
		if l.acked != nil {
			if n, ok := l.acked(); ok && n > l.lastAcked {
				l.lastAcked = n
				c.heard()
			}
		}
		now := time.Now()
		silence := now.Sub(time.Unix(0, l.lastHeard.Load()))
		l.mu.Lock()
		declare := !l.lost && silence > timeout
		if declare {
			// A ping in flight now may have been written before the
			// link dropped: only the answer to a later one counts.
			l.lost, l.lostAt, l.lostAfter, l.discarded = true, now, l.pings, 0
		}
		l.mu.Unlock()
		if declare {
			c.s.clientsLost.Add(1)
			c.s.count(CountClientLost)
			c.s.opts.Logger.Warnf("client %s lost: nothing from it for %v (client_timeout %v); what it sent meanwhile will be discarded until it answers a new ping",
				c.addr, silence.Round(time.Millisecond), timeout)
			c.sess.markSilent()
		}
	}
}

// pingLoop pings the client, one ping at a time, at most every interval:
// a ping waits for the connection (a large message being written; the
// library gives that 5 s, then the ping is tried again) and then for its
// answer as long as it takes. The library numbers its pings
// 1, 2, ... in the order of the calls, which this goroutine alone makes,
// so ping number live.pings is the one in flight.
func (c *client) pingLoop(interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
		}
		c.live.mu.Lock()
		c.live.pings++
		c.live.mu.Unlock()
		if err := c.conn.Ping(c.ctx); err != nil {
			if c.ctx.Err() != nil {
				return // the client is gone
			}
			// The ping could not be written within the library's 5 s
			// for a control frame: the link is stalled behind a data
			// frame. Ping again at the next tick; ending here would
			// leave a lost client lost for good once its link is back
			// (a fresh-clone CI run's page was, after a 4 s drop).
			c.s.opts.Logger.Debugf("client %s: ping not sent: %v", c.addr, err)
		}
	}
}

// pong handles the client's answer to ping number payload.
func (c *client) pong(payload []byte) {
	c.heard()
	n, err := strconv.ParseUint(string(payload), 10, 64)
	if err != nil {
		return
	}
	l := &c.live
	l.mu.Lock()
	back := l.lost && n > l.lostAfter
	var lostFor time.Duration
	var discarded uint64
	if back {
		l.lost = false
		lostFor, discarded = time.Since(l.lostAt), l.discarded
	}
	l.mu.Unlock()
	if back {
		c.sess.markHeard()
		c.s.opts.Logger.Infof("client %s heard again, %v after it was declared lost; %d messages and requests it sent meanwhile discarded",
			c.addr, lostFor.Round(time.Millisecond), discarded)
	}
}

// ackProbeKey keys a connection's ackProbe in its requests' context.
type ackProbeKey struct{}
