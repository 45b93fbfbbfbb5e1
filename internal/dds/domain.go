package dds

/*
#include <stdlib.h>
#include <dds/dds.h>
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// domainTable counts the participants using each domain this package
// created with dds_create_domain, so that the last one deletes it. Cyclone
// itself keeps one domain per id per process; this mirrors that table.
type domainTable struct {
	mu sync.Mutex
	m  map[uint32]*domainRef
}

// domainRef is an explicitly created Cyclone domain.
type domainRef struct {
	id     uint32
	ent    C.dds_entity_t
	config string
	refs   int
}

// domains is the process-wide table (see domainTable).
var domains = domainTable{m: make(map[uint32]*domainRef)}

// acquire returns the explicit domain for id, creating it with config when
// config is non-empty. It returns nil (and no error) when config is empty
// and no explicit domain exists: Cyclone then creates an implicit domain
// from CYCLONEDDS_URI when the participant is created.
func (t *domainTable) acquire(id uint32, config string) (*domainRef, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d, ok := t.m[id]; ok {
		if config != "" && config != d.config {
			return nil, fmt.Errorf("dds: domain %d already exists in this process with a different config", id)
		}
		d.refs++
		return d, nil
	}
	if config == "" {
		return nil, nil
	}
	cs := C.CString(config)
	defer C.free(unsafe.Pointer(cs))
	ent := C.dds_create_domain(C.dds_domainid_t(id), cs)
	if ent < 0 {
		if ent == C.DDS_RETCODE_PRECONDITION_NOT_MET {
			return nil, fmt.Errorf("dds: domain %d already exists in this process without this config: %w", id, newError("dds_create_domain", ent))
		}
		return nil, newError("dds_create_domain", ent)
	}
	d := &domainRef{id: id, ent: ent, config: config, refs: 1}
	t.m[id] = d
	return d, nil
}

// release drops one reference and deletes the domain with the last one.
func (t *domainTable) release(d *domainRef) {
	if d == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	d.refs--
	if d.refs > 0 {
		return
	}
	delete(t.m, d.id)
	C.dds_delete(d.ent)
}

// securityTable counts the live participants of each domain id in this
// process and whether they are secured (DDS Security properties in their
// QoS). Cyclone DDS 0.10 cannot mix the two in one domain of a process:
// an insecure participant after a secure one fails validation, and a
// secure one after an insecure one crashed the process (seen in a test),
// so NewParticipantWithProperties refuses the mix with an error.
type securityTable struct {
	mu sync.Mutex
	m  map[uint32]*domainSecurity
}

type domainSecurity struct {
	secure bool
	n      int
}

var security = securityTable{m: make(map[uint32]*domainSecurity)}

// join registers a participant of domain id; secure says whether it is
// secured.
func (t *securityTable) join(id uint32, secure bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	d, ok := t.m[id]
	if !ok {
		t.m[id] = &domainSecurity{secure: secure, n: 1}
		return nil
	}
	if d.secure != secure {
		have, want := "insecure", "secure"
		if d.secure {
			have, want = want, have
		}
		return fmt.Errorf("dds: domain %d already has %d %s participant(s) in this process: Cyclone DDS cannot add a %s one to it (use another process)", id, d.n, have, want)
	}
	d.n++
	return nil
}

// leave unregisters a participant of domain id.
func (t *securityTable) leave(id uint32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d, ok := t.m[id]; ok {
		if d.n--; d.n == 0 {
			delete(t.m, id)
		}
	}
}

// securedBy reports whether props configure DDS Security.
func securedBy(props []Property) bool {
	for _, p := range props {
		if strings.HasPrefix(p.Name, "dds.sec.") {
			return true
		}
	}
	return false
}
