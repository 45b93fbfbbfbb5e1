package msgyaml

import (
	"reflect"
	"strings"

	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

// field is one ROS field of a message struct.
type field struct {
	name    string // ROS name from the ros tag
	index   int    // Go struct field index
	rosType string // ROS type from the rostype tag ("float64[36]"), may be ""
}

// fieldsOf returns the ROS fields of struct type t in declaration order.
// Exported struct fields without a ros tag use their Go name in lower case;
// unexported fields and fields tagged ros:"-" are skipped.
func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name := sf.Tag.Get("ros")
		if j := strings.IndexByte(name, ','); j >= 0 {
			name = name[:j]
		}
		switch name {
		case "-":
			continue
		case "":
			name = strings.ToLower(sf.Name)
		}
		out = append(out, field{name: name, index: i, rosType: sf.Tag.Get("rostype")})
	}
	return out
}

var messageType = reflect.TypeOf((*rosidl.Message)(nil)).Elem()

// typeInfoOf returns the ROS type information of struct type t when *t is a
// generated message, else nil.
func typeInfoOf(t reflect.Type) *rosidl.TypeInfo {
	pt := reflect.PointerTo(t)
	if !pt.Implements(messageType) {
		return nil
	}
	return reflect.Zero(pt).Interface().(rosidl.Message).ROSType()
}

// typeName names struct type t for error messages: the ROS name
// ("geometry_msgs/msg/Twist") when known, else the Go type name.
func typeName(t reflect.Type) string {
	if ti := typeInfoOf(t); ti != nil && ti.Name != "" {
		return ti.Name
	}
	return t.String()
}

// structValue dereferences msg down to an addressable struct value.
func structValue(msg any) (reflect.Value, bool) {
	v := reflect.ValueOf(msg)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return reflect.Value{}, false
		}
		v = v.Elem()
	}
	return v, v.Kind() == reflect.Struct
}
