package ros

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cdr"
	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	service_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/service_msgs/msg"
)

// client is the untyped core of Client and DynamicClient.
type client struct {
	n          *Node
	name       string
	id         csid
	reqT       *rosidl.TypeInfo
	respT      *rosidl.TypeInfo
	also       *rosidl.TypeDescription // action type of send_goal (type cache)
	reqTopic   string
	repTopic   string
	reqWriter  *dds.Writer
	repReader  *dds.Reader
	handle     uint64 // request writer instance handle: the header guid
	newResp    func() rosidl.Message
	malformed  atomic.Uint64
	size       *oversizeGuard
	done       chan struct{}
	closeOnce  sync.Once
	mu         sync.Mutex
	pending    map[int64]pendingCall
	closedFlag bool
	intro      *introspection
	// lastRTT is the last call's round trip in ns: a call waits for its
	// reply on its own goroutine first (directWait) while replies come
	// that fast.
	lastRTT       atomic.Int64
	directWait    time.Duration // directWait; tests change it
	directAnswers atomic.Uint64 // calls answered within waitDirect (tests)
}

// pendingCall is a Call waiting for its reply: on ch (buffered, one reply),
// or, while direct is set, in dds.Reader.TakeWait on its own goroutine.
type pendingCall struct {
	ch     chan rosidl.Message
	direct bool
}

// directWait is how long a Call waits for its reply on its own goroutine
// (dds.Reader.TakeWait) before it leaves the reply to the receive
// goroutine, when the previous reply came within that time. The thread
// that Cyclone's listener wakes is then the caller's, as with rclcpp's
// spin_until_future_complete, instead of the receive goroutine's, which
// would wake a second thread for the caller: one thread wake-up less per
// call. A slower service is left to the receive goroutine, since the wait
// holds an OS thread and a P in C.
const directWait = time.Millisecond

func newClient(n *Node, name string, reqT, respT *rosidl.TypeInfo, newResp func() rosidl.Message, opts []EndpointOption) (_ *client, err error) {
	if err := serviceTypes(reqT, respT); err != nil {
		return nil, fmt.Errorf("ros: client %q: %w", name, err)
	}
	o := applyOptions(opts)
	qos := QoSServices
	if o.qos != nil {
		qos = *o.qos
	}
	fqn, err := n.ResolveServiceName(name)
	if err != nil {
		return nil, fmt.Errorf("ros: client: %w", err)
	}
	// A client of an action's send_goal service sends goals, whatever
	// wraps it (ActionClient, the CLI, rsmNode's navigator client): servers
	// that supervise their clients hear this process's heartbeat.
	if strings.HasSuffix(fqn, actionSendGoalService) {
		if err := n.ctx.SendHeartbeats(); err != nil {
			return nil, fmt.Errorf("ros: client %s: %w", fqn, err)
		}
	}
	part := n.ctx.part
	c := &client{
		n: n, name: fqn, id: n.ctx.nextCSID(), reqT: reqT, respT: respT, also: o.also, newResp: newResp,
		reqTopic:   ddsTopicName(requestPrefix, fqn, requestSuffix, qos.AvoidROSNamespaceConventions),
		repTopic:   ddsTopicName(replyPrefix, fqn, replySuffix, qos.AvoidROSNamespaceConventions),
		done:       make(chan struct{}),
		pending:    map[int64]pendingCall{},
		directWait: directWait,
	}
	reqTopic, err := part.Topic(c.reqTopic, reqT.DDSName)
	if err != nil {
		return nil, fmt.Errorf("ros: client %s: %w", fqn, err)
	}
	repTopic, err := part.Topic(c.repTopic, respT.DDSName)
	if err != nil {
		return nil, fmt.Errorf("ros: client %s: %w", fqn, err)
	}
	idData := "clientid=" + c.id.String() + ";"
	rq, err := qos.ddsQoS([]byte(idData+typeHashUserData(n.ctx.Distro(), respT.Hash)), false)
	if err != nil {
		return nil, fmt.Errorf("ros: client %s: %w", fqn, err)
	}
	wq, err := qos.ddsQoS([]byte(idData+typeHashUserData(n.ctx.Distro(), reqT.Hash)), false)
	if err != nil {
		return nil, fmt.Errorf("ros: client %s: %w", fqn, err)
	}
	// The reply reader exists before any request can be sent, so the
	// server's send_response finds it.
	limit := sampleLimit(respT, requestHeaderSize, o.maxSize, DefaultMaxSampleSize)
	c.size = newOversizeGuard(n, "reply of service "+fqn, limit)
	if c.repReader, err = part.NewReader(repTopic, withSampleLimit(rq, limit), c.onReplies); err != nil {
		return nil, fmt.Errorf("ros: client %s: %w", fqn, err)
	}
	if c.reqWriter, err = part.NewWriter(reqTopic, wq); err != nil {
		c.repReader.Close()
		return nil, fmt.Errorf("ros: client %s: %w", fqn, err)
	}
	c.handle = uint64(c.reqWriter.Handle())
	c.intro = newIntrospection(n, fqn, "client", o.event)
	if err := n.addEntity(c); err != nil {
		return nil, err
	}
	n.applyNodeIntrospection(c.intro, reqT)
	return c, nil
}

