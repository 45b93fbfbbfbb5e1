package ros

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

// EndpointOption adjusts how a subscription, service or client is created.
type EndpointOption func(*endpointOptions)

type endpointOptions struct {
	qos         *QoS
	ignoreLocal bool
	maxSize     int // WithMaxSampleSize (0: default)
	// onReceive runs a raw subscription's callback on the receive
	// goroutine (WithReceiveGoroutine).
	onReceive bool
	// also is one more type the endpoint's node uses through it: the
	// action type, set on an action's send_goal service and client.
	also *rosidl.TypeDescription
	// QoS event callbacks (qos_events.go); quietEvents: no default
	// incompatible-QoS warning.
	subEvents   *SubscriptionEventCallbacks
	pubEvents   *PublisherEventCallbacks
	quietEvents bool
	// event is the introspection event type of a service or client
	// (introspection.go).
	event *rosidl.TypeInfo
	// pubFilter: a subscription takes only these publishers' messages
	// (pubfilter.go).
	pubFilter PublisherFilter
	// messagePool: a subscription's callbacks get messages it reuses
	// (WithMessagePool).
	messagePool bool
}

// alsoUses registers d in the node's type cache for as long as the service
// or client exists (rcl_action registers the action type itself).
func alsoUses(d *rosidl.TypeDescription) EndpointOption {
	return func(o *endpointOptions) { o.also = d }
}

// WithQoS sets the QoS of a service or client (default QoSServices). For
// publishers and subscriptions the QoS is a required argument instead.
func WithQoS(q QoS) EndpointOption { return func(o *endpointOptions) { o.qos = &q } }

// WithIgnoreLocal makes a subscription ignore publishers of the same
// Context (ignore_local_publications).
func WithIgnoreLocal() EndpointOption { return func(o *endpointOptions) { o.ignoreLocal = true } }

// WithMessagePool makes a subscription reuse its messages, as rclcpp's
// MessagePoolMemoryStrategy does: the message a callback gets is lent for
// the call only, and once the callback returns the subscription decodes a
// later message into it, reusing its slices. A subscription to large
// messages then allocates nothing per message, which spares the garbage
// collector (see docs/client-library.md, "1 MiB over the network"). The
// callback must not keep the message, or anything in it, after it
// returns: copy what it needs.
func WithMessagePool() EndpointOption { return func(o *endpointOptions) { o.messagePool = true } }

func applyOptions(opts []EndpointOption) endpointOptions {
	var o endpointOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}

// ddsTopicName builds the DDS topic name of a ROS name: prefix + fqn +
// suffix, or fqn + suffix when avoiding ROS namespace conventions.
func ddsTopicName(prefix, fqn, suffix string, avoid bool) string {
	if avoid {
		return fqn + suffix
	}
	return prefix + fqn + suffix
}

func checkType(ti *rosidl.TypeInfo) error {
	if ti == nil || ti.DDSName == "" {
		return errors.New("message type has no type information")
	}
	return nil
}

// publisher is the untyped core of Publisher and DynamicPublisher.
type publisher struct {
	n      *Node
	topic  string
	ti     *rosidl.TypeInfo
	w      *dds.Writer
	events *qosEvents // nil: not watched
	bufs   sync.Pool
	layout *rosidl.MemoryLayout // nil: not a fixed-size type
	// lastSize is the size of the last serialized message: from
	// inPlaceMin on, the next is serialized into the writer's memory.
	lastSize atomic.Int64
}

// inPlaceMin is the message size from which a publisher serializes into
// memory the writer lends (dds.Writer.NewBuffer) instead of a Go buffer
// that Cyclone then copies: above it, the copy costs more than the cgo
// calls it takes.
const inPlaceMin = 64 << 10

func newPublisher(n *Node, topic string, ti *rosidl.TypeInfo, qos QoS, opts ...EndpointOption) (*publisher, error) {
	if err := checkType(ti); err != nil {
		return nil, fmt.Errorf("ros: publisher on %q: %w", topic, err)
	}
	o := applyOptions(opts)
	if o.subEvents != nil {
		return nil, fmt.Errorf("ros: publisher on %q: subscription event callbacks given", topic)
	}
	fqn, err := n.ResolveTopicName(topic)
	if err != nil {
		return nil, fmt.Errorf("ros: publisher: %w", err)
	}
	layout := fixedLayout(ti)
	t, err := n.ctx.part.TopicWithLayout(ddsTopicName(topicPrefix, fqn, "", qos.AvoidROSNamespaceConventions), ti.DDSName, ddsLayout(layout))
	if err != nil {
		return nil, fmt.Errorf("ros: publisher on %s: %w", fqn, err)
	}
	dq, err := qos.ddsQoS([]byte(typeHashUserData(n.ctx.Distro(), ti.Hash)), false)
	if err != nil {
		return nil, fmt.Errorf("ros: publisher on %s: %w", fqn, err)
	}
	w, err := n.ctx.part.NewWriter(t, dq)
	if err != nil {
		return nil, fmt.Errorf("ros: publisher on %s: %w", fqn, err)
	}
	p := &publisher{n: n, topic: fqn, ti: ti, w: w, layout: layout}
	if o.pubEvents != nil || !o.quietEvents {
		if p.events, err = watchPublisherEvents(n, w, fqn, o.pubEvents, o.quietEvents); err != nil {
			w.Close()
			return nil, err
		}
	}
	if err := n.addEntity(p); err != nil {
		return nil, err
	}
	return p, nil
}

