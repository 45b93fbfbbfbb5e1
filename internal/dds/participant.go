package dds

/*
#include <stdlib.h>
#include "rawcdr.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Initial and maximum size of the receive goroutine's copy buffer. It grows
// to hold the largest sample seen; a sample larger than maxRecvBuf is still
// delivered (the buffer grows to it) but the buffer shrinks back afterwards.
const (
	initRecvBuf = 256 << 10
	maxRecvBuf  = 4 << 20
)

// maxRounds bounds how many batches one reader may deliver per waitset
// wake-up, so that a busy reader does not starve the others.
const maxRounds = 8

// receiver is something the receive goroutine takes samples from: a Reader
// or one of the built-in discovery readers.
type receiver interface {
	deliver(rs *recvState)
}

// recvState is owned by the receive goroutine.
type recvState struct {
	c       *C.fsm_recv
	disc    *C.fsm_dstate // allocated on first discovery delivery
	buf     []byte
	samples []Sample
}

// Participant is a DDS domain participant with its receive goroutine. See
// the package documentation for threading and lifetime rules.
type Participant struct {
	domainID uint32
	ent      C.dds_entity_t
	ws       C.dds_entity_t
	guard    C.dds_entity_t
	guid     GUID
	handle   InstanceHandle
	dom      *domainRef

	mu        sync.Mutex // protects the fields below
	closed    bool
	topics    map[string]*Topic
	recvs     map[C.dds_attach_t]receiver
	writers   map[*Writer]struct{}
	readers   map[*Reader]struct{}
	nextToken C.dds_attach_t
	disc      *discovery

	// deliverMu is held by the receive goroutine while it takes from a
	// reader and runs its handler; Close paths use it to wait for a
	// handler to finish.
	deliverMu sync.Mutex
	closing   atomic.Bool
	loopID    atomic.Uint64 // goroutine id of the receive goroutine
	done      chan struct{}
}

// NewParticipant creates a participant on domainID. A non-empty config
// (Cyclone XML and/or file URIs, comma separated) creates the domain with
// that configuration (see the package documentation); userData is the
// participant's USER_DATA QoS (ROS 2 uses "enclave=/;"). It starts the
// participant's receive goroutine.
func NewParticipant(domainID uint32, config string, userData []byte) (_ *Participant, err error) {
	dom, err := domains.acquire(domainID, config)
	if err != nil {
		return nil, err
	}
	p := &Participant{
		domainID:  domainID,
		dom:       dom,
		topics:    make(map[string]*Topic),
		recvs:     make(map[C.dds_attach_t]receiver),
		writers:   make(map[*Writer]struct{}),
		readers:   make(map[*Reader]struct{}),
		nextToken: 1,
		done:      make(chan struct{}),
	}
	defer func() {
		if err != nil {
			if p.ent > 0 {
				C.dds_delete(p.ent)
			}
			domains.release(dom)
		}
	}()
	cq := C.dds_create_qos()
	if len(userData) > 0 {
		ud := C.CBytes(userData)
		C.dds_qset_userdata(cq, ud, C.size_t(len(userData)))
		C.free(ud)
	}
	p.ent = C.dds_create_participant(C.dds_domainid_t(domainID), cq, nil)
	C.dds_delete_qos(cq)
	if p.ent < 0 {
		rc := p.ent
		p.ent = 0
		return nil, newError("dds_create_participant", C.dds_return_t(rc))
	}
	if p.guid, err = entityGUID(p.ent); err != nil {
		return nil, err
	}
	if p.handle, err = entityHandle(p.ent); err != nil {
		return nil, err
	}
	if p.ws = C.dds_create_waitset(p.ent); p.ws < 0 {
		return nil, newError("dds_create_waitset", C.dds_return_t(p.ws))
	}
	if p.guard = C.dds_create_guardcondition(p.ent); p.guard < 0 {
		return nil, newError("dds_create_guardcondition", C.dds_return_t(p.guard))
	}
	if err := check("dds_waitset_attach", C.dds_waitset_attach(p.ws, p.guard, 0)); err != nil {
		return nil, err
	}
	rs := &recvState{
		c:       (*C.fsm_recv)(C.calloc(1, C.sizeof_fsm_recv)),
		buf:     make([]byte, initRecvBuf),
		samples: make([]Sample, 0, C.FSM_BATCH),
	}
	if rs.c == nil {
		return nil, errors.New("dds: NewParticipant: out of memory")
	}
	go p.run(rs)
	return p, nil
}

// GUID returns the participant's GUID (entity id 00 00 01 c1).
func (p *Participant) GUID() GUID { return p.guid }

// Handle returns the participant's instance handle.
func (p *Participant) Handle() InstanceHandle { return p.handle }

// DomainID returns the domain id the participant was created on.
func (p *Participant) DomainID() uint32 { return p.domainID }

// Close stops the receive goroutine and deletes the participant and every
// entity created through it. It is idempotent. Called from a handler, it
// does not wait for the receive goroutine (which exits after the handler
// returns); from elsewhere it waits for the running handler, if any, so it
// must not be called while holding a lock that a handler may wait for.
func (p *Participant) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	writers := p.writers
	readers := p.readers
	p.writers, p.readers = nil, nil
	p.mu.Unlock()

	p.closing.Store(true)
	err := check("dds_set_guardcondition", C.dds_set_guardcondition(p.guard, true))
	onLoop := goid() == p.loopID.Load()
	if !onLoop && err == nil {
		<-p.done
	}
	for w := range writers {
		w.markClosed()
	}
	for r := range readers {
		r.closed.Store(true)
	}
	if rc := C.dds_delete(p.ent); rc < 0 {
		err = errors.Join(err, newError("dds_delete(participant)", rc))
	}
	domains.release(p.dom)
	return err
}

// run is the receive goroutine.
func (p *Participant) run(rs *recvState) {
	p.loopID.Store(goid())
	defer close(p.done)
	defer func() {
		C.fsm_recv_drop(rs.c)
		C.free(unsafe.Pointer(rs.c))
		rs.freeDisc()
	}()
	var xs [16]C.dds_attach_t
	for !p.closing.Load() {
		n := C.dds_waitset_wait(p.ws, &xs[0], C.size_t(len(xs)), C.DDS_INFINITY)
		if n < 0 {
			return // the waitset is gone: the participant was deleted
		}
		for i := 0; i < int(n) && i < len(xs) && !p.closing.Load(); i++ {
			if xs[i] == 0 {
				continue // guard condition: Close
			}
			p.mu.Lock()
			r := p.recvs[xs[i]]
			p.mu.Unlock()
			if r != nil {
				r.deliver(rs)
			}
		}
	}
}

// attach registers r with the receive goroutine, triggered by cond.
func (p *Participant) attach(cond C.dds_entity_t, r receiver) (C.dds_attach_t, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, ErrClosed
	}
	tok := p.nextToken
	p.nextToken++
	p.recvs[tok] = r
	if err := check("dds_waitset_attach", C.dds_waitset_attach(p.ws, cond, tok)); err != nil {
		delete(p.recvs, tok)
		return 0, err
	}
	return tok, nil
}

// detach unregisters a receiver (the caller deletes its condition).
func (p *Participant) detach(cond C.dds_entity_t, tok C.dds_attach_t) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.recvs, tok)
	if !p.closed {
		C.dds_waitset_detach(p.ws, cond)
	}
}

// waitDelivery waits until no handler runs, unless called on the receive
// goroutine itself.
func (p *Participant) waitDelivery() {
	if goid() == p.loopID.Load() {
		return
	}
	p.deliverMu.Lock()
	p.deliverMu.Unlock() //nolint:staticcheck // an empty critical section is the point
}

// take runs one fsm_take into rs.buf, growing the buffer when a sample
// does not fit. It returns the number of samples in rs.c.meta, or a
// negative Cyclone return code.
func (rs *recvState) take(cond C.dds_entity_t) C.int32_t {
	for {
		k := C.fsm_take(rs.c, cond, (*C.uchar)(unsafe.Pointer(&rs.buf[0])), C.uint32_t(len(rs.buf)))
		if k == 0 && rs.c.need > 0 {
			n := int(rs.c.need)
			rs.buf = make([]byte, n+n/4)
			continue
		}
		return k
	}
}

// shrink releases an oversized buffer after a large sample was delivered.
func (rs *recvState) shrink() {
	if len(rs.buf) > maxRecvBuf {
		rs.buf = make([]byte, initRecvBuf)
	}
}

// samplesOf builds the Sample slice for the k samples of the last take.
func (rs *recvState) samplesOf(k C.int32_t) []Sample {
	s := rs.samples[:0]
	for i := 0; i < int(k); i++ {
		m := &rs.c.meta[i]
		s = append(s, Sample{
			Data:              rs.buf[m.off : m.off+m.len : m.off+m.len],
			SourceTimestamp:   int64(m.source_timestamp),
			PublicationHandle: InstanceHandle(m.publication_handle),
		})
	}
	rs.samples = s
	return s
}

// Topic returns the participant's topic with this name, creating it with
// the raw-CDR keyless type typeName. Topics are cached per name: asking for
// an existing name with another type name is an error.
func (p *Participant) Topic(name, typeName string) (*Topic, error) {
	if name == "" || typeName == "" {
		return nil, fmt.Errorf("dds: Topic(%q, %q): empty topic or type name", name, typeName)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	if t, ok := p.topics[name]; ok {
		if t.typeName != typeName {
			return nil, fmt.Errorf("dds: topic %q already exists with type %q, not %q", name, t.typeName, typeName)
		}
		return t, nil
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	ctn := C.CString(typeName)
	defer C.free(unsafe.Pointer(ctn))
	var st *C.struct_ddsi_sertype
	ent := C.fsm_create_topic(p.ent, cn, ctn, &st)
	if ent < 0 {
		return nil, fmt.Errorf("dds: topic %q: %w", name, newError("dds_create_topic_sertype", C.dds_return_t(ent)))
	}
	t := &Topic{p: p, ent: ent, st: st, name: name, typeName: typeName}
	p.topics[name] = t
	return t, nil
}

// Topic is a DDS topic of the keyless raw-CDR type. It lives as long as its
// participant.
type Topic struct {
	p              *Participant
	ent            C.dds_entity_t
	st             *C.struct_ddsi_sertype // owned by Cyclone via ent
	name, typeName string
}

// Name returns the DDS topic name.
func (t *Topic) Name() string { return t.name }

// TypeName returns the DDS type name.
func (t *Topic) TypeName() string { return t.typeName }

// entityGUID returns the GUID of a Cyclone entity.
func entityGUID(ent C.dds_entity_t) (GUID, error) {
	var g C.dds_guid_t
	if err := check("dds_get_guid", C.dds_get_guid(ent, &g)); err != nil {
		return GUID{}, err
	}
	return guidFromC(&g), nil
}

// entityHandle returns the instance handle of a Cyclone entity.
func entityHandle(ent C.dds_entity_t) (InstanceHandle, error) {
	var ih C.dds_instance_handle_t
	if err := check("dds_get_instance_handle", C.dds_get_instance_handle(ent, &ih)); err != nil {
		return 0, err
	}
	return InstanceHandle(ih), nil
}

// guidFromC copies a dds_guid_t.
func guidFromC(g *C.dds_guid_t) GUID {
	var out GUID
	for i := range out {
		out[i] = byte(g.v[i])
	}
	return out
}
