package foxglove

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// client is one WebSocket connection. subs, chanSubs, paramSubs and
// graphSub belong to Server.mu; pubs and pubErrs to the read goroutine.
type client struct {
	s      *Server
	conn   *websocket.Conn
	addr   string
	q      *sendQueue
	ctx    context.Context
	cancel context.CancelFunc
	calls  chan struct{} // semaphore of pending calls

	subs      map[uint32]uint32 // subscription id -> channel id
	chanSubs  map[uint32]uint32 // channel id -> subscription id
	paramSubs map[string]struct{}
	graphSub  bool

	pubs    map[uint32]ClientPublisher
	pubErrs map[uint32]uint64

	sent        atomic.Uint64
	lastDropLog atomic.Int64
	errLog      throttle

	sess *Session
	live liveness
}

func (s *Server) newClient(conn *websocket.Conn, addr string) *client {
	ctx, cancel := context.WithCancel(s.ctx)
	c := &client{
		s:         s,
		conn:      conn,
		addr:      addr,
		q:         newSendQueue(s.opts.SendQueueLength, s.opts.SendBufferLimit, s.opts.ControlQueueLength),
		ctx:       ctx,
		cancel:    cancel,
		calls:     make(chan struct{}, s.opts.MaxPendingCalls),
		subs:      map[uint32]uint32{},
		chanSubs:  map[uint32]uint32{},
		paramSubs: map[string]struct{}{},
		pubs:      map[uint32]ClientPublisher{},
		pubErrs:   map[uint32]uint64{},
		errLog:    throttle{interval: s.opts.LogInterval},
		sess:      newSession(addr, ctx.Done()),
	}
	c.heard()
	return c
}

// sendText queues a JSON message; msg may be shared between clients.
func (c *client) sendText(msg []byte) {
	if err := c.q.pushControl(outMsg{text: msg}); errors.Is(err, errQueueOverflow) {
		c.s.opts.Logger.Warnf("client %s: %d control messages waiting; disconnecting it", c.addr, c.s.opts.ControlQueueLength)
		c.cancel()
	}
}

func (c *client) sendBinary(frame []byte) {
	if err := c.q.pushControl(outMsg{binary: frame}); errors.Is(err, errQueueOverflow) {
		c.s.opts.Logger.Warnf("client %s: %d control messages waiting; disconnecting it", c.addr, c.s.opts.ControlQueueLength)
		c.cancel()
	}
}

// status sends the client a status message. Warnings and errors are
// counted (client_errors) and logged at most once per LogInterval per
// client, so a client sending garbage cannot flood the log and /rosout.
func (c *client) status(level int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if level >= StatusWarning {
		c.s.clientErrors.Add(1)
		c.s.count(CountClientError)
		c.logThrottled(msg)
	}
	c.sendText(mustJSON(statusMsg{Op: "status", Level: level, Message: msg}))
}

// refuse answers a request refused by policy with an error status,
// counted as client_requests_refused and logged as status does.
func (c *client) refuse(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.s.requestsRefused.Add(1)
	c.s.count(CountRequestRefused)
	c.logThrottled("refused: " + msg)
	c.sendText(mustJSON(statusMsg{Op: "status", Level: StatusError, Message: msg}))
}

func (c *client) logThrottled(msg string) {
	if ok, held := c.errLog.allow(time.Now()); ok {
		if held > 0 {
			c.s.opts.Logger.Warnf("client %s: %s (%d more errors and refusals of this client not logged since the last line)", c.addr, msg, held)
		} else {
			c.s.opts.Logger.Warnf("client %s: %s", c.addr, msg)
		}
	}
}

// writeLoop sends queued messages until the client goes away. A stalled
// client blocks only this goroutine.
func (c *client) writeLoop() {
	defer c.conn.CloseNow()
	var buf []byte
	for {
		m, ok := c.q.pop(c.ctx)
		if !ok {
			return
		}
		var err error
		switch {
		case m.text != nil:
			err = c.conn.Write(c.ctx, websocket.MessageText, m.text)
		case m.binary != nil:
			err = c.conn.Write(c.ctx, websocket.MessageBinary, m.binary)
		default:
			buf = append(append(buf[:0], m.hdr[:m.hdrLen]...), m.payload...)
			err = c.conn.Write(c.ctx, websocket.MessageBinary, buf)
			if cap(buf) > 16<<20 {
				buf = nil // do not keep an exceptional buffer for good
			}
		}
		if err != nil {
			c.cancel()
			return
		}
		c.sent.Add(1)
	}
}

