package param

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Type is the type of a parameter value. The numbers are those of
// rcl_interfaces/msg/ParameterType, so they go on the wire unchanged.
type Type uint8

// Parameter types (rcl_interfaces/msg/ParameterType).
const (
	TypeNotSet       Type = 0
	TypeBool         Type = 1
	TypeInteger      Type = 2
	TypeDouble       Type = 3
	TypeString       Type = 4
	TypeByteArray    Type = 5
	TypeBoolArray    Type = 6
	TypeIntegerArray Type = 7
	TypeDoubleArray  Type = 8
	TypeStringArray  Type = 9
)

var typeNames = [...]string{"not set", "bool", "integer", "double", "string",
	"byte array", "bool array", "integer array", "double array", "string array"}

// String returns the name ros2cli prints for the type ("integer",
// "double array", ...).
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "unknown type " + strconv.Itoa(int(t))
}

// Valid reports whether t is one of the ten ParameterType values.
func (t Type) Valid() bool { return t <= TypeStringArray }

// IsArray reports whether t is one of the five array types.
func (t Type) IsArray() bool { return t >= TypeByteArray && t <= TypeStringArray }

// Value is an immutable parameter value of one of the nine ROS 2 parameter
// types, or the "not set" value (the zero Value). Slices passed to the
// constructors are copied and getters return copies, so a Value can be shared
// between goroutines.
type Value struct {
	typ    Type
	b      bool
	i      int64
	f      float64
	s      string
	bytes  []byte
	bools  []bool
	ints   []int64
	floats []float64
	strs   []string
	// emptyList marks a "[]" read from YAML or -p: its element type is
	// unknown until it meets a declared array type (see Store.Declare).
	emptyList bool
}

// BoolValue returns a bool parameter value.
func BoolValue(v bool) Value { return Value{typ: TypeBool, b: v} }

// IntegerValue returns an integer parameter value.
func IntegerValue(v int64) Value { return Value{typ: TypeInteger, i: v} }

// DoubleValue returns a double parameter value.
func DoubleValue(v float64) Value { return Value{typ: TypeDouble, f: v} }

// StringValue returns a string parameter value.
func StringValue(v string) Value { return Value{typ: TypeString, s: v} }

// ByteArrayValue returns a byte array parameter value.
func ByteArrayValue(v []byte) Value { return Value{typ: TypeByteArray, bytes: slices.Clone(v)} }

// BoolArrayValue returns a bool array parameter value.
func BoolArrayValue(v []bool) Value { return Value{typ: TypeBoolArray, bools: slices.Clone(v)} }

// IntegerArrayValue returns an integer array parameter value.
func IntegerArrayValue(v []int64) Value {
	return Value{typ: TypeIntegerArray, ints: slices.Clone(v)}
}

// DoubleArrayValue returns a double array parameter value.
func DoubleArrayValue(v []float64) Value {
	return Value{typ: TypeDoubleArray, floats: slices.Clone(v)}
}

// StringArrayValue returns a string array parameter value.
func StringArrayValue(v []string) Value {
	return Value{typ: TypeStringArray, strs: slices.Clone(v)}
}

// Kind is the set of Go types that map one to one onto parameter types.
type Kind interface {
	bool | int64 | float64 | string | []byte | []bool | []int64 | []float64 | []string
}

// Of returns the Value holding v.
func Of[T Kind](v T) Value {
	switch x := any(v).(type) {
	case bool:
		return BoolValue(x)
	case int64:
		return IntegerValue(x)
	case float64:
		return DoubleValue(x)
	case string:
		return StringValue(x)
	case []byte:
		return ByteArrayValue(x)
	case []bool:
		return BoolArrayValue(x)
	case []int64:
		return IntegerArrayValue(x)
	case []float64:
		return DoubleArrayValue(x)
	case []string:
		return StringArrayValue(x)
	}
	return Value{} // unreachable: Kind is closed
}

// TypeOf returns the parameter type that corresponds to the Go type T.
func TypeOf[T Kind]() Type {
	var zero T
	return Of(zero).typ
}

// As returns v as a T, or an error when v holds another type.
func As[T Kind](v Value) (T, error) {
	var out T
	want := TypeOf[T]()
	if v.typ != want {
		return out, fmt.Errorf("value is of type %s, not %s", v.typ, want)
	}
	var r any
	switch want {
	case TypeBool:
		r = v.b
	case TypeInteger:
		r = v.i
	case TypeDouble:
		r = v.f
	case TypeString:
		r = v.s
	case TypeByteArray:
		r = v.Bytes()
	case TypeBoolArray:
		r = v.Bools()
	case TypeIntegerArray:
		r = v.Integers()
	case TypeDoubleArray:
		r = v.Doubles()
	case TypeStringArray:
		r = v.Strings()
	}
	return r.(T), nil
}