// badReply counts a reply that could not be decoded.
func (c *client) badReply() {
	c.malformed.Add(1)
	c.n.Counter(CounterMalformedSamples).Inc()
}

// onReplies runs on the receive goroutine: it keeps the replies addressed
// to this client (header guid = our request writer handle) and hands each
// to its waiting Call.
func (c *client) onReplies(batch []dds.Sample) {
	for i := range batch {
		smp := &batch[i]
		if c.size.dropped(smp) {
			continue // a reply to another client, perhaps; a caller times out
		}
		d, err := cdr.NewDecoder(smp.Data)
		if err != nil {
			c.badReply()
			continue
		}
		guid, seq := d.Uint64(), d.Int64()
		if d.Err() != nil {
			c.badReply()
			continue
		}
		if guid != c.handle {
			continue // a reply to another client of this service
		}
		c.mu.Lock()
		pc, ok := c.pending[seq]
		delete(c.pending, seq)
		c.mu.Unlock()
		if !ok {
			continue // late reply of an abandoned call
		}
		m := c.newResp()
		if err := m.UnmarshalCDR(d); err != nil {
			c.badReply()
			continue
		}
		pc.ch <- m // buffered, one reply per call
		if pc.direct {
			// The caller waits in TakeWait, or is about to: if this
			// is the receive goroutine, end that wait.
			c.repReader.WakeTakeWait()
		} else {
			c.n.ctx.part.Yield() // the caller runs next (see dds.Participant.Yield)
		}
	}
}

// waitDirect waits up to c.directWait for the reply of call seq on the
// calling goroutine (see directWait); it returns nil if the reply did not
// come, and the call then waits on ch.
func (c *client) waitDirect(seq int64, ch chan rosidl.Message, sent time.Time) rosidl.Message {
	if c.lastRTT.Load() > int64(c.directWait) {
		return nil
	}
	if !c.setDirect(seq, true) {
		return nil // answered already: the reply is in ch
	}
	var m rosidl.Message
	for {
		select {
		case m = <-ch:
			return m
		default:
		}
		left := c.directWait - time.Since(sent)
		if left <= 0 || c.repReader.TakeWait(left) == 0 {
			// Nothing came in time, the receive goroutine handed the
			// reply over (WakeTakeWait), or another call is in TakeWait,
			// or the client closed.
			break
		}
		// TakeWait handed samples over, replies of other calls perhaps.
	}
	c.setDirect(seq, false)
	// A reply handed over before direct was cleared is in ch.
	select {
	case m = <-ch:
	default:
	}
	return m
}

// setDirect sets pendingCall.direct of call seq; it reports false if the
// call is no longer pending (its reply was handed over).
func (c *client) setDirect(seq int64, direct bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	pc, ok := c.pending[seq]
	if ok {
		pc.direct = direct
		c.pending[seq] = pc
	}
	return ok
}

