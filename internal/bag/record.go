package bag

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/foxglove/rosbridge"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

// Sink takes what a Recorder receives: a Writer (ros2 bag record) or a
// Snapshotter (the flight recorder).
type Sink interface {
	AddTopic(t Topic) error
	Write(topic string, recv, sent time.Time, data []byte) error
}

// RecordOptions selects the topics and services a Recorder records.
//
// Services are recorded as rosbag2 (Jazzy) records them: the topic
// "<service>/_service_event" of type "pkg/srv/X_Event" on which a service
// or client with introspection switched on publishes its events
// (docs/client-library.md). Such a topic is selected by the service
// options only (Services, AllServices, and Regex and Exclude matched
// against the service's name), never by the topic options, and it is
// recorded although its last name token starts with "_".
type RecordOptions struct {
	// Registry knows the types; topics of other types are skipped (logged
	// once per type), since their type information is needed to match.
	Registry *rosidl.Registry
	// Topics are recorded by name (fully qualified).
	Topics []string
	// All records every topic (--all-topics; -a is All and AllServices);
	// Regex records the topics it matches and the services whose name it
	// matches (-e). Topics only: hidden ones are left out unless
	// IncludeHidden.
	All           bool
	Regex         *regexp.Regexp
	Exclude       *regexp.Regexp // --exclude-regex: never record these topics, nor the services of these names
	IncludeHidden bool
	// Services are recorded by their event topic's name
	// (ServiceEventTopic of the fully qualified service name), AllServices
	// records every service whose events are published (--all-services),
	// ExcludeServices leaves out these event topics (--exclude-services).
	Services        []string
	AllServices     bool
	ExcludeServices []string
	// GraphDebounce is the quiet time after a graph change before new
	// topics are subscribed (default 100 ms).
	GraphDebounce time.Duration
	// Depth of each subscription's queue (default 100).
	Depth int
}

// Recorder subscribes to the selected topics as they appear and hands
// every message to its sink.
type Recorder struct {
	node  *ros.Node
	opts  RecordOptions
	sink  Sink
	onMsg func(topic, typ string, recv time.Time, data []byte)

	mu      sync.Mutex
	subs    map[string]*ros.RawSubscription
	types   map[string]string
	unknown map[string]bool
	errs    atomic.Uint64
	count   atomic.Uint64
	lastErr atomic.Value
}

// NewRecorder returns a Recorder of node's graph into sink. onMsg, if not
// nil, also sees every message after the sink (the flight recorder's
// triggers); it runs on the node's callback goroutine.
func NewRecorder(node *ros.Node, sink Sink, opts RecordOptions, onMsg func(topic, typ string, recv time.Time, data []byte)) (*Recorder, error) {
	if opts.Registry == nil {
		return nil, errors.New("bag: RecordOptions.Registry is nil")
	}
	if !opts.All && !opts.AllServices && opts.Regex == nil && len(opts.Topics) == 0 && len(opts.Services) == 0 {
		return nil, errors.New("bag: nothing to record (give topics, services, -a, --all-topics, --all-services or -e)")
	}
	if opts.GraphDebounce <= 0 {
		opts.GraphDebounce = 100 * time.Millisecond
	}
	if opts.Depth <= 0 {
		opts.Depth = 100
	}
	return &Recorder{node: node, opts: opts, sink: sink, onMsg: onMsg,
		subs: map[string]*ros.RawSubscription{}, types: map[string]string{}, unknown: map[string]bool{}}, nil
}