// FromAny converts a Go value to a Value. Besides the Kind types it accepts
// int, int32, uint8 ... (as integer, if in int64 range), float32, []int,
// []float32 and Value itself.
func FromAny(x any) (Value, error) {
	switch v := x.(type) {
	case Value:
		return v, nil
	case nil:
		return Value{}, nil
	case bool:
		return BoolValue(v), nil
	case int:
		return IntegerValue(int64(v)), nil
	case int8:
		return IntegerValue(int64(v)), nil
	case int16:
		return IntegerValue(int64(v)), nil
	case int32:
		return IntegerValue(int64(v)), nil
	case int64:
		return IntegerValue(v), nil
	case uint8:
		return IntegerValue(int64(v)), nil
	case uint16:
		return IntegerValue(int64(v)), nil
	case uint32:
		return IntegerValue(int64(v)), nil
	case uint:
		if uint64(v) > math.MaxInt64 {
			return Value{}, fmt.Errorf("integer %d is out of the int64 range", v)
		}
		return IntegerValue(int64(v)), nil
	case uint64:
		if v > math.MaxInt64 {
			return Value{}, fmt.Errorf("integer %d is out of the int64 range", v)
		}
		return IntegerValue(int64(v)), nil
	case float32:
		return DoubleValue(float64(v)), nil
	case float64:
		return DoubleValue(v), nil
	case string:
		return StringValue(v), nil
	case []byte:
		return ByteArrayValue(v), nil
	case []bool:
		return BoolArrayValue(v), nil
	case []int64:
		return IntegerArrayValue(v), nil
	case []int:
		out := make([]int64, len(v))
		for i, e := range v {
			out[i] = int64(e)
		}
		return IntegerArrayValue(out), nil
	case []float64:
		return DoubleArrayValue(v), nil
	case []float32:
		out := make([]float64, len(v))
		for i, e := range v {
			out[i] = float64(e)
		}
		return DoubleArrayValue(out), nil
	case []string:
		return StringArrayValue(v), nil
	}
	return Value{}, fmt.Errorf("unsupported parameter value type %T", x)
}

// Type returns the type of v (TypeNotSet for the zero Value).
func (v Value) Type() Type { return v.typ }

// IsSet reports whether v holds a value.
func (v Value) IsSet() bool { return v.typ != TypeNotSet }

// Bool returns the bool held by v (false for other types).
func (v Value) Bool() bool { return v.b }

// Integer returns the integer held by v (0 for other types).
func (v Value) Integer() int64 { return v.i }

// Double returns the double held by v (0 for other types).
func (v Value) Double() float64 { return v.f }

// Str returns the string held by v ("" for other types). It is not named
// String because String formats any value.
func (v Value) Str() string { return v.s }

// Bytes returns a copy of the byte array held by v.
func (v Value) Bytes() []byte { return slices.Clone(v.bytes) }

// Bools returns a copy of the bool array held by v.
func (v Value) Bools() []bool { return slices.Clone(v.bools) }

// Integers returns a copy of the integer array held by v.
func (v Value) Integers() []int64 { return slices.Clone(v.ints) }

// Doubles returns a copy of the double array held by v.
func (v Value) Doubles() []float64 { return slices.Clone(v.floats) }

// Strings returns a copy of the string array held by v.
func (v Value) Strings() []string { return slices.Clone(v.strs) }

// Len returns the number of elements of an array value (0 for scalars).
func (v Value) Len() int {
	switch v.typ {
	case TypeByteArray:
		return len(v.bytes)
	case TypeBoolArray:
		return len(v.bools)
	case TypeIntegerArray:
		return len(v.ints)
	case TypeDoubleArray:
		return len(v.floats)
	case TypeStringArray:
		return len(v.strs)
	}
	return 0
}

