package msgyaml

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// EchoOptions are the display options of `ros2 topic echo`.
type EchoOptions struct {
	// TruncateLength cuts strings and sequences longer than it to that many
	// characters or items followed by "..." (ros2's default is 128, with
	// --full-length meaning 0). 0 disables truncation.
	TruncateLength int
	// NoArr replaces sequences and arrays by "<sequence type: T, length: N>"
	// ("<array type: T[N]>"); NoStr replaces strings by
	// "<string length: <N>>".
	NoArr, NoStr bool
	// FlowStyle is ros2's --flow-style (PyYAML's default_flow_style=True
	// with rosidl_runtime_py's representer for messages): messages stay
	// block mappings, sequences and arrays are written in flow style
	// ("[1, 2]", "[{a: 1, b: x}]"), and whatever they hold too.
	FlowStyle bool
}

// Marshal renders msg (a pointer to or value of a message struct) as
// `ros2 topic echo --full-length` prints it, without the trailing "---"
// line. The result ends with a newline.
func Marshal(msg any) (string, error) { return MarshalWith(msg, EchoOptions{}) }

// MarshalWith is Marshal with display options.
func MarshalWith(msg any, opts EchoOptions) (string, error) {
	v := reflect.ValueOf(msg)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "", fmt.Errorf("msgyaml: nil message")
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return "", fmt.Errorf("msgyaml: %s is not a message struct", v.Type())
	}
	var b strings.Builder
	if len(fieldsOf(v.Type())) == 0 {
		b.WriteString("{}\n")
		return b.String(), nil
	}
	e := encoder{opts: opts, b: &b}
	e.mapping(v, 0, false)
	return b.String(), nil
}

// Echo is Marshal followed by the "---" separator line, exactly one message
// of `ros2 topic echo --full-length` output.
func Echo(msg any) (string, error) { return EchoWith(msg, EchoOptions{}) }

// EchoWith is Echo with display options.
func EchoWith(msg any, opts EchoOptions) (string, error) {
	s, err := MarshalWith(msg, opts)
	if err != nil {
		return "", err
	}
	return s + "---\n", nil
}

type encoder struct {
	opts EchoOptions
	b    *strings.Builder
}

// mapping writes the fields of struct v as a block mapping at indent. If
// inSeq is true the first key continues a "- " already written.
func (e *encoder) mapping(v reflect.Value, indent int, inSeq bool) {
	pad := strings.Repeat(" ", indent)
	for i, f := range fieldsOf(v.Type()) {
		if i > 0 || !inSeq {
			e.b.WriteString(pad)
		}
		e.b.WriteString(f.name)
		e.b.WriteByte(':')
		e.value(v.Field(f.index), f.rosType, indent)
	}
}

// value writes the value part of "key:" whose key sits at indent.
func (e *encoder) value(v reflect.Value, rosType string, indent int) {
	switch v.Kind() {
	case reflect.Struct:
		if len(fieldsOf(v.Type())) == 0 {
			e.b.WriteString(" {}\n")
			return
		}
		e.b.WriteByte('\n')
		e.mapping(v, indent+2, false)
	case reflect.Slice, reflect.Array:
		if e.opts.NoArr {
			e.b.WriteString(" " + yamlString(abbreviateArray(v, rosType), indent+2) + "\n")
			return
		}
		if v.Len() == 0 {
			e.b.WriteString(" []\n")
			return
		}
		if e.opts.FlowStyle {
			e.b.WriteString(" " + e.flow(v, rosType, indent+2) + "\n")
			return
		}
		e.b.WriteByte('\n')
		e.sequence(v, indent)
	default:
		e.b.WriteString(" " + e.scalar(v, indent+2) + "\n")
	}
}

// sequence writes the items of v as an indentless block sequence at indent
// (PyYAML does not indent a sequence that is a mapping value).
func (e *encoder) sequence(v reflect.Value, indent int) {
	pad := strings.Repeat(" ", indent)
	n := v.Len()
	truncated := e.opts.TruncateLength > 0 && n > e.opts.TruncateLength
	if truncated {
		n = e.opts.TruncateLength
	}
	for i := 0; i < n; i++ {
		item := v.Index(i)
		e.b.WriteString(pad + "-")
		if item.Kind() == reflect.Struct {
			if len(fieldsOf(item.Type())) == 0 {
				e.b.WriteString(" {}\n")
				continue
			}
			e.b.WriteByte(' ')
			e.mapping(item, indent+2, true)
			continue
		}
		e.b.WriteString(" " + e.scalar(item, indent+2) + "\n")
	}
	if truncated {
		e.b.WriteString(pad + "- '...'\n")
	}
}

