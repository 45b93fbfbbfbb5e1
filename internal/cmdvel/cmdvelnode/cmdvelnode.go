// Package cmdvelnode puts velocity commands on the wire as plain
// geometry_msgs/Twist or as geometry_msgs/TwistStamped, as a node's
// parameter (enable_stamped_cmd_vel, or publish_stamped_twist for
// joy_teleop) selects. Jazzy's diff_drive_controller takes only
// TwistStamped, and Nav2 and teleop_twist_joy can send either; a node and
// its peer that disagree never match, so nothing moves. This package
//
//   - publishes a command stamped with the node clock's now (sim time under
//     use_sim_time) and the node's frame_id, as Nav2 and teleop_twist_joy do;
//   - applies the stamp rules of internal/cmdvel (Stamps) to a received
//     stamped command: zero is now, stale is ignored (counted as
//     commands_stale on /diagnostics), a future stamp counts from now;
//   - watches the graph and warns once when every peer on the topic uses
//     the other type, naming the parameter to set.
//
// The conversion and the rules live in internal/cmdvel, without ROS types.
package cmdvelnode

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// Names of the parameters that select the stamped type, as the ROS 2
// packages that have them name them.
const (
	// ParamStamped is Nav2's and this package's nodes' parameter.
	ParamStamped = "enable_stamped_cmd_vel"
	// ParamPublishStamped is teleop_twist_joy's parameter.
	ParamPublishStamped = "publish_stamped_twist"
)

// The two velocity command types.
const (
	TypeTwist        = "geometry_msgs/msg/Twist"
	TypeTwistStamped = "geometry_msgs/msg/TwistStamped"
)

// CounterStale is the /diagnostics counter of stamped commands ignored as
// stale.
const CounterStale = "commands_stale"

// DefaultFrame is the frame_id a node stamps its commands with unless told
// otherwise: the robot's base frame, as Nav2's controller server stamps them
// (its robot_base_frame, base_link by default).
const DefaultFrame = "base_link"

// typeOf returns the type name for stamped.
func typeOf(stamped bool) string {
	if stamped {
		return TypeTwistStamped
	}
	return TypeTwist
}

// DeclareStamped declares the read-only bool parameter name
// (ParamStamped or ParamPublishStamped), default false; what says which
// topics it switches, for the description.
func DeclareStamped(d *param.Declarer, name, what string) bool {
	return param.Declare(d, name, false, param.ReadOnly(
		what+": geometry_msgs/msg/TwistStamped instead of geometry_msgs/msg/Twist (Jazzy's diff_drive_controller takes "+
			"only TwistStamped)", "the topics are subscribed and advertised at start-up with one type"), nil)
}

// DeclareFrame declares the read-only string parameter name, the frame_id
// of published stamped commands, default def.
func DeclareFrame(d *param.Declarer, name, def string) string {
	return param.Declare(d, name, def, param.ReadOnly(
		"header.frame_id of the stamped velocity commands this node publishes (with "+ParamStamped+")",
		"it is read once at start-up"), nil)
}

// TwistOf converts a geometry_msgs/Twist.
func TwistOf(m *geometry_msgs_msg.Twist) cmdvel.Twist {
	return cmdvel.Twist{Linear: [3]float64{m.Linear.X, m.Linear.Y, m.Linear.Z},
		Angular: [3]float64{m.Angular.X, m.Angular.Y, m.Angular.Z}}
}

// TwistMsg converts to a geometry_msgs/Twist.
func TwistMsg(t cmdvel.Twist) geometry_msgs_msg.Twist {
	return geometry_msgs_msg.Twist{
		Linear:  geometry_msgs_msg.Vector3{X: t.Linear[0], Y: t.Linear[1], Z: t.Linear[2]},
		Angular: geometry_msgs_msg.Vector3{X: t.Angular[0], Y: t.Angular[1], Z: t.Angular[2]}}
}

// StampedMsg returns t stamped now in frame.
func StampedMsg(t cmdvel.Twist, now time.Time, frame string) geometry_msgs_msg.TwistStamped {
	return geometry_msgs_msg.TwistStamped{
		Header: std_msgs_msg.Header{Stamp: builtin_interfaces_msg.TimeOf(now), FrameId: frame},
		Twist:  TwistMsg(t)}
}

// StampOf returns the stamp of m as time; an unset stamp is the Unix epoch
// (cmdvel.IsZeroStamp).
func StampOf(m *geometry_msgs_msg.TwistStamped) time.Time { return m.Header.Stamp.AsTime() }

// Publisher publishes velocity commands as Twist or TwistStamped.
type Publisher struct {
	plain   *ros.Publisher[geometry_msgs_msg.Twist]
	stamped *ros.Publisher[geometry_msgs_msg.TwistStamped]
	frame   string
	now     func() time.Time
	topic   string
	stop    chan struct{}
	once    sync.Once
}