// Equal reports whether v and w have the same type and contents. Doubles
// compare with ==, so a NaN is never equal to anything.
func (v Value) Equal(w Value) bool {
	if v.typ != w.typ {
		return false
	}
	switch v.typ {
	case TypeNotSet:
		return true
	case TypeBool:
		return v.b == w.b
	case TypeInteger:
		return v.i == w.i
	case TypeDouble:
		return v.f == w.f
	case TypeString:
		return v.s == w.s
	case TypeByteArray:
		return bytes.Equal(v.bytes, w.bytes)
	case TypeBoolArray:
		return slices.Equal(v.bools, w.bools)
	case TypeIntegerArray:
		return slices.Equal(v.ints, w.ints)
	case TypeDoubleArray:
		return slices.Equal(v.floats, w.floats)
	case TypeStringArray:
		return slices.Equal(v.strs, w.strs)
	}
	return false
}

// String formats v the way `ros2 param get` prints values: "true", "42",
// "1.5", "hello", "[1, 2, 3]", "['a', 'b']"; "not set" for the zero Value.
func (v Value) String() string {
	switch v.typ {
	case TypeNotSet:
		return "not set"
	case TypeBool:
		return pyBool(v.b)
	case TypeInteger:
		return strconv.FormatInt(v.i, 10)
	case TypeDouble:
		return formatDouble(v.f)
	case TypeString:
		return v.s
	case TypeByteArray:
		return joinList(v.bytes, func(b byte) string { return fmt.Sprintf("b'\\x%02x'", b) })
	case TypeBoolArray:
		return joinList(v.bools, pyBool)
	case TypeIntegerArray:
		return joinList(v.ints, func(i int64) string { return strconv.FormatInt(i, 10) })
	case TypeDoubleArray:
		return joinList(v.floats, formatDouble)
	case TypeStringArray:
		return joinList(v.strs, func(s string) string { return "'" + s + "'" })
	}
	return v.typ.String()
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// formatDouble prints a float the way Python's repr does for the common
// cases: always with a decimal point or exponent.
func formatDouble(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

func joinList[E any](xs []E, f func(E) string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = f(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// checkFinite rejects NaN anywhere in a double or double array value.
// Infinities are allowed (a limit of .inf is meaningful); NaN is not,
// because no comparison with it is meaningful.
func (v Value) checkFinite() error {
	switch v.typ {
	case TypeDouble:
		if math.IsNaN(v.f) {
			return fmt.Errorf("NaN is not a valid parameter value")
		}
	case TypeDoubleArray:
		for i, f := range v.floats {
			if math.IsNaN(f) {
				return fmt.Errorf("element %d is NaN, which is not a valid parameter value", i)
			}
		}
	}
	return nil
}

// convertEmptyList turns an untyped empty list (from YAML "[]") into an
// empty array of type t. It reports false if t is not an array type.
func (v Value) convertEmptyList(t Type) (Value, bool) {
	if !v.emptyList || !t.IsArray() {
		return v, false
	}
	return Value{typ: t}, true
}

// Parameter is a named value.
type Parameter struct {
	Name  string
	Value Value
}

// String formats p as "name: value".
func (p Parameter) String() string { return p.Name + ": " + p.Value.String() }

// YAML formats v as a YAML value that ParseValue reads back as the same
// value (for `param dump`, launch files and -p): true, 42, 1.5, .inf,
// plain or quoted strings, and flow lists such as [1, 2]. Byte arrays,
// which parameter files cannot express, come out as integer lists.
func (v Value) YAML() string {
	switch v.typ {
	case TypeBool:
		return strconv.FormatBool(v.b)
	case TypeInteger:
		return strconv.FormatInt(v.i, 10)
	case TypeDouble:
		return yamlDouble(v.f)
	case TypeString:
		return yamlString(v.s)
	case TypeByteArray:
		return joinList(v.bytes, func(b byte) string { return strconv.Itoa(int(b)) })
	case TypeBoolArray:
		return joinList(v.bools, strconv.FormatBool)
	case TypeIntegerArray:
		return joinList(v.ints, func(i int64) string { return strconv.FormatInt(i, 10) })
	case TypeDoubleArray:
		return joinList(v.floats, yamlDouble)
	case TypeStringArray:
		return joinList(v.strs, yamlString)
	}
	return "null"
}

func yamlDouble(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	case math.IsNaN(f):
		return ".nan"
	}
	return formatDouble(f)
}

// yamlString writes s plain when that reads back as the same string, else
// single-quoted (a quote doubled), or double-quoted with escapes when it
// holds control characters.
func yamlString(s string) string {
	if back, err := ParseValue(s); err == nil && back.typ == TypeString && back.s == s &&
		!strings.ContainsAny(s, ",[]{}#&*!|>'\"%@`:\n") && strings.TrimSpace(s) == s {
		return s
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return strconv.Quote(s) // YAML double quotes take the same escapes
		}
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
