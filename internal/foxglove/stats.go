package foxglove

import (
	"sort"
	"time"
)

// ClientStats describes one connected client.
type ClientStats struct {
	Addr string
	// Subscriptions is the number of channels the client subscribes to.
	Subscriptions int
	// Sent counts the messages written to the socket, Dropped the
	// messageData frames dropped because the client did not keep up.
	Sent, Dropped, DroppedBytes uint64
	// Queued and QueuedBytes are the messageData frames waiting now.
	Queued, QueuedBytes int
	// Lost is true while the client is lost (Options.ClientTimeout).
	Lost bool
}

// Stats describes the server's clients.
type Stats struct {
	Clients []ClientStats
	// Dropped counts the messageData frames dropped for all clients since
	// the server started (including clients that have left).
	Dropped uint64
	// OriginRefused, RequestsRefused and ClientErrors count since the
	// server started (see the Count* constants).
	OriginRefused, RequestsRefused, ClientErrors uint64
	// ClientsLost counts the times a client was declared lost, and
	// StaleDiscarded the messages and requests clients sent while lost
	// (Options.ClientTimeout).
	ClientsLost, StaleDiscarded uint64
}

// Stats returns the current client statistics.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Dropped: s.dropped.Load(), OriginRefused: s.originRefused.Load(),
		RequestsRefused: s.requestsRefused.Load(), ClientErrors: s.clientErrors.Load(),
		ClientsLost: s.clientsLost.Load(), StaleDiscarded: s.staleDiscarded.Load()}
	for c := range s.clients {
		d, db, q, qb := c.q.stats()
		c.live.mu.Lock()
		lost := c.live.lost
		c.live.mu.Unlock()
		st.Clients = append(st.Clients, ClientStats{Addr: c.addr, Subscriptions: len(c.subs), Sent: c.sent.Load(),
			Dropped: d, DroppedBytes: db, Queued: q, QueuedBytes: qb, Lost: lost})
	}
	sort.Slice(st.Clients, func(i, j int) bool { return st.Clients[i].Addr < st.Clients[j].Addr })
	return st
}

// noteDrops counts drops and logs them at most once per DropLogInterval
// per client.
func (s *Server) noteDrops(c *client, n int) {
	s.dropped.Add(uint64(n))
	if s.opts.OnDrop != nil {
		s.opts.OnDrop(n)
	}
	now := time.Now().UnixNano()
	last := c.lastDropLog.Load()
	if now-last < int64(s.opts.DropLogInterval) || !c.lastDropLog.CompareAndSwap(last, now) {
		return
	}
	d, db, _, _ := c.q.stats()
	s.opts.Logger.Warnf("client %s is not keeping up: %d messages (%d bytes) dropped so far (send_buffer_limit %d bytes)",
		c.addr, d, db, s.opts.SendBufferLimit)
}
