package dds

/*
#include <malloc.h>
#include "rawcdr.h"
*/
import "C"

import "time"

// Cyclone's C heap after a large sample.
//
// Cyclone reassembles a fragmented sample in receive buffers and then
// copies it whole; a hostile 48 MB goal that a reader's size limit drops
// (Sample.Oversize) still passes through the C heap. glibc raises its mmap
// threshold each time such a block is freed, so the next large blocks come
// from the heap arenas and stay with the process after they are freed:
// four simultaneous 48 MB goals left velma_bridge at 39 MiB instead of
// 18 MiB. Two measures give that memory back:
//
//   - the mmap threshold is set (which also stops glibc from raising it),
//     so every C allocation of mmapThreshold or more is mapped on its own
//     and returned to the system when freed;
//   - after a reader dropped an oversized sample, the heap is trimmed
//     (malloc_trim), at most once per trimEvery, trimDelay later, when
//     Cyclone has freed the fragments.
//
// So that samples of ordinary large sizes (a 1 MiB map) are not mapped,
// faulted in and unmapped on every write and receive, rawcdr.c keeps a few
// freed blocks of 128 KiB to 8 MiB for reuse (at most 24 MiB); the trim
// empties that cache too.
const (
	mmapThreshold = 256 << 10
	trimDelay     = 200 * time.Millisecond
	trimEvery     = time.Second
)

func init() {
	C.mallopt(C.M_MMAP_THRESHOLD, C.int(mmapThreshold))
}

// scheduleTrim trims the C heap trimDelay from now, unless a trim was
// scheduled less than trimEvery ago (receive goroutine).
func (p *Participant) scheduleTrim() {
	now := time.Now()
	if last := p.trimmedAt; !last.IsZero() && now.Sub(last) < trimEvery {
		return
	}
	p.trimmedAt = now
	time.AfterFunc(trimDelay, func() {
		C.fsm_big_drain()
		C.malloc_trim(0)
	})
}