// readLoop handles the client's messages until the connection ends.
func (c *client) readLoop() {
	for {
		typ, data, err := c.conn.Read(c.ctx)
		if err != nil {
			if errors.Is(err, websocket.ErrMessageTooBig) {
				c.s.requestsRefused.Add(1)
				c.s.count(CountRequestRefused)
				c.s.opts.Logger.Warnf("client %s sent a message larger than %d bytes; closed", c.addr, c.s.opts.MaxMessageSize)
			}
			return
		}
		c.heard()
		if typ == websocket.MessageText {
			c.handleText(data)
		} else {
			c.handleBinary(data)
		}
	}
}

func (c *client) need(capability, what string) bool {
	if c.s.caps[capability] {
		return true
	}
	c.status(StatusError, "%s requires the %q capability, which this server does not offer", what, capability)
	return false
}

func (c *client) handleText(data []byte) {
	msg, err := ParseClientText(data)
	if err != nil {
		var unknown *UnknownOpError
		if errors.As(err, &unknown) {
			c.status(StatusWarning, "%v", err)
		} else {
			c.status(StatusError, "%v", err)
		}
		return
	}
	switch m := msg.(type) {
	case *SubscribeMsg:
		c.subscribe(m)
	case *UnsubscribeMsg:
		c.unsubscribe(m)
	case *ClientAdvertiseMsg:
		if c.need(CapClientPublish, "advertise") {
			c.clientAdvertise(m)
		}
	case *ClientUnadvertiseMsg:
		if c.need(CapClientPublish, "unadvertise") {
			c.clientUnadvertise(m)
		}
	case *GetParametersMsg:
		if c.need(CapParameters, "getParameters") {
			c.getParameters(m)
		}
	case *SetParametersMsg:
		if c.need(CapParameters, "setParameters") {
			c.setParameters(m)
		}
	case *SubscribeParameterUpdatesMsg:
		if c.need(CapParametersSubscribe, "subscribeParameterUpdates") {
			c.subscribeParams(m)
		}
	case *UnsubscribeParameterUpdatesMsg:
		if c.need(CapParametersSubscribe, "unsubscribeParameterUpdates") {
			c.unsubscribeParams(m)
		}
	case *SubscribeGraphMsg:
		if c.need(CapConnectionGraph, "subscribeConnectionGraph") {
			c.subscribeGraph()
		}
	case *UnsubscribeGraphMsg:
		if c.need(CapConnectionGraph, "unsubscribeConnectionGraph") {
			c.s.mu.Lock()
			c.graphSub = false
			c.s.mu.Unlock()
		}
	}
}

func (c *client) handleBinary(data []byte) {
	msg, err := ParseClientBinary(data)
	if err != nil {
		var unknown *UnknownOpError
		if errors.As(err, &unknown) {
			c.status(StatusWarning, "%v", err)
		} else {
			c.status(StatusError, "%v", err)
		}
		return
	}
	switch m := msg.(type) {
	case *ClientMessageData:
		if c.need(CapClientPublish, "client message data") {
			c.publish(m)
		}
	case *ServiceCallRequest:
		if c.s.caps[CapServices] {
			c.callService(m)
		} else {
			c.callFailure(m.ServiceID, m.CallID, "this server does not offer the \"services\" capability")
		}
	}
}