// PublisherOptions configure Advertise.
type PublisherOptions struct {
	// Stamped selects TwistStamped.
	Stamped bool
	// Param is the parameter named in the mismatch warning (default
	// ParamStamped).
	Param string
	// Frame is the header.frame_id of stamped commands.
	Frame string
	// Now is the stamp's clock (default: the node clock).
	Now func() time.Time
	// QoS defaults to ros.QoSDefault.
	QoS *ros.QoS
}

// Advertise creates a publisher of velocity commands on topic.
func Advertise(n *ros.Node, topic string, o PublisherOptions) (*Publisher, error) {
	qos := ros.QoSDefault
	if o.QoS != nil {
		qos = *o.QoS
	}
	if o.Now == nil {
		o.Now = n.Clock().Now
	}
	p := &Publisher{frame: o.Frame, now: o.Now, stop: make(chan struct{})}
	var err error
	if o.Stamped {
		if p.stamped, err = ros.NewPublisher[geometry_msgs_msg.TwistStamped](n, topic, qos); err == nil {
			p.topic = p.stamped.TopicName()
		}
	} else if p.plain, err = ros.NewPublisher[geometry_msgs_msg.Twist](n, topic, qos); err == nil {
		p.topic = p.plain.TopicName()
	}
	if err != nil {
		return nil, err
	}
	watch(n, p.topic, false, o.Stamped, paramOr(o.Param), p.stop)
	return p, nil
}

// Publish sends t (stamped now, in the frame, when stamped).
func (p *Publisher) Publish(t cmdvel.Twist) error {
	if p.stamped != nil {
		m := StampedMsg(t, p.now(), p.frame)
		return p.stamped.Publish(&m)
	}
	m := TwistMsg(t)
	return p.plain.Publish(&m)
}

// TopicName returns the fully qualified topic name.
func (p *Publisher) TopicName() string { return p.topic }

// Stamped reports whether the publisher sends TwistStamped.
func (p *Publisher) Stamped() bool { return p.stamped != nil }

// SubscriptionCount returns the number of matched subscriptions.
func (p *Publisher) SubscriptionCount() (int, error) {
	if p.stamped != nil {
		return p.stamped.SubscriptionCount()
	}
	return p.plain.SubscriptionCount()
}

// Close destroys the publisher and stops its graph watch.
func (p *Publisher) Close() error {
	p.once.Do(func() { close(p.stop) })
	if p.stamped != nil {
		return p.stamped.Close()
	}
	return p.plain.Close()
}

// Command is a received velocity command.
type Command struct {
	Twist cmdvel.Twist
	// At is when the command counts as received for the input's timeout:
	// the node's now for a plain Twist; for a stamped one the stamp, or now
	// for a zero or future stamp (cmdvel.Stamps).
	At time.Time
	// Frame is the sender's header.frame_id ("" for a plain Twist).
	Frame string
}

// SubscriptionOptions configure Subscribe.
type SubscriptionOptions struct {
	// Stamped selects TwistStamped.
	Stamped bool
	// Param is the parameter named in the mismatch warning (default
	// ParamStamped).
	Param string
	// Input names the input in reports (default: the topic).
	Input string
	// Now is the node's clock for the stamp rules (default: the node
	// clock).
	Now func() time.Time
	// Timeout returns the input's command timeout (nil or 0: none):
	// stamped commands older than it are ignored.
	Timeout func() time.Duration
	// QoS defaults to ros.QoSDefault.
	QoS *ros.QoS
}

// Subscription receives velocity commands as Twist or TwistStamped.
type Subscription struct {
	sub    *ros.Subscription
	stamps *cmdvel.Stamps
	stop   chan struct{}
	once   sync.Once
}

// Subscribe calls cb on the node's callback goroutine with every command on
// topic, except stamped ones ignored as stale (logged once per episode and
// counted as commands_stale).
func Subscribe(n *ros.Node, topic string, o SubscriptionOptions, cb func(Command)) (*Subscription, error) {
	qos := ros.QoSDefault
	if o.QoS != nil {
		qos = *o.QoS
	}
	if o.Now == nil {
		o.Now = n.Clock().Now
	}
	if o.Timeout == nil {
		o.Timeout = func() time.Duration { return 0 }
	}
	if o.Input == "" {
		o.Input = topic
	}
	s := &Subscription{stamps: cmdvel.NewStamps(o.Input), stop: make(chan struct{})}
	var err error
	if o.Stamped {
		log, stale := n.Logger(), n.Counter(CounterStale)
		s.sub, err = ros.NewSubscription(n, topic, qos, func(m *geometry_msgs_msg.TwistStamped) {
			r := s.stamps.Check(StampOf(m), o.Now(), o.Timeout())
			if r.Report != nil {
				log.Warnf("%v", r.Report)
			}
			if r.Verdict == cmdvel.StampStale {
				stale.Inc()
				return
			}
			cb(Command{Twist: TwistOf(&m.Twist), At: r.At, Frame: m.Header.FrameId})
		})
	} else {
		s.sub, err = ros.NewSubscription(n, topic, qos, func(m *geometry_msgs_msg.Twist) {
			cb(Command{Twist: TwistOf(m), At: o.Now()})
		})
	}
	if err != nil {
		return nil, err
	}
	watch(n, s.sub.TopicName(), true, o.Stamped, paramOr(o.Param), s.stop)
	return s, nil
}

