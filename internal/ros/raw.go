package ros

import (
	"errors"
	"fmt"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

// RawMessage is one sample of a topic as it came off the wire.
type RawMessage struct {
	// Data is the complete serialized payload: the 4-byte encapsulation
	// header, then the CDR body (it may end in up to 3 padding bytes).
	// It belongs to the callback.
	Data []byte
	// SourceTimestamp is the writer's source timestamp.
	SourceTimestamp time.Time
	// ReceivedAt is the node clock's time when the sample arrived (sim
	// time under use_sim_time).
	ReceivedAt time.Time
}

// RawSubscription receives the samples of one topic without decoding them,
// for programs that forward messages (bridges, recorders). Its callback
// runs on the node's callback goroutine, with the same keep-last queue as
// a Subscription, or with WithReceiveGoroutine on the receive goroutine.
type RawSubscription struct {
	n      *Node
	topic  string
	ti     *rosidl.TypeInfo
	r      *dds.Reader
	in     *inbox[RawMessage] // nil with WithReceiveGoroutine
	events *qosEvents
}

// WithReceiveGoroutine makes a raw subscription call its callback on the
// context's receive goroutine, as soon as a sample is taken from DDS,
// instead of queueing it for the node's callback goroutine. The callback
// must return quickly and never block (it holds up every subscription of
// the context). A forwarder whose callback only hands the bytes on saves
// a goroutine switch per sample, and loses nothing when the node goroutine
// is late: the only queue is the reader's own (QoS depth).
func WithReceiveGoroutine() EndpointOption { return func(o *endpointOptions) { o.onReceive = true } }

// NewRawSubscription subscribes to topic with the type described by ti
// (only its names and hash are used) and calls cb with each sample's
// bytes, which are copied out of DDS and belong to cb.
func NewRawSubscription(n *Node, topic string, ti *rosidl.TypeInfo, qos QoS, cb func(RawMessage), opts ...EndpointOption) (*RawSubscription, error) {
	if cb == nil {
		return nil, fmt.Errorf("ros: raw subscription on %q: nil callback", topic)
	}
	if err := checkType(ti); err != nil {
		return nil, fmt.Errorf("ros: raw subscription on %q: %w", topic, err)
	}
	o := applyOptions(opts)
	if o.pubEvents != nil {
		return nil, fmt.Errorf("ros: raw subscription on %q: publisher event callbacks given", topic)
	}
	fqn, err := n.ResolveTopicName(topic)
	if err != nil {
		return nil, fmt.Errorf("ros: raw subscription: %w", err)
	}
	t, err := n.ctx.part.Topic(ddsTopicName(topicPrefix, fqn, "", qos.AvoidROSNamespaceConventions), ti.DDSName)
	if err != nil {
		return nil, fmt.Errorf("ros: raw subscription on %s: %w", fqn, err)
	}
	dq, err := qos.ddsQoS([]byte(typeHashUserData(n.ctx.Distro(), ti.Hash)), o.ignoreLocal)
	if err != nil {
		return nil, fmt.Errorf("ros: raw subscription on %s: %w", fqn, err)
	}
	s := &RawSubscription{n: n, topic: fqn, ti: ti}
	depth := 0
	if qos.History != HistoryKeepAll {
		depth = qos.effectiveDepth()
	}
	deliver := func(m RawMessage, _ int) { cb(m) }
	if !o.onReceive {
		s.in = newInbox(n, inboxLimits{depth: depth}, cb)
		dropped := n.Counter(CounterDroppedSamples)
		s.in.onDrop = func(bool) { dropped.Inc() }
		deliver = func(m RawMessage, size int) { s.in.push(m, size) }
	}
	clock := n.Clock()
	limit := sampleLimit(ti, 0, o.maxSize, DefaultMaxSampleSize)
	size := newOversizeGuard(n, "sample on "+fqn, limit)
	s.r, err = n.ctx.part.NewReader(t, withSampleLimit(dq, limit), func(batch []dds.Sample) {
		now := clock.Now()
		for _, smp := range batch {
			if size.dropped(&smp) {
				continue
			}
			deliver(RawMessage{
				Data:            append([]byte(nil), smp.Data...),
				SourceTimestamp: time.Unix(0, smp.SourceTimestamp),
				ReceivedAt:      now,
			}, len(smp.Data))
		}
	})
	if err != nil {
		return nil, fmt.Errorf("ros: raw subscription on %s: %w", fqn, err)
	}
	if s.events, err = watchSubscriptionEvents(n, s.r, fqn, o.subEvents); err != nil {
		s.r.Close()
		return nil, err
	}
	if err := n.addEntity(s); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *RawSubscription) gids() (readers, writers []dds.GUID) { return []dds.GUID{s.r.GUID()}, nil }
func (s *RawSubscription) hubDropped() uint64                  { return s.r.Dropped() }

func (s *RawSubscription) usedTypes() []*rosidl.TypeDescription { return descsOf(s.ti) }

func (s *RawSubscription) close() error {
	err := s.r.Close()
	if s.in != nil {
		s.in.close()
	}
	s.events.close()
	return err
}

// Close closes the subscription; no callback starts after Close returns.
func (s *RawSubscription) Close() error {
	err := s.close()
	s.n.removeEntity(s)
	return err
}

// TopicName returns the fully qualified topic name.
func (s *RawSubscription) TopicName() string { return s.topic }

// Dropped returns how many samples were dropped because a queue was full:
// the callback queue (QoS depth) and the reader's own queue.
func (s *RawSubscription) Dropped() uint64 {
	n := s.r.Dropped()
	if s.in != nil {
		n += s.in.dropped.Load()
	}
	return n
}

// Oversized returns how many samples were dropped because they exceeded
// the subscription's size limit (see WithMaxSampleSize).
func (s *RawSubscription) Oversized() uint64 { return s.r.Oversized() }

// PublisherCount returns the number of matched publishers.
func (s *RawSubscription) PublisherCount() (int, error) {
	eps, err := s.r.MatchedWriters()
	if err != nil {
		return 0, fmt.Errorf("ros: %s: %w", s.topic, err)
	}
	return len(eps), nil
}

// RawPublisher publishes already serialized messages of one topic (for
// programs that replay or forward bytes: bag play). It is safe for
// concurrent use.
type RawPublisher struct{ p *publisher }

// NewRawPublisher creates a publisher for the type described by ti (only
// its names and hash are used), like NewDynamicPublisher.
func NewRawPublisher(n *Node, topic string, ti *rosidl.TypeInfo, qos QoS, opts ...EndpointOption) (*RawPublisher, error) {
	p, err := newPublisher(n, topic, ti, qos, opts...)
	if err != nil {
		return nil, err
	}
	return &RawPublisher{p: p}, nil
}

// Publish sends data, a complete serialized message: the 4-byte
// encapsulation header (CDR, either byte order) and the body. The bytes
// are not checked against the type; a payload without a CDR header is
// refused.
func (p *RawPublisher) Publish(data []byte) error {
	if len(data) < 4 || data[0] != 0 || data[1] > 1 {
		return fmt.Errorf("ros: publish on %s: not a CDR payload (%d bytes)", p.p.topic, len(data))
	}
	if err := p.p.w.Write(data); err != nil {
		if errors.Is(err, dds.ErrClosed) {
			return ErrClosed
		}
		return fmt.Errorf("ros: publish on %s: %w", p.p.topic, err)
	}
	return nil
}

// TopicName returns the fully qualified topic name.
func (p *RawPublisher) TopicName() string { return p.p.topic }

// SubscriptionCount returns the number of matched subscriptions.
func (p *RawPublisher) SubscriptionCount() (int, error) { return p.p.subscriptionCount() }

// Close closes the publisher.
func (p *RawPublisher) Close() error { return p.p.Close() }