// validator is implemented by generated messages with bounded fields.
type validator interface{ Validate() error }

func (p *publisher) publish(m rosidl.Message) error {
	if v, ok := m.(validator); ok {
		if err := v.Validate(); err != nil {
			return fmt.Errorf("ros: publish on %s: %w", p.topic, err)
		}
	}
	var err error
	if n := p.lastSize.Load(); n >= inPlaceMin {
		err = p.publishInPlace(m, int(n))
	} else {
		// The pool holds *[]byte, and the pointer taken is the one put
		// back: putting &data of a local would allocate on every publish.
		bp, _ := p.bufs.Get().(*[]byte)
		if bp == nil {
			bp = new([]byte)
		}
		data := rosidl.Marshal(m, (*bp)[:0])
		p.lastSize.Store(int64(len(data)))
		err = p.w.Write(data)
		*bp = data[:0]
		p.bufs.Put(bp)
	}
	if err != nil {
		if errors.Is(err, dds.ErrClosed) {
			return ErrClosed
		}
		return fmt.Errorf("ros: publish on %s: %w", p.topic, err)
	}
	return nil
}

// publishInPlace serializes m into a buffer the writer lends, sized for
// a message a little larger than the last one (n bytes). A message that
// outgrows it is serialized on into Go memory and copied, as publish
// does for small ones.
func (p *publisher) publishInPlace(m rosidl.Message, n int) error {
	b, err := p.w.NewBuffer(min(n+n/16+64, math.MaxUint32-8))
	if err != nil {
		return err
	}
	data := rosidl.Marshal(m, b.Data)
	p.lastSize.Store(int64(len(data)))
	return p.w.WriteBuffer(b, data)
}

func (p *publisher) subscriptionCount() (int, error) {
	eps, err := p.w.MatchedReaders()
	if err != nil {
		return 0, fmt.Errorf("ros: %s: %w", p.topic, err)
	}
	return len(eps), nil
}

func (p *publisher) gids() (readers, writers []dds.GUID) { return nil, []dds.GUID{p.w.GUID()} }

func (p *publisher) close() error {
	err := p.w.Close()
	if p.events != nil {
		p.events.close()
	}
	return err
}

func (p *publisher) assertLiveliness() error {
	if err := p.w.AssertLiveliness(); err != nil {
		if errors.Is(err, dds.ErrClosed) {
			return ErrClosed
		}
		return fmt.Errorf("ros: assert liveliness on %s: %w", p.topic, err)
	}
	return nil
}

// Close closes the publisher and removes it from the graph.
func (p *publisher) Close() error {
	err := p.close()
	p.n.removeEntity(p)
	return err
}

// Publisher publishes messages of type T on one topic. It is safe for
// concurrent use.
type Publisher[T any] struct {
	p    *publisher
	conv func(*T) rosidl.Message
	loan *loanInfo[T] // nil: T's Go layout is not its C layout
	// newMsg returns a new message set to its default values.
	newMsg func() *T
}

// NewPublisher creates a publisher on topic (relative, absolute or "~/"
// names; remapped) with the given QoS. T is a generated message struct:
//
//	pub, err := ros.NewPublisher[std_msgs_msg.String](node, "chatter", ros.QoSDefault)
//
// The one option a publisher takes is WithPublisherEvents.
func NewPublisher[T any, P rosidl.Ptr[T]](n *Node, topic string, qos QoS, opts ...EndpointOption) (*Publisher[T], error) {
	p, err := newPublisher(n, topic, P(nil).ROSType(), qos, opts...)
	if err != nil {
		return nil, err
	}
	ti := p.ti
	newMsg := func() *T {
		if ti.New != nil {
			if m, ok := ti.New().(P); ok {
				return (*T)(m)
			}
		}
		return new(T)
	}
	return &Publisher[T]{p: p, conv: func(m *T) rosidl.Message { return P(m) }, loan: newLoanInfo[T, P](ti, p.layout), newMsg: newMsg}, nil
}

