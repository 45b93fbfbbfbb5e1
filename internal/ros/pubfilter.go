package ros

import (
	"sync"
	"sync/atomic"

	"github.com/fsmnodes/fsmnodes/internal/dds"
)

// CounterForeignSamples counts the messages a subscription with
// WithPublisherFilter dropped because their publisher was not accepted.
const CounterForeignSamples = "foreign_samples"

// PublisherFilter decides whether a subscription takes the messages of a
// publisher, given the node that publishes them (NodeName "" and Known
// false while no ros_discovery_info names the publisher yet).
type PublisherFilter func(pub PublisherIdentity) bool

// PublisherIdentity is what a PublisherFilter knows of a publisher.
type PublisherIdentity struct {
	GID   dds.GUID
	Node  NodeName
	Known bool // the node is known from ros_discovery_info
}

// WithPublisherFilter makes a subscription take only the messages of the
// publishers accept returns true for; the others are dropped before they
// are decoded, counted (foreign_samples on /diagnostics) and logged at most
// once a second. A decision about a publisher whose node is known is kept
// for as long as the publisher is matched; a publisher not yet named by
// ros_discovery_info is asked about again with every message.
//
// It is a trust rule for inputs of state machines (rsmNode follows only
// the mux's rsm/operationMode), not a security boundary: without DDS
// security any participant can name its node as it likes.
func WithPublisherFilter(accept PublisherFilter) EndpointOption {
	return func(o *endpointOptions) { o.pubFilter = accept }
}

// pubGate applies a PublisherFilter on a subscription's receive goroutine.
type pubGate struct {
	n      *Node
	topic  string
	accept PublisherFilter
	ctr    *Counter
	log    throttle
	reader atomic.Pointer[dds.Reader] // set once the reader exists

	mu    sync.Mutex
	known map[dds.InstanceHandle]bool // decisions about named publishers
}

func newPubGate(n *Node, topic string, accept PublisherFilter) *pubGate {
	if accept == nil {
		return nil
	}
	return &pubGate{n: n, topic: topic, accept: accept, ctr: n.Counter(CounterForeignSamples), known: map[dds.InstanceHandle]bool{}}
}

// allows reports whether the sample's publisher is accepted; a refused
// sample is counted and logged (throttled).
func (g *pubGate) allows(h dds.InstanceHandle) bool {
	if g == nil {
		return true
	}
	r := g.reader.Load()
	g.mu.Lock()
	ok, decided := g.known[h]
	g.mu.Unlock()
	var id PublisherIdentity
	if !decided {
		var ep dds.Endpoint
		matched := false
		if r != nil {
			var err error
			if ep, matched, err = r.MatchedWriter(h); err != nil {
				matched = false
			}
		}
		if !matched {
			ok = false
		} else {
			id.GID = ep.Key
			id.Node, id.Known = g.n.ctx.nodeOfWriter(ep.Key)
			ok = g.accept(id)
			if id.Known {
				g.mu.Lock()
				if len(g.known) > 1000 { // publishers come and go: forget them all now and then
					clear(g.known)
				}
				g.known[h] = ok
				g.mu.Unlock()
			}
		}
	}
	if !ok {
		g.ctr.Inc()
		who := "an unnamed publisher"
		if id.Known {
			who = id.Node.FullyQualifiedName()
		} else if decided {
			who = "a publisher refused before"
		}
		g.n.warnThrottled(&g.log, "ignoring a message on %s from %s: this subscription takes only its trusted publisher's (counted as %s)", g.topic, who, CounterForeignSamples)
	}
	return ok
}

// setReader hands the subscription's reader to the gate.
func (g *pubGate) setReader(r *dds.Reader) {
	if g != nil {
		g.reader.Store(r)
	}
}

// nodeOfWriter returns the node of a writer as ros_discovery_info names it.
func (c *Context) nodeOfWriter(gid dds.GUID) (NodeName, bool) {
	g := c.graph
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.nodeOfLocked(gid, dds.KindWriter)
}
