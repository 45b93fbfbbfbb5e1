package lifecycle

import (
	"sync/atomic"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

// Publisher is a managed publisher (rclcpp's LifecyclePublisher): it
// publishes only while its node is active (from the start of the activate
// callback until the node leaves active). A Publish while inactive sends
// nothing, returns nil and logs a warning once per deactivation.
type Publisher[T any] struct {
	pub       *ros.Publisher[T]
	n         *ros.Node
	active    atomic.Bool
	shouldLog atomic.Bool
	skipped   atomic.Uint64
}

// NewPublisher creates a managed publisher on l's node (see
// ros.NewPublisher for topic and qos). It follows the node's state from
// now on: inactive unless the node is active.
func NewPublisher[T any, P rosidl.Ptr[T]](l *Node, topic string, qos ros.QoS) (*Publisher[T], error) {
	pub, err := ros.NewPublisher[T, P](l.n, topic, qos)
	if err != nil {
		return nil, err
	}
	p := &Publisher[T]{pub: pub, n: l.n}
	p.shouldLog.Store(true)
	l.mu.Lock()
	l.entities = append(l.entities, p)
	l.mu.Unlock()
	p.setActive(l.State().ID == StateActive || l.State().ID == StateActivating)
	return p, nil
}

func (p *Publisher[T]) setActive(on bool) {
	if on && !p.active.Load() {
		p.shouldLog.Store(true)
	}
	p.active.Store(on)
}

// Active reports whether the publisher publishes.
func (p *Publisher[T]) Active() bool { return p.active.Load() }

// Publish sends m while the publisher is active; otherwise it sends
// nothing and returns nil (logging a warning the first time after each
// deactivation, as rclcpp does).
func (p *Publisher[T]) Publish(m *T) error {
	if !p.active.Load() {
		p.skipped.Add(1)
		if p.shouldLog.CompareAndSwap(true, false) {
			p.n.Logger().Warnf("Trying to publish message on the topic '%s', but the publisher is not activated", p.pub.TopicName())
		}
		return nil
	}
	return p.pub.Publish(m)
}

// Skipped returns how many messages were not sent because the publisher
// was inactive.
func (p *Publisher[T]) Skipped() uint64 { return p.skipped.Load() }

// TopicName returns the resolved topic name.
func (p *Publisher[T]) TopicName() string { return p.pub.TopicName() }

// SubscriptionCount returns the number of matched subscriptions.
func (p *Publisher[T]) SubscriptionCount() (int, error) { return p.pub.SubscriptionCount() }

// Unmanaged returns the underlying publisher, which publishes whatever the
// node's state.
func (p *Publisher[T]) Unmanaged() *ros.Publisher[T] { return p.pub }
