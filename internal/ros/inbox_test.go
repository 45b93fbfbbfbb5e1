package ros

import (
	"reflect"
	"testing"

	"go.uber.org/zap"
)

// bareNode is a Node with a running callback goroutine and nothing else.
func bareNode(t *testing.T) *Node {
	t.Helper()
	n := &Node{wake: make(chan struct{}, 1), loopDone: make(chan struct{})}
	n.logger.Store(zap.NewNop())
	go n.loop()
	n.start()
	t.Cleanup(func() {
		n.mu.Lock()
		n.closed = true
		n.mu.Unlock()
		// A full wake channel means the loop has yet to look at closed;
		// a blocking send could wait forever for a loop that has
		// returned.
		select {
		case n.wake <- struct{}{}:
		default:
		}
		<-n.loopDone
	})
	return n
}

// onNode runs f on the node's callback goroutine and waits for it.
func onNode(n *Node, f func()) {
	done := make(chan struct{})
	n.Post(func() { f(); close(done) })
	<-done
}

// untilHandled posts snapshots of *handled to the node until it holds
// want items (each inbox handles one item per turn, so this converges).
func untilHandled[T any](n *Node, handled *[]T, want int) []T {
	for {
		var snap []T
		onNode(n, func() { snap = append(snap, *handled...) })
		if len(snap) >= want {
			return snap
		}
	}
}

func TestInboxKeepsLastDepthItems(t *testing.T) {
	n := bareNode(t)
	var got []int
	q := newInbox(n, inboxLimits{depth: 5}, func(v int) { got = append(got, v) })
	release := make(chan struct{})
	n.Post(func() { <-release })
	for i := 0; i < 20; i++ {
		q.push(i, 1)
	}
	close(release)
	if snap, want := untilHandled(n, &got, 5), []int{15, 16, 17, 18, 19}; !reflect.DeepEqual(snap, want) {
		t.Errorf("handled %v, want %v", snap, want)
	}
	if q.dropped.Load() != 15 {
		t.Errorf("dropped %d, want 15", q.dropped.Load())
	}
}

func TestInboxKeepAllAndTakingTurns(t *testing.T) {
	n := bareNode(t)
	var order []string
	a := newInbox(n, inboxLimits{}, func(v int) { order = append(order, "a") })
	b := newInbox(n, inboxLimits{}, func(v int) { order = append(order, "b") })
	release := make(chan struct{})
	n.Post(func() { <-release })
	for i := 0; i < 3; i++ {
		a.push(i, 1)
	}
	for i := 0; i < 3; i++ {
		b.push(i, 1)
	}
	close(release)
	if snap, want := untilHandled(n, &order, 6), []string{"a", "b", "a", "b", "a", "b"}; !reflect.DeepEqual(snap, want) {
		t.Errorf("order %v, want %v (entities take turns)", snap, want)
	}
	if a.dropped.Load() != 0 || b.dropped.Load() != 0 {
		t.Error("keep-all inbox dropped items")
	}
	a.close()
	a.push(99, 1)
	var snap []string
	onNode(n, func() {})
	onNode(n, func() { snap = append(snap, order...) })
	if len(snap) != 6 {
		t.Errorf("closed inbox still handled items: %v", snap)
	}
}

// A refusing inbox (service requests) keeps every item up to its bounds,
// never pushes an old item out, refuses new ones when full and counts them.
func TestInboxRefusesWhenFull(t *testing.T) {
	for _, tt := range []struct {
		name    string
		lim     inboxLimits
		size    int
		handled []int
	}{
		{"items", inboxLimits{maxItems: 4}, 1, []int{0, 1, 2, 3}},
		{"bytes", inboxLimits{maxBytes: 300}, 100, []int{0, 1, 2}},
		// One item is always taken, even if it alone exceeds the bytes.
		{"one oversized item", inboxLimits{maxBytes: 10}, 100, []int{0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := bareNode(t)
			var got []int
			var refused int
			q := newInbox(n, tt.lim, func(v int) { got = append(got, v) })
			q.onDrop = func(r bool) {
				if r {
					refused++
				}
			}
			release := make(chan struct{})
			n.Post(func() { <-release })
			accepted := 0
			for i := 0; i < 10; i++ {
				if q.push(i, tt.size) {
					accepted++
				}
			}
			close(release)
			if snap := untilHandled(n, &got, len(tt.handled)); !reflect.DeepEqual(snap, tt.handled) {
				t.Errorf("handled %v, want %v", snap, tt.handled)
			}
			want := 10 - len(tt.handled)
			if accepted != len(tt.handled) || refused != want || q.dropped.Load() != uint64(want) {
				t.Errorf("accepted %d, refused %d, dropped %d; want %d, %d, %d", accepted, refused, q.dropped.Load(), len(tt.handled), want, want)
			}
			// Room again once handled.
			if !q.push(42, tt.size) {
				t.Error("push refused after the queue drained")
			}
		})
	}
}
