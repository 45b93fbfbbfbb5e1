package bag

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	rosgraph_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rosgraph_msgs/msg"
)

// PlayOptions configures Play.
type PlayOptions struct {
	// Registry resolves types; a type it does not know is still played,
	// with the DDS name derived from its ROS name and the recorded hash.
	Registry *rosidl.Registry
	// Rate scales the playback speed (default 1).
	Rate float64
	// Loop plays the bag again and again until ctx ends.
	Loop bool
	// ClockHz, when > 0, publishes /clock (rosgraph_msgs/Clock) at this
	// rate with the bag's time, for nodes with use_sim_time.
	ClockHz float64
	// Topics limits playback to these topics (all when empty); Services
	// limits the services (their event topics, ServiceEventTopic) and
	// ExcludeServices leaves some out. As in ros2 bag play (Jazzy), the
	// topic list does not limit the services nor the service lists the
	// topics: --topics /a plays /a and every recorded service.
	Topics          []string
	Services        []string
	ExcludeServices []string
	// Remap renames topics: recorded name -> published name.
	Remap map[string]string
	// Delay waits this long after creating the publishers, so that
	// subscribers match before the first message (ros2 bag play --delay).
	Delay time.Duration
	// Progress, if not nil, is called after each message.
	Progress func(topic string, at time.Time)
}

// PlayStats reports what Play did.
type PlayStats struct {
	Published uint64
	Loops     int
}

// Play publishes a bag's messages with their recorded timing (scaled by
// Rate) until the end (or, with Loop, until ctx ends).
func Play(ctx context.Context, node *ros.Node, b *Bag, opts PlayOptions) (PlayStats, error) {
	var st PlayStats
	if opts.Rate == 0 {
		opts.Rate = 1
	}
	if opts.Rate < 0 {
		return st, fmt.Errorf("bag: rate %g is negative", opts.Rate)
	}
	only, onlySvc, notSvc := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, t := range opts.Topics {
		only[t] = true
	}
	for _, t := range opts.Services {
		onlySvc[t] = true
	}
	for _, t := range opts.ExcludeServices {
		notSvc[t] = true
	}
	for t := range only {
		if _, ok := b.Topic(t); !ok {
			return st, fmt.Errorf("bag: topic %s is not in the bag", t)
		}
	}
	for t := range onlySvc {
		if _, ok := b.Topic(t); !ok {
			return st, fmt.Errorf("bag: service %s is not in the bag", strings.TrimSuffix(t, ServiceEventSuffix))
		}
	}
	// played: rosbag2's allow_topic (Jazzy) without its regexes
	played := func(t TopicInfo) bool {
		if IsServiceEventTopic(t.Name, t.Type) {
			return !notSvc[t.Name] && (len(onlySvc) == 0 || onlySvc[t.Name])
		}
		return len(only) == 0 || only[t.Name]
	}
	pubs := map[string]*ros.RawPublisher{}
	defer func() {
		for _, p := range pubs {
			p.Close()
		}
	}()
	var selected []string
	for _, t := range b.Metadata.Topics {
		if !played(t) {
			continue
		}
		ti := playbackType(opts.Registry, t.Topic)
		if ti == nil {
			node.Logger().Warnf("topic %s has type %s, which is not a ROS message type name: not played", t.Name, t.Type)
			continue
		}
		name := t.Name
		if to, ok := opts.Remap[name]; ok {
			name = to
		}
		p, err := ros.NewRawPublisher(node, name, ti, PlaybackQoS(t.OfferedQoS))
		if err != nil {
			return st, fmt.Errorf("bag: publisher for %s: %w", t.Name, err)
		}
		pubs[t.Name] = p
		selected = append(selected, t.Name)
	}
	if len(selected) == 0 {
		return st, errors.New("bag: no topic to play")
	}
	var clockPub *ros.Publisher[rosgraph_msgs_msg.Clock]
	if opts.ClockHz > 0 {
		var err error
		clockPub, err = ros.NewPublisher[rosgraph_msgs_msg.Clock](node, "/clock", ros.QoSClock)
		if err != nil {
			return st, fmt.Errorf("bag: /clock publisher: %w", err)
		}
		defer clockPub.Close()
	}
	if opts.Delay > 0 {
		select {
		case <-ctx.Done():
			return st, nil
		case <-time.After(opts.Delay):
		}
	}
	for {
		if err := playOnce(ctx, b, selected, pubs, clockPub, opts, &st); err != nil {
			if errors.Is(err, context.Canceled) {
				return st, nil
			}
			return st, err
		}
		st.Loops++
		if !opts.Loop || ctx.Err() != nil {
			return st, nil
		}
	}
}

// playbackType is the registry's type, or one made from the type's name
// and its recorded hash (enough to match: DDS uses only the names).
func playbackType(reg *rosidl.Registry, t Topic) *rosidl.TypeInfo {
	if reg != nil {
		if ti, err := reg.Message(t.Type); err == nil && ti.DDSName != "" {
			return ti
		}
	}
	parts := strings.Split(t.Type, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return nil
	}
	return &rosidl.TypeInfo{Name: t.Type, DDSName: parts[0] + "::" + parts[1] + "::dds_::" + parts[2] + "_", Hash: t.TypeHash}
}

func stamp(t time.Time) builtin_interfaces_msg.Time {
	ns := t.UnixNano()
	return builtin_interfaces_msg.Time{Sec: int32(ns / 1e9), Nanosec: uint32(ns % 1e9)}
}

// playOnce plays the bag once: message i goes out at the wall time
// start + (its log time - the bag's start) / rate.
func playOnce(ctx context.Context, b *Bag, topics []string, pubs map[string]*ros.RawPublisher, clockPub *ros.Publisher[rosgraph_msgs_msg.Clock], opts PlayOptions, st *PlayStats) error {
	bagStart := b.Metadata.Start
	wallStart := time.Now()
	bagNow := func() time.Time {
		return bagStart.Add(time.Duration(float64(time.Since(wallStart)) * opts.Rate))
	}
	stopClock := make(chan struct{})
	clockDone := make(chan struct{})
	if clockPub != nil {
		period := time.Duration(float64(time.Second) / opts.ClockHz)
		_ = clockPub.Publish(&rosgraph_msgs_msg.Clock{Clock: stamp(bagStart)})
		go func() {
			defer close(clockDone)
			t := time.NewTicker(period)
			defer t.Stop()
			for {
				select {
				case <-stopClock:
					return
				case <-ctx.Done():
					return
				case <-t.C:
					_ = clockPub.Publish(&rosgraph_msgs_msg.Clock{Clock: stamp(bagNow())})
				}
			}
		}()
	} else {
		close(clockDone)
	}
	defer func() { close(stopClock); <-clockDone }()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	return b.Messages(topics, func(m *Message) error {
		at := wallStart.Add(time.Duration(float64(m.LogTime.Sub(bagStart)) / opts.Rate))
		if d := time.Until(at); d > 0 {
			timer.Reset(d)
			select {
			case <-ctx.Done():
				timer.Stop()
				return ctx.Err()
			case <-timer.C:
			}
		} else if ctx.Err() != nil {
			return ctx.Err()
		}
		p := pubs[m.Topic]
		if p == nil {
			return nil
		}
		if err := p.Publish(m.Data); err != nil {
			if errors.Is(err, ros.ErrClosed) {
				return context.Canceled
			}
			return fmt.Errorf("bag: play %s: %w", m.Topic, err)
		}
		st.Published++
		if opts.Progress != nil {
			opts.Progress(m.Topic, m.LogTime)
		}
		return nil
	})
}
