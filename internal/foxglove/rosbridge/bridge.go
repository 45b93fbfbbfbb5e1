// Package rosbridge connects a foxglove.Server to the ROS 2 graph, as
// foxglove_bridge does: every topic of a known type becomes a channel
// (schema encoding ros2msg, message encoding cdr), every service a
// service, parameters of all nodes are named "/node.param", and the
// connection graph lists which node publishes, subscribes and serves what.
package rosbridge

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/foxglove"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	action_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/action_msgs/srv"
)

// Encoding is the message encoding of every channel and service: CDR with
// its 4-byte encapsulation header, as on the wire.
const Encoding = "cdr"

// SchemaEncoding is the schema encoding of every channel.
const SchemaEncoding = "ros2msg"

// Config configures a Bridge.
type Config struct {
	// Registry knows the types the bridge can describe; topics and
	// services of other types are skipped (logged once per type).
	Registry *rosidl.Registry
	// IncludeHidden also offers hidden topics and services (a token
	// starting with '_', such as action internals).
	IncludeHidden bool
	// MinQoSDepth and MaxQoSDepth clamp the depth of the bridge's
	// subscriptions, which is the sum of the publishers' depths (defaults
	// 1 and 25, as foxglove_bridge).
	MinQoSDepth, MaxQoSDepth int
	// GraphDebounce is the quiet time after a graph change before the
	// channels are recomputed (default 100 ms).
	GraphDebounce time.Duration
	// DiagnosticsPeriod is the period of the bridge's /diagnostics
	// messages (default 1 s).
	DiagnosticsPeriod time.Duration
}

// Bridge is the foxglove.Backend of a ROS 2 node.
type Bridge struct {
	node *ros.Node
	rc   *ros.Context
	cfg  Config
	srv  *foxglove.Server

	mu         sync.Mutex
	schemas    map[string]string // message type -> full definition
	srvSchemas map[string][2]string
	unknown    map[string]bool // types already reported as unknown
	clients    map[string]*serviceClient
	params     map[string]*paramClient // node FQN -> clients
	subs       map[*ros.RawSubscription]struct{}
	// closedDrops keeps the drop counts of closed subscriptions.
	closedDrops uint64
	closed      bool

	goals *goals
}

type serviceClient struct {
	typ  string
	c    *ros.DynamicClient
	busy int // calls in progress (guarded by Bridge.mu): not pruned meanwhile
}

// New returns a Bridge for node. Attach a Server with Start.
func New(node *ros.Node, cfg Config) (*Bridge, error) {
	if cfg.Registry == nil {
		return nil, errors.New("rosbridge: Config.Registry is nil")
	}
	if cfg.MinQoSDepth <= 0 {
		cfg.MinQoSDepth = 1
	}
	if cfg.MaxQoSDepth <= 0 {
		cfg.MaxQoSDepth = 25
	}
	if cfg.MaxQoSDepth < cfg.MinQoSDepth {
		return nil, fmt.Errorf("rosbridge: max_qos_depth %d is below min_qos_depth %d", cfg.MaxQoSDepth, cfg.MinQoSDepth)
	}
	if cfg.GraphDebounce <= 0 {
		cfg.GraphDebounce = 100 * time.Millisecond
	}
	if cfg.DiagnosticsPeriod <= 0 {
		cfg.DiagnosticsPeriod = time.Second
	}
	b := &Bridge{
		node:       node,
		rc:         node.Context(),
		cfg:        cfg,
		schemas:    map[string]string{},
		srvSchemas: map[string][2]string{},
		unknown:    map[string]bool{},
		clients:    map[string]*serviceClient{},
		params:     map[string]*paramClient{},
		subs:       map[*ros.RawSubscription]struct{}{},
	}
	b.goals = &goals{b: b, tracked: map[goalKey]*trackedGoal{}, cancels: map[string]*ros.Client[action_msgs_srv.CancelGoal_Request, action_msgs_srv.CancelGoal_Response]{}}
	return b, nil
}

