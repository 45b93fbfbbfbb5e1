package foxglove

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"
)

// Sink receives the messages of one channel from the backend: the
// receive time in ns and the serialized payload. The server keeps payload
// (sharing it between clients) and never modifies it, so the backend must
// not reuse it. Sink never blocks and may be called from any goroutine.
type Sink func(receiveTime uint64, payload []byte)

// ClientPublisher publishes what one client channel sends.
type ClientPublisher interface {
	// Publish sends one message payload in the channel's encoding.
	Publish(payload []byte) error
	// Close withdraws the publisher.
	Close() error
}

// Backend is the data source behind a Server. Its methods are called from
// client goroutines, concurrently; they must not call back into the
// Server synchronously (Subscribe's stop function included).
type Backend interface {
	// Subscribe starts delivering the messages of ch to sink; it is called
	// for every client subscription of ch (so each gets the latched
	// messages of a transient-local topic), and stop when that client
	// unsubscribes or leaves or ch disappears. sink may be called before
	// Subscribe returns; no sink call may start after stop returns.
	Subscribe(ch Channel, sink Sink) (stop func(), err error)
	// ClientAdvertise creates a publisher for a channel a client
	// advertised (encoding is one of Options.SupportedEncodings).
	ClientAdvertise(ch ClientChannel) (ClientPublisher, error)
	// CallService calls svc with a request payload in encoding and returns
	// the response payload in the same encoding.
	CallService(ctx context.Context, svc Service, encoding string, request []byte) ([]byte, error)
	// GetParameters returns the values of the named parameters, or of all
	// parameters when names is empty. Unknown names are left out.
	GetParameters(ctx context.Context, names []string) ([]Parameter, error)
	// SetParameters sets parameter values (a nil Value unsets).
	SetParameters(ctx context.Context, params []Parameter) error
}

// Options configure a Server. Zero values take the defaults noted.
type Options struct {
	// Name is sent in serverInfo (default "foxglove_bridge").
	Name string
	// Capabilities announced in serverInfo; a client request that needs a
	// capability not listed is answered with an error status.
	Capabilities []string
	// SupportedEncodings for client publishing and service calls.
	SupportedEncodings []string
	// Metadata sent in serverInfo.
	Metadata map[string]string
	// Whitelists of full-match regular expressions (see CompileWhitelist);
	// nil allows everything.
	TopicWhitelist, ServiceWhitelist, ParamWhitelist, ClientTopicWhitelist []*regexp.Regexp
	// SendBufferLimit bounds the messageData bytes waiting for one client
	// (default 10 MB, as foxglove_bridge's send_buffer_limit); beyond it
	// older ones are dropped, the newest of each subscription kept (see
	// sendQueue).
	SendBufferLimit int
	// SendQueueLength bounds the number of messageData frames waiting for
	// one client (default 1024).
	SendQueueLength int
	// ControlQueueLength bounds the JSON messages and service responses
	// waiting for one client (default 4096); a client that falls this far
	// behind is disconnected.
	ControlQueueLength int
	// CallTimeout bounds a service call (default 30 s); ParamTimeout a
	// parameter request (default 5 s).
	CallTimeout, ParamTimeout time.Duration
	// MaxPendingCalls bounds the service calls and parameter requests in
	// flight per client (default 32).
	MaxPendingCalls int
	// Static serves plain HTTP requests (the dashboard page); nil answers
	// them with 404.
	Static http.Handler
	// Logger receives the server's log lines (default: none).
	Logger *zap.SugaredLogger
	// DropLogInterval is the minimum time between two log lines about the
	// drops of one client (default 10 s).
	DropLogInterval time.Duration
	// OnDrop, if set, is called with the number of messageData frames
	// dropped for a slow client (from the publishing goroutine; it must
	// not block).
	OnDrop func(n int)

	// AllowedOrigins are the browser origins (scheme://host[:port],
	// compared case-insensitively) that may open a WebSocket besides the
	// page's own; "*" allows any. Handshakes without an Origin header
	// (not from a browser) are allowed. See originAllowed.
	AllowedOrigins []string
	// OwnHosts are host names that count as this server for the
	// same-origin rule besides loopback names and IP literals (the
	// configured listen address, a name the operator uses).
	OwnHosts []string
	// ClientPublishDenylist and ClientPublishAllowlist (full-match
	// regular expressions): a client may publish on a topic that
	// ClientTopicWhitelist allows and that matches the allowlist or no
	// pattern of the denylist. Nil denylist: no restriction.
	ClientPublishDenylist, ClientPublishAllowlist []*regexp.Regexp
	// ParamSetDenylist and ParamSetAllowlist do the same for the
	// parameters (/node.param) a client may set or unset. While the
	// denylist is not empty, service calls to the parameter services
	// (set_parameters, set_parameters_atomically, load_parameters) are
	// refused too, as they would bypass it.
	ParamSetDenylist, ParamSetAllowlist []*regexp.Regexp
	// MaxClients bounds the clients connected at once (default 16); a
	// handshake beyond it is refused with 503.
	MaxClients int
	// MaxClientChannels bounds the channels one client may advertise
	// (default 64); MaxSubscriptions its subscriptions (default 256).
	MaxClientChannels, MaxSubscriptions int
	// MaxMessageSize bounds a message a client sends, in bytes (default
	// 8 MiB); a larger one closes the connection (status 1009). Reading
	// a message holds at most about twice this much memory.
	MaxMessageSize int64
	// LogInterval is the minimum time between two log lines about one
	// client's errors, or about refused connections (default 10 s).
	LogInterval time.Duration
	// Token, if set, must be given by every WebSocket handshake, as the
	// token query parameter or an Authorization: Bearer header; a wrong
	// or missing one is refused with 401, and an address with 5 failures
	// is refused (429) for a minute. It is checked after the Origin.
	Token string
	// OnCount, if set, is called with a Count* name for every refusal
	// and client error (it must not block).
	OnCount func(counter string)
}

