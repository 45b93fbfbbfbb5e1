package dds

/*
#include <stdlib.h>
#include "rawcdr.h"
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

// Writer is a DDS data writer of raw CDR samples.
type Writer struct {
	p      *Participant
	t      *Topic
	ent    C.dds_entity_t
	guid   GUID
	handle InstanceHandle
	sw     *statusWatcher
	shm    *C.fsm_shm   // non-nil: the writer has an iceoryx publisher
	loans  atomic.Int32 // loans out (Loan, less WriteLoaned and ReturnLoan)

	mu     sync.RWMutex // Write holds it shared, Close exclusively
	closed bool
}

// NewWriter creates a writer on t with QoS q (mapped as rmw_cyclonedds
// does; autodispose off, XCDR1 only).
func (p *Participant) NewWriter(t *Topic, q QoS) (_ *Writer, err error) {
	if t == nil || t.p != p {
		return nil, fmt.Errorf("dds: NewWriter: topic does not belong to this participant")
	}
	cq, err := q.createQoS(false)
	if err != nil {
		return nil, err
	}
	defer C.dds_delete_qos(cq)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	sw, err := p.newStatusWatcher(false)
	if err != nil {
		return nil, err
	}
	ent := C.fsm_create_writer(p.ent, t.ent, cq, p.hub, sw.q)
	if ent < 0 {
		sw.free()
		return nil, fmt.Errorf("dds: writer on %q: %w", t.name, newError("dds_create_writer", C.dds_return_t(ent)))
	}
	defer func() {
		if err != nil {
			C.dds_delete(ent)
			sw.free()
		}
	}()
	// Keep the topic's single instance registered for the writer's life:
	// otherwise a writer whose history keeps nothing (no readers yet)
	// creates and collects a new instance on every write.
	if err := check("dds_register_instance", C.fsm_register(ent)); err != nil {
		return nil, err
	}
	w := &Writer{p: p, t: t, ent: ent, sw: sw, shm: C.fsm_shm_new(ent)}
	if w.guid, err = entityGUID(ent); err != nil {
		return nil, err
	}
	if w.handle, err = entityHandle(ent); err != nil {
		return nil, err
	}
	p.writers[w] = struct{}{}
	return w, nil
}

// Topic returns the writer's topic.
func (w *Writer) Topic() *Topic { return w.t }

// GUID returns the writer's GUID.
func (w *Writer) GUID() GUID { return w.guid }

// Handle returns the writer's instance handle (rmw_cyclonedds uses it as
// the client id in service request headers).
func (w *Writer) Handle() InstanceHandle { return w.handle }

// Write publishes one serialized sample. payload must hold the complete
// sample including the 4-byte encapsulation header, which must be valid
// (see CheckEncapsulation); it is copied before Write returns. A reliable
// writer blocks while its history is full.
func (w *Writer) Write(payload []byte) error {
	if err := CheckEncapsulation(payload); err != nil {
		return fmt.Errorf("dds: Write on %q: %w", w.t.name, err)
	}
	return w.write(payload)
}

// write is Write without the header check: tests use it to put what a
// foreign writer might send on the wire.
func (w *Writer) write(payload []byte) error {
	if len(payload) == 0 {
		return fmt.Errorf("dds: Write on %q: empty payload", w.t.name)
	}
	if len(payload) > math.MaxUint32-8 {
		return fmt.Errorf("dds: Write on %q: payload of %d bytes is too large", w.t.name, len(payload))
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return ErrClosed
	}
	rc := C.fsm_write(w.ent, w.t.st, unsafe.Pointer(&payload[0]), C.uint32_t(len(payload)), w.shm)
	if rc < 0 {
		return fmt.Errorf("dds: Write on %q: %w", w.t.name, newError("dds_writecdr", rc))
	}
	return nil
}

// Buffer is C memory a Writer lends to serialize one sample into: Data
// is empty, with the capacity asked for. WriteBuffer publishes what was
// appended to Data without copying it again, which is worth a cgo call
// for large samples. Data holds no Go pointers and must not be used
// after WriteBuffer or FreeBuffer.
type Buffer struct {
	sd   *C.struct_ddsi_serdata
	Data []byte
}

// NewBuffer lends a Buffer of the given capacity (at least 4).
func (w *Writer) NewBuffer(capacity int) (Buffer, error) {
	if capacity < 4 || capacity > math.MaxUint32-8 {
		return Buffer{}, fmt.Errorf("dds: NewBuffer on %q: capacity %d is out of range", w.t.name, capacity)
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return Buffer{}, ErrClosed
	}
	b := C.fsm_buf_new(w.t.st, C.uint32_t(capacity))
	if b.sd == nil {
		return Buffer{}, fmt.Errorf("dds: NewBuffer on %q: out of memory", w.t.name)
	}
	return Buffer{sd: b.sd, Data: unsafe.Slice((*byte)(b.data), capacity)[:0]}, nil
}

// FreeBuffer gives back a Buffer that will not be written.
func (w *Writer) FreeBuffer(b Buffer) {
	if b.sd != nil {
		C.fsm_buf_free(b.sd)
	}
}

// WriteBuffer publishes payload, which Write would take, and consumes b.
// When payload is b.Data's memory (serialized into b without outgrowing
// it), the bytes go to Cyclone in place; otherwise payload is copied as
// Write copies it.
func (w *Writer) WriteBuffer(b Buffer, payload []byte) error {
	if b.sd == nil {
		return fmt.Errorf("dds: WriteBuffer on %q: no buffer", w.t.name)
	}
	inPlace := len(payload) > 0 && cap(b.Data) > 0 && len(payload) <= cap(b.Data) &&
		unsafe.SliceData(payload) == unsafe.SliceData(b.Data[:1])
	if !inPlace {
		C.fsm_buf_free(b.sd)
		return w.Write(payload)
	}
	if err := CheckEncapsulation(payload); err != nil {
		C.fsm_buf_free(b.sd)
		return fmt.Errorf("dds: Write on %q: %w", w.t.name, err)
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		C.fsm_buf_free(b.sd)
		return ErrClosed
	}
	if rc := C.fsm_write_buf(w.ent, b.sd, C.uint32_t(len(payload)), w.shm); rc < 0 {
		return fmt.Errorf("dds: Write on %q: %w", w.t.name, newError("dds_writecdr", rc))
	}
	return nil
}

// SharedMemory reports whether the writer publishes through iceoryx shared
// memory to readers on this host (Cyclone's configuration enables it,
// RouDi runs, and the QoS allows it: keep last, volatile or transient
// local, automatic liveliness, no deadline).
func (w *Writer) SharedMemory() bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.shm != nil
}

// CanLoan reports whether Loan can lend samples: the writer has shared
// memory and its topic was created with a layout.
func (w *Writer) CanLoan() bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.canLoan()
}

// canLoan also keeps loans within the largest chunk asked for (see
// fsm_write): iceoryx aborts the process for a chunk above its pools.
func (w *Writer) canLoan() bool {
	return w.shm != nil && w.t.loanSize != 0 && w.t.loanSize <= C.FSM_SHM_MAX_CHUNK
}

// MaxLoans is how many loans a writer can have out at once: the loans
// Cyclone 0.10 keeps track of per writer (as for rclcpp's loaned
// messages over rmw_cyclonedds).
const MaxLoans = C.FSM_MAX_LOANS

// Loan lends a sample of the topic's layout size in shared memory, for
// WriteLoaned or ReturnLoan; at most MaxLoans at once. Its contents are
// undefined. The memory is not Go's: it may hold no Go pointers, and it
// must not be touched after it went back to the writer (written or
// returned) or after Close.
func (w *Writer) Loan() (unsafe.Pointer, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return nil, ErrClosed
	}
	if !w.canLoan() {
		return nil, fmt.Errorf("dds: Loan on %q: %w", w.t.name, ErrNoLoan)
	}
	if w.loans.Add(1) > MaxLoans {
		w.loans.Add(-1)
		return nil, fmt.Errorf("dds: Loan on %q: %d loans are out, the most a writer can have", w.t.name, MaxLoans)
	}
	ch := C.fsm_loan(w.ent)
	if ch == nil {
		w.loans.Add(-1)
		return nil, fmt.Errorf("dds: Loan on %q: no shared memory chunk of %d bytes is free (RouDi's memory pools)", w.t.name, w.t.loanSize)
	}
	return ch, nil
}

// ReturnLoan gives back a loan that will not be written.
func (w *Writer) ReturnLoan(chunk unsafe.Pointer) error {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return ErrClosed
	}
	if w.shm == nil || chunk == nil {
		return fmt.Errorf("dds: ReturnLoan on %q: %w", w.t.name, ErrNoLoan)
	}
	if rc := C.fsm_loan_return(w.ent, chunk); rc < 0 {
		return fmt.Errorf("dds: ReturnLoan on %q: %w", w.t.name, newError("dds_return_loan", rc))
	}
	w.loans.Add(-1)
	return nil
}

// WriteLoaned publishes a loaned sample, as rmw_cyclonedds publishes a
// loaned message: readers on this host with shared memory get the chunk
// itself, and when they are all the writer has, nothing is serialized;
// every other reader gets CDR that C code makes from the chunk with the
// topic's layout. The loan is consumed, also on error.
func (w *Writer) WriteLoaned(chunk unsafe.Pointer) error {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return ErrClosed
	}
	if !w.canLoan() || chunk == nil {
		return fmt.Errorf("dds: WriteLoaned on %q: %w", w.t.name, ErrNoLoan)
	}
	w.loans.Add(-1)
	if rc := C.fsm_write_loaned(w.ent, chunk); rc < 0 {
		return fmt.Errorf("dds: WriteLoaned on %q: %w", w.t.name, newError("dds_write", rc))
	}
	return nil
}

// CheckEncapsulation reports (as an error matching ErrEncapsulation) a
// payload that does not start with an encapsulation header a ROS 2 peer
// reads as rmw_cyclonedds_cpp writes it: 00 00 (CDR_BE) or 00 01 (CDR_LE),
// the only representation the raw-CDR type announces (XCDR1), then the
// options: 00 00 as rmw_cyclonedds_cpp writes them, or 00 01..00 03, the
// count of trailing padding bytes Cyclone's own serializer puts there (at
// most the body's length).
//
// Every Writer.Write checks it: one sample with another identifier makes
// every Cyclone receiver of the topic reject the whole RTPS message it came
// in (with the heartbeats sharing it) and print a hex dump of it, for as
// long as the writer retransmits, and a reliable reader then never gets
// past it; XCDR2 or parameter-list identifiers are silently misread as
// empty messages by rmw_cyclonedds_cpp.
func CheckEncapsulation(payload []byte) error {
	if len(payload) < 4 {
		return fmt.Errorf("%w: payload of %d bytes has no 4-byte header", ErrEncapsulation, len(payload))
	}
	if payload[0] != 0 || payload[1] > 1 {
		return fmt.Errorf("%w: representation %02x %02x is neither CDR_BE (00 00) nor CDR_LE (00 01)", ErrEncapsulation, payload[0], payload[1])
	}
	if payload[2] != 0 || payload[3] > 3 || int(payload[3]) > len(payload)-4 {
		return fmt.Errorf("%w: options %02x %02x are neither 00 00 nor a padding count of at most the body's %d bytes",
			ErrEncapsulation, payload[2], payload[3], min(len(payload)-4, 3))
	}
	return nil
}

// WaitForAcks blocks until all samples written so far were acknowledged
// by all matched reliable readers, or the timeout passes (an error
// matching ErrTimeout). A timeout <= 0 checks once.
func (w *Writer) WaitForAcks(timeout time.Duration) error {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return ErrClosed
	}
	if timeout < 0 {
		timeout = 0
	}
	return check("dds_wait_for_acks", C.dds_wait_for_acks(w.ent, C.dds_duration_t(timeout)))
}

// MatchedReaders returns the readers currently matched with the writer.
func (w *Writer) MatchedReaders() ([]Endpoint, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return nil, ErrClosed
	}
	return matched(w.ent, false)
}

// Close deletes the writer (without disposing its instance). Idempotent.
func (w *Writer) Close() error {
	open, shm := w.markClosed()
	if !open {
		return nil
	}
	C.fsm_shm_free(shm) // before the writer goes: it holds the iceoryx publisher
	w.p.mu.Lock()
	if w.p.closed {
		w.p.mu.Unlock()
		return nil // the participant deleted it
	}
	delete(w.p.writers, w)
	w.p.mu.Unlock()
	// Not under p.mu: deleting a reliable writer may linger for unacked data.
	rc := C.dds_delete(w.ent)
	// Its listeners are done now; the status queue may go, unless the
	// participant closed meanwhile (then it goes with the hub).
	w.p.mu.Lock()
	if !w.p.closed {
		w.sw.free()
	}
	w.sw.q = nil
	w.p.mu.Unlock()
	if rc < 0 && rc != C.DDS_RETCODE_ALREADY_DELETED {
		return newError("dds_delete(writer)", rc)
	}
	return nil
}

// markClosed marks the writer closed, waiting for writes in progress. It
// reports whether the writer was open and hands over its shared-memory
// state, for the caller to free before the writer is deleted.
func (w *Writer) markClosed() (open bool, shm *C.fsm_shm) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false, nil
	}
	w.closed = true
	shm, w.shm = w.shm, nil
	return true, shm
}

// matched lists the endpoints matched with a writer (subs) or reader.
func matched(ent C.dds_entity_t, reader bool) ([]Endpoint, error) {
	hs := make([]C.dds_instance_handle_t, 16)
	for {
		var n C.dds_return_t
		if reader {
			n = C.dds_get_matched_publications(ent, &hs[0], C.size_t(len(hs)))
		} else {
			n = C.dds_get_matched_subscriptions(ent, &hs[0], C.size_t(len(hs)))
		}
		if n < 0 {
			return nil, newError("dds_get_matched", n)
		}
		if int(n) > len(hs) {
			hs = make([]C.dds_instance_handle_t, int(n)+8)
			continue
		}
		out := make([]Endpoint, 0, int(n))
		for _, h := range hs[:n] {
			var ep *C.dds_builtintopic_endpoint_t
			if reader {
				ep = C.dds_get_matched_publication_data(ent, h)
			} else {
				ep = C.dds_get_matched_subscription_data(ent, h)
			}
			if ep == nil {
				continue // unmatched meanwhile
			}
			e := endpointFromC(ep)
			e.Handle = InstanceHandle(h)
			C.dds_builtintopic_free_endpoint(ep)
			out = append(out, e)
		}
		return out, nil
	}
}

// endpointFromC converts a built-in endpoint sample.
func endpointFromC(ep *C.dds_builtintopic_endpoint_t) Endpoint {
	e := Endpoint{
		Key:            guidFromC(&ep.key),
		ParticipantKey: guidFromC(&ep.participant_key),
		QoS:            qosFromC(ep.qos),
	}
	if ep.topic_name != nil {
		e.TopicName = C.GoString(ep.topic_name)
	}
	if ep.type_name != nil {
		e.TypeName = C.GoString(ep.type_name)
	}
	e.UserData = e.QoS.UserData
	return e
}
