package ros

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cdr"
	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	service_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/service_msgs/msg"
)

// Response delivery: like rmw_cyclonedds' send_response, a response waits
// for the reply writer to match the client's reply reader, polling every
// 10 ms. rmw_cyclonedds blocks the executor for up to 100 ms and then drops
// the response; here the response waits on the side (the callback
// goroutine goes on) for up to 5 s, which a burst of new clients whose
// discovery lags on the server side needs.
const (
	replyMatchTimeout = 5 * time.Second
	replyMatchPoll    = 10 * time.Millisecond
)

// requestHeader is rmw_cyclonedds' cdds_request_header: the client id (the
// instance handle of the client's request writer) and the sequence number,
// at the start of every request and reply body.
type requestHeader struct {
	GUID uint64
	Seq  int64
}

// requestHeaderSize is the size of requestHeader on the wire.
const requestHeaderSize = 16

// encodeWithHeader serializes h followed by m.
func encodeWithHeader(h requestHeader, m rosidl.Message, buf []byte) []byte {
	e := cdr.NewEncoder(buf)
	e.Uint64(h.GUID)
	e.Int64(h.Seq)
	m.MarshalCDR(e)
	return e.Bytes()
}

// decodeWithHeader reads the header and then m from a request or reply.
func decodeWithHeader(payload []byte, m rosidl.Message) (requestHeader, error) {
	var h requestHeader
	d, err := cdr.NewDecoder(payload)
	if err != nil {
		return h, err
	}
	h.GUID = d.Uint64()
	h.Seq = d.Int64()
	if err := d.Err(); err != nil {
		return h, fmt.Errorf("request header: %w", err)
	}
	if err := m.UnmarshalCDR(d); err != nil {
		return h, fmt.Errorf("decode %s: %w", m.ROSType().Name, err)
	}
	return h, nil
}

// serviceTypes returns the request and response type information of a
// service and checks that they belong together.
func serviceTypes(req, resp *rosidl.TypeInfo) error {
	if err := checkType(req); err != nil {
		return fmt.Errorf("request: %w", err)
	}
	if err := checkType(resp); err != nil {
		return fmt.Errorf("response: %w", err)
	}
	return nil
}

// Bounds of a service's request queue. Requests are never pushed out by
// later ones (unlike keep-last topic samples): up to ServiceQueueMaxRequests
// requests and ServiceQueueMaxBytes of serialized requests wait for the
// handler, whatever the QoS depth; beyond that new requests are dropped,
// counted (Service.Dropped, the node's requests_dropped counter) and
// logged at most once a second.
const (
	ServiceQueueMaxRequests = 65536
	ServiceQueueMaxBytes    = 64 << 20
)

// incomingRequest is a request waiting for the service callback.
type incomingRequest struct {
	h      requestHeader
	writer dds.InstanceHandle // the client's request writer
	req    rosidl.Message
}

// Service serves one ROS service. Its handler runs on the node's callback
// goroutine, one request at a time; requests wait in a queue bounded by
// ServiceQueueMaxRequests and ServiceQueueMaxBytes (not by the QoS depth).
type Service struct {
	n         *Node
	name      string
	id        csid
	reqT      *rosidl.TypeInfo // request and response types (type cache)
	respT     *rosidl.TypeInfo
	also      *rosidl.TypeDescription // action type of send_goal (type cache)
	reqReader *dds.Reader
	repWriter *dds.Writer
	in        *inbox[incomingRequest]
	malformed atomic.Uint64
	lost      atomic.Uint64
	size      *oversizeGuard
	intro     *introspection

	malformedLog, dropLog, lostLog throttle

	// Responses waiting for their client's reply reader (respond).
	closing     atomic.Bool
	pendMu      sync.Mutex
	pending     []pendingReply
	pendRunning bool

	// Caches of respond (created lazily, guarded by cacheMu since
	// deferred responses may come from any goroutine): the clientid of
	// request writers seen, and the clientids whose reply reader has
	// matched. Instance handles are never reused within a process, and a
	// client that leaves only makes a later write go nowhere, as in rmw.
	cacheMu        sync.Mutex
	clientIDs      map[dds.InstanceHandle]string
	clientParts    map[dds.InstanceHandle]dds.GUID // participant of each request writer
	matchedClients map[string]bool
}

