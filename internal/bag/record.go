package bag

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
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

// RecordOptions selects the topics a Recorder records.
type RecordOptions struct {
	// Registry knows the types; topics of other types are skipped (logged
	// once per type), since their type information is needed to match.
	Registry *rosidl.Registry
	// Topics are recorded by name (fully qualified).
	Topics []string
	// All records every topic (-a); Regex records the topics it matches
	// (-e). Both leave out hidden topics unless IncludeHidden.
	All           bool
	Regex         *regexp.Regexp
	Exclude       *regexp.Regexp // --exclude: never record these
	IncludeHidden bool
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
	if !opts.All && opts.Regex == nil && len(opts.Topics) == 0 {
		return nil, errors.New("bag: no topics to record (give topics, -a or -e)")
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

func (r *Recorder) wanted(name string) bool {
	if r.opts.Exclude != nil && r.opts.Exclude.MatchString(name) {
		return false
	}
	for _, t := range r.opts.Topics {
		if t == name {
			return true
		}
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
		if !r.wanted(nt.Name) {
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
