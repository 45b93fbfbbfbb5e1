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
//     Cyclone has freed the fragments, and once more trimAgain after that
//     (a starved receive thread frees them late).
//
// So that samples of ordinary large sizes (a 1 MiB map) are not mapped,
// faulted in and unmapped on every write and receive, rawcdr.c keeps a few
// freed blocks of 128 KiB to 8 MiB for reuse (at most 24 MiB); the trim
// empties that cache too.
//
// Cyclone's receive buffers are the other large blocks: by default 1 MiB
// each, above the threshold, so each was mapped and faulted in as the
// receive thread wrote into it, and a new one is taken after every
// megabyte received (a page fault per 4 KiB received, a third of the
// receive thread's time at 1 MiB samples). ReceiveBufferConfig makes them
// smaller than the threshold, so they come from the heap and are reused.
// Large samples then leave freed buffers in the heap arenas, which only
// the trim gives back; that is why a trim is always scheduled after the
// last oversized sample (scheduleTrim).
const (
	mmapThreshold = 256 << 10
	trimDelay     = 200 * time.Millisecond
	trimEvery     = time.Second
	trimAgain     = 2 * time.Second
)

// ReceiveBufferConfig is a Cyclone configuration fragment (to put first
// in a configuration list, so that later fragments may override it) that
// makes Cyclone's receive buffers (Sizing/ReceiveBufferSize) 192 KiB: above
// the 128 KiB allocation unit they are carved into, below the mmap
// threshold. internal/ros puts it in front of every Context's
// configuration.
const ReceiveBufferConfig = "<CycloneDDS><Domain><Sizing><ReceiveBufferSize>192KiB</ReceiveBufferSize></Sizing></Domain></CycloneDDS>,"

func init() {
	C.mallopt(C.M_MMAP_THRESHOLD, C.int(mmapThreshold))
}

// scheduleTrim trims the C heap trimDelay from now, or, if a trim was
// scheduled less than trimEvery ago, trimEvery after that one (receive
// goroutine). A request while a trim is still pending is covered by it, so
// there is always a trim after the last oversized sample: Cyclone frees a
// sample's receive buffers only once it is complete, and several large
// samples arriving together are freed one after another.
func (p *Participant) scheduleTrim() {
	now := time.Now()
	at := now.Add(trimDelay)
	if last := p.trimmedAt; !last.IsZero() {
		if last.After(now) {
			return // pending: it runs after this sample's buffers are freed
		}
		at = maxTime(at, last.Add(trimEvery))
	}
	p.trimmedAt = at
	time.AfterFunc(at.Sub(now), func() {
		trimHeap()
		// On a starved machine Cyclone's receive thread may free the
		// last fragments only after the trim: trim once more later.
		time.AfterFunc(trimAgain, trimHeap)
	})
}

// trimHeap empties the cache of large blocks and gives the C heap's free
// pages back to the system.
func trimHeap() {
	C.fsm_big_drain()
	C.malloc_trim(0)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