func (c *client) subscribe(m *SubscribeMsg) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sub := range m.Subscriptions {
		if _, dup := c.subs[sub.ID]; dup {
			c.status(StatusError, "client subscription id %d was already used; ignoring subscription", sub.ID)
			continue
		}
		cs := s.channels[sub.ChannelID]
		if cs == nil {
			c.status(StatusWarning, "channel %d is not available; ignoring subscription", sub.ChannelID)
			continue
		}
		if prev, dup := c.chanSubs[sub.ChannelID]; dup {
			c.status(StatusError, "client is already subscribed to channel %d (subscription %d); ignoring subscription", sub.ChannelID, prev)
			continue
		}
		if len(c.subs) >= s.opts.MaxSubscriptions {
			c.refuse("a client may have %d subscriptions; subscription %d (channel %d) and the rest of this request refused",
				s.opts.MaxSubscriptions, sub.ID, sub.ChannelID)
			return
		}
		// Every subscription gets a backend subscription of its own, as
		// foxglove_bridge gives every client its own ROS subscription: on
		// a transient-local topic each one then delivers the latched
		// messages, to a client that comes after others too. The sink
		// may be called before Subscribe returns.
		id := sub.ID
		stop, err := s.backend.Subscribe(cs.ch, func(ts uint64, payload []byte) { cs.deliver(c, id, ts, payload) })
		if err != nil {
			c.status(StatusError, "subscribing to %s: %v", cs.ch.Topic, err)
			continue
		}
		old := cs.subs.Load()
		var next []subscriber
		if old != nil {
			next = slices.Clone(*old)
		}
		next = append(next, subscriber{c: c, id: id, stop: stop})
		cs.subs.Store(&next)
		c.subs[sub.ID] = sub.ChannelID
		c.chanSubs[sub.ChannelID] = sub.ID
	}
}

func (c *client) unsubscribe(m *UnsubscribeMsg) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range m.SubscriptionIDs {
		chID, ok := c.subs[id]
		if !ok {
			c.status(StatusWarning, "client subscription id %d did not exist; ignoring unsubscription", id)
			continue
		}
		delete(c.subs, id)
		delete(c.chanSubs, chID)
		if cs := s.channels[chID]; cs != nil {
			s.removeSubscriberLocked(cs, c, id)
		}
	}
}

func (c *client) supportsEncoding(enc string) bool {
	return slices.Contains(c.s.opts.SupportedEncodings, enc)
}

func (c *client) clientAdvertise(m *ClientAdvertiseMsg) {
	for i, ch := range m.Channels {
		if c.ctx.Err() != nil {
			return // the client left: create no more publishers for it
		}
		if len(c.pubs) >= c.s.opts.MaxClientChannels {
			c.refuse("a client may advertise %d channels; %d channels of this advertisement refused, from channel %d (%s)",
				c.s.opts.MaxClientChannels, len(m.Channels)-i, ch.ID, ch.Topic)
			return
		}
		if _, dup := c.pubs[ch.ID]; dup {
			c.status(StatusError, "client channel %d is already advertised; ignoring advertisement", ch.ID)
			continue
		}
		if !c.supportsEncoding(ch.Encoding) {
			c.status(StatusError, "channel %d (%s): encoding %q is not supported (supported: %v)", ch.ID, ch.Topic, ch.Encoding, c.s.opts.SupportedEncodings)
			continue
		}
		if !allowed(c.s.opts.ClientTopicWhitelist, ch.Topic) {
			c.status(StatusError, "channel %d: topic %s is not in client_topic_whitelist; ignoring advertisement", ch.ID, ch.Topic)
			continue
		}
		if !permitted(c.s.opts.ClientPublishDenylist, c.s.opts.ClientPublishAllowlist, ch.Topic) {
			c.refuse("channel %d: publishing on %s is refused by client_publish_denylist (a robot's velocity output, past its mux and e-stop; "+
				"publish on a mux input such as teleoperation/cmd_vel, or list the topic in client_publish_allowlist)", ch.ID, ch.Topic)
			continue
		}
		pub, err := c.s.backend.ClientAdvertise(ch)
		if err != nil {
			c.status(StatusError, "channel %d (%s): %v", ch.ID, ch.Topic, err)
			continue
		}
		c.pubs[ch.ID] = pub
		delete(c.pubErrs, ch.ID)
	}
}

func (c *client) clientUnadvertise(m *ClientUnadvertiseMsg) {
	for _, id := range m.ChannelIDs {
		pub, ok := c.pubs[id]
		if !ok {
			c.status(StatusWarning, "client channel %d was not advertised; ignoring unadvertisement", id)
			continue
		}
		delete(c.pubs, id)
		if err := pub.Close(); err != nil {
			c.status(StatusWarning, "closing the publisher of channel %d: %v", id, err)
		}
	}
}

