package dds

/*
#include "rawcdr.h"
*/
import "C"

import (
	"errors"
	"strconv"
	"sync"
)

// StatusKind says which QoS status of a reader or writer changed.
type StatusKind int

// Status kinds. A reader reports IncompatibleQoS (requested),
// DeadlineMissed (requested) and LivelinessChanged; a writer reports
// IncompatibleQoS (offered), DeadlineMissed (offered) and LivelinessLost.
const (
	IncompatibleQoS StatusKind = iota + 1
	DeadlineMissed
	LivelinessChanged
	LivelinessLost
)

// String names the status kind.
func (k StatusKind) String() string {
	switch k {
	case IncompatibleQoS:
		return "incompatible QoS"
	case DeadlineMissed:
		return "deadline missed"
	case LivelinessChanged:
		return "liveliness changed"
	case LivelinessLost:
		return "liveliness lost"
	}
	return "unknown status"
}

// Policy identifies a DDS QoS policy (Cyclone's dds_qos_policy_id_t), as
// reported by an incompatible-QoS status.
type Policy uint32

// The policies a ROS 2 endpoint can be incompatible in (others are not set
// differently by ROS 2 peers).
const (
	PolicyInvalid     Policy = C.DDS_INVALID_QOS_POLICY_ID
	PolicyDurability  Policy = C.DDS_DURABILITY_QOS_POLICY_ID
	PolicyDeadline    Policy = C.DDS_DEADLINE_QOS_POLICY_ID
	PolicyLiveliness  Policy = C.DDS_LIVELINESS_QOS_POLICY_ID
	PolicyReliability Policy = C.DDS_RELIABILITY_QOS_POLICY_ID
	PolicyHistory     Policy = C.DDS_HISTORY_QOS_POLICY_ID
	PolicyLifespan    Policy = C.DDS_LIFESPAN_QOS_POLICY_ID
)

// String names the policy in lower case ("reliability"); "policy <n>" for
// one without a name here.
func (p Policy) String() string {
	switch p {
	case PolicyInvalid:
		return "invalid"
	case PolicyDurability:
		return "durability"
	case PolicyDeadline:
		return "deadline"
	case PolicyLiveliness:
		return "liveliness"
	case PolicyReliability:
		return "reliability"
	case PolicyHistory:
		return "history"
	case PolicyLifespan:
		return "lifespan"
	}
	return "policy " + strconv.FormatUint(uint64(p), 10)
}

// Status is one change of a reader's or writer's QoS status, with the
// fields of the DDS status of its Kind. The changes are summed since the
// previous Status of the same kind was handed over; the totals are
// Cyclone's.
type Status struct {
	Kind StatusKind
	// TotalCount and TotalCountChange: IncompatibleQoS, DeadlineMissed,
	// LivelinessLost.
	TotalCount       uint32
	TotalCountChange int32
	// LastPolicy: IncompatibleQoS, the policy found incompatible last.
	LastPolicy Policy
	// AliveCount, NotAliveCount and their changes: LivelinessChanged, the
	// matched writers whose liveliness is asserted or lost.
	AliveCount, NotAliveCount             uint32
	AliveCountChange, NotAliveCountChange int32
}

// statusWatcher receives the signals of one reader's or writer's status
// listeners (hub.c) and hands the statuses to its handler.
type statusWatcher struct {
	p      *Participant
	reader bool
	tok    uint64
	q      *C.fsm_rq // nil once freed (under p.mu)
	mu     sync.Mutex
	h      func(Status)
}

// newStatusWatcher allocates the status queue of a reader or writer (p.mu
// held).
func (p *Participant) newStatusWatcher(reader bool) (*statusWatcher, error) {
	sw := &statusWatcher{p: p, reader: reader}
	var err error
	if sw.tok, sw.q, err = p.register(sw, C.FSM_RQ_SIGNAL, 0, 0, 0); err != nil {
		return nil, err
	}
	return sw, nil
}

