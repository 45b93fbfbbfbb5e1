package ros

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fsmnodes/fsmnodes/internal/cdr"
	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	service_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/service_msgs/msg"
)

// Service introspection, as rcl does it in Jazzy (service_introspection.h,
// service_event_publisher.c): a service or client whose introspection is
// switched on publishes a pkg/srv/X_Event message on
// "<service>/_service_event" at each step of a call — REQUEST_SENT and
// RESPONSE_RECEIVED on the client, REQUEST_RECEIVED and RESPONSE_SENT on
// the server — carrying the time (of the clock given), the client's gid
// and the sequence number, and with IntrospectionContents also the request
// or the response.

// IntrospectionState is the service introspection state of a service or
// client (rcl_service_introspection_state_t).
type IntrospectionState int

// Introspection states.
const (
	// IntrospectionOff publishes no events (the default).
	IntrospectionOff IntrospectionState = iota
	// IntrospectionMetadata publishes events without the request and
	// response (empty sequences).
	IntrospectionMetadata
	// IntrospectionContents publishes events with the request or response.
	IntrospectionContents
)

// String names the state as the introspection parameters spell it
// ("disabled", "metadata", "contents").
func (s IntrospectionState) String() string {
	switch s {
	case IntrospectionOff:
		return "disabled"
	case IntrospectionMetadata:
		return "metadata"
	case IntrospectionContents:
		return "contents"
	}
	return fmt.Sprintf("IntrospectionState(%d)", int(s))
}

// ServiceEventSuffix is appended to a service's name to name the topic of
// its introspection events (RCL_SERVICE_INTROSPECTION_TOPIC_POSTFIX).
const ServiceEventSuffix = "/_service_event"

// ErrIntrospectionUnavailable is returned when introspection is switched on
// in a Context that speaks Humble: ROS 2 Humble has no service
// introspection (no service_msgs, no _service_event topics).
var ErrIntrospectionUnavailable = errors.New("service introspection is not available with ROS 2 Humble (it came with Jazzy)")

// withEventType tells a service or client the type of its events.
func withEventType(ti *rosidl.TypeInfo) EndpointOption {
	return func(o *endpointOptions) { o.event = ti }
}

// introspection is the event publisher of one service or client.
type introspection struct {
	n       *Node
	service string           // fully qualified service name
	event   *rosidl.TypeInfo // nil: the type has no event type
	what    string           // "service" or "client", for errors

	mu    sync.Mutex
	state IntrospectionState
	clock *Clock
	pub   *publisher // created at the first switch on, closed when off

	on     atomic.Bool // state != off (read on every call)
	failed throttle
}

func newIntrospection(n *Node, service, what string, event *rosidl.TypeInfo) *introspection {
	return &introspection{n: n, service: service, event: event, what: what}
}