// publish forwards client message data. Errors are reported for the
// first failure of a channel and then only counted, so a client sending
// garbage at 1 kHz cannot flood its own control lane.
func (c *client) publish(m *ClientMessageData) {
	if c.discardIfLost() {
		return // sent while its link was down: stale (see liveness.go)
	}
	pub, ok := c.pubs[m.ChannelID]
	if !ok {
		c.pubErrs[m.ChannelID]++
		if c.pubErrs[m.ChannelID] == 1 {
			c.status(StatusError, "client channel %d was not advertised; dropping its messages", m.ChannelID)
		}
		return
	}
	if err := pub.Publish(m.Payload); err != nil {
		c.pubErrs[m.ChannelID]++
		if n := c.pubErrs[m.ChannelID]; n == 1 || n%1000 == 0 {
			c.status(StatusError, "channel %d: message dropped (%d so far): %v", m.ChannelID, n, err)
		}
	}
}

// startCall runs f in a goroutine if fewer than MaxPendingCalls are in
// flight for this client.
func (c *client) startCall(f func()) bool {
	select {
	case c.calls <- struct{}{}:
	default:
		return false
	}
	c.s.wg.Add(1)
	go func() {
		defer c.s.wg.Done()
		defer func() { <-c.calls }()
		f()
	}()
	return true
}

func (c *client) callFailure(serviceID, callID uint32, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.sendText(mustJSON(serviceCallFailureMsg{Op: "serviceCallFailure", ServiceID: serviceID, CallID: callID, Message: msg}))
}

func (c *client) callService(m *ServiceCallRequest) {
	c.s.mu.Lock()
	sv := c.s.services[m.ServiceID]
	c.s.mu.Unlock()
	if sv == nil {
		c.callFailure(m.ServiceID, m.CallID, "service %d does not exist", m.ServiceID)
		return
	}
	if len(c.s.opts.ParamSetDenylist) > 0 && setParametersService.MatchString(sv.Name) {
		c.s.requestsRefused.Add(1)
		c.s.count(CountRequestRefused)
		c.logThrottled("refused a call of " + sv.Name)
		c.callFailure(m.ServiceID, m.CallID, "%s: calling parameter services is refused while client_param_set_denylist is set; use setParameters, which applies it", sv.Name)
		return
	}
	if !c.supportsEncoding(m.Encoding) {
		c.callFailure(m.ServiceID, m.CallID, "encoding %q is not supported (supported: %v)", m.Encoding, c.s.opts.SupportedEncodings)
		return
	}
	if c.discardIfLost() {
		c.callFailure(m.ServiceID, m.CallID, "%s: not called: the call was sent while the server heard nothing from this client (client_timeout %v), and is stale",
			sv.Name, c.s.opts.ClientTimeout)
		return
	}
	svc := *sv
	ok := c.startCall(func() {
		ctx, cancel := context.WithTimeout(context.WithValue(c.ctx, sessionKey{}, c.sess), c.s.opts.CallTimeout)
		defer cancel()
		resp, err := c.s.backend.CallService(ctx, svc, m.Encoding, m.Payload)
		if err != nil {
			c.callFailure(m.ServiceID, m.CallID, "%s: %v", svc.Name, err)
			return
		}
		c.sendBinary(AppendServiceCallResponse(nil, m.ServiceID, m.CallID, m.Encoding, resp))
	})
	if !ok {
		c.callFailure(m.ServiceID, m.CallID, "%s: %d calls of this client are already pending", svc.Name, c.s.opts.MaxPendingCalls)
	}
}

// filterParams keeps the whitelisted parameters.
func (c *client) filterParams(ps []Parameter) []Parameter {
	out := ps[:0:0]
	for _, p := range ps {
		if allowed(c.s.opts.ParamWhitelist, p.Name) {
			out = append(out, p)
		}
	}
	return out
}

func (c *client) filterNames(names []string) []string {
	out := names[:0:0]
	for _, n := range names {
		if allowed(c.s.opts.ParamWhitelist, n) {
			out = append(out, n)
		}
	}
	return out
}

