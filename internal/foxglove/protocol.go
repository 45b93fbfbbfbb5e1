// Package foxglove is a server of the Foxglove WebSocket protocol
// (subprotocols foxglove.websocket.v1 and foxglove.sdk.v1, the same
// messages under two names), the protocol Foxglove and Lichtblick use to
// watch and steer a live robot. The package knows nothing about ROS:
// a Backend supplies the channels (topics), services, parameters and the
// connection graph, and carries out what clients ask for. The ROS 2 side
// is in the rosbridge subpackage.
//
// This file holds the wire format: the JSON messages both sides exchange,
// and the binary frames with their little-endian layouts.
package foxglove

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Subprotocol is the WebSocket subprotocol of version 1 of the Foxglove
// WebSocket protocol, the name older clients (Lichtblick, Foxglove before
// the SDK) offer.
const Subprotocol = "foxglove.websocket.v1"

// SubprotocolSDK is the name the Foxglove SDK's server (and foxglove_bridge
// from 3.x, built on it) gives the same protocol; current Foxglove clients
// offer it, some of them only it.
const SubprotocolSDK = "foxglove.sdk.v1"

// Server capabilities announced in serverInfo.
const (
	CapClientPublish       = "clientPublish"
	CapParameters          = "parameters"
	CapParametersSubscribe = "parametersSubscribe"
	CapServices            = "services"
	CapConnectionGraph     = "connectionGraph"
	CapTime                = "time"
)

// Binary opcodes sent by the server.
const (
	OpMessageData         byte = 0x01
	OpTime                byte = 0x02
	OpServiceCallResponse byte = 0x03
)

// Binary opcodes sent by clients.
const (
	OpClientMessageData  byte = 0x01
	OpServiceCallRequest byte = 0x02
)

// Status levels of the status message.
const (
	StatusInfo    = 0
	StatusWarning = 1
	StatusError   = 2
)

// Parameter types the protocol names explicitly (the "type" field).
const (
	ParamTypeByteArray    = "byte_array"
	ParamTypeFloat64      = "float64"
	ParamTypeFloat64Array = "float64_array"
)

// ChannelInfo is what a backend knows of a topic it offers: everything of
// an advertised channel but the id, which the server assigns.
type ChannelInfo struct {
	Topic          string `json:"topic"`
	Encoding       string `json:"encoding"`
	SchemaName     string `json:"schemaName"`
	Schema         string `json:"schema"`
	SchemaEncoding string `json:"schemaEncoding,omitempty"`
}

// Channel is an advertised channel: one topic with one schema.
type Channel struct {
	ID uint32 `json:"id"`
	ChannelInfo
}

// MessageSchema describes the request or response of a service.
type MessageSchema struct {
	Encoding       string `json:"encoding"`
	SchemaName     string `json:"schemaName"`
	SchemaEncoding string `json:"schemaEncoding"`
	Schema         string `json:"schema"`
}

// ServiceInfo is what a backend knows of a service it offers.
type ServiceInfo struct {
	Name     string        `json:"name"`
	Type     string        `json:"type"`
	Request  MessageSchema `json:"request"`
	Response MessageSchema `json:"response"`
}

// Service is an advertised service. The deprecated requestSchema and
// responseSchema fields are sent too, for older clients.
type Service struct {
	ID uint32 `json:"id"`
	ServiceInfo
	RequestSchema  string `json:"requestSchema"`
	ResponseSchema string `json:"responseSchema"`
}

// ClientChannel is a channel a client advertises to publish on.
type ClientChannel struct {
	ID             uint32 `json:"id"`
	Topic          string `json:"topic"`
	Encoding       string `json:"encoding"`
	SchemaName     string `json:"schemaName"`
	Schema         string `json:"schema,omitempty"`
	SchemaEncoding string `json:"schemaEncoding,omitempty"`
}

// EmptyArray is the value of a parameter set to [] without a type: the
// element type is unknown, so the backend picks the parameter's current
// array type.
type EmptyArray struct{}

// Parameter is a named parameter value. Value is one of nil (not set),
// bool, int64, float64, string, []byte, []bool, []int64, []float64,
// []string, or EmptyArray (only in setParameters requests). Its JSON form
// is the protocol's: doubles carry "type":"float64", double arrays
// "float64_array", byte arrays are base64 with "byte_array".
type Parameter struct {
	Name  string
	Value any
}

type paramJSON struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value,omitempty"`
	Type  string          `json:"type,omitempty"`
}

