package dds

/*
#include <stdlib.h>
#include "rawcdr.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/fsmnodes/fsmnodes/internal/goid"
)

// initRecvBuf is the size of the receive goroutine's copy buffer. Samples
// of lendMin bytes and more are lent in place instead of copied (hub.c),
// so it holds any batch; it would grow for a sample that did not fit.
const initRecvBuf = 256 << 10

// lendMin is the sample size from which the hub lends samples in place.
const lendMin = C.FSM_LEND_MIN

// maxRounds bounds how many batches one built-in reader may deliver per
// wake-up, so that discovery bursts do not starve the data readers.
const maxRounds = 8

// Bounds of a keep-last reader's queue in the receive hub (see hub.c and
// docs/dds.md): at least Depth samples are kept, at most Depth*queueFactor,
// and beyond Depth at most queueBytes of payload; the oldest sample is
// dropped first and counted (Reader.Dropped).
const (
	queueFactor = 1024
	queueBytes  = 8 << 20
)

// receiver is something the receive goroutine delivers to: a Reader, one
// of the built-in discovery readers or the match watcher.
type receiver interface {
	// deliver hands over the k samples of the last fsm_hub_next (a
	// Reader), takes and hands over discovery samples, or reports a
	// match change (k is 0).
	deliver(rs *recvState, k C.int32_t)
}

// recvState is owned by one receive goroutine.
type recvState struct {
	c       *C.fsm_recv
	disc    *C.fsm_dstate // allocated on first discovery delivery
	buf     []byte
	samples []Sample
	// oversized: the last batch had a sample dropped for its size
	oversized bool

	// delivering: a handler runs (RunAfterDelivery may be called);
	// after: what it asked to run once the delivery is done.
	delivering bool
	after      func()
	// afterState is afterIdle, afterRunning or afterHandedOff (it ran
	// too long: another goroutine receives now).
	afterState atomic.Int32
	// woken receives the hub's eventfd counter.
	woken [8]byte
}

// States of recvState.afterState.
const (
	afterIdle = iota
	afterRunning
	afterHandedOff
)

// reschedEvery is how long the receive goroutine goes at most without
// passing through the Go scheduler while traffic keeps it busy (hot waits
// in C, handlers). A goroutine that has not been scheduled for 10 ms is
// one that sysmon preempts, and when it is in a cgo call (fsm_hub_next's
// hot wait, a write), sysmon takes its P away: the goroutine then resumes
// on another thread, and sysmon, having taken something, polls every
// 20 µs for the next millisecond. In a 1 KiB round trip that was a fifth
// of the process's CPU samples in sysmon and the receive goroutine spread
// over four threads. A Gosched every 2 ms costs about a microsecond and
// keeps the scheduler tick moving.
const reschedEvery = 2 * time.Millisecond

// StallAfter is the receive watchdog's tick (watch.c): a function passed
// to RunAfterDelivery that runs through a whole tick (StallAfter to twice
// that) is left to finish on its own while another goroutine takes over
// receiving, so that a slow or blocked callback holds up only itself.
const StallAfter = C.FSM_WATCH_TICK_NS * time.Nanosecond

// newRecvState allocates a receive goroutine's state (or TakeWait's) with
// a copy buffer of bufSize bytes.
func newRecvState(bufSize int) (*recvState, error) {
	rs := &recvState{
		c:       (*C.fsm_recv)(C.calloc(1, C.sizeof_fsm_recv)),
		buf:     make([]byte, bufSize),
		samples: make([]Sample, 0, C.FSM_BATCH),
	}
	if rs.c == nil {
		return nil, errors.New("dds: receive state: out of memory")
	}
	return rs, nil
}

// free releases a receive goroutine's state.
func (rs *recvState) free() {
	C.free(unsafe.Pointer(rs.c))
	rs.c = nil
	rs.freeDisc()
}

// Participant is a DDS domain participant with its receive goroutine. See
// the package documentation for threading and lifetime rules.
type Participant struct {
	domainID uint32
	ent      C.dds_entity_t
	hub      *C.fsm_hub
	wake     *os.File     // the hub's eventfd (a dup), read in Go's network poller
	hubRefs  atomic.Int32 // Close and the receive goroutine; the last frees the hub
	guid     GUID
	handle   InstanceHandle
	dom      *domainRef

	mu        sync.Mutex // protects the fields below
	closed    bool
	topics    map[string]*Topic
	recvs     map[uint64]receiver // by hub queue token
	writers   map[*Writer]struct{}
	readers   map[*Reader]struct{}
	nextToken uint64
	disc      *discovery
	match     *matchWatcher

	// deliverMu is held by the receive goroutine while it takes from a
	// reader and runs its handler; Close paths use it to wait for a
	// handler to finish.
	deliverMu sync.Mutex
	closing   atomic.Bool
	loopID    atomic.Uint64             // goroutine id of the receive goroutine
	cur       atomic.Pointer[recvState] // the receive goroutine's state
	handOffs  atomic.Uint64             // see HandOffs
	watch     *C.fsm_watch              // the receive watchdog (watch.c)
	watchOn   atomic.Bool               // its thread and the standby goroutine run (startWatch)
	watchMu   sync.Mutex                // protects the two fields below
	watchEnd  bool                      // Close stopped the watchdog: it never starts again
	standby   chan struct{}             // closed when the standby goroutine ends; nil before startWatch
	yield     atomic.Bool               // Yield was called: Gosched after this delivery
	trimmedAt time.Time                 // when the last heap trim scheduled runs (receive goroutine; heap.go)
	done      chan struct{}
}

// NewParticipant creates a participant on domainID. A non-empty config
// (Cyclone XML and/or file URIs, comma separated) creates the domain with
// that configuration (see the package documentation); userData is the
// participant's USER_DATA QoS (ROS 2 uses "enclave=/;"). It starts the
// participant's receive goroutine.
func NewParticipant(domainID uint32, config string, userData []byte) (*Participant, error) {
	return NewParticipantWithProperties(domainID, config, userData, nil)
}

// Property is one entry of a participant's PROPERTY QoS policy (a name and
// a string value). DDS Security is configured with these: the "dds.sec.*"
// names of the OMG DDS Security specification, which Cyclone's security
// plugins (libdds_security_auth, _ac and _crypto) read.
type Property struct {
	Name, Value string
}

// NewParticipantWithProperties is NewParticipant with properties in the
// participant's QoS (see Property), set in order. When Cyclone refuses to
// create the participant (a security plugin rejected a certificate, a
// signature or a permissions document), the error carries the error
// messages Cyclone logged while trying (as a *CreateError).
func NewParticipantWithProperties(domainID uint32, config string, userData []byte, props []Property) (_ *Participant, err error) {
	installLogSink() // before Cyclone creates a domain and may log
	secured := securedBy(props)
	if err := security.join(domainID, secured); err != nil {
		return nil, err
	}
	dom, err := domains.acquire(domainID, config)
	if err != nil {
		security.leave(domainID)
		return nil, err
	}
	p := &Participant{
		domainID:  domainID,
		dom:       dom,
		topics:    make(map[string]*Topic),
		recvs:     make(map[uint64]receiver),
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
			security.leave(domainID)
		}
	}()
	cq := C.dds_create_qos()
	if len(userData) > 0 {
		ud := C.CBytes(userData)
		C.dds_qset_userdata(cq, ud, C.size_t(len(userData)))
		C.free(ud)
	}
	for _, pr := range props {
		cn, cv := C.CString(pr.Name), C.CString(pr.Value)
		C.dds_qset_prop(cq, cn, cv)
		C.free(unsafe.Pointer(cn))
		C.free(unsafe.Pointer(cv))
	}
	before := CycloneLogStats().Total
	p.ent = C.dds_create_participant(C.dds_domainid_t(domainID), cq, nil)
	C.dds_delete_qos(cq)
	if p.ent < 0 {
		rc := p.ent
		p.ent = 0
		return nil, &CreateError{Err: newError("dds_create_participant", C.dds_return_t(rc)), Log: errorsLoggedSince(before)}
	}
	if p.guid, err = entityGUID(p.ent); err != nil {
		return nil, err
	}
	if p.handle, err = entityHandle(p.ent); err != nil {
		return nil, err
	}
	rs, err := newRecvState(initRecvBuf)
	if err != nil {
		return nil, fmt.Errorf("dds: NewParticipant: %w", err)
	}
	if p.hub = C.fsm_hub_new(); p.hub == nil {
		rs.free()
		return nil, errors.New("dds: NewParticipant: cannot create the receive hub (out of memory or file descriptors)")
	}
	if p.wake, err = hubWakeFile(p.hub); err != nil {
		rs.free()
		C.fsm_hub_free(p.hub)
		return nil, fmt.Errorf("dds: NewParticipant: %w", err)
	}
	if p.watch = C.fsm_watch_new(); p.watch == nil {
		rs.free()
		p.wake.Close()
		C.fsm_hub_free(p.hub)
		return nil, errors.New("dds: NewParticipant: out of memory")
	}
	p.hubRefs.Store(2)
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
	C.fsm_hub_close(p.hub)
	p.watchMu.Lock()
	p.watchEnd = true
	C.fsm_watch_stop(p.watch)
	standby := p.standby
	p.watchMu.Unlock()
	if standby != nil {
		<-standby
	}
	var err error
	if goid.Current() != p.loopID.Load() {
		<-p.done
	}
	for w := range writers {
		_, shm := w.markClosed()
		C.fsm_shm_free(shm) // before the participant deletes the writer
	}
	for r := range readers {
		r.closed.Store(true)
		r.endDirect()
	}
	// Deleting the participant deletes its readers, which waits for their
	// listeners to return and removes them: only then may the hub go.
	if rc := C.dds_delete(p.ent); rc < 0 {
		err = errors.Join(err, newError("dds_delete(participant)", rc))
	}
	p.mu.Lock()
	for r := range readers {
		if r.q != nil { // keep Dropped's count; the queues go with the hub
			r.dropped = uint64(C.fsm_rq_dropped(r.q))
			r.q = nil
		}
	}
	p.mu.Unlock()
	p.releaseHub()
	domains.release(p.dom)
	security.leave(p.domainID)
	return err
}

// releaseHub drops one of the two references to the C hub and the
// watchdog's memory (Close's, after the participant was deleted, and the
// last receive goroutine's, when it exits); the last one frees them.
func (p *Participant) releaseHub() {
	if p.hubRefs.Add(-1) == 0 {
		p.wake.Close()
		C.fsm_hub_free(p.hub)
		C.fsm_watch_free(p.watch)
	}
}

// hubWakeFile returns a pollable file on a duplicate of the hub's eventfd
// (the hub closes its own).
func hubWakeFile(h *C.fsm_hub) (*os.File, error) {
	fd, err := syscall.Dup(int(C.fsm_hub_fd(h)))
	if err != nil {
		return nil, fmt.Errorf("dup the receive hub's eventfd: %w", err)
	}
	syscall.CloseOnExec(fd)
	// The descriptor is non-blocking (EFD_NONBLOCK is shared with the
	// duplicate), so os.NewFile registers it with the network poller.
	return os.NewFile(uintptr(fd), "dds-hub-eventfd"), nil
}

// run is the receive goroutine: it takes one batch per fsm_hub_next call
// and delivers it, and parks on the hub's eventfd when nothing is ready.
// It returns when the participant closes, or after a function it ran for
// RunAfterDelivery stalled and another receive goroutine took over
// (handOff).
func (p *Participant) run(rs *recvState) {
	p.loopID.Store(goid.Current())
	p.cur.Store(rs)
	scheduled := time.Now()
	for !p.closing.Load() {
		k := C.fsm_hub_next(p.hub, rs.c, (*C.uchar)(unsafe.Pointer(&rs.buf[0])), C.uint32_t(len(rs.buf)))
		if k == C.FSM_HUB_WAIT {
			// Park in the network poller until a listener writes the
			// eventfd: unlike a goroutine blocked in C, a parked one
			// leaves its P free and lets sysmon sleep (hub.c).
			if _, err := p.wake.Read(rs.woken[:]); err != nil {
				break // the file closed: only after the participant did
			}
			scheduled = time.Now()
			continue
		}
		if k < 0 {
			break // closing
		}
		if k == 0 && rs.c.need > 0 {
			n := int(rs.c.need)
			rs.buf = make([]byte, n+n/4)
			continue
		}
		p.mu.Lock()
		r := p.recvs[uint64(rs.c.token)]
		p.mu.Unlock()
		if r != nil {
			rs.delivering = true
			r.deliver(rs, k)
			rs.delivering = false
		}
		if rs.c.lent != nil {
			C.fsm_recv_release(rs.c)
		}
		if f := rs.after; f != nil {
			rs.after = nil
			if !p.runAfter(rs, f) {
				rs.free() // handed off: another goroutine receives now
				return
			}
			// No yield after f unless a handler or f asked for one
			// (Yield): Gosched wakes an idle thread, which takes this
			// goroutine over while this thread sleeps, two context
			// switches for a callback that readied nothing (a server's
			// handler, a pong). Yielding after every f cost 10 % of
			// service calls and 5 µs of a 1 KiB round trip.
		}
		// Yield when a handler made a goroutine runnable (on this
		// thread's run queue), to let it run here, now, rather than block
		// this thread in C and leave it to another thread to be woken and
		// steal it (see Yield); and at least every reschedEvery.
		if now := time.Now(); p.yield.Swap(false) || now.Sub(scheduled) >= reschedEvery {
			runtime.Gosched()
			scheduled = now
		}
		if rs.oversized {
			rs.oversized = false
			p.scheduleTrim()
		}
	}
	rs.free()
	p.releaseHub()
	close(p.done)
}

// RunAfterDelivery asks the receive goroutine to call f once the handler
// that calls it has returned, outside the lock that Close paths wait on,
// before it waits for more samples. It is the way to run work on the
// receive goroutine without waking another goroutine for it (internal/ros
// runs a node's callback there when the node is idle). It may be called
// only from a handler (a Reader's), at most once per delivery; it reports
// false if it was not (another call came first), or if the watchdog below
// could not start, and then f will not run.
//
// If f runs longer than StallAfter, another goroutine takes over
// receiving (HandOffs counts it), and the one running f ends when f
// returns: a slow or blocked f delays nothing but itself.
func (p *Participant) RunAfterDelivery(f func()) bool {
	rs := p.cur.Load()
	if rs == nil || !rs.delivering || rs.after != nil {
		return false
	}
	if !p.watchOn.Load() && !p.startWatch() {
		return false
	}
	rs.after = f
	return true
}

// startWatch starts the watchdog thread and the standby goroutine on the
// first RunAfterDelivery, so that a participant that never runs anything
// after a delivery has neither. It reports false if they cannot run (the
// participant is closing, or no thread could be created).
func (p *Participant) startWatch() bool {
	p.watchMu.Lock()
	defer p.watchMu.Unlock()
	if p.watchOn.Load() {
		return true
	}
	if p.watchEnd || C.fsm_watch_start(p.watch) != 0 {
		return false
	}
	p.standby = make(chan struct{})
	go p.standbyLoop(p.standby)
	p.watchOn.Store(true)
	return true
}

// runAfter runs f under the watchdog; it reports false if f ran so long
// that another goroutine took over receiving.
func (p *Participant) runAfter(rs *recvState, f func()) bool {
	w := p.watch
	rs.afterState.Store(afterRunning)
	atomic.AddUint64((*uint64)(unsafe.Pointer(&w.runs)), 1)
	atomic.StoreInt32((*int32)(unsafe.Pointer(&w.running)), 1)
	if atomic.LoadInt32((*int32)(unsafe.Pointer(&w.parked))) != 0 {
		C.fsm_watch_kick(w)
	}
	f()
	if !rs.afterState.CompareAndSwap(afterRunning, afterIdle) {
		return false
	}
	atomic.StoreInt32((*int32)(unsafe.Pointer(&w.running)), 0)
	return true
}

// standbyLoop is the standby goroutine: woken by the watchdog thread when
// a function passed to RunAfterDelivery stalls, it hands receiving over.
func (p *Participant) standbyLoop(done chan struct{}) {
	defer close(done)
	for C.fsm_watch_wait(p.watch) == 0 {
		p.handOff(p.cur.Load())
	}
}

// handOff starts another receive goroutine while rs's runs an after
// function that stalled, unless the function has just returned or the
// participant closes.
func (p *Participant) handOff(rs *recvState) {
	if p.closing.Load() {
		return
	}
	next, err := newRecvState(initRecvBuf)
	if err != nil {
		return // no memory: the running goroutine stays the receiver
	}
	if !rs.afterState.CompareAndSwap(afterRunning, afterHandedOff) {
		next.free()
		return
	}
	atomic.StoreInt32((*int32)(unsafe.Pointer(&p.watch.running)), 0)
	p.handOffs.Add(1)
	p.loopID.Store(0)
	p.cur.Store(next)
	go p.run(next)
}

// HandOffNow hands receiving over to a new goroutine at once when called
// from a function that RunAfterDelivery runs (and that is about to wait
// for something a later delivery brings, such as a service reply),
// instead of after the watchdog's tick. Anywhere else it does nothing and
// costs one atomic load, or, on the receive goroutine outside such a
// function, a goroutine id lookup.
func (p *Participant) HandOffNow() {
	rs := p.cur.Load()
	if rs == nil || rs.afterState.Load() != afterRunning || goid.Current() != p.loopID.Load() {
		return
	}
	p.handOff(rs)
}

// HandOffs returns how many times a function passed to RunAfterDelivery
// ran so long, or waited (HandOffNow), so that another goroutine took over
// receiving.
func (p *Participant) HandOffs() uint64 { return p.handOffs.Load() }

// ReceiveGoroutine returns the id of the goroutine that receives now (see
// internal/goid); a function passed to RunAfterDelivery runs on it.
func (p *Participant) ReceiveGoroutine() uint64 { return p.loopID.Load() }

// register allocates a hub queue for r (under p.mu; nil after Close).
func (p *Participant) register(r receiver, kind C.int32_t, keep, limit, maxSample uint32) (uint64, *C.fsm_rq, error) {
	if p.closed {
		return 0, nil, ErrClosed
	}
	tok := p.nextToken
	q := C.fsm_rq_new(p.hub, C.uint64_t(tok), kind, C.uint32_t(keep), C.uint32_t(limit), C.uint64_t(queueBytes), C.uint32_t(maxSample))
	if q == nil {
		return 0, nil, errors.New("dds: out of memory")
	}
	p.nextToken++
	p.recvs[tok] = r
	return tok, q, nil
}

// Yield asks the receive goroutine to let other goroutines run before it
// next waits for samples. A handler calls it when it has woken a goroutine
// that should run at once (internal/ros: a node's callback goroutine, a
// caller waiting for its reply): Go puts that goroutine on the waking
// thread's run queue, and if the receive goroutine then blocked in C,
// another thread would have to be woken to steal it, one more thread
// wake-up per batch. Yielding unconditionally would cost every other
// batch a wake-up instead (Gosched wakes an idle thread). Safe from any
// goroutine: a call from elsewhere costs one needless yield at most.
func (p *Participant) Yield() {
	if p != nil {
		p.yield.Store(true)
	}
}

// waitDelivery waits until no handler runs, unless called on the receive
// goroutine itself.
func (p *Participant) waitDelivery() {
	if goid.Current() == p.loopID.Load() {
		return
	}
	// Taking the lock that every handler runs under, and nothing else, is
	// the wait: it returns once the running handler (if any) is done.
	p.deliverMu.Lock()
	//lint:ignore SA2001 the critical section is empty on purpose
	p.deliverMu.Unlock()
}

// samplesOf builds the Sample slice for the k samples of the last take.
func (rs *recvState) samplesOf(k C.int32_t) []Sample {
	s := rs.samples[:0]
	for i := 0; i < int(k); i++ {
		m := &rs.c.meta[i]
		smp := Sample{
			SourceTimestamp:   int64(m.source_timestamp),
			PublicationHandle: InstanceHandle(m.publication_handle),
			Oversize:          uint32(m.oversize),
		}
		switch {
		case rs.c.lent != nil:
			// A large sample lent in place (C memory, until the
			// receive goroutine releases it after the handler).
			smp.Data = unsafe.Slice((*byte)(rs.c.lent_base), int(m.len))
		case m.oversize == 0:
			smp.Data = rs.buf[m.off : m.off+m.len : m.off+m.len]
		default:
			rs.oversized = true
		}
		s = append(s, smp)
	}
	rs.samples = s
	return s
}

// Topic returns the participant's topic with this name, creating it with
// the raw-CDR keyless type typeName. Topics are cached per name: asking for
// an existing name with another type name is an error.
func (p *Participant) Topic(name, typeName string) (*Topic, error) {
	return p.TopicWithLayout(name, typeName, nil)
}

// TopicWithLayout is Topic for a type that may be fixed-size: with a
// non-nil layout (see Layout), the topic's writers can lend samples in
// shared memory (Writer.Loan) and its readers read the samples that
// peers on this host publish in the type's memory layout, as rclcpp does
// for such types when shared memory is on. A topic created earlier under
// the name keeps the layout it was created with.
func (p *Participant) TopicWithLayout(name, typeName string, layout *Layout) (*Topic, error) {
	if name == "" || typeName == "" {
		return nil, fmt.Errorf("dds: Topic(%q, %q): empty topic or type name", name, typeName)
	}
	if err := layout.check(); err != nil {
		return nil, fmt.Errorf("dds: topic %q: %w", name, err)
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
	var runs *C.fsm_run
	var nruns, size C.uint32_t
	if layout != nil {
		cr := make([]C.fsm_run, len(layout.Runs))
		for i, r := range layout.Runs {
			cr[i] = C.fsm_run{off: C.uint32_t(r.Offset), count: C.uint32_t(r.Count), size: C.uint32_t(r.Size)}
		}
		runs, nruns, size = &cr[0], C.uint32_t(len(cr)), C.uint32_t(layout.Size)
	}
	ent := C.fsm_create_topic(p.ent, cn, ctn, runs, nruns, size, &st)
	if ent < 0 {
		return nil, fmt.Errorf("dds: topic %q: %w", name, newError("dds_create_topic_sertype", C.dds_return_t(ent)))
	}
	t := &Topic{p: p, ent: ent, st: st, name: name, typeName: typeName}
	if layout != nil {
		t.loanSize = layout.Size
	}
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
	loanSize       uint32 // the layout's size; 0: created without a layout
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
