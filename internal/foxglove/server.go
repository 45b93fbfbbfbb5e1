package foxglove

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
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
	clientsLost, staleDiscarded                  atomic.Uint64
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

// ConnContext prepares a client's TCP connection for the server: the
// kernel holds little unsent data (TCP_NOTSENT_LOWAT), and the client's
// supervision (Options.ClientTimeout) can see what it acknowledged. Serve
// uses it; an http.Server of the caller's that serves the Server as a
// handler should set it as its ConnContext.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	limitUnsent(c)
	if probe := ackProbe(c); probe != nil {
		ctx = context.WithValue(ctx, ackProbeKey{}, probe)
	}
	return ctx
}

// Serve accepts connections on l until Close; it returns nil after Close.
func (s *Server) Serve(l net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second,
		// The backlog of a slow client stays in its send queue, where
		// older messages can still be dropped, not in the kernel.
		ConnContext: ConnContext}
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
	// c is set (in this goroutine) before its readLoop reads anything;
	// a pong read while an early refusal closes the connection is ignored.
	var c *client
	opts := &websocket.AcceptOptions{InsecureSkipVerify: true, OnPongReceived: func(_ context.Context, payload []byte) {
		if c != nil {
			c.pong(payload)
		}
	}}
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
	c = s.newClient(conn, r.RemoteAddr)
	c.live.acked, _ = r.Context().Value(ackProbeKey{}).(func() (uint64, bool))
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
	if s.opts.ClientTimeout > 0 {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			c.supervise()
		}()
	}
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

// broadcastLocked queues a text message for every client (s.mu held).
func (s *Server) broadcastLocked(msg []byte) {
	for c := range s.clients {
		c.sendText(msg)
	}
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