// NewService creates a server of the service srv (a generated
// descriptor such as std_srvs_srv.Trigger) under name (relative, absolute
// or "~/"; remapped), with QoSServices unless WithQoS is given. The
// handler runs on the node's callback goroutine; ctx is cancelled when
// the node closes. Returning an error sends no response (the error is
// logged and the caller times out), so prefer reporting failures inside
// the response (success=false, message) where the service type allows it.
//
//	srv, err := ros.NewService(node, "~/start", std_srvs_srv.Trigger,
//	    func(ctx context.Context, req *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) { ... })
func NewService[Req, Resp any](n *Node, name string, srv rosidl.Service[Req, Resp],
	handler func(ctx context.Context, req *Req) (*Resp, error), opts ...EndpointOption) (*Service, error) {
	st := srv.Type()
	if st == nil {
		return nil, fmt.Errorf("ros: service %q: no service type (zero descriptor)", name)
	}
	if handler == nil {
		return nil, fmt.Errorf("ros: service %q: nil handler", name)
	}
	return newService(n, name, st.Request, st.Response,
		func() rosidl.Message { return srv.RequestMsg(new(Req)) },
		func(ctx context.Context, m rosidl.Message) (rosidl.Message, error) {
			resp, err := handler(ctx, any(m).(*Req))
			if err != nil {
				return nil, err
			}
			if resp == nil {
				return nil, errors.New("handler returned a nil response")
			}
			return srv.ResponseMsg(resp), nil
		}, append(opts[:len(opts):len(opts)], withEventType(st.Event)))
}

// NewDeferredService is NewService for a handler that answers later, as
// an rclcpp service that keeps the request header and calls send_response
// when the answer is ready: handler runs on the node's callback goroutine
// and must not block; it calls reply once, at once or later, from any
// goroutine (further calls are ignored; a nil response sends nothing and
// is logged). A request whose reply is never called gets no response, and
// its caller waits until its own timeout. Introspection events are
// published as NewService's: REQUEST_RECEIVED when the request is handed
// to handler, RESPONSE_SENT when the response goes out.
func NewDeferredService[Req, Resp any](n *Node, name string, srv rosidl.Service[Req, Resp],
	handler func(ctx context.Context, req *Req, reply func(*Resp)), opts ...EndpointOption) (*Service, error) {
	st := srv.Type()
	if st == nil {
		return nil, fmt.Errorf("ros: service %q: no service type (zero descriptor)", name)
	}
	if handler == nil {
		return nil, fmt.Errorf("ros: service %q: nil handler", name)
	}
	o := applyOptions(append(opts[:len(opts):len(opts)], withEventType(st.Event)))
	qos := QoSServices
	if o.qos != nil {
		qos = *o.qos
	}
	newReq := func() rosidl.Message { return srv.RequestMsg(new(Req)) }
	s, err := newServiceEndpoints(n, name, st.Request, st.Response, newReq, qos, o.also, o.event, o.maxSize, func(s *Service) func(incomingRequest) {
		return func(r incomingRequest) {
			ctx := n.runCtx
			if part, ok := s.requesterParticipant(r.writer); ok {
				ctx = context.WithValue(ctx, requesterKey{}, part)
			}
			gid := serverSideGID(r.h, r.writer)
			s.intro.publish(service_msgs_msg.ServiceEventInfo_REQUEST_RECEIVED, r.h.Seq, gid, r.req)
			var once sync.Once
			handler(ctx, any(r.req).(*Req), func(resp *Resp) {
				once.Do(func() {
					if resp == nil {
						n.Logger().Errorf("service %s: nil response: no response sent", s.name)
						return
					}
					m := srv.ResponseMsg(resp)
					// respond runs on the callback goroutine, which owns the
					// service's caches; ErrClosed: the node, and the reply, are gone.
					_ = n.Post(func() {
						if err := s.respond(r, m, nil); err != nil {
							if !errors.Is(err, dds.ErrClosed) {
								n.Logger().Warnf("service %s: %v", s.name, err)
							}
							return
						}
						s.intro.publish(service_msgs_msg.ServiceEventInfo_RESPONSE_SENT, r.h.Seq, gid, m)
					})
				})
			})
		}
	})
	if err != nil {
		return nil, err
	}
	n.applyNodeIntrospection(s.intro, st.Request)
	return s, nil
}

