package ros

import (
	"sync"
	"sync/atomic"
)

// inbox is the bounded queue between the receive goroutine and a node's
// callback goroutine for one entity (a subscription's messages, a service's
// requests). Drop policy: keep last depth items (the entity's QoS depth;
// depth 0 = keep all, unbounded); the oldest item is dropped and counted.
// The inbox keeps at most one task in the node's queue and runs one item per
// task, so entities of a node take turns.
type inbox[T any] struct {
	n      *Node
	handle func(T)
	depth  int

	mu        sync.Mutex
	items     []T
	scheduled bool
	closed    bool

	dropped atomic.Uint64
}

func newInbox[T any](n *Node, depth int, handle func(T)) *inbox[T] {
	return &inbox[T]{n: n, depth: depth, handle: handle}
}

// push queues v (any goroutine).
func (q *inbox[T]) push(v T) {
	var zero T
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	if q.depth > 0 && len(q.items) >= q.depth {
		q.items[0] = zero
		q.items = q.items[1:]
		q.dropped.Add(1)
	}
	q.items = append(q.items, v)
	schedule := !q.scheduled
	q.scheduled = true
	q.mu.Unlock()
	if schedule {
		q.post()
	}
}

func (q *inbox[T]) post() {
	if q.n.Post(q.runOne) != nil {
		q.mu.Lock()
		q.scheduled = false
		q.mu.Unlock()
	}
}

// runOne handles one item on the node goroutine and reschedules itself if
// more are waiting.
func (q *inbox[T]) runOne() {
	var zero T
	q.mu.Lock()
	if q.closed || len(q.items) == 0 {
		q.scheduled = false
		q.mu.Unlock()
		return
	}
	v := q.items[0]
	q.items[0] = zero
	q.items = q.items[1:]
	more := len(q.items) > 0
	if !more {
		q.scheduled = false
		q.items = nil
	}
	q.mu.Unlock()
	if more {
		q.post()
	}
	q.handle(v)
}

// close drops everything queued and ignores later pushes.
func (q *inbox[T]) close() {
	q.mu.Lock()
	q.closed = true
	q.items = nil
	q.mu.Unlock()
}