func (o *Options) setDefaults() {
	if o.Name == "" {
		o.Name = "foxglove_bridge"
	}
	if o.SendBufferLimit <= 0 {
		o.SendBufferLimit = 10_000_000
	}
	if o.SendQueueLength <= 0 {
		o.SendQueueLength = 1024
	}
	if o.ControlQueueLength <= 0 {
		o.ControlQueueLength = 4096
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	if o.ParamTimeout <= 0 {
		o.ParamTimeout = 5 * time.Second
	}
	if o.MaxPendingCalls <= 0 {
		o.MaxPendingCalls = 32
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop().Sugar()
	}
	if o.DropLogInterval <= 0 {
		o.DropLogInterval = 10 * time.Second
	}
	if o.MaxClients <= 0 {
		o.MaxClients = 16
	}
	if o.MaxClientChannels <= 0 {
		o.MaxClientChannels = 64
	}
	if o.MaxSubscriptions <= 0 {
		o.MaxSubscriptions = 256
	}
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = 8 << 20
	}
	if o.LogInterval <= 0 {
		o.LogInterval = 10 * time.Second
	}
}

// CompileWhitelist compiles regular expressions that must match a whole
// name (as std::regex_match in foxglove_bridge).
func CompileWhitelist(patterns []string) ([]*regexp.Regexp, error) {
	out := make([]*regexp.Regexp, 0, len(patterns))
	for _, p := range patterns {
		re, err := regexp.Compile("^(?:" + p + ")$")
		if err != nil {
			return nil, fmt.Errorf("whitelist pattern %q: %w", p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

func allowed(list []*regexp.Regexp, name string) bool {
	if list == nil {
		return true
	}
	for _, re := range list {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// Server serves the Foxglove WebSocket protocol on behalf of a Backend,
// and Options.Static for plain HTTP requests on the same port.
type Server struct {
	opts      Options
	backend   Backend
	sessionID string
	caps      map[string]bool
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	dropped   atomic.Uint64

	originRefused, requestsRefused, clientErrors atomic.Uint64
	refusalLog                                   throttle
	refusedOrigins                               map[string]struct{}       // under mu
	tokenFails                                   map[string]*tokenFailures // under mu, by remote address

	mu          sync.Mutex
	closed      bool
	clients     map[*client]struct{}
	connecting  int // clients connected or in their handshake, under mu (at most MaxClients)
	channels    map[uint32]*channelState
	channelIDs  stableIDs[ChannelInfo]
	services    map[uint32]*Service
	serviceIDs  stableIDs[ServiceInfo]
	graph       Graph
	httpServers []*http.Server
}

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

// New returns a Server for backend.
func New(backend Backend, opts Options) *Server {
	opts.setDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		opts:      opts,
		backend:   backend,
		sessionID: strconv.FormatInt(time.Now().UnixNano(), 10),
		caps:      map[string]bool{},
		ctx:       ctx,
		cancel:    cancel,
		clients:   map[*client]struct{}{},
		channels:  map[uint32]*channelState{},
		services:  map[uint32]*Service{},

		refusalLog:     throttle{interval: opts.LogInterval},
		refusedOrigins: map[string]struct{}{},
		tokenFails:     map[string]*tokenFailures{},
	}
	for _, c := range opts.Capabilities {
		s.caps[c] = true
	}
	return s
}

// Serve accepts connections on l until Close; it returns nil after Close.
func (s *Server) Serve(l net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second,
		// The backlog of a slow client stays in its send queue, where
		// older messages can still be dropped, not in the kernel.
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			limitUnsent(c)
			return ctx
		}}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return nil
	}
	s.httpServers = append(s.httpServers, hs)
	s.mu.Unlock()
	err := hs.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close disconnects every client, stops every backend subscription and
// the HTTP servers started by Serve. It waits for the client goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	hss := s.httpServers
	clients := make([]*client, 0, len(s.clients))
	for c := range s.clients {
		clients = append(clients, c)
	}
	s.mu.Unlock()
	s.cancel()
	var err error
	for _, hs := range hss {
		err = errors.Join(err, hs.Close())
	}
	for _, c := range clients {
		c.conn.CloseNow()
	}
	s.wg.Wait()
	s.mu.Lock()
	for _, cs := range s.channels {
		cs.stopAllLocked()
	}
	s.mu.Unlock()
	return err
}

func isWebSocketRequest(r *http.Request) bool {
	for _, v := range r.Header.Values("Upgrade") {
		if strings.EqualFold(strings.TrimSpace(v), "websocket") {
			return true
		}
	}
	return false
}

// negotiateSubprotocol picks the subprotocol of a handshake: the first of
// the client's Sec-WebSocket-Protocol list (its order of preference, RFC
// 6455 section 4.1) that the server speaks, Subprotocol or SubprotocolSDK;
// "" when the client offers neither. Subprotocol names are compared exactly
// (they are case-sensitive tokens).
func negotiateSubprotocol(h http.Header) string {
	for _, line := range h.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(line, ",") {
			switch p = strings.TrimSpace(p); p {
			case Subprotocol, SubprotocolSDK:
				return p
			}
		}
	}
	return ""
}

// ServeHTTP upgrades WebSocket requests to the protocol and hands other
// requests to Options.Static.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !isWebSocketRequest(r) {
		if s.opts.Static != nil {
			s.opts.Static.ServeHTTP(w, r)
		} else {
			http.NotFound(w, r)
		}
		return
	}
	// Unlike foxglove_bridge, the Origin is checked: any web page can
	// make a browser open a WebSocket to a loopback address. Accept's own
	// check (Origin host equal to Host) is skipped, as DNS rebinding
	// passes it. Accept is given the one subprotocol negotiated here, as
	// it would otherwise pick by the server's order rather than the
	// client's.
	if !s.originAllowed(r) {
		s.refuseOrigin(w, r)
		return
	}
	if !s.checkToken(w, r) {
		return
	}
	if !s.reserveClient() {
		s.refuseConn(w, r, http.StatusServiceUnavailable,
			fmt.Sprintf("too many clients (max_clients %d)", s.opts.MaxClients), "too many clients")
		return
	}
	defer s.releaseClient()
	proto := negotiateSubprotocol(r.Header)
	opts := &websocket.AcceptOptions{InsecureSkipVerify: true}
	if proto != "" {
		opts.Subprotocols = []string{proto}
	}
	conn, err := websocket.Accept(w, r, opts)
	if err != nil {
		s.opts.Logger.Warnf("WebSocket handshake with %s failed: %v", r.RemoteAddr, err)
		return
	}
	if proto == "" || conn.Subprotocol() != proto {
		conn.Close(websocket.StatusPolicyViolation, "subprotocol "+SubprotocolSDK+" or "+Subprotocol+" required")
		s.opts.Logger.Warnf("client %s offered neither subprotocol %s nor %s; closed", r.RemoteAddr, SubprotocolSDK, Subprotocol)
		return
	}
	conn.SetReadLimit(s.opts.MaxMessageSize)
	s.wg.Add(1)
	defer s.wg.Done()
	c := s.newClient(conn, r.RemoteAddr)
	if !s.addClient(c) {
		conn.Close(websocket.StatusGoingAway, "server shutting down")
		return
	}
	s.opts.Logger.Infof("client %s connected (subprotocol %s)", c.addr, proto)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.writeLoop()
	}()
	c.readLoop()
	c.cancel()
	<-done
	s.removeClient(c)
	d, _, _, _ := c.q.stats()
	s.opts.Logger.Infof("client %s disconnected (%d messages dropped for it)", c.addr, d)
}