func (c *client) call(ctx context.Context, req rosidl.Message) (rosidl.Message, error) {
	if v, ok := req.(validator); ok {
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("ros: call %s: %w", c.name, err)
		}
	}
	seq := c.n.ctx.seq.Add(1)
	ch := make(chan rosidl.Message, 1)
	c.mu.Lock()
	if c.closedFlag {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	c.pending[seq] = pendingCall{ch: ch}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, seq)
		c.mu.Unlock()
	}()
	if err := c.reqWriter.Write(encodeWithHeader(requestHeader{GUID: c.handle, Seq: seq}, req, nil)); err != nil {
		if errors.Is(err, dds.ErrClosed) {
			return nil, ErrClosed
		}
		return nil, fmt.Errorf("ros: call %s: %w", c.name, err)
	}
	sent := time.Now()
	c.intro.publish(service_msgs_msg.ServiceEventInfo_REQUEST_SENT, seq, c.id, req)
	c.n.ctx.beforeWait()
	m := c.waitDirect(seq, ch, sent)
	if m != nil {
		c.directAnswers.Add(1)
	} else {
		select {
		case m = <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("ros: call %s: %w", c.name, ctx.Err())
		case <-c.done:
			return nil, ErrClosed
		case <-c.n.runCtx.Done(): // the node is closing; do not hold up Close
			return nil, ErrClosed
		}
	}
	c.lastRTT.Store(int64(time.Since(sent)))
	c.intro.publish(service_msgs_msg.ServiceEventInfo_RESPONSE_RECEIVED, seq, c.id, m)
	return m, nil
}

// serviceIsReady implements rmw_cyclonedds' rmw_service_server_is_available.
func (c *client) serviceIsReady() bool {
	g := c.n.ctx.graph
	if g.countEndpoints(c.reqTopic, dds.KindReader) == 0 || g.countEndpoints(c.repTopic, dds.KindWriter) == 0 {
		return false
	}
	readers, err := c.reqWriter.MatchedReaders()
	if err != nil || len(readers) == 0 {
		return false
	}
	writers, err := c.repReader.MatchedWriters()
	if err != nil || len(writers) == 0 {
		return false
	}
	ids := map[string]bool{}
	for _, r := range readers {
		if id := parseUserData(r.UserData)["serviceid"]; id != "" {
			ids[id] = true
		}
	}
	if len(ids) == 0 {
		return true // peers without service ids: any match will do
	}
	for _, w := range writers {
		if ids[parseUserData(w.UserData)["serviceid"]] {
			return true
		}
	}
	return false
}

// waitForService re-checks serviceIsReady on every graph change (the
// matches of the client's endpoints included, see GraphChanged).
func (c *client) waitForService(ctx context.Context) error {
	for {
		ch := c.n.ctx.GraphChanged()
		if c.serviceIsReady() {
			return nil
		}
		c.n.ctx.beforeWait()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("ros: waiting for service %s: %w", c.name, ctx.Err())
		case <-c.done:
			return ErrClosed
		case <-c.n.runCtx.Done():
			return ErrClosed
		}
	}
}

func (c *client) gids() (readers, writers []dds.GUID) {
	return []dds.GUID{c.repReader.GUID()}, []dds.GUID{c.reqWriter.GUID()}
}

func (c *client) close() error {
	var err error
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closedFlag = true
		c.mu.Unlock()
		close(c.done)
		c.intro.close()
		err = errors.Join(c.reqWriter.Close(), c.repReader.Close())
	})
	return err
}

// Close closes the client; pending calls return ErrClosed.
func (c *client) Close() error {
	err := c.close()
	c.n.removeEntity(c)
	return err
}

// Client calls one ROS service with request type Req and response type
// Resp. It is safe for concurrent use, also from the node's own callbacks:
// responses are delivered on the Context's receive goroutine.
type Client[Req, Resp any] struct {
	c    *client
	conv func(*Req) rosidl.Message
}

