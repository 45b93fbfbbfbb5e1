package dds

/*
#include <stdlib.h>
#include <dds/dds.h>
*/
import "C"

import (
	"fmt"
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
