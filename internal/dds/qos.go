package dds

/*
#include <stdlib.h>
#include "rawcdr.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"
)

// validate rejects QoS values that have no DDS meaning.
func (q *QoS) validate() error {
	switch {
	case q.Reliability != Reliable && q.Reliability != BestEffort:
		return fmt.Errorf("dds: invalid QoS: unknown reliability %d", q.Reliability)
	case q.Durability != Volatile && q.Durability != TransientLocal:
		return fmt.Errorf("dds: invalid QoS: unknown durability %d", q.Durability)
	case q.History != KeepLast && q.History != KeepAll:
		return fmt.Errorf("dds: invalid QoS: unknown history %d", q.History)
	case q.Liveliness != Automatic && q.Liveliness != ManualByTopic:
		return fmt.Errorf("dds: invalid QoS: unknown liveliness %d", q.Liveliness)
	case q.Depth < 0:
		return fmt.Errorf("dds: invalid QoS: negative depth %d", q.Depth)
	case q.Deadline < 0:
		return fmt.Errorf("dds: invalid QoS: negative deadline %v", q.Deadline)
	case q.Lifespan < 0:
		return fmt.Errorf("dds: invalid QoS: negative lifespan %v", q.Lifespan)
	case q.LeaseDuration < 0:
		return fmt.Errorf("dds: invalid QoS: negative lease duration %v", q.LeaseDuration)
	}
	return nil
}

// createQoS builds a Cyclone QoS object; the caller deletes it with
// dds_delete_qos.
func (q *QoS) createQoS(forReader bool) (*C.dds_qos_t, error) {
	if err := q.validate(); err != nil {
		return nil, err
	}
	in := C.fsm_qos{
		reliability: C.int32_t(q.Reliability),
		durability:  C.int32_t(q.Durability),
		history:     C.int32_t(q.History),
		depth:       C.int32_t(q.Depth),
		deadline:    C.int64_t(q.Deadline),
		lifespan:    C.int64_t(q.Lifespan),
		lease:       C.int64_t(q.LeaseDuration),
		liveliness:  C.int32_t(q.Liveliness),
	}
	if q.IgnoreLocal {
		in.ignore_local = 1
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	if len(q.UserData) > 0 {
		pin.Pin(&q.UserData[0])
		in.userdata = unsafe.Pointer(&q.UserData[0])
		in.userdata_len = C.size_t(len(q.UserData))
	}
	var fr C.int
	if forReader {
		fr = 1
	}
	cq := C.fsm_qos_create(&in, fr)
	if cq == nil {
		return nil, &Error{Op: "dds_create_qos", Code: C.DDS_RETCODE_OUT_OF_RESOURCES, Text: "out of resources"}
	}
	return cq, nil
}

// qosFromC converts a Cyclone QoS (may be nil) and returns it with a copy
// of its user data.
func qosFromC(cq *C.dds_qos_t) QoS {
	var out C.fsm_qos
	C.fsm_qos_extract(cq, &out)
	q := QoS{
		Reliability:   Reliability(out.reliability),
		Durability:    Durability(out.durability),
		History:       History(out.history),
		Depth:         int32(out.depth),
		Deadline:      time.Duration(out.deadline),
		Lifespan:      time.Duration(out.lifespan),
		LeaseDuration: time.Duration(out.lease),
		Liveliness:    Liveliness(out.liveliness),
		IgnoreLocal:   out.ignore_local != 0,
	}
	if out.userdata != nil {
		q.UserData = C.GoBytes(out.userdata, C.int(out.userdata_len))
		C.dds_free(unsafe.Pointer(out.userdata))
	}
	return q
}
