package msgyaml

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// CSV renders msg as rosidl_runtime_py's message_to_csv does (what
// `ros2 topic echo --csv` and `ros2 service echo --csv` print): every
// field in definition order, nested messages and sequences flattened,
// values as Python's str() prints them (True, 0.1, b'\x01'), joined by
// commas, where a comma is added only after a non-empty start (so empty
// leading fields vanish, as they do in ros2). TruncateLength, NoArr and
// NoStr apply as in ros2; the result has no trailing newline.
func CSV(msg any, opts EchoOptions) (string, error) {
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
	e := encoder{opts: opts}
	return e.csvMessage(v), nil
}

func (e *encoder) csvMessage(v reflect.Value) string {
	var r string
	for _, f := range fieldsOf(v.Type()) {
		if r != "" {
			r += ","
		}
		r += e.csvValue(v.Field(f.index), f.rosType, true)
	}
	return r
}

// csvValue is message_to_csv's to_string; field says whether v is a
// field (whose sequences --no-arr abbreviates) rather than an element.
func (e *encoder) csvValue(v reflect.Value, rosType string, field bool) string {
	base := rosType
	if i := strings.LastIndexByte(base, '['); i >= 0 {
		base = base[:i]
	}
	switch v.Kind() {
	case reflect.Struct:
		return e.csvMessage(v)
	case reflect.Slice, reflect.Array:
		if e.opts.NoArr && field {
			return abbreviateArray(v, rosType)
		}
		// Fixed-size numeric arrays are numpy arrays in rclpy (float32
		// items print with float32's shortest digits); sequences are
		// array.array or lists of Python values.
		numpy := v.Kind() == reflect.Array
		var r string
		for i := 0; i < v.Len(); i++ {
			if r != "" {
				r += ","
			}
			if e.opts.TruncateLength > 0 && i >= e.opts.TruncateLength {
				r += "..."
				break
			}
			item := v.Index(i)
			if numpy && item.Kind() == reflect.Float32 {
				r += pyFloat32Str(item.Float())
				continue
			}
			r += e.csvValue(item, base, false)
		}
		return r
	case reflect.Bool:
		if v.Bool() {
			return "True"
		}
		return "False"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint8:
		if base == "byte" { // a bytes object in rclpy
			b := []byte{byte(v.Uint())}
			return pyBytesRepr(b)
		}
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return pyFloatRepr(v.Float())
	case reflect.String:
		s := v.String()
		rs := []rune(s)
		switch {
		case e.opts.NoStr:
			return fmt.Sprintf("<string length: <%d>>", len(rs))
		case e.opts.TruncateLength > 0 && len(rs) > e.opts.TruncateLength:
			return string(rs[:e.opts.TruncateLength]) + "..."
		}
		return s
	}
	return fmt.Sprint(v.Interface())
}

// pyFloat32Str formats a float32 as numpy's str(numpy.float32) does: the
// shortest digits that round-trip in float32, laid out as Python's repr.
func pyFloat32Str(f float64) string { return pyFloatReprBits(f, 32) }

// pyBytesRepr formats b as Python's repr(bytes): b'...' (b"..." when it
// holds a single quote and no double quote), printable ASCII as is,
// \t \n \r \\ and the quote escaped, other bytes as \xNN.
func pyBytesRepr(b []byte) string {
	q := byte('\'')
	if strings.IndexByte(string(b), '\'') >= 0 && strings.IndexByte(string(b), '"') < 0 {
		q = '"'
	}
	var s strings.Builder
	s.WriteByte('b')
	s.WriteByte(q)
	for _, c := range b {
		switch {
		case c == q || c == '\\':
			s.WriteByte('\\')
			s.WriteByte(c)
		case c == '\t':
			s.WriteString(`\t`)
		case c == '\n':
			s.WriteString(`\n`)
		case c == '\r':
			s.WriteString(`\r`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&s, `\x%02x`, c)
		default:
			s.WriteByte(c)
		}
	}
	s.WriteByte(q)
	return s.String()
}