// scalar renders a basic value, applying NoStr and truncation to strings.
func (e *encoder) scalar(v reflect.Value, indent int) string {
	if v.Kind() == reflect.String {
		s := v.String()
		switch {
		case e.opts.NoStr:
			s = fmt.Sprintf("<string length: <%d>>", len([]rune(s)))
		case e.opts.TruncateLength > 0 && len([]rune(s)) > e.opts.TruncateLength:
			s = string([]rune(s)[:e.opts.TruncateLength]) + "..."
		}
		return yamlString(s, indent)
	}
	return scalarYAML(v, indent)
}

// idlNames maps .msg primitive names to the IDL names ros2 prints in
// abbreviations.
var idlNames = map[string]string{"float64": "double", "float32": "float", "bool": "boolean", "byte": "octet", "char": "uint8"}

// abbreviateArray renders ros2's no_arr placeholder for a sequence or array
// field of ROS type rosType ("float64[36]", "int8[]", "pkg/Name[<=3]").
func abbreviateArray(v reflect.Value, rosType string) string {
	base, bound := rosType, ""
	if i := strings.LastIndexByte(rosType, '['); i >= 0 && strings.HasSuffix(rosType, "]") {
		base, bound = rosType[:i], rosType[i+1:len(rosType)-1]
	}
	elem := elemTypeName(base, v.Type().Elem())
	if v.Kind() == reflect.Array {
		return fmt.Sprintf("<array type: %s[%d]>", elem, v.Len())
	}
	if max, ok := strings.CutPrefix(bound, "<="); ok {
		return fmt.Sprintf("<sequence type: %s[%s], length: %d>", elem, max, v.Len())
	}
	return fmt.Sprintf("<sequence type: %s, length: %d>", elem, v.Len())
}

func elemTypeName(base string, t reflect.Type) string {
	if base == "" {
		if t.Kind() == reflect.Struct {
			return typeName(t)
		}
		base = kindName(t)
	}
	if n, ok := idlNames[base]; ok {
		return n
	}
	if strings.HasPrefix(base, "string") {
		return "string"
	}
	if strings.HasPrefix(base, "wstring") {
		return "wstring"
	}
	if pkg, name, ok := strings.Cut(base, "/"); ok && !strings.Contains(name, "/") {
		return pkg + "/msg/" + name
	}
	return base
}

// scalarYAML renders a basic value as PyYAML does.
func scalarYAML(v reflect.Value, indent int) string {
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return "true"
		}
		return "false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return yamlFloat(v.Float())
	case reflect.String:
		return yamlString(v.String(), indent)
	}
	return fmt.Sprintf("%v", v.Interface())
}

// flow renders v in flow style, as PyYAML does inside a flow collection.
func (e *encoder) flow(v reflect.Value, rosType string, indent int) string {
	switch v.Kind() {
	case reflect.Struct:
		fs := fieldsOf(v.Type())
		parts := make([]string, 0, len(fs))
		for _, f := range fs {
			parts = append(parts, f.name+": "+e.flow(v.Field(f.index), f.rosType, indent))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case reflect.Slice, reflect.Array:
		if e.opts.NoArr {
			return flowString(abbreviateArray(v, rosType), indent)
		}
		n := v.Len()
		truncated := e.opts.TruncateLength > 0 && n > e.opts.TruncateLength
		if truncated {
			n = e.opts.TruncateLength
		}
		elem := rosType
		if i := strings.LastIndexByte(elem, '['); i >= 0 {
			elem = elem[:i]
		}
		parts := make([]string, 0, n+1)
		for i := 0; i < n; i++ {
			parts = append(parts, e.flow(v.Index(i), elem, indent))
		}
		if truncated {
			parts = append(parts, "'...'")
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.String:
		s := v.String()
		switch {
		case e.opts.NoStr:
			s = fmt.Sprintf("<string length: <%d>>", len([]rune(s)))
		case e.opts.TruncateLength > 0 && len([]rune(s)) > e.opts.TruncateLength:
			s = string([]rune(s)[:e.opts.TruncateLength]) + "..."
		}
		return flowString(s, indent)
	}
	return scalarYAML(v, indent)
}
