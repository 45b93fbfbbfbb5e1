package msgyaml

import (
	"reflect"
	"strconv"
	"strings"
)

// Repr renders msg as Python's repr of the corresponding rclpy message, e.g.
// "std_srvs.srv.SetBool_Request(data=True)". `ros2 service call` prints
// requests and responses this way. Fixed-size arrays, which rclpy holds in
// numpy arrays, are rendered as "array([...])" with Python number syntax.
func Repr(msg any) string {
	v := reflect.ValueOf(msg)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "None"
		}
		v = v.Elem()
	}
	var b strings.Builder
	reprValue(&b, v)
	return b.String()
}

// pyTypeName is the Python class path of a message: "pkg.msg.Name".
func pyTypeName(t reflect.Type) string {
	if ti := typeInfoOf(t); ti != nil && ti.Name != "" {
		return strings.ReplaceAll(ti.Name, "/", ".")
	}
	return t.Name()
}

func reprValue(b *strings.Builder, v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		b.WriteString(pyTypeName(v.Type()))
		b.WriteByte('(')
		for i, f := range fieldsOf(v.Type()) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.name)
			b.WriteByte('=')
			reprValue(b, v.Field(f.index))
		}
		b.WriteByte(')')
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Array && v.Type().Elem().Kind() != reflect.Struct && v.Type().Elem().Kind() != reflect.String {
			b.WriteString("array(")
			defer b.WriteByte(')')
		}
		b.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			reprValue(b, v.Index(i))
		}
		b.WriteByte(']')
	case reflect.Bool:
		if v.Bool() {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		b.WriteString(pyFloatRepr(v.Float()))
	case reflect.String:
		b.WriteString(pyStrRepr(v.String()))
	default:
		b.WriteString(v.String())
	}
}
