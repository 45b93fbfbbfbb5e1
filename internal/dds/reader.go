package dds

/*
#include "rawcdr.h"
#include <dds/ddsc/dds_loan_api.h>
*/
import "C"

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Reader is a DDS data reader of raw CDR samples whose handler runs on the
// participant's receive goroutine.
type Reader struct {
	p      *Participant
	t      *Topic
	ent    C.dds_entity_t
	q      *C.fsm_rq // hub queue, fed by the reader's C listener; freed on Close
	sw     *statusWatcher
	tok    uint64
	guid   GUID
	handle InstanceHandle
	h      func([]Sample)
	closed atomic.Bool

	// directMu is held by the goroutine in TakeWait (one at a time);
	// Close takes it once closed is set, so the queue outlives the wait.
	directMu sync.Mutex
	direct   *recvState  // TakeWait's buffers, made on its first call
	inDirect atomic.Bool // TakeWait runs the handler

	dropped   uint64 // queue drops, saved when the queue is freed (under p.mu)
	oversized uint64 // size-limit drops, saved likewise
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
	// Keep-last: the hub queue keeps at least depth samples and at most
	// depth*queueFactor (see hub.c); keep-all: unbounded, as the history.
	var keep, limit uint32
	if q.History == KeepLast {
		d := uint32(max(q.Depth, 1))
		keep, limit = d, d*queueFactor
		if limit/queueFactor != d {
			limit = math.MaxUint32
		}
	}
	r := &Reader{p: p, t: t, h: h}
	// The queue and token exist before the reader: its listener may run
	// during dds_create_reader (historical data).
	p.mu.Lock()
	r.tok, r.q, err = p.register(r, C.FSM_RQ_DATA, keep, limit, q.MaxSampleSize)
	if err != nil {
		p.mu.Unlock()
		return nil, err
	}
	if r.sw, err = p.newStatusWatcher(true); err != nil {
		delete(p.recvs, r.tok)
		C.fsm_rq_free(r.q)
		p.mu.Unlock()
		return nil, err
	}
	r.ent = C.fsm_create_reader(p.ent, t.ent, cq, r.q, r.sw.q)
	if r.ent < 0 {
		rc := r.ent
		delete(p.recvs, r.tok)
		C.fsm_rq_free(r.q)
		r.sw.free()
		p.mu.Unlock()
		return nil, fmt.Errorf("dds: reader on %q: %w", t.name, newError("dds_create_reader", C.dds_return_t(rc)))
	}
	// GUID and handle are set before p.mu is released: the receive
	// goroutine (which needs p.mu to find r) may run the handler at once.
	if r.guid, err = entityGUID(r.ent); err == nil {
		r.handle, err = entityHandle(r.ent)
	}
	if err != nil {
		delete(p.recvs, r.tok)
		C.dds_delete(r.ent)
		C.fsm_rq_free(r.q)
		r.sw.free()
		p.mu.Unlock()
		return nil, err
	}
	p.readers[r] = struct{}{}
	p.mu.Unlock()
	return r, nil
}

// Topic returns the reader's topic.
func (r *Reader) Topic() *Topic { return r.t }

// GUID returns the reader's GUID.
func (r *Reader) GUID() GUID { return r.guid }

// Handle returns the reader's instance handle.
func (r *Reader) Handle() InstanceHandle { return r.handle }

// SharedMemory reports whether the reader has an iceoryx subscriber: it
// gets the samples of writers on this host through shared memory.
func (r *Reader) SharedMemory() bool { return bool(C.dds_is_shared_memory_available(r.ent)) }

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

// Dropped returns how many samples were dropped from the reader's receive
// queue because a keep-last bound was exceeded before the handler got
// them (see docs/dds.md). Samples Cyclone itself replaced in the reader
// history are not counted.
func (r *Reader) Dropped() uint64 {
	r.p.mu.Lock()
	defer r.p.mu.Unlock()
	if r.q == nil {
		return r.dropped
	}
	return uint64(C.fsm_rq_dropped(r.q))
}

// Oversized returns how many samples were dropped because they exceeded
// QoS.MaxSampleSize (each was also handed to the handler as a Sample with
// Oversize set).
func (r *Reader) Oversized() uint64 {
	r.p.mu.Lock()
	defer r.p.mu.Unlock()
	if r.q == nil {
		return r.oversized
	}
	return uint64(C.fsm_rq_oversized(r.q))
}