// Stale returns how many stamped commands were ignored as stale.
func (s *Subscription) Stale() uint64 { return s.stamps.Stale() }

// TopicName returns the fully qualified topic name.
func (s *Subscription) TopicName() string { return s.sub.TopicName() }

// PublisherCount returns the number of matched publishers.
func (s *Subscription) PublisherCount() (int, error) { return s.sub.PublisherCount() }

// Close destroys the subscription and stops its graph watch.
func (s *Subscription) Close() error {
	s.once.Do(func() { close(s.stop) })
	return s.sub.Close()
}

func paramOr(p string) string {
	if p == "" {
		return ParamStamped
	}
	return p
}

// Mismatch returns the warning for an endpoint of this node on topic (a
// subscription if sub, else a publisher) of the type stamped selects, given
// the peers on the other side: when there are peers, none has our type and
// at least one has the other velocity type, nothing passes between them.
// ok is false when there is nothing to say.
//
// unnamed says that some of those peers have no node name yet: the graph
// learns an endpoint's node from its participant's ros_discovery_info,
// which may come later than the endpoint (or never, for a plain DDS peer).
func Mismatch(topic string, sub, stamped bool, paramName string, peers []ros.EndpointInfo) (warning string, ok, unnamed bool) {
	ours, other := typeOf(stamped), typeOf(!stamped)
	var names []string
	for _, p := range peers {
		switch p.TopicType {
		case ours:
			return "", false, false
		case other:
			if p.NodeName == unknownNode {
				unnamed = true
				names = append(names, "one without a ROS node name")
				continue
			}
			names = append(names, ros.FullyQualifiedNodeName(p.NodeNamespace, p.NodeName))
		}
	}
	if len(names) == 0 {
		return "", false, false
	}
	sort.Strings(names)
	names = dedupe(names)
	if sub {
		return fmt.Sprintf("%s: this node subscribes %s (%s is %v) but its publishers (%s) send %s: none of their commands "+
			"arrive. Set %s:=%v on this node, or make them publish %s", topic, ours, paramName, stamped,
			strings.Join(names, ", "), other, paramName, !stamped, ours), true, unnamed
	}
	return fmt.Sprintf("%s: this node publishes %s (%s is %v) but its subscribers (%s) take %s: none of its commands "+
		"arrive. Set %s:=%v on this node, or make them subscribe %s", topic, ours, paramName, stamped,
		strings.Join(names, ", "), other, paramName, !stamped, ours), true, unnamed
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// nameWait is how long a mismatch with peers whose node is not known yet
// waits for their names before it is reported without them.
const nameWait = 2 * time.Second

// unknownNode is the node name EndpointInfo gives an endpoint no
// ros_discovery_info names.
const unknownNode = "_NODE_NAME_UNKNOWN_"

// watch warns once when the peers of an endpoint on topic all use the other
// velocity type; it checks at every graph change until it has warned, stop
// is closed or the node shuts down.
func watch(n *ros.Node, topic string, sub, stamped bool, paramName string, stop <-chan struct{}) {
	c := n.Context()
	peers := c.PublishersInfo
	if !sub {
		peers = c.SubscriptionsInfo
	}
	c.Go(func(ctx context.Context) error {
		var unnamedSince time.Time // a mismatch with unnamed peers was first seen
		for {
			changed := c.GraphChanged()
			var wait <-chan time.Time
			w, ok, unnamed := Mismatch(topic, sub, stamped, paramName, peers(topic))
			switch {
			case ok && unnamed && unnamedSince.IsZero():
				unnamedSince = time.Now()
				fallthrough
			case ok && unnamed && time.Since(unnamedSince) < nameWait:
				// Give the peers' node names time to arrive.
				wait = time.After(nameWait - time.Since(unnamedSince))
			case ok:
				n.Logger().Warnf("%s", w)
				return nil
			default:
				unnamedSince = time.Time{}
			}
			select {
			case <-ctx.Done():
				return nil
			case <-stop:
				return nil
			case <-changed:
			case <-wait:
			}
		}
	})
}
