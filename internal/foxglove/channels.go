package foxglove

import (
	"regexp"
	"slices"
	"sort"
	"sync/atomic"
)

// channelState is an advertised channel and its subscribers. subs is
// replaced (never modified) under Server.mu.
type channelState struct {
	s    *Server
	ch   Channel
	subs atomic.Pointer[[]subscriber]
}

// subscriber is one client's subscription of a channel with its own
// backend subscription.
type subscriber struct {
	c    *client
	id   uint32
	stop func() // ends the backend subscription
}

// stopAllLocked ends every subscription of the channel (s.mu held).
func (cs *channelState) stopAllLocked() {
	if subs := cs.subs.Swap(nil); subs != nil {
		for _, sb := range *subs {
			sb.stop()
		}
	}
}

func (s *Server) removeSubscriberLocked(cs *channelState, c *client, subID uint32) {
	old := cs.subs.Load()
	if old == nil {
		return
	}
	next := make([]subscriber, 0, len(*old))
	for _, sb := range *old {
		if sb.c == c && sb.id == subID {
			sb.stop()
		} else {
			next = append(next, sb)
		}
	}
	if len(next) == 0 {
		cs.subs.Store(nil)
		return
	}
	cs.subs.Store(&next)
}

// stableIDs hands out the ids of channels or services: a key keeps its id
// while the server lives, and gets it back when it reappears.
type stableIDs[K comparable] struct {
	ids  map[K]uint32
	last uint32
}

func (t *stableIDs[K]) of(k K) uint32 {
	if id, ok := t.ids[k]; ok {
		return id
	}
	if t.ids == nil {
		t.ids = map[K]uint32{}
	}
	t.last++
	t.ids[k] = t.last
	return t.last
}

// allowedSet returns the infos whose name the whitelist allows.
func allowedSet[K comparable](infos []K, whitelist []*regexp.Regexp, name func(K) string) map[K]bool {
	want := map[K]bool{}
	for _, in := range infos {
		if allowed(whitelist, name(in)) {
			want[in] = true
		}
	}
	return want
}

// SetChannels replaces the set of channels: new ones are advertised,
// missing ones unadvertised (ending their subscriptions). A channel keeps
// its id as long as topic, encoding and schema stay the same, and gets it
// back when it reappears. Topics outside the topic whitelist are left out.
func (s *Server) SetChannels(infos []ChannelInfo) {
	want := allowedSet(infos, s.opts.TopicWhitelist, func(in ChannelInfo) string { return in.Topic })
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	var removed []uint32
	for id, cs := range s.channels {
		if want[cs.ch.ChannelInfo] {
			delete(want, cs.ch.ChannelInfo)
			continue
		}
		removed = append(removed, id)
		if subs := cs.subs.Load(); subs != nil {
			for _, sb := range *subs {
				delete(sb.c.subs, sb.id)
				delete(sb.c.chanSubs, id)
			}
		}
		cs.stopAllLocked()
		delete(s.channels, id)
	}
	var added []Channel
	for in := range want {
		ch := Channel{ID: s.channelIDs.of(in), ChannelInfo: in}
		s.channels[ch.ID] = &channelState{s: s, ch: ch}
		added = append(added, ch)
	}
	if len(removed) > 0 {
		slices.Sort(removed)
		s.broadcastLocked(mustJSON(unadvertiseMsg{Op: "unadvertise", ChannelIDs: removed}))
	}
	if len(added) > 0 {
		sort.Slice(added, func(i, j int) bool { return added[i].ID < added[j].ID })
		s.broadcastLocked(mustJSON(advertiseMsg{Op: "advertise", Channels: added}))
	}
}

// Channels returns the advertised channels sorted by id.
func (s *Server) Channels() []Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Channel, 0, len(s.channels))
	for _, cs := range s.channels {
		out = append(out, cs.ch)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// SetServices replaces the set of services, as SetChannels does for
// channels. Services outside the service whitelist are left out.
func (s *Server) SetServices(infos []ServiceInfo) {
	want := allowedSet(infos, s.opts.ServiceWhitelist, func(in ServiceInfo) string { return in.Name })
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	var removed []uint32
	for id, sv := range s.services {
		if want[sv.ServiceInfo] {
			delete(want, sv.ServiceInfo)
			continue
		}
		removed = append(removed, id)
		delete(s.services, id)
	}
	var added []Service
	for in := range want {
		id := s.serviceIDs.of(in)
		sv := &Service{ID: id, ServiceInfo: in, RequestSchema: in.Request.Schema, ResponseSchema: in.Response.Schema}
		s.services[id] = sv
		added = append(added, *sv)
	}
	if !s.caps[CapServices] {
		return
	}
	if len(removed) > 0 {
		slices.Sort(removed)
		s.broadcastLocked(mustJSON(unadvertiseServicesMsg{Op: "unadvertiseServices", ServiceIDs: removed}))
	}
	if len(added) > 0 {
		sort.Slice(added, func(i, j int) bool { return added[i].ID < added[j].ID })
		s.broadcastLocked(mustJSON(advertiseServicesMsg{Op: "advertiseServices", Services: added}))
	}
}

// Services returns the advertised services sorted by id.
func (s *Server) Services() []Service {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Service, 0, len(s.services))
	for _, sv := range s.services {
		out = append(out, *sv)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// deliver queues one message of the channel for subscription subID of c.
func (cs *channelState) deliver(c *client, subID uint32, ts uint64, payload []byte) {
	m := outMsg{hdrLen: MessageDataHeaderLen, payload: payload}
	PutMessageDataHeader(&m.hdr, subID, ts)
	if n := c.q.pushData(m); n > 0 {
		cs.s.noteDrops(c, n)
	}
}