func (s *Server) serverInfo() []byte {
	info := serverInfoMsg{
		Op:           "serverInfo",
		Name:         s.opts.Name,
		Capabilities: append([]string{}, s.opts.Capabilities...),
		Metadata:     s.opts.Metadata,
		SessionID:    s.sessionID,
	}
	if s.caps[CapClientPublish] || s.caps[CapServices] {
		info.SupportedEncodings = s.opts.SupportedEncodings
	}
	return mustJSON(info)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only the types above are marshalled; they cannot fail but for
		// a bug.
		panic(fmt.Sprintf("foxglove: marshal %T: %v", v, err))
	}
	return b
}

// addClient registers c and queues serverInfo and the current channels
// and services, atomically with respect to later changes.
func (s *Server) addClient(c *client) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.clients[c] = struct{}{}
	c.sendText(s.serverInfo())
	chans := make([]Channel, 0, len(s.channels))
	for _, cs := range s.channels {
		chans = append(chans, cs.ch)
	}
	sort.Slice(chans, func(i, j int) bool { return chans[i].ID < chans[j].ID })
	c.sendText(mustJSON(advertiseMsg{Op: "advertise", Channels: chans}))
	if s.caps[CapServices] {
		svcs := make([]Service, 0, len(s.services))
		for _, sv := range s.services {
			svcs = append(svcs, *sv)
		}
		sort.Slice(svcs, func(i, j int) bool { return svcs[i].ID < svcs[j].ID })
		c.sendText(mustJSON(advertiseServicesMsg{Op: "advertiseServices", Services: svcs}))
	}
	return true
}

