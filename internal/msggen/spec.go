package main

import (
	"fmt"
	"strings"
)

// Primitive type names as they appear in .msg files.
var primitiveSizes = map[string]int{
	"bool":    1,
	"byte":    1,
	"char":    1,
	"int8":    1,
	"uint8":   1,
	"int16":   2,
	"uint16":  2,
	"int32":   4,
	"uint32":  4,
	"int64":   8,
	"uint64":  8,
	"float32": 4,
	"float64": 8,
	"string":  4, // minimum: the length field
	"wstring": 4,
}

// BaseType is the element type of a field: a primitive or a nested message.
type BaseType struct {
	// Prim is the primitive name ("float64", "string", ...) or "" for a
	// nested message.
	Prim string
	// StringBound is N for string<=N / wstring<=N, else 0.
	StringBound int
	// Pkg, Sub and Name identify a nested message: pkg/sub/Name. Sub is
	// "msg" for .msg types and "srv"/"action" for derived types.
	Pkg, Sub, Name string
}

// IsNested reports whether b refers to a message type.
func (b BaseType) IsNested() bool { return b.Prim == "" }

// IsString reports whether b is string or wstring (bounded or not).
func (b BaseType) IsString() bool { return b.Prim == "string" || b.Prim == "wstring" }

// FullName returns "pkg/sub/Name" of a nested type.
func (b BaseType) FullName() string { return b.Pkg + "/" + b.Sub + "/" + b.Name }

// String renders b in .msg syntax (used in messages and tests).
func (b BaseType) String() string {
	if b.IsNested() {
		return b.Pkg + "/" + b.Name
	}
	if b.StringBound > 0 {
		return fmt.Sprintf("%s<=%d", b.Prim, b.StringBound)
	}
	return b.Prim
}

// ArrayKind says whether a field is a scalar, fixed array or sequence.
type ArrayKind int

// Array kinds.
const (
	NotArray     ArrayKind = iota
	FixedArray             // T[N]
	BoundedSeq             // T[<=N]
	UnboundedSeq           // T[]
)

// FieldType is the complete type of a field.
type FieldType struct {
	Base  BaseType
	Array ArrayKind
	// Size is N for T[N] and T[<=N].
	Size int
}

// String renders t in .msg syntax.
func (t FieldType) String() string {
	s := t.Base.String()
	switch t.Array {
	case FixedArray:
		s += fmt.Sprintf("[%d]", t.Size)
	case BoundedSeq:
		s += fmt.Sprintf("[<=%d]", t.Size)
	case UnboundedSeq:
		s += "[]"
	}
	return s
}

// IsSeq reports whether t is a bounded or unbounded sequence.
func (t FieldType) IsSeq() bool { return t.Array == BoundedSeq || t.Array == UnboundedSeq }

// Field is one member of a message.
type Field struct {
	Name string
	Type FieldType
	// Default is the parsed default value (nil if none): bool, int64,
	// uint64, float64, string, or []any of those for arrays.
	Default any
	// DefaultText is the default as written in the file.
	DefaultText string
	// Comment is the comment block right above the field and LineComment
	// the comment at the end of its line, without the '#' markers.
	Comment, LineComment string
	Line                 int
}

// Constant is a named constant of a message.
type Constant struct {
	Name  string
	Type  BaseType // always primitive
	Value any      // bool, int64, uint64, float64 or string
	Text  string
	// Comment and LineComment are as for Field.
	Comment, LineComment string
	Line                 int
}

// MsgSpec is a parsed message (also a service half or a derived action
// type).
type MsgSpec struct {
	Pkg, Sub, Name string
	Fields         []Field
	Constants      []Constant
	// Text is the definition text shown by `interface show`.
	Text string
	// File is the source file, for error messages.
	File string
}

// FullName returns "pkg/sub/Name".
func (m *MsgSpec) FullName() string { return m.Pkg + "/" + m.Sub + "/" + m.Name }

// SrvSpec is a parsed service.
type SrvSpec struct {
	Pkg, Name         string
	Request, Response *MsgSpec
	Text              string
	// Event is the X_Event type Jazzy derives for service introspection:
	// info, request[<=1], response[<=1]. It is generated (a Go type and
	// X_Event_TypeInfo) when service_msgs/msg/ServiceEventInfo is among
	// the interfaces; otherwise it only serves the service type hash.
	Event *MsgSpec
}

// ActionSpec is a parsed action and the types derived from it.
type ActionSpec struct {
	Pkg, Name              string
	Goal, Result, Feedback *MsgSpec
	SendGoal, GetResult    *SrvSpec
	FeedbackMessage        *MsgSpec
	Text                   string
}

// FullName returns "pkg/action/Name".
func (a *ActionSpec) FullName() string { return a.Pkg + "/action/" + a.Name }

// camel converts a snake_case ROS name to the rclgo-style Go name:
// frame_id -> FrameId, x -> X, covariance -> Covariance.
func camel(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if r == '_' {
			up = true
			continue
		}
		if up && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		up = false
		b.WriteRune(r)
	}
	return b.String()
}
