package ros

import (
	"math"

	"github.com/fsmnodes/fsmnodes/internal/cdr"
	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

// Sample-size limits. A sample above its entity's limit is dropped as soon
// as Cyclone hands it over, before it is copied into Go or decoded: it
// costs nothing beyond Cyclone's own receive buffer. It is counted (the
// entity's Oversized, the node's oversized_samples) and logged at most
// once a second per entity.
//
// The limit of an entity is the smaller of
//   - the configured one: WithMaxSampleSize, ActionServerOptions.MaxGoalSize,
//     else DefaultMaxSampleSize (topics, service replies) or
//     DefaultMaxRequestSize (service requests, action goals); and
//   - the type's own bound, for types whose strings and sequences are all
//     bounded (rosidl.TypeDescription.MaxCDRSize): a longer sample cannot
//     be a valid message of the type.
const (
	// DefaultMaxSampleSize is the default limit of subscriptions and of
	// the replies a client accepts (maps, images and point clouds stay
	// well below it).
	DefaultMaxSampleSize = 64 << 20
	// DefaultMaxRequestSize is the default limit of service requests and
	// action goals: commands, which are small.
	DefaultMaxRequestSize = 16 << 20
	// NoSizeLimit as a configured limit lifts the default; the type's own
	// bound still applies.
	NoSizeLimit = -1
)

// WithMaxSampleSize sets the largest sample, in bytes of serialized CDR
// including the 4-byte encapsulation header, that a subscription accepts
// (a service: request; a client: reply). 0 keeps the default; NoSizeLimit
// lifts it.
func WithMaxSampleSize(n int) EndpointOption {
	return func(o *endpointOptions) { o.maxSize = n }
}

// sampleLimit returns the reader-side limit for samples of ti whose body
// starts after prefix bytes (16 for the request header of services):
// configured (0: def; NoSizeLimit: none), tightened to the type's bound.
// 0 means no limit.
func sampleLimit(ti *rosidl.TypeInfo, prefix, configured, def int) uint32 {
	limit := configured
	if limit == 0 {
		limit = def
	}
	if limit < 0 {
		limit = 0
	}
	if ti != nil && ti.Desc != nil {
		if b, ok := ti.Desc.MaxCDRSize(); ok {
			// Header, prefix, body, and up to 3 bytes of padding.
			if tb := cdr.HeaderSize + prefix + b + 3; limit == 0 || tb < limit {
				limit = tb
			}
		}
	}
	if limit > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(limit)
}

// withSampleLimit returns q with the reader-side size limit set.
func withSampleLimit(q dds.QoS, limit uint32) dds.QoS {
	q.MaxSampleSize = limit
	return q
}

// oversizeGuard counts and logs the samples an entity's reader dropped for
// their size.
type oversizeGuard struct {
	n     *Node
	what  string // "sample on /topic", "request of service /srv"
	limit uint32
	count *Counter // the node's oversized_samples
	log   throttle
}

func newOversizeGuard(n *Node, what string, limit uint32) *oversizeGuard {
	return &oversizeGuard{n: n, what: what, limit: limit, count: n.Counter(CounterOversizedSamples)}
}

// dropped reports whether smp is the marker of a sample dropped for its
// size (and counts and logs it).
func (g *oversizeGuard) dropped(smp *dds.Sample) bool {
	if smp.Oversize == 0 {
		return false
	}
	g.count.Inc()
	g.n.warnThrottled(&g.log, "dropped a %d-byte %s: above the %d-byte limit", smp.Oversize, g.what, g.limit)
	return true
}
