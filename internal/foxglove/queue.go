package foxglove

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
)

// outMsg is one WebSocket message waiting to be sent: a text message
// (text), or a binary one made of a small header and an optional payload
// shared with other clients (never modified).
type outMsg struct {
	text    []byte
	hdr     [MessageDataHeaderLen]byte
	hdrLen  uint8
	binary  []byte // a complete binary frame of its own (service responses)
	payload []byte // shared message payload after hdr
}

func (m *outMsg) size() int { return len(m.text) + int(m.hdrLen) + len(m.binary) + len(m.payload) }

// sub is the subscription of a messageData frame (0 for a message without
// one).
func (m *outMsg) sub() uint32 {
	if m.hdrLen < 5 {
		return 0
	}
	return binary.LittleEndian.Uint32(m.hdr[1:5])
}

// errQueueOverflow is returned when the control lane of a client is full:
// the client has stopped reading and would miss state it cannot recover,
// so it is disconnected.
var errQueueOverflow = errors.New("send queue overflow: client is not reading")

// sendQueue is the bounded queue between the server and the writer
// goroutine of one client. It has two lanes:
//
//   - control (JSON messages, service responses): never dropped, because a
//     client that misses an advertise or a response is wrong for good; if
//     it holds more than ctrlLimit messages the client is cut off;
//   - data (messageData): bounded by dataLimit messages and dataBytes
//     bytes; when full, waiting messages are dropped and counted, oldest
//     first, but first those whose subscription has a newer message
//     waiting (or arriving): the newest message of every subscription
//     stays, so a state published only when it changes (RSM's stateInfo,
//     an e-stop) still reaches a client on a slow link. Only when every
//     waiting message is the newest of its subscription does the oldest go.
//
// Pushing never blocks, so a slow or stalled client never slows the
// publishers.
type sendQueue struct {
	mu        sync.Mutex
	ctrl      []outMsg
	ring      []outMsg // data lane, ring buffer of fixed capacity
	head, n   int
	perSub    map[uint32]int // data messages waiting, per subscription
	bytes     int            // payload bytes in the data lane
	byteLimit int
	ctrlLimit int
	closed    bool
	err       error
	wake      chan struct{}

	dropped      uint64 // messages dropped from the data lane
	droppedBytes uint64
}

func newSendQueue(dataLimit, byteLimit, ctrlLimit int) *sendQueue {
	return &sendQueue{
		ring:      make([]outMsg, max(dataLimit, 1)),
		perSub:    map[uint32]int{},
		byteLimit: max(byteLimit, 1),
		ctrlLimit: max(ctrlLimit, 1),
		wake:      make(chan struct{}, 1),
	}
}

func (q *sendQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// pushControl queues a control message; it fails once the lane is over
// its limit (the queue is then closed with errQueueOverflow).
func (q *sendQueue) pushControl(m outMsg) error {
	q.mu.Lock()
	if q.closed {
		err := q.err
		q.mu.Unlock()
		return err
	}
	if len(q.ctrl) >= q.ctrlLimit {
		q.closeLocked(errQueueOverflow)
		q.mu.Unlock()
		q.signal()
		return errQueueOverflow
	}
	q.ctrl = append(q.ctrl, m)
	q.mu.Unlock()
	q.signal()
	return nil
}

// pushData queues a data message, dropping waiting ones to stay within
// the limits (see sendQueue: the oldest that is not the newest of its
// subscription first); it returns how many it dropped. A message larger
// than the byte limit is still queued (alone), so a big map gets through to
// a client that keeps up.
func (q *sendQueue) pushData(m outMsg) (dropped int) {
	sz := m.size()
	sub := m.sub()
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return 0
	}
	for q.n > 0 && (q.n == len(q.ring) || q.bytes+sz > q.byteLimit) {
		q.dropAt(q.victim(sub))
		dropped++
	}
	q.ring[(q.head+q.n)%len(q.ring)] = m
	q.n++
	q.bytes += sz
	q.perSub[sub]++
	q.mu.Unlock()
	q.signal()
	return dropped
}

// victim is the position (from the head) of the data message to drop to
// make room for one of subscription sub: the oldest whose subscription has
// a newer message waiting or arriving, else the oldest.
func (q *sendQueue) victim(sub uint32) int {
	for i := 0; i < q.n; i++ {
		s := q.ring[(q.head+i)%len(q.ring)].sub()
		if s == sub || q.perSub[s] > 1 {
			return i
		}
	}
	return 0
}

// dropAt removes the data message at position i (from the head), keeping
// the others in order, and counts it dropped.
func (q *sendQueue) dropAt(i int) {
	l := len(q.ring)
	old := q.ring[(q.head+i)%l]
	q.bytes -= old.size()
	q.dropped++
	q.droppedBytes += uint64(old.size())
	if s := old.sub(); q.perSub[s] > 1 {
		q.perSub[s]--
	} else {
		delete(q.perSub, s)
	}
	if i == 0 {
		q.ring[q.head] = outMsg{}
		q.head = (q.head + 1) % l
	} else {
		for j := i; j < q.n-1; j++ {
			q.ring[(q.head+j)%l] = q.ring[(q.head+j+1)%l]
		}
		q.ring[(q.head+q.n-1)%l] = outMsg{}
	}
	q.n--
}

// pop waits for the next message: control messages first, then data in
// order. It returns false when the queue is closed or ctx ends.
func (q *sendQueue) pop(ctx context.Context) (outMsg, bool) {
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return outMsg{}, false
		}
		if len(q.ctrl) > 0 {
			m := q.ctrl[0]
			q.ctrl[0] = outMsg{}
			q.ctrl = q.ctrl[1:]
			if len(q.ctrl) == 0 {
				q.ctrl = nil
			}
			q.mu.Unlock()
			return m, true
		}
		if q.n > 0 {
			m := q.ring[q.head]
			q.ring[q.head] = outMsg{}
			q.head = (q.head + 1) % len(q.ring)
			q.n--
			q.bytes -= m.size()
			if s := m.sub(); q.perSub[s] > 1 {
				q.perSub[s]--
			} else {
				delete(q.perSub, s)
			}
			q.mu.Unlock()
			return m, true
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-ctx.Done():
			return outMsg{}, false
		}
	}
}

func (q *sendQueue) closeLocked(err error) {
	if q.closed {
		return
	}
	q.closed, q.err = true, err
	q.ctrl = nil
	for i := range q.ring {
		q.ring[i] = outMsg{}
	}
	q.n, q.bytes = 0, 0
	clear(q.perSub)
}

// close drops everything queued; later pushes are ignored.
func (q *sendQueue) close() {
	q.mu.Lock()
	q.closeLocked(errors.New("client closed"))
	q.mu.Unlock()
	q.signal()
}

// stats returns the drop counters and the current data lane fill.
func (q *sendQueue) stats() (dropped, droppedBytes uint64, queued, queuedBytes int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.dropped, q.droppedBytes, q.n, q.bytes
}