// Run follows the graph until ctx ends: new topics are subscribed, and
// the offered QoS of recorded ones is kept up to date.
func (r *Recorder) Run(ctx context.Context) error {
	rc := r.node.Context()
	for {
		changed := rc.GraphChanged()
		r.refresh()
		select {
		case <-ctx.Done():
			return nil
		case <-rc.Done():
			return nil
		case <-changed:
		}
		t := time.NewTimer(r.opts.GraphDebounce)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// Messages is the number of messages handed to the sink; Errors the
// number the sink refused.
func (r *Recorder) Messages() uint64 { return r.count.Load() }

// Errors is the number of messages the sink refused; LastError the
// newest such error.
func (r *Recorder) Errors() uint64 { return r.errs.Load() }

// Topics returns the names of the subscribed topics, sorted.
func (r *Recorder) Topics() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.subs))
	for t := range r.subs {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// ServiceEventSuffix ends the name of a service's event topic
// (rcl's RCL_SERVICE_INTROSPECTION_TOPIC_POSTFIX).
const ServiceEventSuffix = "/_service_event"

// ServiceEventTopic returns the name of the event topic of a service:
// name with ServiceEventSuffix, unless it ends with it already (rosbag2's
// service_name_to_service_event_topic_name).
func ServiceEventTopic(service string) string {
	if service == "" || (len(service) > len(ServiceEventSuffix) && strings.HasSuffix(service, ServiceEventSuffix)) {
		return service
	}
	return service + ServiceEventSuffix
}

// IsServiceEventTopic reports whether a topic carries a service's
// introspection events, as rosbag2 tells them (is_service_event_topic): its
// name ends with "/_service_event" and its type is "pkg/srv/X_Event".
func IsServiceEventTopic(name, typ string) bool {
	return len(name) > len(ServiceEventSuffix) && strings.HasSuffix(name, ServiceEventSuffix) &&
		len(typ) > len("_Event") && strings.Contains(typ, "/srv/") && strings.HasSuffix(typ, "_Event")
}

// wanted applies the options to a topic of type typ, in the order of
// rosbag2's TopicFilter::take_topic.
func (r *Recorder) wanted(name, typ string) bool {
	if IsServiceEventTopic(name, typ) {
		o := &r.opts
		if !o.AllServices && len(o.Services) == 0 && o.Regex == nil {
			return false
		}
		service := strings.TrimSuffix(name, ServiceEventSuffix)
		if !o.AllServices && !slices.Contains(o.Services, name) && (o.Regex == nil || !o.Regex.MatchString(service)) {
			return false
		}
		if slices.Contains(o.ExcludeServices, name) {
			return false
		}
		return o.Exclude == nil || !o.Exclude.MatchString(service)
	}
	if r.opts.Exclude != nil && r.opts.Exclude.MatchString(name) {
		return false
	}
	if slices.Contains(r.opts.Topics, name) {
		return true
	}
	if !r.opts.IncludeHidden && ros.IsHiddenName(name) {
		return false
	}
	return r.opts.All || (r.opts.Regex != nil && r.opts.Regex.MatchString(name))
}

func (r *Recorder) refresh() {
	rc := r.node.Context()
	log := r.node.Logger()
	for _, nt := range rc.TopicNamesAndTypes() {
		if len(nt.Types) == 0 || !r.wanted(nt.Name, nt.Types[0]) {
			continue
		}
		if len(nt.Types) != 1 {
			r.warnOnce("multi:"+nt.Name, func() { log.Warnf("topic %s has several types %v: not recorded", nt.Name, nt.Types) })
			continue
		}
		pubs := rc.PublishersInfo(nt.Name)
		if len(pubs) == 0 {
			continue // only subscribers: nothing to record yet
		}
		offered := make([]ros.QoS, 0, len(pubs))
		for _, p := range pubs {
			if p.NodeName == r.node.Name() && p.NodeNamespace == r.node.Namespace() {
				continue
			}
			offered = append(offered, p.QoS)
		}
		if len(offered) == 0 {
			continue
		}
		typ := nt.Types[0]
		r.mu.Lock()
		_, have := r.subs[nt.Name]
		r.mu.Unlock()
		ti, err := r.opts.Registry.Message(typ)
		if err != nil || ti.DDSName == "" {
			r.warnOnce("type:"+typ, func() {
				log.Warnf("topic %s has type %s, which this build does not know: not recorded (further topics of this type are skipped silently)", nt.Name, typ)
			})
			continue
		}
		t := Topic{Name: nt.Name, Type: typ, OfferedQoS: offered, TypeHash: ti.Hash, Schema: rosbridge.FullDefinition(r.opts.Registry, ti)}
		if err := r.sink.AddTopic(t); err != nil {
			log.Warnf("record %s: %v", nt.Name, err)
			continue
		}
		if have {
			continue
		}
		if err := r.subscribe(nt.Name, ti, offered); err != nil {
			log.Warnf("record %s: %v", nt.Name, err)
			continue
		}
		log.Infof("Subscribed to topic '%s'", nt.Name)
	}
}

func (r *Recorder) warnOnce(key string, f func()) {
	r.mu.Lock()
	seen := r.unknown[key]
	r.unknown[key] = true
	r.mu.Unlock()
	if !seen {
		f()
	}
}

// MaxSubscriptionDepth bounds the queue of one recorded topic.
const MaxSubscriptionDepth = 10000

// subscriptionDepth is the queue of a recorded topic: at least floor, and
// room for every publisher's history (a transient-local topic such as
// /rosout hands over up to 1000 messages per publisher at once), at most
// MaxSubscriptionDepth.
func subscriptionDepth(offered []ros.QoS, floor int) int {
	sum := 0
	for _, q := range offered {
		if q.History == ros.HistoryKeepAll {
			return MaxSubscriptionDepth
		}
		sum += q.Depth
	}
	return max(floor, min(sum, MaxSubscriptionDepth))
}

// subscribe takes the QoS that matches every recorded publisher, as
// rosbag2 does: reliable and transient local only if all offer it.
func (r *Recorder) subscribe(name string, ti *rosidl.TypeInfo, offered []ros.QoS) error {
	q := PlaybackQoS(offered).KeepLast(subscriptionDepth(offered, r.opts.Depth))
	typ := ti.Name
	s, err := ros.NewRawSubscription(r.node, name, ti, q, func(m ros.RawMessage) {
		sent := m.SourceTimestamp
		if err := r.sink.Write(name, m.ReceivedAt, sent, m.Data); err != nil {
			if r.errs.Add(1) == 1 {
				r.node.Logger().Errorf("record %s: %v (further errors are counted)", name, err)
			}
			r.lastErr.Store(err)
			return
		}
		r.count.Add(1)
		if r.onMsg != nil {
			r.onMsg(name, typ, m.ReceivedAt, m.Data)
		}
	})
	if err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	r.mu.Lock()
	r.subs[name] = s
	r.types[name] = typ
	r.mu.Unlock()
	return nil
}