// configure is ConfigureIntrospection of a service or client. As in rcl,
// the publisher is created with qos the first time introspection is
// switched on, kept (with that QoS) while it changes between metadata and
// contents, and destroyed when it is switched off.
func (in *introspection) configure(clock *Clock, qos QoS, state IntrospectionState) error {
	if state < IntrospectionOff || state > IntrospectionContents {
		return fmt.Errorf("ros: %s %s: invalid introspection state %d", in.what, in.service, int(state))
	}
	if clock == nil {
		clock = in.n.Clock()
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if state == IntrospectionOff {
		in.state = state
		in.on.Store(false)
		if in.pub != nil {
			err := in.pub.Close()
			in.pub = nil
			if err != nil && !errors.Is(err, dds.ErrClosed) {
				return fmt.Errorf("ros: %s %s: introspection off: %w", in.what, in.service, err)
			}
		}
		return nil
	}
	if in.n.ctx.Distro() == Humble {
		return fmt.Errorf("ros: %s %s: %w", in.what, in.service, ErrIntrospectionUnavailable)
	}
	if in.event == nil {
		return fmt.Errorf("ros: %s %s: its service type has no event type (generated without service_msgs)", in.what, in.service)
	}
	if in.pub == nil {
		pub, err := newPublisher(in.n, in.service+ServiceEventSuffix, in.event, qos, withoutDefaultEvents())
		if err != nil {
			return fmt.Errorf("ros: %s %s: introspection: %w", in.what, in.service, err)
		}
		in.pub = pub
	}
	in.state, in.clock = state, clock
	in.on.Store(true)
	return nil
}

// current returns the state.
func (in *introspection) current() IntrospectionState {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.state
}

// publish sends one event: kind is a ServiceEventInfo event type, msg the
// request or response (sent only with IntrospectionContents). A failure is
// logged (at most once a second); the call itself goes on, as in rclcpp,
// where it would throw out of the executor instead.
func (in *introspection) publish(kind uint8, seq int64, gid [16]byte, msg rosidl.Message) {
	if in == nil || !in.on.Load() {
		return
	}
	in.mu.Lock()
	state, pub, clock := in.state, in.pub, in.clock
	in.mu.Unlock()
	if state == IntrospectionOff || pub == nil {
		return
	}
	now := clock.Now().UnixNano()
	ev := &serviceEvent{ti: in.event, info: service_msgs_msg.ServiceEventInfo{
		EventType:      kind,
		Stamp:          builtin_interfaces_msg.Time{Sec: int32(now / 1e9), Nanosec: uint32(now % 1e9)},
		ClientGid:      gid,
		SequenceNumber: seq,
	}}
	if state == IntrospectionContents {
		switch kind {
		case service_msgs_msg.ServiceEventInfo_REQUEST_SENT, service_msgs_msg.ServiceEventInfo_REQUEST_RECEIVED:
			ev.request = msg
		default:
			ev.response = msg
		}
	}
	if err := pub.publish(ev); err != nil && !errors.Is(err, ErrClosed) {
		in.n.warnThrottled(&in.failed, "%s %s: introspection event not published: %v", in.what, in.service, err)
	}
}

// close closes the publisher with its service or client.
func (in *introspection) close() {
	if in == nil {
		return
	}
	in.mu.Lock()
	pub := in.pub
	in.pub = nil
	in.state = IntrospectionOff
	in.on.Store(false)
	in.mu.Unlock()
	if pub != nil {
		pub.Close()
	}
}

// serviceEvent is an X_Event message built from a request or response of
// any service: ServiceEventInfo info, X_Request[<=1] request,
// X_Response[<=1] response, encoded as the generated X_Event type is. It
// is only ever sent.
type serviceEvent struct {
	ti                *rosidl.TypeInfo
	info              service_msgs_msg.ServiceEventInfo
	request, response rosidl.Message // nil: empty sequence
}

// MarshalCDR appends the body of the event.
func (m *serviceEvent) MarshalCDR(e *cdr.Encoder) {
	m.info.MarshalCDR(e)
	for _, part := range []rosidl.Message{m.request, m.response} {
		if part == nil {
			e.SeqLen(0)
			continue
		}
		e.SeqLen(1)
		part.MarshalCDR(e)
	}
}

// UnmarshalCDR refuses: events are decoded with their generated type.
func (m *serviceEvent) UnmarshalCDR(*cdr.Decoder) error {
	return errors.New("ros: a service event is decoded with its generated X_Event type")
}

// ROSType returns the X_Event type.
func (m *serviceEvent) ROSType() *rosidl.TypeInfo { return m.ti }

// serverSideGID is the client_gid rcl puts in a server's events: the
// rmw_request_id_t writer_guid rmw_cyclonedds fills in when it takes a
// request, the request header's client id followed by the instance handle
// of the client's request writer, each as 8 bytes in the host's (little-
// endian) order.
func serverSideGID(h requestHeader, writer dds.InstanceHandle) [16]byte {
	var g [16]byte
	binary.LittleEndian.PutUint64(g[:8], h.GUID)
	binary.LittleEndian.PutUint64(g[8:], uint64(writer))
	return g
}

// ConfigureIntrospection switches the service's introspection events
// (rclcpp's Service::configure_introspection): REQUEST_RECEIVED when a
// request is handed to the handler and RESPONSE_SENT when its response
// goes out, published on "<service>/_service_event" with qos (created the
// first time; rclcpp's demos use QoSSystemDefault), stamped with clock
// (nil: the node's clock). It fails with ErrIntrospectionUnavailable in a
// Context speaking Humble.
func (s *Service) ConfigureIntrospection(clock *Clock, qos QoS, state IntrospectionState) error {
	return s.intro.configure(clock, qos, state)
}

// ConfigureIntrospection switches the client's introspection events
// (rclcpp's Client::configure_introspection): REQUEST_SENT when a request
// is sent and RESPONSE_RECEIVED when a call gets its response; see
// Service.ConfigureIntrospection.
func (c *Client[Req, Resp]) ConfigureIntrospection(clock *Clock, qos QoS, state IntrospectionState) error {
	return c.c.intro.configure(clock, qos, state)
}

// ConfigureIntrospection switches the client's introspection events (see
// Client.ConfigureIntrospection).
func (c *DynamicClient) ConfigureIntrospection(clock *Clock, qos QoS, state IntrospectionState) error {
	return c.c.intro.configure(clock, qos, state)
}

// The node-wide switch: the parameters of demo_nodes_cpp's
// introspection_service and introspection_client, which the ROS 2
// documentation uses (`ros2 param set /introspection_service
// service_configure_introspection contents`).
const (
	ServiceIntrospectionParam = "service_configure_introspection"
	ClientIntrospectionParam  = "client_configure_introspection"
)

// introspectionStates maps the parameter values to states.
var introspectionStates = map[string]IntrospectionState{
	"disabled": IntrospectionOff, "metadata": IntrospectionMetadata, "contents": IntrospectionContents,
}

// nodeIntrospection is the node-wide state set by the parameters.
type nodeIntrospection struct {
	mu       sync.Mutex
	services IntrospectionState
	clients  IntrospectionState
}

// DeclareIntrospectionParameters declares the string parameters
// service_configure_introspection and client_configure_introspection
// ("disabled", "metadata" or "contents"; default "disabled"), which switch
// the introspection of every service and every client of the node, those
// created before and after, with QoSSystemDefault and the node's clock, as
// demo_nodes_cpp's introspection demos do for their one service and
// client. Services and clients of the ROS 2 infrastructure (parameters,
// type description, lifecycle, the services of actions) are left alone;
// ConfigureIntrospection still switches them one by one.
//
// rclcpp declares no such parameters, so nodes declare them only by
// calling this. When the Context speaks Humble, values other than
// "disabled" are refused (an override given at start fails the call).
func (n *Node) DeclareIntrospectionParameters() error {
	ni := &nodeIntrospection{}
	if !n.intro.CompareAndSwap(nil, ni) {
		return nodeError(n.fqn, errors.New("introspection parameters already declared"))
	}
	n.OnSetParameters(func(ps []Parameter) error {
		for _, p := range ps {
			if p.Name != ServiceIntrospectionParam && p.Name != ClientIntrospectionParam {
				continue
			}
			if p.Value.Type() != param.TypeString {
				return fmt.Errorf("%s must be a string", p.Name)
			}
			st, ok := introspectionStates[p.Value.Str()]
			if !ok {
				return fmt.Errorf("%s must be one of 'disabled', 'metadata', or 'contents'", p.Name)
			}
			if st != IntrospectionOff && n.ctx.Distro() == Humble {
				return fmt.Errorf("%s: %v", p.Name, ErrIntrospectionUnavailable)
			}
		}
		return nil
	})
	n.OnParametersChanged(func(ps []Parameter) {
		for _, p := range ps {
			if p.Name == ServiceIntrospectionParam || p.Name == ClientIntrospectionParam {
				n.setNodeIntrospection(p)
			}
		}
	})
	for _, name := range []string{ServiceIntrospectionParam, ClientIntrospectionParam} {
		what := "services"
		if name == ClientIntrospectionParam {
			what = "clients"
		}
		v, err := n.DeclareParameter(name, "disabled", ParamDescriptor{
			Description:           "service introspection of the node's " + what + ": disabled, metadata or contents (events on <service>/_service_event)",
			AdditionalConstraints: "one of disabled, metadata, contents",
		})
		if err != nil {
			return err
		}
		n.setNodeIntrospection(Parameter{Name: name, Value: v})
	}
	return nil
}

// setNodeIntrospection applies a (validated) parameter to the node's
// services or clients.
func (n *Node) setNodeIntrospection(p Parameter) {
	ni := n.intro.Load()
	if ni == nil {
		return
	}
	st := introspectionStates[p.Value.Str()]
	ni.mu.Lock()
	if p.Name == ServiceIntrospectionParam {
		ni.services = st
	} else {
		ni.clients = st
	}
	ni.mu.Unlock()
	n.mu.Lock()
	ents := append([]entity(nil), n.entities...)
	n.mu.Unlock()
	for _, e := range ents {
		switch x := e.(type) {
		case *Service:
			if p.Name == ServiceIntrospectionParam {
				n.applyNodeIntrospection(x.intro, x.reqT)
			}
		case *client:
			if p.Name == ClientIntrospectionParam {
				n.applyNodeIntrospection(x.intro, x.reqT)
			}
		}
	}
}

// applyNodeIntrospection gives a service's or client's introspection the
// node-wide state, unless it belongs to the infrastructure.
func (n *Node) applyNodeIntrospection(in *introspection, reqT *rosidl.TypeInfo) {
	ni := n.intro.Load()
	if ni == nil || in == nil || infrastructureService(in.service, reqT) {
		return
	}
	ni.mu.Lock()
	st := ni.services
	if in.what == "client" {
		st = ni.clients
	}
	ni.mu.Unlock()
	if in.current() == st {
		return
	}
	if err := in.configure(n.Clock(), QoSSystemDefault, st); err != nil {
		n.Logger().Warnf("%v", err)
	}
}

// infrastructureService reports whether a service belongs to the ROS 2
// machinery rather than to the node's own behaviour.
func infrastructureService(name string, reqT *rosidl.TypeInfo) bool {
	if strings.Contains(name, "/_action/") {
		return true
	}
	pkg, _, _ := strings.Cut(reqT.Name, "/")
	switch pkg {
	case "rcl_interfaces", "type_description_interfaces", "lifecycle_msgs":
		return true
	}
	return false
}
