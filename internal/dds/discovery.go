package dds

/*
#include <stdlib.h>
#include "rawcdr.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unsafe"
)

// discovery holds the built-in topic readers of WatchDiscovery.
type discovery struct {
	readers []*builtinReader
	subs    *builtinReader // the DCPSSubscription reader (the one GateReaders gates)
}

// builtinReader reads one of DCPSParticipant, DCPSPublication and
// DCPSSubscription.
type builtinReader struct {
	p    *Participant
	kind EntityKind
	tok  uint64
	ent  C.dds_entity_t
	q    *C.fsm_rq // hub queue (signal only); freed with the hub
	h    func(DiscoveryEvent)
}

// WatchDiscovery delivers built-in discovery events (participants,
// writers, readers; including this participant's own, flagged Local) to h
// on the receive goroutine. Entities already known are reported first.
// It may be called once per participant.
func (p *Participant) WatchDiscovery(h func(DiscoveryEvent)) (err error) {
	if h == nil {
		return errors.New("dds: WatchDiscovery: nil handler")
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	if p.disc != nil {
		p.mu.Unlock()
		return errors.New("dds: WatchDiscovery: already watching")
	}
	d := &discovery{}
	p.disc = d
	p.mu.Unlock()
	defer func() {
		if err != nil {
			p.mu.Lock()
			for _, br := range d.readers {
				delete(p.recvs, br.tok)
				if !p.closed {
					C.dds_delete(br.ent)
					C.fsm_rq_free(br.q)
				}
			}
			p.disc = nil
			p.mu.Unlock()
		}
	}()
	topics := []struct {
		kind  EntityKind
		topic C.dds_entity_t
	}{
		{KindParticipant, C.DDS_BUILTIN_TOPIC_DCPSPARTICIPANT},
		{KindWriter, C.DDS_BUILTIN_TOPIC_DCPSPUBLICATION},
		{KindReader, C.DDS_BUILTIN_TOPIC_DCPSSUBSCRIPTION},
	}
	for _, tp := range topics {
		br := &builtinReader{p: p, kind: tp.kind, h: h}
		p.mu.Lock()
		var err error
		br.tok, br.q, err = p.register(br, C.FSM_RQ_SIGNAL, 0, 0, 0)
		if err != nil {
			p.mu.Unlock()
			return err
		}
		br.ent = C.fsm_create_reader(p.ent, tp.topic, nil, br.q, nil)
		if br.ent < 0 {
			delete(p.recvs, br.tok)
			C.fsm_rq_free(br.q)
			p.mu.Unlock()
			return newError("dds_create_reader(builtin "+tp.kind.String()+")", C.dds_return_t(br.ent))
		}
		d.readers = append(d.readers, br)
		if tp.kind == KindReader {
			d.subs = br
		}
		// Entities known before the listener was set: take them now.
		C.fsm_rq_signal(br.q)
		p.mu.Unlock()
	}
	return nil
}

// GateReaders arms (or disarms) the reader gate for one DDS topic: while it
// is armed, Cyclone announces a newly discovered remote reader of that
// topic to the WatchDiscovery handler and waits, at most GateWait, until the
// handler has returned before it matches that reader with this
// participant's writers. A handler can so change what a transient-local
// writer holds (a sample in the layout the new reader expects) before the
// reader is sent that writer's history. Readers of other topics are not
// held. Arm it only while it is needed. WatchDiscovery must have been
// called; topic is at most 127 bytes.
func (p *Participant) GateReaders(topic string, armed bool) error {
	if len(topic) > 127 || strings.IndexByte(topic, 0) >= 0 {
		return fmt.Errorf("dds: GateReaders: bad topic name %q", topic)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	if p.disc == nil || p.disc.subs == nil {
		return errors.New("dds: GateReaders: WatchDiscovery has not been called")
	}
	a := C.int32_t(0)
	if armed {
		a = 1
	}
	ct := C.CString(topic)
	defer C.free(unsafe.Pointer(ct))
	C.fsm_hub_gate(p.hub, p.disc.subs.q, ct, a)
	return nil
}

// GateWait bounds how long a gated reader announcement waits for the
// WatchDiscovery handler (see GateReaders).
const GateWait = 100 * time.Millisecond

// GateTimeouts returns how many gated reader announcements stopped waiting
// for the handler after GateWait.
func (p *Participant) GateTimeouts() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0
	}
	return uint64(C.fsm_gate_timeouts(p.hub))
}

// deliver takes discovery samples and calls the handler (receive
// goroutine only). For the DCPSSubscription reader it then tells a gated
// announcement (GateReaders) that everything it signalled was handled.
func (br *builtinReader) deliver(rs *recvState, _ C.int32_t) {
	br.p.deliverMu.Lock()
	defer br.p.deliverMu.Unlock()
	if br.kind == KindReader {
		seq := C.fsm_gate_begin(br.p.hub)
		defer C.fsm_gate_end(br.p.hub, seq)
	}
	if rs.disc == nil {
		rs.disc = (*C.fsm_dstate)(C.calloc(1, C.sizeof_fsm_dstate))
		if rs.disc == nil {
			return
		}
	}
	kind := C.int32_t(1)
	if br.kind == KindParticipant {
		kind = 0
	}
	for round := 0; round < maxRounds; round++ {
		if br.p.closing.Load() {
			return
		}
		n := C.fsm_disc_take(rs.disc, br.ent, kind)
		if n <= 0 {
			return
		}
		evs := make([]DiscoveryEvent, 0, int(n))
		for i := 0; i < int(n); i++ {
			o := &rs.disc.out[i]
			ev := DiscoveryEvent{
				Kind:           br.kind,
				Alive:          o.alive != 0,
				Key:            guidFromC(&o.key),
				ParticipantKey: guidFromC(&o.pkey),
				QoS:            qosFromC(o.qos),
			}
			ev.UserData = ev.QoS.UserData
			if o.topic != nil {
				ev.TopicName = C.GoString(o.topic)
			}
			if o._type != nil {
				ev.TypeName = C.GoString(o._type)
			}
			ev.Local = ev.ParticipantKey == br.p.guid
			evs = append(evs, ev)
		}
		C.fsm_disc_release(rs.disc)
		for _, ev := range evs {
			br.h(ev)
		}
		if n < C.FSM_BATCH {
			return
		}
	}
	C.fsm_rq_signal(br.q) // more to take: queue behind the other readers
}

// freeDisc releases the discovery take state (receive goroutine exit).
func (rs *recvState) freeDisc() {
	if rs.disc != nil {
		C.fsm_disc_release(rs.disc)
		C.free(unsafe.Pointer(rs.disc))
		rs.disc = nil
	}
}