// NewClient creates a client of the service name (relative, absolute or
// "~/"; remapped) with QoSServices unless WithQoS is given. The generated
// descriptor srv gives the request and response types:
//
//	cli, err := ros.NewClient(node, "/motor/reset", std_srvs_srv.Trigger)
func NewClient[Req, Resp any](n *Node, name string, srv rosidl.Service[Req, Resp], opts ...EndpointOption) (*Client[Req, Resp], error) {
	st := srv.Type()
	if st == nil {
		return nil, fmt.Errorf("ros: client %q: no service type (zero descriptor)", name)
	}
	c, err := newClient(n, name, st.Request, st.Response,
		func() rosidl.Message { return srv.ResponseMsg(new(Resp)) }, append(opts[:len(opts):len(opts)], withEventType(st.Event)))
	if err != nil {
		return nil, err
	}
	return &Client[Req, Resp]{c: c, conv: srv.RequestMsg}, nil
}

// Call sends req and waits for the response, until ctx is done or the
// client or its node is closed (ErrClosed). Give ctx a deadline: a service
// that never answers blocks Call until then.
func (c *Client[Req, Resp]) Call(ctx context.Context, req *Req) (*Resp, error) {
	if req == nil {
		return nil, fmt.Errorf("ros: call %s: nil request", c.c.name)
	}
	m, err := c.c.call(ctx, c.conv(req))
	if err != nil {
		return nil, err
	}
	r, ok := m.(any).(*Resp)
	if !ok {
		return nil, fmt.Errorf("ros: call %s: unexpected response type %T", c.c.name, m)
	}
	return r, nil
}

// WaitForService blocks until the service is available (a server whose
// request reader and reply writer both match this client, as rmw_cyclonedds
// decides it) or ctx is done.
func (c *Client[Req, Resp]) WaitForService(ctx context.Context) error { return c.c.waitForService(ctx) }

// ServiceIsReady reports whether the service is available now.
func (c *Client[Req, Resp]) ServiceIsReady() bool { return c.c.serviceIsReady() }

// Name returns the fully qualified service name.
func (c *Client[Req, Resp]) Name() string { return c.c.name }

// Malformed returns how many replies addressed to this client could not be
// decoded.
func (c *Client[Req, Resp]) Malformed() uint64 { return c.c.malformed.Load() }

// Close closes the client; pending calls return ErrClosed.
func (c *Client[Req, Resp]) Close() error { return c.c.Close() }

// DynamicClient is a client whose service type is chosen at run time (for
// tools such as `fsmnodes service call`).
type DynamicClient struct{ c *client }

// NewDynamicClient creates a client for the service type st.
func NewDynamicClient(n *Node, name string, st *rosidl.ServiceType, opts ...EndpointOption) (*DynamicClient, error) {
	if st == nil || st.Request == nil || st.Response == nil || st.Response.New == nil {
		return nil, fmt.Errorf("ros: client %q: incomplete service type information", name)
	}
	c, err := newClient(n, name, st.Request, st.Response, st.Response.New, append(opts[:len(opts):len(opts)], withEventType(st.Event)))
	if err != nil {
		return nil, err
	}
	return &DynamicClient{c: c}, nil
}

// Call sends req (of the service's request type) and waits for the
// response.
func (c *DynamicClient) Call(ctx context.Context, req rosidl.Message) (rosidl.Message, error) {
	if req == nil || req.ROSType() == nil || req.ROSType().Name != c.c.reqT.Name {
		return nil, fmt.Errorf("ros: call %s: request is not a %s", c.c.name, c.c.reqT.Name)
	}
	return c.c.call(ctx, req)
}

// WaitForService blocks until the service is available or ctx is done.
func (c *DynamicClient) WaitForService(ctx context.Context) error { return c.c.waitForService(ctx) }

// ServiceIsReady reports whether the service is available now.
func (c *DynamicClient) ServiceIsReady() bool { return c.c.serviceIsReady() }

// Name returns the fully qualified service name.
func (c *DynamicClient) Name() string { return c.c.name }

// Close closes the client.
func (c *DynamicClient) Close() error { return c.c.Close() }