// MarshalJSON writes the protocol form of p. A NaN or infinite double,
// which JSON cannot carry, is written as null.
func (p Parameter) MarshalJSON() ([]byte, error) {
	out := paramJSON{Name: p.Name}
	var v any
	switch x := p.Value.(type) {
	case nil:
	case bool, int64, string, []bool, []int64, []string:
		v = x
	case float64:
		out.Type = ParamTypeFloat64
		v = jsonFloat(x)
	case []float64:
		out.Type = ParamTypeFloat64Array
		fs := make([]any, len(x))
		for i, f := range x {
			fs[i] = jsonFloat(f)
		}
		v = fs
	case []byte:
		out.Type = ParamTypeByteArray
		v = base64.StdEncoding.EncodeToString(x)
	default:
		return nil, fmt.Errorf("parameter %q: unsupported value type %T", p.Name, p.Value)
	}
	if v != nil || p.Value != nil {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("parameter %q: %w", p.Name, err)
		}
		out.Value = raw
	}
	return json.Marshal(out)
}

func jsonFloat(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return f
}

// UnmarshalJSON reads the protocol form into p. Integers without a type
// become int64 and other numbers float64, as the ROS 2 bridge types them.
func (p *Parameter) UnmarshalJSON(b []byte) error {
	var in paramJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	p.Name = in.Name
	p.Value = nil
	raw := bytes.TrimSpace(in.Value)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	v, err := parseParamValue(raw, in.Type)
	if err != nil {
		return fmt.Errorf("parameter %q: %w", in.Name, err)
	}
	p.Value = v
	return nil
}

func decodeNumbers(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(v)
}

func parseParamValue(raw []byte, typ string) (any, error) {
	switch typ {
	case ParamTypeByteArray:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, errors.New("byte_array value is not a base64 string")
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("byte_array value: %w", err)
		}
		return b, nil
	case ParamTypeFloat64:
		var n json.Number
		if err := decodeNumbers(raw, &n); err != nil {
			return nil, errors.New("float64 value is not a number")
		}
		return n.Float64()
	case ParamTypeFloat64Array:
		var ns []json.Number
		if err := decodeNumbers(raw, &ns); err != nil {
			return nil, errors.New("float64_array value is not an array of numbers")
		}
		out := make([]float64, len(ns))
		for i, n := range ns {
			f, err := n.Float64()
			if err != nil {
				return nil, fmt.Errorf("float64_array element %d: %w", i, err)
			}
			out[i] = f
		}
		return out, nil
	case "":
	default:
		return nil, fmt.Errorf("unknown parameter type %q", typ)
	}
	var v any
	if err := decodeNumbers(raw, &v); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case bool, string:
		return x, nil
	case json.Number:
		return numberValue(x)
	case []any:
		return arrayValue(x)
	}
	return nil, fmt.Errorf("unsupported value %s", truncate(string(raw), 40))
}

func numberValue(n json.Number) (any, error) {
	if !strings.ContainsAny(string(n), ".eE") {
		if i, err := n.Int64(); err == nil {
			return i, nil
		}
	}
	return n.Float64()
}