// Start attaches srv, subscribes to /parameter_events, publishes the
// bridge's counters on /diagnostics and keeps srv's channels, services and
// graph in step with the ROS graph until ctx ends.
func (b *Bridge) Start(ctx context.Context, srv *foxglove.Server) error {
	b.srv = srv
	if err := b.startParamEvents(); err != nil {
		return err
	}
	if err := b.startDiagnostics(b.cfg.DiagnosticsPeriod); err != nil {
		return err
	}
	go b.watchGraph(ctx)
	return nil
}

// Close releases the service and parameter clients.
func (b *Bridge) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for name, c := range b.clients {
		c.c.Close()
		delete(b.clients, name)
	}
	for name, p := range b.params {
		p.close()
		delete(b.params, name)
	}
}

func (b *Bridge) watchGraph(ctx context.Context) {
	for {
		changed := b.rc.GraphChanged()
		b.Refresh()
		select {
		case <-ctx.Done():
			return
		case <-b.rc.Done():
			return
		case <-changed:
		}
		// Discovery comes in bursts (a node announces its endpoints one
		// by one): wait for a quiet moment.
		t := time.NewTimer(b.cfg.GraphDebounce)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func (b *Bridge) hidden(name string) bool {
	return !b.cfg.IncludeHidden && ros.IsHiddenName(name)
}

func (b *Bridge) reportUnknown(kind, typ, name string) {
	if b.unknown[typ] {
		return
	}
	b.unknown[typ] = true
	b.node.Logger().Warnf("%s %s has type %s, which this build does not know; it is not offered (further ones of this type are skipped silently)", kind, name, typ)
}

// messageSchema returns the full definition of a message type, or false.
func (b *Bridge) messageSchema(typ string) (*rosidl.TypeInfo, string, bool) {
	ti, err := b.cfg.Registry.Message(typ)
	if err != nil || ti.DDSName == "" {
		return nil, "", false
	}
	if s, ok := b.schemas[ti.Name]; ok {
		return ti, s, true
	}
	s := FullDefinition(b.cfg.Registry, ti)
	b.schemas[ti.Name] = s
	return ti, s, true
}

// Refresh recomputes the channels, services and graph from the ROS graph
// now (the graph watcher calls it after every change).
func (b *Bridge) Refresh() {
	if b.srv == nil {
		return
	}
	b.mu.Lock()
	var chans []foxglove.ChannelInfo
	for _, t := range b.rc.TopicNamesAndTypes() {
		if b.hidden(t.Name) {
			continue
		}
		for _, typ := range t.Types {
			ti, schema, ok := b.messageSchema(typ)
			if !ok {
				b.reportUnknown("topic", typ, t.Name)
				continue
			}
			chans = append(chans, foxglove.ChannelInfo{Topic: t.Name, Encoding: Encoding, SchemaName: ti.Name,
				Schema: schema, SchemaEncoding: SchemaEncoding})
		}
	}
	var svcs []foxglove.ServiceInfo
	present := map[string]bool{}
	for _, s := range b.rc.ServiceNamesAndTypes() {
		if b.hidden(s.Name) {
			continue
		}
		for _, typ := range s.Types {
			st, err := b.cfg.Registry.Service(typ)
			if err != nil {
				b.reportUnknown("service", typ, s.Name)
				continue
			}
			sch, ok := b.srvSchemas[st.Name]
			if !ok {
				sch = [2]string{FullDefinition(b.cfg.Registry, st.Request), FullDefinition(b.cfg.Registry, st.Response)}
				b.srvSchemas[st.Name] = sch
			}
			present[s.Name+"\x00"+st.Name] = true
			svcs = append(svcs, foxglove.ServiceInfo{
				Name: s.Name, Type: st.Name,
				Request:  foxglove.MessageSchema{Encoding: Encoding, SchemaName: st.Request.Name, SchemaEncoding: SchemaEncoding, Schema: sch[0]},
				Response: foxglove.MessageSchema{Encoding: Encoding, SchemaName: st.Response.Name, SchemaEncoding: SchemaEncoding, Schema: sch[1]},
			})
		}
	}
	// Forget clients of services that are gone, unless a call is waiting
	// on one (for its service to appear, or for the answer).
	for key, c := range b.clients {
		if !present[key] && c.busy == 0 {
			c.c.Close()
			delete(b.clients, key)
		}
	}
	b.pruneParamClientsLocked()
	b.mu.Unlock()
	b.srv.SetChannels(chans)
	b.srv.SetServices(svcs)
	b.srv.SetGraph(b.graph())
}

// graph lists every node's publishers, subscriptions and services.
func (b *Bridge) graph() foxglove.Graph {
	g := foxglove.Graph{Published: map[string][]string{}, Subscribed: map[string][]string{}, Services: map[string][]string{}}
	for _, n := range b.rc.NodeNames() {
		id := n.FullyQualifiedName()
		if pubs, err := b.rc.PublisherNamesAndTypesByNode(n.Name, n.Namespace); err == nil {
			for _, t := range pubs {
				if !b.hidden(t.Name) {
					g.Published[t.Name] = append(g.Published[t.Name], id)
				}
			}
		}
		if subs, err := b.rc.SubscriberNamesAndTypesByNode(n.Name, n.Namespace); err == nil {
			for _, t := range subs {
				if !b.hidden(t.Name) {
					g.Subscribed[t.Name] = append(g.Subscribed[t.Name], id)
				}
			}
		}
		if svcs, err := b.rc.ServiceNamesAndTypesByNode(n.Name, n.Namespace); err == nil {
			for _, s := range svcs {
				if !b.hidden(s.Name) {
					g.Services[s.Name] = append(g.Services[s.Name], id)
				}
			}
		}
	}
	return g
}

// qosFor picks the QoS of a bridge subscription from the publishers, as
// foxglove_bridge does: depth is the sum of their depths, clamped; best
// effort if any publisher is best effort (a reliable reader would not
// match it); transient local only if all publishers are.
func (b *Bridge) qosFor(topic string) ros.QoS {
	q := ros.QoSDefault
	pubs := b.rc.PublishersInfo(topic)
	depth, transient := 0, 0
	bestEffort := false
	for _, p := range pubs {
		switch {
		case p.QoS.History == ros.HistoryKeepAll:
			depth += b.cfg.MaxQoSDepth
		case p.QoS.Depth > 0:
			depth += p.QoS.Depth
		default:
			depth++
		}
		if p.QoS.Reliability == ros.ReliabilityBestEffort {
			bestEffort = true
		}
		if p.QoS.Durability == ros.DurabilityTransientLocal {
			transient++
		}
	}
	q = q.KeepLast(min(max(depth, b.cfg.MinQoSDepth), b.cfg.MaxQoSDepth))
	if bestEffort {
		q = q.BestEffort()
	}
	if len(pubs) > 0 && transient == len(pubs) {
		q = q.TransientLocal()
	}
	return q
}

// Subscribe implements foxglove.Backend with a raw subscription: the CDR
// bytes go to the clients as they came off the wire, stamped with the
// receive time on the node's clock. The sink only queues (it never
// blocks), so it runs on the receive goroutine: a late node goroutine
// cannot make the bridge drop samples of a 1 kHz topic.
func (b *Bridge) Subscribe(ch foxglove.Channel, sink foxglove.Sink) (func(), error) {
	ti, err := b.cfg.Registry.Message(ch.SchemaName)
	if err != nil {
		return nil, err
	}
	sub, err := ros.NewRawSubscription(b.node, ch.Topic, ti, b.qosFor(ch.Topic), func(m ros.RawMessage) {
		sink(uint64(m.ReceivedAt.UnixNano()), m.Data)
	}, ros.WithReceiveGoroutine())
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.subs[sub] = struct{}{}
	b.mu.Unlock()
	return func() {
		if err := sub.Close(); err != nil && !errors.Is(err, ros.ErrClosed) {
			b.node.Logger().Warnf("closing the subscription to %s: %v", ch.Topic, err)
		}
		b.mu.Lock()
		delete(b.subs, sub)
		b.closedDrops += sub.Dropped()
		b.mu.Unlock()
	}, nil
}

// clientPublisher publishes what a client sends on one channel.
type clientPublisher struct {
	ti  *rosidl.TypeInfo
	pub *ros.DynamicPublisher
}

// Publish decodes the payload first: a malformed message is rejected
// with the reason instead of reaching the robot.
func (p *clientPublisher) Publish(payload []byte) error {
	m := p.ti.New()
	if err := rosidl.Unmarshal(payload, m); err != nil {
		return fmt.Errorf("malformed %s message: %w", p.ti.Name, err)
	}
	return p.pub.Publish(m)
}

func (p *clientPublisher) Close() error { return p.pub.Close() }

// ClientAdvertise implements foxglove.Backend: a publisher of the named
// type (QoS reliable, volatile, keep last 10). A topic that already
// carries another type is refused.
func (b *Bridge) ClientAdvertise(ch foxglove.ClientChannel) (foxglove.ClientPublisher, error) {
	if ch.Encoding != Encoding {
		return nil, fmt.Errorf("encoding %q is not supported (only %q)", ch.Encoding, Encoding)
	}
	ti, err := b.cfg.Registry.Message(ch.SchemaName)
	if err != nil || ti.New == nil {
		return nil, fmt.Errorf("unknown message type %q", ch.SchemaName)
	}
	topic, err := b.node.ResolveTopicName(ch.Topic)
	if err != nil {
		return nil, err
	}
	for _, t := range b.rc.TopicNamesAndTypes() {
		if t.Name == topic {
			for _, typ := range t.Types {
				if typ != ti.Name {
					return nil, fmt.Errorf("topic %s already carries type %s, not %s", topic, typ, ti.Name)
				}
			}
		}
	}
	pub, err := ros.NewDynamicPublisher(b.node, topic, ti, ros.QoSDefault)
	if err != nil {
		return nil, err
	}
	return &clientPublisher{ti: ti, pub: pub}, nil
}

// CallService implements foxglove.Backend: the request is decoded (so a
// malformed one is refused with the reason), the service called, and the
// response encoded as CDR.
func (b *Bridge) CallService(ctx context.Context, svc foxglove.Service, encoding string, request []byte) ([]byte, error) {
	if encoding != Encoding {
		return nil, fmt.Errorf("encoding %q is not supported (only %q)", encoding, Encoding)
	}
	st, err := b.cfg.Registry.Service(svc.Type)
	if err != nil {
		return nil, err
	}
	req := st.Request.New()
	if err := rosidl.Unmarshal(request, req); err != nil {
		return nil, fmt.Errorf("malformed %s request: %w", st.Name, err)
	}
	c, release, err := b.serviceClient(svc.Name, st)
	if err != nil {
		return nil, err
	}
	defer release()
	if !c.ServiceIsReady() {
		if err := c.WaitForService(ctx); err != nil {
			return nil, fmt.Errorf("service is not available: %w", err)
		}
	}
	resp, err := c.Call(ctx, req)
	if err != nil {
		return nil, err
	}
	out := rosidl.Marshal(resp, nil)
	b.goals.afterCall(ctx, svc.Name, request, out)
	return out, nil
}

// serviceClient returns the client of service name, marked busy until
// release is called so that a graph refresh does not close it under a call
// (a call may wait for a service that is not in the graph yet).
func (b *Bridge) serviceClient(name string, st *rosidl.ServiceType) (_ *ros.DynamicClient, release func(), err error) {
	key := name + "\x00" + st.Name
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, nil, ros.ErrClosed
	}
	sc, ok := b.clients[key]
	if !ok {
		c, err := ros.NewDynamicClient(b.node, name, st)
		if err != nil {
			return nil, nil, err
		}
		sc = &serviceClient{typ: st.Name, c: c}
		b.clients[key] = sc
	}
	sc.busy++
	return sc.c, func() {
		b.mu.Lock()
		sc.busy--
		b.mu.Unlock()
	}, nil
}

// splitParamName splits "/ns/node.param" at the first '.' (node names
// cannot contain one; parameter names can).
func splitParamName(full string) (node, param string, err error) {
	i := strings.IndexByte(full, '.')
	if i <= 0 || i == len(full)-1 || !strings.HasPrefix(full, "/") {
		return "", "", fmt.Errorf("parameter name %q is not of the form /node.parameter", full)
	}
	return full[:i], full[i+1:], nil
}

func sortParams(ps []foxglove.Parameter) {
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
}