func (c *client) getParameters(m *GetParametersMsg) {
	names := c.filterNames(m.Names)
	if len(m.Names) > 0 && len(names) == 0 {
		c.sendText(mustJSON(parameterValuesMsg{Op: "parameterValues", Parameters: []Parameter{}, ID: m.ID}))
		return
	}
	ok := c.startCall(func() {
		ctx, cancel := context.WithTimeout(c.ctx, c.s.opts.ParamTimeout)
		defer cancel()
		ps, err := c.s.backend.GetParameters(ctx, names)
		if err != nil {
			c.status(StatusError, "getParameters: %v", err)
		}
		ps = c.filterParams(ps)
		if ps == nil {
			ps = []Parameter{}
		}
		c.sendText(mustJSON(parameterValuesMsg{Op: "parameterValues", Parameters: ps, ID: m.ID}))
	})
	if !ok {
		c.status(StatusError, "getParameters: %d requests of this client are already pending", c.s.opts.MaxPendingCalls)
	}
}

func (c *client) setParameters(m *SetParametersMsg) {
	if c.discardIfLost() {
		c.status(StatusError, "setParameters: not set: sent while the server heard nothing from this client (client_timeout %v), and stale", c.s.opts.ClientTimeout)
		return
	}
	var ps []Parameter
	for _, p := range m.Parameters {
		switch {
		case !allowed(c.s.opts.ParamWhitelist, p.Name):
			c.status(StatusWarning, "parameter %s is not in param_whitelist; not set", p.Name)
		case !permitted(c.s.opts.ParamSetDenylist, c.s.opts.ParamSetAllowlist, p.Name):
			c.refuse("parameter %s is a safety parameter (client_param_set_denylist: limits, timers, use_sim_time); not set. "+
				"List it in the bridge's client_param_set_allowlist to allow it", p.Name)
		default:
			ps = append(ps, p)
		}
	}
	ok := c.startCall(func() {
		ctx, cancel := context.WithTimeout(c.ctx, c.s.opts.ParamTimeout)
		defer cancel()
		if len(ps) > 0 {
			if err := c.s.backend.SetParameters(ctx, ps); err != nil {
				c.status(StatusError, "setParameters: %v", err)
			}
		}
		if m.ID == "" {
			return
		}
		names := make([]string, len(ps))
		for i, p := range ps {
			names[i] = p.Name
		}
		var got []Parameter
		if len(names) > 0 {
			var err error
			if got, err = c.s.backend.GetParameters(ctx, names); err != nil {
				c.status(StatusError, "setParameters: reading back: %v", err)
			}
		}
		if got == nil {
			got = []Parameter{}
		}
		c.sendText(mustJSON(parameterValuesMsg{Op: "parameterValues", Parameters: got, ID: m.ID}))
	})
	if !ok {
		c.status(StatusError, "setParameters: %d requests of this client are already pending", c.s.opts.MaxPendingCalls)
	}
}

func (c *client) addParamSubs(names []string) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	for _, n := range names {
		if allowed(c.s.opts.ParamWhitelist, n) {
			c.paramSubs[n] = struct{}{}
		}
	}
}

func (c *client) subscribeParams(m *SubscribeParameterUpdatesMsg) {
	if len(m.Names) > 0 {
		c.addParamSubs(m.Names)
		return
	}
	ok := c.startCall(func() {
		ctx, cancel := context.WithTimeout(c.ctx, c.s.opts.ParamTimeout)
		defer cancel()
		ps, err := c.s.backend.GetParameters(ctx, nil)
		if err != nil {
			c.status(StatusError, "subscribeParameterUpdates: listing parameters: %v", err)
		}
		names := make([]string, len(ps))
		for i, p := range ps {
			names[i] = p.Name
		}
		c.addParamSubs(names)
	})
	if !ok {
		c.status(StatusError, "subscribeParameterUpdates: %d requests of this client are already pending", c.s.opts.MaxPendingCalls)
	}
}

func (c *client) unsubscribeParams(m *UnsubscribeParameterUpdatesMsg) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if len(m.Names) == 0 {
		clear(c.paramSubs)
		return
	}
	for _, n := range m.Names {
		delete(c.paramSubs, n)
	}
}

// subscribeGraph sends the whole current graph, then changes follow.
func (c *client) subscribeGraph() {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.graphSub {
		return
	}
	c.graphSub = true
	c.sendText(mustJSON(graphDiff(Graph{}, s.graph)))
}