// arrayValue types an untyped JSON array: all bools, all strings, all
// integers, or numbers (float64 as soon as one is not an integer).
func arrayValue(xs []any) (any, error) {
	if len(xs) == 0 {
		return EmptyArray{}, nil
	}
	switch xs[0].(type) {
	case bool:
		out := make([]bool, len(xs))
		for i, x := range xs {
			b, ok := x.(bool)
			if !ok {
				return nil, errors.New("array mixes booleans with other values")
			}
			out[i] = b
		}
		return out, nil
	case string:
		out := make([]string, len(xs))
		for i, x := range xs {
			s, ok := x.(string)
			if !ok {
				return nil, errors.New("array mixes strings with other values")
			}
			out[i] = s
		}
		return out, nil
	case json.Number:
		ints := make([]int64, len(xs))
		isInt := true
		for i, x := range xs {
			n, ok := x.(json.Number)
			if !ok {
				return nil, errors.New("array mixes numbers with other values")
			}
			v, err := numberValue(n)
			if err != nil {
				return nil, err
			}
			if iv, ok := v.(int64); ok {
				ints[i] = iv
			} else {
				isInt = false
			}
		}
		if isInt {
			return ints, nil
		}
		out := make([]float64, len(xs))
		for i, x := range xs {
			f, err := x.(json.Number).Float64()
			if err != nil {
				return nil, err
			}
			out[i] = f
		}
		return out, nil
	}
	return nil, errors.New("arrays may hold booleans, numbers or strings only")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Graph is the connection graph: which nodes publish and subscribe each
// topic and provide each service (ids are node names).
type Graph struct {
	Published  map[string][]string
	Subscribed map[string][]string
	Services   map[string][]string
}

// Server → client JSON messages.

type serverInfoMsg struct {
	Op                 string            `json:"op"`
	Name               string            `json:"name"`
	Capabilities       []string          `json:"capabilities"`
	SupportedEncodings []string          `json:"supportedEncodings,omitempty"`
	Metadata           map[string]string `json:"metadata,omitempty"`
	SessionID          string            `json:"sessionId,omitempty"`
}

type statusMsg struct {
	Op      string `json:"op"`
	Level   int    `json:"level"`
	Message string `json:"message"`
	ID      string `json:"id,omitempty"`
}

type advertiseMsg struct {
	Op       string    `json:"op"`
	Channels []Channel `json:"channels"`
}

type unadvertiseMsg struct {
	Op         string   `json:"op"`
	ChannelIDs []uint32 `json:"channelIds"`
}

type advertiseServicesMsg struct {
	Op       string    `json:"op"`
	Services []Service `json:"services"`
}

type unadvertiseServicesMsg struct {
	Op         string   `json:"op"`
	ServiceIDs []uint32 `json:"serviceIds"`
}

type parameterValuesMsg struct {
	Op         string      `json:"op"`
	Parameters []Parameter `json:"parameters"`
	ID         string      `json:"id,omitempty"`
}

type serviceCallFailureMsg struct {
	Op        string `json:"op"`
	ServiceID uint32 `json:"serviceId"`
	CallID    uint32 `json:"callId"`
	Message   string `json:"message"`
}

type graphUpdateMsg struct {
	Op                 string    `json:"op"`
	PublishedTopics    []pubIDs  `json:"publishedTopics"`
	SubscribedTopics   []subIDs  `json:"subscribedTopics"`
	AdvertisedServices []provIDs `json:"advertisedServices"`
	RemovedTopics      []string  `json:"removedTopics"`
	RemovedServices    []string  `json:"removedServices"`
}

type pubIDs struct {
	Name         string   `json:"name"`
	PublisherIDs []string `json:"publisherIds"`
}

type subIDs struct {
	Name          string   `json:"name"`
	SubscriberIDs []string `json:"subscriberIds"`
}

type provIDs struct {
	Name        string   `json:"name"`
	ProviderIDs []string `json:"providerIds"`
}

// Client → server messages, as ParseClientText and ParseClientBinary
// return them.

// SubscribeMsg asks for the messages of channels.
type SubscribeMsg struct {
	Subscriptions []Subscription `json:"subscriptions"`
}

// Subscription pairs a client-chosen subscription id with a channel.
type Subscription struct {
	ID        uint32 `json:"id"`
	ChannelID uint32 `json:"channelId"`
}

// UnsubscribeMsg ends subscriptions.
type UnsubscribeMsg struct {
	SubscriptionIDs []uint32 `json:"subscriptionIds"`
}

// ClientAdvertiseMsg announces channels the client will publish on.
type ClientAdvertiseMsg struct {
	Channels []ClientChannel `json:"channels"`
}

// ClientUnadvertiseMsg withdraws client channels.
type ClientUnadvertiseMsg struct {
	ChannelIDs []uint32 `json:"channelIds"`
}

// GetParametersMsg asks for parameter values (all when Names is empty).
type GetParametersMsg struct {
	Names []string `json:"parameterNames"`
	ID    string   `json:"id,omitempty"`
}

// SetParametersMsg sets parameter values.
type SetParametersMsg struct {
	Parameters []Parameter `json:"parameters"`
	ID         string      `json:"id,omitempty"`
}

// SubscribeParameterUpdatesMsg adds parameters to the client's watch list
// (all currently known ones when Names is empty).
type SubscribeParameterUpdatesMsg struct {
	Names []string `json:"parameterNames"`
}

// UnsubscribeParameterUpdatesMsg removes parameters from the watch list
// (all when Names is empty).
type UnsubscribeParameterUpdatesMsg struct {
	Names []string `json:"parameterNames"`
}

// SubscribeGraphMsg asks for connectionGraphUpdate messages.
type SubscribeGraphMsg struct{}

// UnsubscribeGraphMsg stops connectionGraphUpdate messages.
type UnsubscribeGraphMsg struct{}

// ClientMessageData is a message the client publishes on one of its
// channels. Payload aliases the frame.
type ClientMessageData struct {
	ChannelID uint32
	Payload   []byte
}

// ServiceCallRequest is a service call. Payload aliases the frame.
type ServiceCallRequest struct {
	ServiceID uint32
	CallID    uint32
	Encoding  string
	Payload   []byte
}

// UnknownOpError reports a message with an op or opcode the server does
// not know; the server answers it with a warning status.
type UnknownOpError struct{ Op string }

func (e *UnknownOpError) Error() string { return fmt.Sprintf("unrecognized client opcode %q", e.Op) }

// maxTextMessage bounds a client JSON message (a setParameters with a
// large byte array is the biggest legitimate one).
const maxTextMessage = 16 << 20

// ParseClientText decodes a client JSON message into one of the *Msg
// types above. Errors say what is wrong in terms a client developer
// understands.
func ParseClientText(data []byte) (any, error) {
	if len(data) > maxTextMessage {
		return nil, fmt.Errorf("message of %d bytes exceeds the %d byte limit", len(data), maxTextMessage)
	}
	var head struct {
		Op *string `json:"op"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if head.Op == nil {
		return nil, errors.New(`message has no "op" field`)
	}
	var msg any
	switch *head.Op {
	case "subscribe":
		msg = &SubscribeMsg{}
	case "unsubscribe":
		msg = &UnsubscribeMsg{}
	case "advertise":
		msg = &ClientAdvertiseMsg{}
	case "unadvertise":
		msg = &ClientUnadvertiseMsg{}
	case "getParameters":
		msg = &GetParametersMsg{}
	case "setParameters":
		msg = &SetParametersMsg{}
	case "subscribeParameterUpdates":
		msg = &SubscribeParameterUpdatesMsg{}
	case "unsubscribeParameterUpdates":
		msg = &UnsubscribeParameterUpdatesMsg{}
	case "subscribeConnectionGraph":
		return &SubscribeGraphMsg{}, nil
	case "unsubscribeConnectionGraph":
		return &UnsubscribeGraphMsg{}, nil
	default:
		return nil, &UnknownOpError{Op: truncate(*head.Op, 64)}
	}
	if err := json.Unmarshal(data, msg); err != nil {
		return nil, fmt.Errorf("invalid %s message: %w", *head.Op, err)
	}
	if m, ok := msg.(*ClientAdvertiseMsg); ok {
		for _, c := range m.Channels {
			if c.Topic == "" || c.Encoding == "" || c.SchemaName == "" {
				return nil, fmt.Errorf("client channel %d: topic, encoding and schemaName are required", c.ID)
			}
		}
	}
	return msg, nil
}

// ParseClientBinary decodes a client binary frame into
// *ClientMessageData or *ServiceCallRequest; the payloads alias data.
func ParseClientBinary(data []byte) (any, error) {
	if len(data) == 0 {
		return nil, errors.New("empty binary message")
	}
	switch data[0] {
	case OpClientMessageData:
		if len(data) < 5 {
			return nil, fmt.Errorf("client message data of %d bytes is shorter than its 5-byte header", len(data))
		}
		return &ClientMessageData{ChannelID: binary.LittleEndian.Uint32(data[1:5]), Payload: data[5:]}, nil
	case OpServiceCallRequest:
		if len(data) < 13 {
			return nil, fmt.Errorf("service call request of %d bytes is shorter than its 13-byte header", len(data))
		}
		n := binary.LittleEndian.Uint32(data[9:13])
		if uint64(n) > uint64(len(data)-13) {
			return nil, fmt.Errorf("service call request: encoding length %d exceeds the %d bytes left", n, len(data)-13)
		}
		enc := data[13 : 13+n]
		if !utf8.Valid(enc) {
			return nil, errors.New("service call request: encoding is not UTF-8")
		}
		return &ServiceCallRequest{
			ServiceID: binary.LittleEndian.Uint32(data[1:5]),
			CallID:    binary.LittleEndian.Uint32(data[5:9]),
			Encoding:  string(enc),
			Payload:   data[13+n:],
		}, nil
	}
	return nil, &UnknownOpError{Op: fmt.Sprintf("0x%02x", data[0])}
}

// MessageDataHeaderLen is the size of the header that precedes the payload
// of a messageData frame.
const MessageDataHeaderLen = 13

// PutMessageDataHeader writes the messageData header (opcode, subscription
// id, receive time in ns) into h.
func PutMessageDataHeader(h *[MessageDataHeaderLen]byte, subID uint32, ts uint64) {
	h[0] = OpMessageData
	binary.LittleEndian.PutUint32(h[1:5], subID)
	binary.LittleEndian.PutUint64(h[5:13], ts)
}

// AppendServiceCallResponse appends a serviceCallResponse frame to b.
func AppendServiceCallResponse(b []byte, serviceID, callID uint32, encoding string, payload []byte) []byte {
	b = append(b, OpServiceCallResponse)
	b = binary.LittleEndian.AppendUint32(b, serviceID)
	b = binary.LittleEndian.AppendUint32(b, callID)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(encoding)))
	b = append(b, encoding...)
	return append(b, payload...)
}
