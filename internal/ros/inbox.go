package ros

import (
	"sync"
	"sync/atomic"
)

// inboxLimits is the drop policy of an inbox.
//
//   - depth > 0: keep last depth items; when full, the oldest item is
//     dropped to make room (subscriptions with a keep-last QoS).
//   - maxItems > 0 or maxBytes > 0: keep everything up to maxItems items
//     and maxBytes of payload; when full, the new item is refused
//     (service requests: a request is never pushed out by a later one).
//   - all zero: unbounded (keep-all subscriptions).
type inboxLimits struct {
	depth    int
	maxItems int
	maxBytes int64
}

// inbox is the queue between the receive goroutine and a node's callback
// goroutine for one entity (a subscription's messages, a service's
// requests), with the drop policy of its inboxLimits. Dropped and refused
// items are counted, and onDrop (if set) is called for each, on the
// pushing goroutine.
//
// The inbox keeps at most one task in the node's queue and runs one item per
// task, so entities of a node take turns.
type inbox[T any] struct {
	n      *Node
	handle func(T)
	lim    inboxLimits
	onDrop func(refused bool)

	run    func() // runOne, made once (a method value allocates)
	inline func() // runInline, likewise

	mu sync.Mutex
	// items[head:] wait, with their payload sizes (maxBytes accounting);
	// the arrays are reused once empty, so a steady flow allocates nothing.
	items     []T
	sizes     []int
	head      int
	bytes     int64
	scheduled bool
	closed    bool

	dropped atomic.Uint64
}

func newInbox[T any](n *Node, lim inboxLimits, handle func(T)) *inbox[T] {
	q := &inbox[T]{n: n, lim: lim, handle: handle}
	q.run = q.runOne
	q.inline = q.runInline
	return q
}

// push queues v, whose serialized size is size (any goroutine). It reports
// false if v was refused because the inbox is full.
func (q *inbox[T]) push(v T, size int) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return true
	}
	if q.full(size) {
		q.mu.Unlock()
		q.dropped.Add(1)
		if q.onDrop != nil {
			q.onDrop(true)
		}
		return false
	}
	droppedOld := false
	if q.lim.depth > 0 && q.len() >= q.lim.depth {
		q.popLocked()
		droppedOld = true
	}
	if q.head > 0 && len(q.items) == cap(q.items) {
		// Full with taken items in front: move the waiting ones down
		// rather than let append grow the arrays under a steady backlog.
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		copy(q.sizes, q.sizes[q.head:])
		q.items, q.sizes, q.head = q.items[:n], q.sizes[:n], 0
	}
	q.items = append(q.items, v)
	q.sizes = append(q.sizes, size)
	q.bytes += int64(size)
	schedule := !q.scheduled
	q.scheduled = true
	q.mu.Unlock()
	if droppedOld {
		q.dropped.Add(1)
		if q.onDrop != nil {
			q.onDrop(false)
		}
	}
	if schedule {
		q.post()
	}
	return true
}

// full reports whether a refusing inbox has no room for an item of size
// bytes (mu held). An empty inbox always takes one item.
func (q *inbox[T]) full(size int) bool {
	if q.len() == 0 {
		return false
	}
	if q.lim.maxItems > 0 && q.len() >= q.lim.maxItems {
		return true
	}
	return q.lim.maxBytes > 0 && q.bytes+int64(size) > q.lim.maxBytes
}

// len is the number of waiting items (mu held).
func (q *inbox[T]) len() int { return len(q.items) - q.head }

// popLocked removes and returns the oldest item (mu held, not empty).
func (q *inbox[T]) popLocked() T {
	var zero T
	v := q.items[q.head]
	q.items[q.head] = zero
	q.bytes -= int64(q.sizes[q.head])
	q.head++
	if q.head == len(q.items) {
		q.items, q.sizes, q.head = q.items[:0], q.sizes[:0], 0
	}
	return v
}

func (q *inbox[T]) post() {
	if q.tryInline() {
		return
	}
	if q.n.Post(q.run) != nil {
		q.mu.Lock()
		q.scheduled = false
		q.mu.Unlock()
	}
}

// runOne handles one item on the node goroutine and reschedules itself if
// more are waiting.
func (q *inbox[T]) runOne() {
	q.mu.Lock()
	if q.closed || q.len() == 0 {
		q.scheduled = false
		q.mu.Unlock()
		return
	}
	v := q.popLocked()
	more := q.len() > 0
	if !more {
		q.scheduled = false
	}
	q.mu.Unlock()
	if more {
		q.post()
	}
	q.handle(v)
}

// inlineMax bounds how many items one inline run handles before it
// leaves the rest to the node's callback goroutine, so that a flood on one
// entity does not keep the node's other entities waiting.
const inlineMax = 64

// tryInline arranges for the receive goroutine to run the inbox's items
// once the current delivery is done (dds.Participant.RunAfterDelivery),
// when the node is idle: nothing in its task queue and no callback
// running. It holds the node's exec lock from here until runInline is
// done, so no other callback of the node runs meanwhile and items pushed
// in between wait for runInline (the inbox is scheduled). It reports false
// when the item must go to the callback goroutine instead.
func (q *inbox[T]) tryInline() bool {
	n := q.n
	if n.ctx == nil || n.ctx.noInline || !n.exec.TryLock() {
		return false
	}
	if n.idle() && n.ctx.part.RunAfterDelivery(q.inline) {
		return true
	}
	n.exec.Unlock()
	return false
}

// runInline handles the waiting items on the receive goroutine (see
// tryInline), at most inlineMax of them; more are left to the callback
// goroutine.
func (q *inbox[T]) runInline() {
	n := q.n
	n.execG.Store(n.ctx.part.ReceiveGoroutine())
	more := false
	for i := 0; ; i++ {
		q.mu.Lock()
		if q.closed || q.len() == 0 {
			q.scheduled = false
			q.mu.Unlock()
			break
		}
		if i == inlineMax {
			more = true
			q.mu.Unlock()
			break
		}
		v := q.popLocked()
		q.mu.Unlock()
		q.handleRecovering(v)
	}
	n.execG.Store(0)
	n.exec.Unlock()
	if more && n.Post(q.run) != nil {
		q.mu.Lock()
		q.scheduled = false
		q.mu.Unlock()
	}
}

// handleRecovering handles v as runTask runs a task: a panic is logged,
// counted and reported.
func (q *inbox[T]) handleRecovering(v T) {
	defer func() {
		if r := recover(); r != nil {
			q.n.recordPanic("callback", r)
		}
	}()
	q.handle(v)
}

// close drops everything queued and ignores later pushes.
func (q *inbox[T]) close() {
	q.mu.Lock()
	q.closed = true
	q.items = nil
	q.sizes = nil
	q.head = 0
	q.bytes = 0
	q.mu.Unlock()
}
