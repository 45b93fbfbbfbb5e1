// Package rosidl defines what the client library needs to know about a ROS 2
// interface type: the Message interface every generated binding implements,
// the static type information (ROS name, DDS name, REP-2011 type hash and
// type description, definition text), and a Registry that maps "pkg/msg/Name" strings to types
// for tools such as the CLI.
//
// Generated code lives under msgs/ and is produced by internal/msggen.
package rosidl

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/fsmnodes/fsmnodes/internal/cdr"
)

// Message is implemented by the pointer type of every generated message,
// including the request/response halves of services and the derived types of
// actions.
type Message interface {
	// MarshalCDR appends the message body (no encapsulation header).
	MarshalCDR(e *cdr.Encoder)
	// UnmarshalCDR reads the message body and returns d.Err() at the end.
	UnmarshalCDR(d *cdr.Decoder) error
	// ROSType returns the static type information. It may be called on a
	// nil pointer.
	ROSType() *TypeInfo
}

// Validator is implemented by every generated message: Validate reports a
// bounded string or sequence that exceeds its bound (the wire format cannot
// carry bounds, so senders must check them).
type Validator interface {
	Validate() error
}

// Validate calls m.Validate if m implements Validator, else returns nil.
func Validate(m Message) error {
	if v, ok := m.(Validator); ok {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Ptr is the constraint used by generic APIs: *T implements Message.
type Ptr[T any] interface {
	*T
	Message
}

// TypeInfo describes one message type.
type TypeInfo struct {
	// Name is the ROS name, e.g. "std_msgs/msg/String" or
	// "std_srvs/srv/SetBool_Request".
	Name string
	// DDSName is the DDS type name, e.g. "std_msgs::msg::dds_::String_".
	DDSName string
	// Hash is the REP-2011 hash string "RIHS01_<64 hex>".
	Hash string
	// Definition is the interface text (.msg body) for `interface show`.
	Definition string
	// New returns a new zero message with its default values set.
	New func() Message
	// Desc is the REP-2011 type description (nil for hand-written types);
	// Desc.TypeHash() equals Hash.
	Desc *TypeDescription
	// ServiceDesc is set on the request and response types of a service:
	// the description of the service type itself (nil when unknown).
	ServiceDesc *TypeDescription
}

// ServiceType describes a service pkg/srv/Name.
type ServiceType struct {
	Name     string // "std_srvs/srv/SetBool"
	Request  *TypeInfo
	Response *TypeInfo
	// Event is the type of the service's introspection events
	// (pkg/srv/Name_Event: info, request[<=1], response[<=1]), which
	// Jazzy publishes on <service>/_service_event; nil when unknown.
	Event      *TypeInfo
	Definition string // .srv text
	// Hash is the REP-2011 hash of the service type itself (fields
	// request_message, response_message, event_message), "" if unknown.
	Hash string
	// Desc is the description of the service type (nil when Hash is "").
	Desc *TypeDescription
}

// ActionType describes an action pkg/action/Name and the types the ROS 2
// action protocol derives from it.
type ActionType struct {
	Name            string // "nav2_msgs/action/NavigateToPose"
	Goal            *TypeInfo
	Result          *TypeInfo
	Feedback        *TypeInfo
	SendGoal        *ServiceType // X_SendGoal: {goal_id, goal} -> {accepted, stamp}
	GetResult       *ServiceType // X_GetResult: {goal_id} -> {status, result}
	FeedbackMessage *TypeInfo    // X_FeedbackMessage: {goal_id, feedback}
	Definition      string       // .action text
	// Hash is the REP-2011 hash of the action type itself, "" if unknown.
	Hash string
	// Desc is the description of the action type (nil when Hash is "").
	Desc *TypeDescription
}

// DDSTypeName returns the DDS type name for a ROS type name:
// "pkg/msg/Name" -> "pkg::msg::dds_::Name_".
func DDSTypeName(rosName string) string {
	i := strings.LastIndexByte(rosName, '/')
	if i < 0 {
		return rosName
	}
	return strings.ReplaceAll(rosName[:i], "/", "::") + "::dds_::" + rosName[i+1:] + "_"
}

// ROSTypeName reverses DDSTypeName; it reports false for names that are not
// ROS types (no "dds_::" or no trailing underscore).
func ROSTypeName(ddsName string) (string, bool) {
	i := strings.Index(ddsName, "::dds_::")
	if i < 0 || !strings.HasSuffix(ddsName, "_") {
		return "", false
	}
	return strings.ReplaceAll(ddsName[:i], "::", "/") + "/" + strings.TrimSuffix(ddsName[i+len("::dds_::"):], "_"), true
}

// Registry maps ROS type names to type information. It is filled explicitly
// (see msgs.Registry for the generated set); there is no global registry.
type Registry struct {
	msgs    map[string]*TypeInfo
	srvs    map[string]*ServiceType
	actions map[string]*ActionType
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{
		msgs:    map[string]*TypeInfo{},
		srvs:    map[string]*ServiceType{},
		actions: map[string]*ActionType{},
	}
}

// AddMessage registers a message type.
func (r *Registry) AddMessage(t *TypeInfo) { r.msgs[t.Name] = t }

// AddService registers a service type and its request/response messages.
func (r *Registry) AddService(s *ServiceType) {
	r.srvs[s.Name] = s
	r.AddMessage(s.Request)
	r.AddMessage(s.Response)
}

// AddAction registers an action type and everything derived from it.
func (r *Registry) AddAction(a *ActionType) {
	r.actions[a.Name] = a
	r.AddMessage(a.Goal)
	r.AddMessage(a.Result)
	r.AddMessage(a.Feedback)
	r.AddMessage(a.FeedbackMessage)
	r.AddService(a.SendGoal)
	r.AddService(a.GetResult)
}

// normalize accepts the short forms "pkg/Name" for messages.
func normalize(name, kind string) string {
	if strings.Count(name, "/") == 1 {
		i := strings.IndexByte(name, '/')
		return name[:i] + "/" + kind + "/" + name[i+1:]
	}
	return name
}

// Message looks up a message type by "pkg/msg/Name" (or "pkg/Name").
func (r *Registry) Message(name string) (*TypeInfo, error) {
	full := normalize(name, "msg")
	if t, ok := r.msgs[full]; ok {
		return t, nil
	}
	// A service's event type (pkg/srv/X_Event, pkg/action/X_SendGoal_Event)
	// is found through its service, as rosidl_runtime_py finds it; it is
	// not listed among the messages, as `ros2 interface list` does not.
	if svc, ok := strings.CutSuffix(full, "_Event"); ok {
		if s, ok := r.srvs[svc]; ok && s.Event != nil {
			return s.Event, nil
		}
	}
	return nil, fmt.Errorf("unknown message type %q", name)
}

// Service looks up a service type by "pkg/srv/Name" (or "pkg/Name").
func (r *Registry) Service(name string) (*ServiceType, error) {
	if t, ok := r.srvs[normalize(name, "srv")]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("unknown service type %q", name)
}

// Action looks up an action type by "pkg/action/Name" (or "pkg/Name").
func (r *Registry) Action(name string) (*ActionType, error) {
	if t, ok := r.actions[normalize(name, "action")]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("unknown action type %q", name)
}

// Names returns every registered message, service and action name, sorted.
func (r *Registry) Names() []string {
	var out []string
	for n := range r.msgs {
		out = append(out, n)
	}
	for n := range r.srvs {
		out = append(out, n)
	}
	for n := range r.actions {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Encoders and decoders for Marshal and Unmarshal: one passed to a
// message's method through its interface escapes, so a fresh one would be
// an allocation per message.
var (
	encoders = sync.Pool{New: func() any { return new(cdr.Encoder) }}
	decoders = sync.Pool{New: func() any { return new(cdr.Decoder) }}
)

// Marshal serializes m into a complete payload (header + body), reusing buf.
func Marshal(m Message, buf []byte) []byte {
	e := encoders.Get().(*cdr.Encoder)
	e.Reset(buf)
	m.MarshalCDR(e)
	out := e.Bytes()
	*e = cdr.Encoder{} // keep no reference to the caller's buffer
	encoders.Put(e)
	return out
}

// Unmarshal decodes a complete payload into m.
func Unmarshal(payload []byte, m Message) error {
	d := decoders.Get().(*cdr.Decoder)
	defer func() {
		*d = cdr.Decoder{} // keep no reference to the payload
		decoders.Put(d)
	}()
	if err := d.Reset(payload); err != nil {
		return err
	}
	if err := m.UnmarshalCDR(d); err != nil {
		return fmt.Errorf("decode %s: %w", m.ROSType().Name, err)
	}
	return nil
}