// removeClient ends c's subscriptions (stopping backend subscriptions
// nobody needs any more) and forgets it.
func (s *Server) removeClient(c *client) {
	s.mu.Lock()
	delete(s.clients, c)
	for subID, chID := range c.subs {
		if cs := s.channels[chID]; cs != nil {
			s.removeSubscriberLocked(cs, c, subID)
		}
	}
	c.subs, c.chanSubs = nil, nil
	s.mu.Unlock()
	c.q.close()
	for id, p := range c.pubs {
		if err := p.Close(); err != nil {
			s.opts.Logger.Warnf("client %s: closing publisher of channel %d: %v", c.addr, id, err)
		}
	}
	c.pubs = nil
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

// broadcastLocked queues a text message for every client (s.mu held).
func (s *Server) broadcastLocked(msg []byte) {
	for c := range s.clients {
		c.sendText(msg)
	}
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

func normalizeIDs(m map[string][]string) map[string][]string {
	out := make(map[string][]string, len(m))
	for k, ids := range m {
		ids = slices.Clone(ids)
		slices.Sort(ids)
		out[k] = slices.Compact(ids)
	}
	return out
}

// SetGraph replaces the connection graph; subscribed clients get what
// changed.
func (s *Server) SetGraph(g Graph) {
	g = Graph{Published: normalizeIDs(g.Published), Subscribed: normalizeIDs(g.Subscribed), Services: normalizeIDs(g.Services)}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.graph
	s.graph = g
	if !s.caps[CapConnectionGraph] {
		return
	}
	upd := graphDiff(old, g)
	if len(upd.PublishedTopics)+len(upd.SubscribedTopics)+len(upd.AdvertisedServices)+
		len(upd.RemovedTopics)+len(upd.RemovedServices) == 0 {
		return
	}
	var msg []byte
	for c := range s.clients {
		if c.graphSub {
			if msg == nil {
				msg = mustJSON(upd)
			}
			c.sendText(msg)
		}
	}
}

// graphDiff lists what changed from old to cur: topics and services whose
// id lists changed or are new, and names that disappeared.
func graphDiff(old, cur Graph) graphUpdateMsg {
	upd := graphUpdateMsg{Op: "connectionGraphUpdate", PublishedTopics: []pubIDs{}, SubscribedTopics: []subIDs{},
		AdvertisedServices: []provIDs{}, RemovedTopics: []string{}, RemovedServices: []string{}}
	for _, name := range sortedKeys(cur.Published) {
		if prev, ok := old.Published[name]; !ok || !slices.Equal(prev, cur.Published[name]) {
			upd.PublishedTopics = append(upd.PublishedTopics, pubIDs{Name: name, PublisherIDs: nonNil(cur.Published[name])})
		}
	}
	for _, name := range sortedKeys(cur.Subscribed) {
		if prev, ok := old.Subscribed[name]; !ok || !slices.Equal(prev, cur.Subscribed[name]) {
			upd.SubscribedTopics = append(upd.SubscribedTopics, subIDs{Name: name, SubscriberIDs: nonNil(cur.Subscribed[name])})
		}
	}
	for _, name := range sortedKeys(cur.Services) {
		if prev, ok := old.Services[name]; !ok || !slices.Equal(prev, cur.Services[name]) {
			upd.AdvertisedServices = append(upd.AdvertisedServices, provIDs{Name: name, ProviderIDs: nonNil(cur.Services[name])})
		}
	}
	// A topic still known on one side but gone from the other gets an
	// empty list there, so the client forgets the stale ids.
	for _, name := range sortedKeys(old.Published) {
		_, pub := cur.Published[name]
		_, sub := cur.Subscribed[name]
		if !pub && sub {
			upd.PublishedTopics = append(upd.PublishedTopics, pubIDs{Name: name, PublisherIDs: []string{}})
		}
	}
	for _, name := range sortedKeys(old.Subscribed) {
		_, pub := cur.Published[name]
		_, sub := cur.Subscribed[name]
		if pub && !sub {
			upd.SubscribedTopics = append(upd.SubscribedTopics, subIDs{Name: name, SubscriberIDs: []string{}})
		}
	}
	gone := map[string]bool{}
	for _, m := range []map[string][]string{old.Published, old.Subscribed} {
		for name := range m {
			_, pub := cur.Published[name]
			_, sub := cur.Subscribed[name]
			if !pub && !sub {
				gone[name] = true
			}
		}
	}
	upd.RemovedTopics = append(upd.RemovedTopics, sortedKeys(gone)...)
	for _, name := range sortedKeys(old.Services) {
		if _, ok := cur.Services[name]; !ok {
			upd.RemovedServices = append(upd.RemovedServices, name)
		}
	}
	return upd
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// UpdateParameters forwards changed parameter values to the clients that
// subscribed to them.
func (s *Server) UpdateParameters(params []Parameter) {
	var ok []Parameter
	for _, p := range params {
		if allowed(s.opts.ParamWhitelist, p.Name) {
			ok = append(ok, p)
		}
	}
	if len(ok) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.clients {
		var mine []Parameter
		for _, p := range ok {
			if _, sub := c.paramSubs[p.Name]; sub {
				mine = append(mine, p)
			}
		}
		if len(mine) > 0 {
			c.sendText(mustJSON(parameterValuesMsg{Op: "parameterValues", Parameters: mine}))
		}
	}
}

// Status sends a status message to every client.
func (s *Server) Status(level int, message string) {
	msg := mustJSON(statusMsg{Op: "status", Level: level, Message: message})
	s.mu.Lock()
	defer s.mu.Unlock()
	s.broadcastLocked(msg)
}

// ClientStats describes one connected client.
type ClientStats struct {
	Addr string
	// Subscriptions is the number of channels the client subscribes to.
	Subscriptions int
	// Sent counts the messages written to the socket, Dropped the
	// messageData frames dropped because the client did not keep up.
	Sent, Dropped, DroppedBytes uint64
	// Queued and QueuedBytes are the messageData frames waiting now.
	Queued, QueuedBytes int
}

// Stats describes the server's clients.
type Stats struct {
	Clients []ClientStats
	// Dropped counts the messageData frames dropped for all clients since
	// the server started (including clients that have left).
	Dropped uint64
	// OriginRefused, RequestsRefused and ClientErrors count since the
	// server started (see the Count* constants).
	OriginRefused, RequestsRefused, ClientErrors uint64
}

// Stats returns the current client statistics.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Dropped: s.dropped.Load(), OriginRefused: s.originRefused.Load(),
		RequestsRefused: s.requestsRefused.Load(), ClientErrors: s.clientErrors.Load()}
	for c := range s.clients {
		d, db, q, qb := c.q.stats()
		st.Clients = append(st.Clients, ClientStats{Addr: c.addr, Subscriptions: len(c.subs), Sent: c.sent.Load(),
			Dropped: d, DroppedBytes: db, Queued: q, QueuedBytes: qb})
	}
	sort.Slice(st.Clients, func(i, j int) bool { return st.Clients[i].Addr < st.Clients[j].Addr })
	return st
}

// deliver queues one message of the channel for subscription subID of c.
func (cs *channelState) deliver(c *client, subID uint32, ts uint64, payload []byte) {
	m := outMsg{hdrLen: MessageDataHeaderLen, payload: payload}
	PutMessageDataHeader(&m.hdr, subID, ts)
	if n := c.q.pushData(m); n > 0 {
		cs.s.noteDrops(c, n)
	}
}

// noteDrops counts drops and logs them at most once per DropLogInterval
// per client.
func (s *Server) noteDrops(c *client, n int) {
	s.dropped.Add(uint64(n))
	if s.opts.OnDrop != nil {
		s.opts.OnDrop(n)
	}
	now := time.Now().UnixNano()
	last := c.lastDropLog.Load()
	if now-last < int64(s.opts.DropLogInterval) || !c.lastDropLog.CompareAndSwap(last, now) {
		return
	}
	d, db, _, _ := c.q.stats()
	s.opts.Logger.Warnf("client %s is not keeping up: %d messages (%d bytes) dropped so far (send_buffer_limit %d bytes)",
		c.addr, d, db, s.opts.SendBufferLimit)
}