func newService(n *Node, name string, reqT, respT *rosidl.TypeInfo, newReq func() rosidl.Message, handle func(context.Context, rosidl.Message) (rosidl.Message, error), opts []EndpointOption) (*Service, error) {
	o := applyOptions(opts)
	qos := QoSServices
	if o.qos != nil {
		qos = *o.qos
	}
	s, err := newServiceEndpoints(n, name, reqT, respT, newReq, qos, o.also, o.event, o.maxSize, func(s *Service) func(incomingRequest) {
		return func(r incomingRequest) {
			ctx := n.runCtx
			if part, ok := s.requesterParticipant(r.writer); ok {
				ctx = context.WithValue(ctx, requesterKey{}, part)
			}
			gid := serverSideGID(r.h, r.writer)
			s.intro.publish(service_msgs_msg.ServiceEventInfo_REQUEST_RECEIVED, r.h.Seq, gid, r.req)
			after := &afterReply{}
			ctx = context.WithValue(ctx, afterReplyKey{}, after)
			resp, err := handle(ctx, r.req)
			if err != nil {
				n.Logger().Errorf("service %s: no response sent: %v", s.name, err)
				after.run()
				return
			}
			if err := s.respond(r, resp, after.run); err != nil {
				n.Logger().Warnf("service %s: %v", s.name, err)
				return
			}
			s.intro.publish(service_msgs_msg.ServiceEventInfo_RESPONSE_SENT, r.h.Seq, gid, resp)
		}
	})
	if err != nil {
		return nil, err
	}
	n.applyNodeIntrospection(s.intro, reqT)
	return s, nil
}