// Publish validates (bounded strings and sequences), serializes and sends
// m. A reliable publisher blocks while its history is full of
// unacknowledged samples.
func (p *Publisher[T]) Publish(m *T) error {
	if m == nil {
		return fmt.Errorf("ros: publish on %s: nil message", p.p.topic)
	}
	return p.p.publish(p.conv(m))
}

// TopicName returns the fully qualified topic name.
func (p *Publisher[T]) TopicName() string { return p.p.topic }

// GID returns the DDS writer GUID.
func (p *Publisher[T]) GID() dds.GUID { return p.p.w.GUID() }

// SubscriptionCount returns the number of matched subscriptions.
func (p *Publisher[T]) SubscriptionCount() (int, error) { return p.p.subscriptionCount() }

// AssertLiveliness asserts the publisher's liveliness, which a publisher
// whose QoS Liveliness is LivelinessManualByTopic must do (or publish)
// within every LivelinessLeaseDuration.
func (p *Publisher[T]) AssertLiveliness() error { return p.p.assertLiveliness() }

// Close closes the publisher.
func (p *Publisher[T]) Close() error { return p.p.Close() }

// DynamicPublisher is a publisher whose type is chosen at run time (for
// tools such as `fsmnodes topic pub`).
type DynamicPublisher struct{ p *publisher }

// NewDynamicPublisher creates a publisher for the type described by ti.
func NewDynamicPublisher(n *Node, topic string, ti *rosidl.TypeInfo, qos QoS, opts ...EndpointOption) (*DynamicPublisher, error) {
	p, err := newPublisher(n, topic, ti, qos, opts...)
	if err != nil {
		return nil, err
	}
	return &DynamicPublisher{p: p}, nil
}

// Publish sends m, which must be of the publisher's type.
func (p *DynamicPublisher) Publish(m rosidl.Message) error {
	if m == nil || m.ROSType() == nil || m.ROSType().Name != p.p.ti.Name {
		return fmt.Errorf("ros: publish on %s: message is not a %s", p.p.topic, p.p.ti.Name)
	}
	return p.p.publish(m)
}

// TopicName returns the fully qualified topic name.
func (p *DynamicPublisher) TopicName() string { return p.p.topic }

// SubscriptionCount returns the number of matched subscriptions.
func (p *DynamicPublisher) SubscriptionCount() (int, error) { return p.p.subscriptionCount() }

// AssertLiveliness asserts the publisher's liveliness (see
// Publisher.AssertLiveliness).
func (p *DynamicPublisher) AssertLiveliness() error { return p.p.assertLiveliness() }

// Close closes the publisher.
func (p *DynamicPublisher) Close() error { return p.p.Close() }

// Subscription receives messages of one topic and runs its callback on the
// node's callback goroutine. Messages wait in a queue of the QoS depth
// (keep last: when the callback is slower than the publishers, the oldest
// waiting message is dropped and counted in Dropped); KEEP_ALL queues are
// unbounded.
type Subscription struct {
	n         *Node
	topic     string
	ti        *rosidl.TypeInfo
	r         *dds.Reader
	in        *inbox[rosidl.Message]
	events    *qosEvents
	malformed atomic.Uint64
	size      *oversizeGuard

	malformedLog throttle
}

// NewSubscription subscribes to topic and calls cb with every message, on
// the node's callback goroutine. The message belongs to the callback.
//
//	sub, err := ros.NewSubscription(node, "cmd_vel", ros.QoSDefault, func(m *geometry_msgs_msg.Twist) { ... })
func NewSubscription[T any, P rosidl.Ptr[T]](n *Node, topic string, qos QoS, cb func(P), opts ...EndpointOption) (*Subscription, error) {
	if cb == nil {
		return nil, fmt.Errorf("ros: subscription on %q: nil callback", topic)
	}
	return newSubscription(n, topic, P(nil).ROSType(), qos,
		func() rosidl.Message { return P(new(T)) },
		func(m rosidl.Message) { cb(m.(P)) }, opts)
}

// NewDynamicSubscription subscribes with a type chosen at run time; cb gets
// messages made by ti.New.
func NewDynamicSubscription(n *Node, topic string, ti *rosidl.TypeInfo, qos QoS, cb func(rosidl.Message), opts ...EndpointOption) (*Subscription, error) {
	if cb == nil {
		return nil, fmt.Errorf("ros: subscription on %q: nil callback", topic)
	}
	if ti == nil || ti.New == nil {
		return nil, fmt.Errorf("ros: subscription on %q: type information without a constructor", topic)
	}
	return newSubscription(n, topic, ti, qos, ti.New, cb, opts)
}

