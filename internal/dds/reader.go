package dds

/*
#include "rawcdr.h"
*/
import "C"

import (
	"fmt"
	"sync/atomic"
)

// Reader is a DDS data reader of raw CDR samples whose handler runs on the
// participant's receive goroutine.
type Reader struct {
	p      *Participant
	t      *Topic
	ent    C.dds_entity_t
	cond   C.dds_entity_t // read condition (any state) attached to the waitset
	tok    C.dds_attach_t
	guid   GUID
	handle InstanceHandle
	h      func([]Sample)
	closed atomic.Bool
}

// NewReader creates a reader on t with QoS q. h receives batches of
// samples on the participant's receive goroutine; Sample.Data is valid
// only during the call. h must not block for long.
func (p *Participant) NewReader(t *Topic, q QoS, h func(batch []Sample)) (_ *Reader, err error) {
	if t == nil || t.p != p {
		return nil, fmt.Errorf("dds: NewReader: topic does not belong to this participant")
	}
	if h == nil {
		return nil, fmt.Errorf("dds: NewReader on %q: nil handler", t.name)
	}
	cq, err := q.createQoS(true)
	if err != nil {
		return nil, err
	}
	defer C.dds_delete_qos(cq)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	ent := C.dds_create_reader(p.ent, t.ent, cq, nil)
	p.mu.Unlock()
	if ent < 0 {
		return nil, fmt.Errorf("dds: reader on %q: %w", t.name, newError("dds_create_reader", C.dds_return_t(ent)))
	}
	r := &Reader{p: p, t: t, ent: ent, h: h}
	defer func() {
		if err != nil {
			C.dds_delete(ent)
		}
	}()
	if r.guid, err = entityGUID(ent); err != nil {
		return nil, err
	}
	if r.handle, err = entityHandle(ent); err != nil {
		return nil, err
	}
	if r.cond = C.dds_create_readcondition(ent, C.DDS_ANY_STATE); r.cond < 0 {
		return nil, newError("dds_create_readcondition", C.dds_return_t(r.cond))
	}
	if r.tok, err = p.attach(r.cond, r); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	p.readers[r] = struct{}{}
	return r, nil
}

// Topic returns the reader's topic.
func (r *Reader) Topic() *Topic { return r.t }

// GUID returns the reader's GUID.
func (r *Reader) GUID() GUID { return r.guid }

// Handle returns the reader's instance handle.
func (r *Reader) Handle() InstanceHandle { return r.handle }

// MatchedWriters returns the writers currently matched with the reader.
func (r *Reader) MatchedWriters() ([]Endpoint, error) {
	if r.closed.Load() {
		return nil, ErrClosed
	}
	return matched(r.ent, true)
}

// MatchedWriter returns the matched writer with instance handle h (for
// example a Sample's PublicationHandle); ok is false when no such writer is
// matched (any more).
func (r *Reader) MatchedWriter(h InstanceHandle) (ep Endpoint, ok bool, err error) {
	if r.closed.Load() {
		return Endpoint{}, false, ErrClosed
	}
	cep := C.dds_get_matched_publication_data(r.ent, C.dds_instance_handle_t(h))
	if cep == nil {
		return Endpoint{}, false, nil
	}
	defer C.dds_builtintopic_free_endpoint(cep)
	ep = endpointFromC(cep)
	ep.Handle = h
	return ep, true, nil
}

// Close deletes the reader. Idempotent. From a goroutine other than the
// receive goroutine it returns once no handler of the participant is
// running, so it must not be called while holding a lock that a handler of
// the same participant may wait for.
func (r *Reader) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	r.p.detach(r.cond, r.tok)
	r.p.mu.Lock()
	var err error
	if !r.p.closed {
		delete(r.p.readers, r)
		err = check("dds_delete(reader)", C.dds_delete(r.ent))
	}
	r.p.mu.Unlock()
	r.p.waitDelivery()
	return err
}

// deliver takes and hands over pending samples (receive goroutine only).
func (r *Reader) deliver(rs *recvState) {
	r.p.deliverMu.Lock()
	defer r.p.deliverMu.Unlock()
	defer rs.shrink()
	for round := 0; round < maxRounds; {
		if r.closed.Load() || r.p.closing.Load() {
			C.fsm_recv_drop(rs.c)
			return
		}
		k := rs.take(r.cond)
		if k < 0 {
			C.fsm_recv_drop(rs.c)
			return // deleted meanwhile
		}
		if k > 0 {
			r.h(rs.samplesOf(k))
		}
		if rs.c.more != 0 {
			continue // the rest of this batch
		}
		if rs.c.full == 0 {
			return
		}
		round++
	}
}