// newServiceEndpoints creates the request reader and reply writer of a
// service (with the rmw_cyclonedds serviceid and type hashes in their user
// data) and registers it on the node. Requests are queued (see
// ServiceQueueMaxRequests) and handed, on the node's callback goroutine, to
// the function onRequest returns for the new Service.
//
// The request reader keeps all samples at the DDS level whatever the QoS
// history says (the advertised QoS is otherwise unchanged): its listener
// moves every request into the queue at once, so the queue's bounds are the
// only place a request can be dropped, and that is counted and logged.
//
// Requests above maxSize (0: DefaultMaxRequestSize; see sampleLimit) are
// dropped undecoded, counted and logged. event is the type of the service's
// introspection events (nil: it has none).
func newServiceEndpoints(n *Node, name string, reqT, respT *rosidl.TypeInfo, newReq func() rosidl.Message, qos QoS,
	also *rosidl.TypeDescription, event *rosidl.TypeInfo, maxSize int, onRequest func(s *Service) func(incomingRequest)) (*Service, error) {
	if err := serviceTypes(reqT, respT); err != nil {
		return nil, fmt.Errorf("ros: service %q: %w", name, err)
	}
	fqn, err := n.ResolveServiceName(name)
	if err != nil {
		return nil, fmt.Errorf("ros: service: %w", err)
	}
	part := n.ctx.part
	reqTopic, err := part.Topic(ddsTopicName(requestPrefix, fqn, requestSuffix, qos.AvoidROSNamespaceConventions), reqT.DDSName)
	if err != nil {
		return nil, fmt.Errorf("ros: service %s: %w", fqn, err)
	}
	repTopic, err := part.Topic(ddsTopicName(replyPrefix, fqn, replySuffix, qos.AvoidROSNamespaceConventions), respT.DDSName)
	if err != nil {
		return nil, fmt.Errorf("ros: service %s: %w", fqn, err)
	}
	s := &Service{n: n, name: fqn, id: n.ctx.nextCSID(), reqT: reqT, respT: respT, also: also}
	s.intro = newIntrospection(n, fqn, "service", event)
	idData := "serviceid=" + s.id.String() + ";"
	wq, err := qos.ddsQoS([]byte(idData+typeHashUserData(n.ctx.Distro(), respT.Hash)), false)
	if err != nil {
		return nil, fmt.Errorf("ros: service %s: %w", fqn, err)
	}
	rq, err := qos.KeepAll().ddsQoS([]byte(idData+typeHashUserData(n.ctx.Distro(), reqT.Hash)), false)
	if err != nil {
		return nil, fmt.Errorf("ros: service %s: %w", fqn, err)
	}
	if s.repWriter, err = part.NewWriter(repTopic, wq); err != nil {
		return nil, fmt.Errorf("ros: service %s: %w", fqn, err)
	}
	s.in = newInbox(n, inboxLimits{maxItems: ServiceQueueMaxRequests, maxBytes: ServiceQueueMaxBytes}, onRequest(s))
	dropped, malformed := n.Counter(CounterRequestsDropped), n.Counter(CounterMalformedSamples)
	s.in.onDrop = func(bool) {
		dropped.Inc()
		n.warnThrottled(&s.dropLog, "service %s: request queue full (%d requests or %d bytes); request dropped (%d so far)",
			fqn, ServiceQueueMaxRequests, ServiceQueueMaxBytes, s.in.dropped.Load())
	}
	limit := sampleLimit(reqT, requestHeaderSize, maxSize, DefaultMaxRequestSize)
	s.size = newOversizeGuard(n, "request of service "+fqn, limit)
	s.reqReader, err = part.NewReader(reqTopic, withSampleLimit(rq, limit), func(batch []dds.Sample) {
		for i := range batch {
			smp := &batch[i]
			if s.size.dropped(smp) {
				continue
			}
			m := newReq()
			h, err := decodeWithHeader(smp.Data, m)
			if err != nil {
				s.malformed.Add(1)
				malformed.Inc()
				n.warnThrottled(&s.malformedLog, "service %s: dropping malformed request: %v", fqn, err)
				continue
			}
			s.in.push(incomingRequest{h: h, writer: smp.PublicationHandle, req: m}, len(smp.Data))
		}
	})
	if err != nil {
		s.repWriter.Close()
		return nil, fmt.Errorf("ros: service %s: %w", fqn, err)
	}
	if err := n.addEntity(s); err != nil {
		return nil, err
	}
	return s, nil
}

// respond sends resp to the client that wrote r, as rmw_cyclonedds'
// send_response: look up the request writer's clientid; if the writer is
// gone, drop the response; if it has no clientid, send at once; otherwise
// send once the reply writer has matched a reader with that clientid
// (which normally it has; if not, the response waits in the background for
// up to replyMatchTimeout). Lost responses are counted (Unanswered,
// requests_dropped) and logged at most once a second.
//
// Both lookups list all matched endpoints in one go and remember every
// answer, so a burst of requests from many new clients costs one listing
// per burst rather than one per request.
//
// after, if not nil, runs once the response was written, or given up on
// (dropped, expired, failed), on whichever goroutine that happened.
func (s *Service) respond(r incomingRequest, resp rosidl.Message, after func()) (err error) {
	deferred := false
	if after != nil {
		defer func() {
			if !deferred {
				after()
			}
		}()
	}
	if v, ok := resp.(validator); ok {
		if err := v.Validate(); err != nil {
			s.responseLost()
			return fmt.Errorf("invalid response not sent: %w", err)
		}
	}
	s.cacheMu.Lock()
	clientID, known := s.clientIDs[r.writer]
	s.cacheMu.Unlock()
	if !known {
		if err := s.refreshClientIDs(); err != nil {
			return err
		}
		s.cacheMu.Lock()
		clientID, known = s.clientIDs[r.writer]
		s.cacheMu.Unlock()
		if !known {
			s.responseLost()
			s.n.warnThrottled(&s.lostLog, "service %s: client of request %d is gone; response dropped", s.name, r.h.Seq)
			return nil
		}
	}
	data := encodeWithHeader(r.h, resp, nil)
	if clientID != "" && !s.replyReaderMatched(clientID) {
		deferred = true
		s.deferReply(pendingReply{clientID: clientID, seq: r.h.Seq, data: data, deadline: time.Now().Add(replyMatchTimeout), after: after})
		return nil
	}
	if err := s.repWriter.Write(data); err != nil {
		return fmt.Errorf("sending response: %w", err)
	}
	return nil
}

