package dds

/*
#include "rawcdr.h"
*/
import "C"

import "errors"

// matchWatcher receives the signals of the match listeners (hub.c) and
// calls the WatchMatches handler.
type matchWatcher struct {
	p *Participant
	h func()
}

// WatchMatches calls h on the receive goroutine after a reader or writer
// of the participant matched a peer endpoint or lost one. By then the
// change is in place: MatchedReaders and MatchedWriters show it. Calls are
// coalesced (one call may stand for several changes, and an extra call may
// come with none). It may be called once per participant.
//
// Discovery events (WatchDiscovery) are no substitute: Cyclone publishes
// a new peer endpoint on the built-in topics before it matches it with the
// local readers and writers, so a matched count read on a discovery event
// may still miss that endpoint, with no further event to come.
func (p *Participant) WatchMatches(h func()) error {
	if h == nil {
		return errors.New("dds: WatchMatches: nil handler")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	if p.match != nil {
		return errors.New("dds: WatchMatches: already watching")
	}
	m := &matchWatcher{p: p, h: h}
	_, q, err := p.register(m, C.FSM_RQ_SIGNAL, 0, 0, 0)
	if err != nil {
		return err
	}
	C.fsm_hub_watch_matches(p.hub, q)
	p.match = m
	return nil
}

// deliver calls the handler (receive goroutine only).
func (m *matchWatcher) deliver(*recvState, C.int32_t) {
	m.p.deliverMu.Lock()
	defer m.p.deliverMu.Unlock()
	if m.p.closing.Load() {
		return
	}
	m.h()
}