// Close deletes the reader. Idempotent. From a goroutine other than the
// receive goroutine it returns once no handler of the participant is
// running, so it must not be called while holding a lock that a handler of
// the same participant may wait for.
func (r *Reader) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	r.endDirect()
	r.p.mu.Lock()
	var err error
	delete(r.p.recvs, r.tok)
	if !r.p.closed {
		delete(r.p.readers, r)
		// dds_delete waits for a running listener and removes it; only
		// then may the queue go.
		err = check("dds_delete(reader)", C.dds_delete(r.ent))
		r.dropped = uint64(C.fsm_rq_dropped(r.q))
		r.oversized = uint64(C.fsm_rq_oversized(r.q))
		C.fsm_rq_free(r.q)
		r.sw.free()
	}
	r.q = nil
	r.sw.q = nil
	r.p.mu.Unlock()
	r.p.waitDelivery()
	return err
}

// deliver hands the k samples of the last fsm_hub_next to the handler
// (receive goroutine only).
func (r *Reader) deliver(rs *recvState, k C.int32_t) {
	r.p.deliverMu.Lock()
	defer r.p.deliverMu.Unlock()
	if k <= 0 || r.closed.Load() || r.p.closing.Load() {
		return
	}
	r.h(rs.samplesOf(k))
}

// directRecvBuf is the initial size of TakeWait's copy buffer (a service
// reply); it grows to the first sample that does not fit.
const directRecvBuf = 16 << 10

// TakeWait waits on the calling goroutine, up to d, for samples of r and
// runs r's handler on them there, instead of on the receive goroutine: the
// thread that the sample's listener wakes is then the caller's own, with no
// hand-over between goroutines (internal/ros: a service client waiting for
// its reply, as rclcpp's spin_until_future_complete does on the caller's
// thread). The thread stays blocked in C for the wait, so d should be
// short (a round trip). Samples that arrive while no TakeWait waits go to
// the receive goroutine as usual, and the two may run r's handler at the
// same time. TakeWait returns how many samples it handed over: 0 when none
// came within d, when another goroutine is in TakeWait on r, or when r or
// its participant is closed. Close waits for a TakeWait in progress, so the
// handler must not close r or its participant when TakeWait runs it.
func (r *Reader) TakeWait(d time.Duration) int {
	if !r.directMu.TryLock() {
		return 0
	}
	defer r.directMu.Unlock()
	if r.closed.Load() || r.p.closing.Load() {
		return 0
	}
	rs := r.direct
	if rs == nil {
		var err error
		if rs, err = newRecvState(directRecvBuf); err != nil {
			return 0
		}
		r.direct = rs
	}
	for {
		k := C.fsm_rq_take_wait(r.q, rs.c, (*C.uchar)(unsafe.Pointer(&rs.buf[0])), C.uint32_t(len(rs.buf)), C.int64_t(d))
		if k == 0 && rs.c.need > 0 {
			n := int(rs.c.need)
			rs.buf = make([]byte, n+n/4)
			continue
		}
		if k <= 0 {
			return 0
		}
		r.inDirect.Store(true)
		r.h(rs.samplesOf(k))
		r.inDirect.Store(false)
		if rs.c.lent != nil {
			C.fsm_recv_release(rs.c)
		}
		rs.oversized = false // the receive goroutine's heap trim is not needed for a marker
		return int(k)
	}
}

// WakeTakeWait ends the TakeWait on r in progress, or if none is, the next
// one, which then returns 0 at once unless samples are queued. The handler
// calls it when it ran on the receive goroutine and handed over what a
// goroutine in (or about to be in) TakeWait waits for. Called while
// TakeWait runs the handler, it does nothing: the goroutine in TakeWait
// looks for what it waits for when the handler returns.
func (r *Reader) WakeTakeWait() {
	if r.inDirect.Load() {
		return
	}
	r.p.mu.Lock()
	if r.q != nil {
		C.fsm_rq_wake_direct(r.q)
	}
	r.p.mu.Unlock()
}

// endDirect waits for a TakeWait in progress and frees its buffers; r is
// closed (closed set), so no TakeWait starts again.
func (r *Reader) endDirect() {
	r.directMu.Lock()
	defer r.directMu.Unlock()
	if r.direct != nil {
		r.direct.free()
		r.direct = nil
	}
}