// pendingReply is a response waiting for its client's reply reader to
// match.
type pendingReply struct {
	clientID string
	seq      int64
	data     []byte
	deadline time.Time
	after    func() // see respond; nil: none
}

// afterReply holds what a service handler asked to run once its response
// is out (AfterReply).
type afterReply struct {
	mu sync.Mutex
	fs []func()
}

type afterReplyKey struct{}

// afterReplyOf registers f to run after the response to the request of
// ctx has been written (or given up on); without a request in ctx it runs
// f at once.
func afterReplyOf(ctx context.Context, f func()) {
	a, ok := ctx.Value(afterReplyKey{}).(*afterReply)
	if !ok {
		f()
		return
	}
	a.mu.Lock()
	a.fs = append(a.fs, f)
	a.mu.Unlock()
}

func (a *afterReply) run() {
	a.mu.Lock()
	fs := a.fs
	a.fs = nil
	a.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// deferReply queues p and makes sure a goroutine sends the waiting
// responses as their readers match.
func (s *Service) deferReply(p pendingReply) {
	s.pendMu.Lock()
	s.pending = append(s.pending, p)
	start := !s.pendRunning
	s.pendRunning = true
	s.pendMu.Unlock()
	if start {
		go s.sendPending()
	}
}

// sendPending polls the matched reply readers every replyMatchPoll and
// sends each waiting response whose reader matched; responses past their
// deadline are dropped, counted and logged. It returns when nothing waits
// or the service closes.
func (s *Service) sendPending() {
	for {
		time.Sleep(replyMatchPoll)
		closed := s.closing.Load()
		if !closed {
			closed = errors.Is(s.refreshMatchedClients(), dds.ErrClosed)
		}
		now := time.Now()
		var send, expired []pendingReply
		s.pendMu.Lock()
		s.cacheMu.Lock()
		keep := s.pending[:0]
		for _, p := range s.pending {
			switch {
			case closed:
			case s.matchedClients[p.clientID]:
				send = append(send, p)
			case now.After(p.deadline):
				expired = append(expired, p)
			default:
				keep = append(keep, p)
			}
		}
		s.cacheMu.Unlock()
		clear(s.pending[len(keep):])
		s.pending = keep
		done := len(keep) == 0
		if done {
			s.pendRunning = false
			s.pending = nil
		}
		s.pendMu.Unlock()
		for _, p := range send {
			if err := s.repWriter.Write(p.data); err != nil && !errors.Is(err, dds.ErrClosed) {
				s.n.Logger().Warnf("service %s: sending response: %v", s.name, err)
			}
			if p.after != nil {
				p.after()
			}
		}
		for _, p := range expired {
			s.responseLost()
			s.n.warnThrottled(&s.lostLog, "service %s: client %s has no matched reply reader after %v; response to request %d dropped",
				s.name, p.clientID, replyMatchTimeout, p.seq)
			if p.after != nil {
				p.after()
			}
		}
		if done {
			return
		}
	}
}

// responseLost counts a response that was not sent.
func (s *Service) responseLost() {
	s.lost.Add(1)
	s.n.Counter(CounterRequestsDropped).Inc()
}

// refreshClientIDs records the clientid user data of every request writer
// matched now. Instance handles are never reused within a process; a
// writer that left keeps its entry (a later write to it goes nowhere, as in
// rmw).
func (s *Service) refreshClientIDs() error {
	eps, err := s.reqReader.MatchedWriters()
	if err != nil {
		return fmt.Errorf("matched request writers: %w", err)
	}
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if s.clientIDs == nil {
		s.clientIDs = make(map[dds.InstanceHandle]string, len(eps))
		s.clientParts = make(map[dds.InstanceHandle]dds.GUID, len(eps))
	}
	for _, ep := range eps {
		if _, ok := s.clientIDs[ep.Handle]; !ok {
			s.clientIDs[ep.Handle] = parseUserData(ep.UserData)["clientid"]
			s.clientParts[ep.Handle] = ep.ParticipantKey
		}
	}
	return nil
}

// requesterKey is the context key under which a request's handler finds
// the DDS participant of the client that sent it (requesterParticipant).
type requesterKey struct{}

// requesterOf returns the DDS participant of the client whose request the
// handler given ctx is answering, if known.
func requesterOf(ctx context.Context) (dds.GUID, bool) {
	part, ok := ctx.Value(requesterKey{}).(dds.GUID)
	return part, ok
}

// requesterParticipant returns the participant of the request writer w,
// listing the matched writers once if w is new.
func (s *Service) requesterParticipant(w dds.InstanceHandle) (dds.GUID, bool) {
	s.cacheMu.Lock()
	part, ok := s.clientParts[w]
	s.cacheMu.Unlock()
	if ok {
		return part, true
	}
	if s.refreshClientIDs() != nil {
		return dds.GUID{}, false
	}
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	part, ok = s.clientParts[w]
	return part, ok
}

// refreshMatchedClients records the clientids of every reply reader
// matched now.
func (s *Service) refreshMatchedClients() error {
	eps, err := s.repWriter.MatchedReaders()
	if err != nil {
		return fmt.Errorf("matched reply readers: %w", err)
	}
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if s.matchedClients == nil {
		s.matchedClients = make(map[string]bool, len(eps))
	}
	for _, ep := range eps {
		if id := parseUserData(ep.UserData)["clientid"]; id != "" {
			s.matchedClients[id] = true
		}
	}
	return nil
}

// replyReaderMatched reports whether a reply reader with clientID has been
// seen matched, refreshing the record once if not.
func (s *Service) replyReaderMatched(clientID string) bool {
	s.cacheMu.Lock()
	ok := s.matchedClients[clientID]
	s.cacheMu.Unlock()
	if ok {
		return true
	}
	if s.refreshMatchedClients() != nil {
		return false
	}
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	return s.matchedClients[clientID]
}

func (s *Service) gids() (readers, writers []dds.GUID) {
	return []dds.GUID{s.reqReader.GUID()}, []dds.GUID{s.repWriter.GUID()}
}

func (s *Service) close() error {
	s.closing.Store(true)
	err := s.reqReader.Close()
	s.in.close()
	s.intro.close()
	return errors.Join(err, s.repWriter.Close())
}

// Close closes the service server.
func (s *Service) Close() error {
	err := s.close()
	s.n.removeEntity(s)
	return err
}

// Name returns the fully qualified service name.
func (s *Service) Name() string { return s.name }

// Malformed returns how many requests could not be decoded (dropped).
func (s *Service) Malformed() uint64 { return s.malformed.Load() }

// Oversized returns how many requests were dropped, undecoded, because
// they exceeded the service's size limit (see WithMaxSampleSize).
func (s *Service) Oversized() uint64 { return s.reqReader.Oversized() }

// MaxRequestSize returns the service's request size limit in bytes (0:
// none).
func (s *Service) MaxRequestSize() int { return int(s.size.limit) }

// Dropped returns how many requests were dropped because the queue was full.
func (s *Service) Dropped() uint64 { return s.in.dropped.Load() }

// Unanswered returns how many responses were not sent because the client
// was gone or its reply reader did not match in time.
func (s *Service) Unanswered() uint64 { return s.lost.Load() }