// watch sets the handler and has the statuses that changed before it was
// set delivered.
func (sw *statusWatcher) watch(h func(Status)) error {
	if h == nil {
		return errors.New("dds: WatchStatus: nil handler")
	}
	sw.mu.Lock()
	if sw.h != nil {
		sw.mu.Unlock()
		return errors.New("dds: WatchStatus: already watching")
	}
	sw.h = h
	sw.mu.Unlock()
	sw.p.mu.Lock()
	defer sw.p.mu.Unlock()
	if sw.q == nil || sw.p.closed {
		return ErrClosed
	}
	C.fsm_rq_watch_status(sw.q)
	return nil
}

// free releases the queue (p.mu held, after the entity was deleted or
// when it was never created).
func (sw *statusWatcher) free() {
	delete(sw.p.recvs, sw.tok)
	if sw.q != nil {
		C.fsm_rq_free(sw.q)
		sw.q = nil
	}
}

// deliver takes the summed statuses and calls the handler once per kind
// that changed (receive goroutine only). Without a handler the statuses
// stay summed in the queue until watch sets one.
func (sw *statusWatcher) deliver(*recvState, C.int32_t) {
	sw.p.deliverMu.Lock()
	defer sw.p.deliverMu.Unlock()
	sw.mu.Lock()
	h := sw.h
	sw.mu.Unlock()
	if h == nil || sw.p.closing.Load() {
		return
	}
	var st C.fsm_status
	sw.p.mu.Lock()
	if sw.q == nil || sw.p.closed {
		sw.p.mu.Unlock()
		return
	}
	C.fsm_rq_take_status(sw.q, &st)
	sw.p.mu.Unlock()
	for _, s := range statusesOf(&st, sw.reader) {
		h(s)
	}
}

// statusesOf converts the statuses that changed, of a reader or a writer.
func statusesOf(st *C.fsm_status, reader bool) []Status {
	var out []Status
	if st.changed&C.FSM_ST_INCOMPATIBLE_QOS != 0 {
		out = append(out, Status{Kind: IncompatibleQoS, TotalCount: uint32(st.incompatible_total),
			TotalCountChange: int32(st.incompatible_change), LastPolicy: Policy(st.last_policy_id)})
	}
	if st.changed&C.FSM_ST_DEADLINE_MISSED != 0 {
		out = append(out, Status{Kind: DeadlineMissed, TotalCount: uint32(st.deadline_total),
			TotalCountChange: int32(st.deadline_change)})
	}
	if st.changed&C.FSM_ST_LIVELINESS != 0 {
		if reader {
			out = append(out, Status{Kind: LivelinessChanged,
				AliveCount: uint32(st.alive_count), NotAliveCount: uint32(st.not_alive_count),
				AliveCountChange: int32(st.alive_change), NotAliveCountChange: int32(st.not_alive_change)})
		} else {
			out = append(out, Status{Kind: LivelinessLost, TotalCount: uint32(st.lost_total),
				TotalCountChange: int32(st.lost_change)})
		}
	}
	return out
}

// WatchStatus calls h on the receive goroutine when one of the reader's
// QoS statuses changes: IncompatibleQoS (a matching writer offers less
// than the reader requests), DeadlineMissed (no sample within the QoS
// deadline) and LivelinessChanged (a matched writer became alive or lost
// its liveliness). Changes from before the call are delivered after it
// (summed). Calls are coalesced per kind. It may be called once.
func (r *Reader) WatchStatus(h func(Status)) error {
	if r.closed.Load() {
		return ErrClosed
	}
	return r.sw.watch(h)
}

// WatchStatus calls h on the receive goroutine when one of the writer's
// QoS statuses changes: IncompatibleQoS (a matching reader requests more
// than the writer offers), DeadlineMissed (a sample not written within
// the QoS deadline) and LivelinessLost (the writer failed to assert its
// liveliness within the lease duration). Changes from before the call are
// delivered after it (summed). Calls are coalesced per kind. It may be
// called once.
func (w *Writer) WatchStatus(h func(Status)) error {
	w.mu.RLock()
	closed := w.closed
	w.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	return w.sw.watch(h)
}

// AssertLiveliness asserts the liveliness of a writer whose QoS
// Liveliness is ManualByTopic (writing a sample asserts it too).
func (w *Writer) AssertLiveliness() error {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return ErrClosed
	}
	return check("dds_assert_liveliness", C.dds_assert_liveliness(w.ent))
}