func newSubscription(n *Node, topic string, ti *rosidl.TypeInfo, qos QoS, newMsg func() rosidl.Message, cb func(rosidl.Message), opts []EndpointOption) (*Subscription, error) {
	if err := checkType(ti); err != nil {
		return nil, fmt.Errorf("ros: subscription on %q: %w", topic, err)
	}
	o := applyOptions(opts)
	if o.pubEvents != nil {
		return nil, fmt.Errorf("ros: subscription on %q: publisher event callbacks given", topic)
	}
	fqn, err := n.ResolveTopicName(topic)
	if err != nil {
		return nil, fmt.Errorf("ros: subscription: %w", err)
	}
	t, err := n.ctx.part.TopicWithLayout(ddsTopicName(topicPrefix, fqn, "", qos.AvoidROSNamespaceConventions), ti.DDSName, ddsLayout(fixedLayout(ti)))
	if err != nil {
		return nil, fmt.Errorf("ros: subscription on %s: %w", fqn, err)
	}
	dq, err := qos.ddsQoS([]byte(typeHashUserData(n.ctx.Distro(), ti.Hash)), o.ignoreLocal)
	if err != nil {
		return nil, fmt.Errorf("ros: subscription on %s: %w", fqn, err)
	}
	s := &Subscription{n: n, topic: fqn, ti: ti}
	if o.messagePool {
		// Messages go back to the pool after their callback; those
		// dropped from a full inbox are left to the collector.
		alloc := newMsg
		pool := &sync.Pool{New: func() any { return alloc() }}
		newMsg = func() rosidl.Message { return pool.Get().(rosidl.Message) }
		call := cb
		cb = func(m rosidl.Message) {
			call(m)
			pool.Put(m)
		}
	}
	depth := 0
	if qos.History != HistoryKeepAll {
		depth = qos.effectiveDepth()
	}
	s.in = newInbox(n, inboxLimits{depth: depth}, cb)
	dropped := n.Counter(CounterDroppedSamples)
	s.in.onDrop = func(bool) { dropped.Inc() }
	malformed := n.Counter(CounterMalformedSamples)
	limit := sampleLimit(ti, 0, o.maxSize, DefaultMaxSampleSize)
	s.size = newOversizeGuard(n, "sample on "+fqn, limit)
	gate := newPubGate(n, fqn, o.pubFilter)
	s.r, err = n.ctx.part.NewReader(t, withSampleLimit(dq, limit), func(batch []dds.Sample) {
		for i := range batch {
			smp := &batch[i]
			if s.size.dropped(smp) || !gate.allows(smp.PublicationHandle) {
				continue
			}
			m := newMsg()
			if err := rosidl.Unmarshal(smp.Data, m); err != nil {
				s.malformed.Add(1)
				malformed.Inc()
				n.warnThrottled(&s.malformedLog, "dropping malformed sample on %s: %v", fqn, err)
				continue
			}
			s.in.push(m, len(smp.Data))
		}
	})
	if err != nil {
		return nil, fmt.Errorf("ros: subscription on %s: %w", fqn, err)
	}
	gate.setReader(s.r)
	if s.events, err = watchSubscriptionEvents(n, s.r, fqn, o.subEvents); err != nil {
		s.r.Close()
		return nil, err
	}
	if err := n.addEntity(s); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Subscription) gids() (readers, writers []dds.GUID) { return []dds.GUID{s.r.GUID()}, nil }
func (s *Subscription) hubDropped() uint64                  { return s.r.Dropped() }

func (s *Subscription) close() error {
	err := s.r.Close()
	s.in.close()
	s.events.close()
	return err
}

// Close closes the subscription; no callback starts after Close returns
// (a callback already running, when Close is called from elsewhere, may
// finish).
func (s *Subscription) Close() error {
	err := s.close()
	s.n.removeEntity(s)
	return err
}

// TopicName returns the fully qualified topic name.
func (s *Subscription) TopicName() string { return s.topic }

// GID returns the DDS reader GUID.
func (s *Subscription) GID() dds.GUID { return s.r.GUID() }

// Malformed returns how many received samples could not be decoded (they
// are dropped).
func (s *Subscription) Malformed() uint64 { return s.malformed.Load() }

// Dropped returns how many decoded messages were dropped because the queue
// (QoS depth) was full.
func (s *Subscription) Dropped() uint64 { return s.in.dropped.Load() }

// Oversized returns how many samples were dropped, undecoded, because they
// exceeded the subscription's size limit (see WithMaxSampleSize).
func (s *Subscription) Oversized() uint64 { return s.r.Oversized() }

// MaxSampleSize returns the subscription's size limit in bytes (0: none).
func (s *Subscription) MaxSampleSize() int { return int(s.size.limit) }

// PublisherCount returns the number of matched publishers.
func (s *Subscription) PublisherCount() (int, error) {
	eps, err := s.r.MatchedWriters()
	if err != nil {
		return 0, fmt.Errorf("ros: %s: %w", s.topic, err)
	}
	return len(eps), nil
}
