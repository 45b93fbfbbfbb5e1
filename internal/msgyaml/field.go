package msgyaml

import (
	"fmt"
	"reflect"
	"strings"
)

// Field returns the value of the field called name (its ROS name) of msg,
// a message struct or a pointer to one; `ros2 topic echo --field` follows
// such names.
func Field(msg any, name string) (any, error) {
	v, ok := structValue(msg)
	if !ok {
		return nil, fmt.Errorf("cannot select field %q of a %T value", name, msg)
	}
	var names []string
	for _, f := range fieldsOf(v.Type()) {
		if f.name == name {
			return v.Field(f.index).Interface(), nil
		}
		names = append(names, f.name)
	}
	return nil, fmt.Errorf("%s has no field %q (its fields are %s)", typeName(v.Type()), name, strings.Join(names, ", "))
}

// EchoValue renders any message, sequence or basic value as
// `ros2 topic echo --field` does (PyYAML document of the value; a bare
// scalar gets the "..." document end marker) followed by "---".
func EchoValue(x any) (string, error) { return EchoValueWith(x, EchoOptions{}) }

// EchoValueWith is EchoValue with display options.
func EchoValueWith(x any, opts EchoOptions) (string, error) {
	v := reflect.ValueOf(x)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	var b strings.Builder
	e := encoder{opts: opts, b: &b}
	switch v.Kind() {
	case reflect.Struct:
		return EchoWith(x, opts)
	case reflect.Slice, reflect.Array:
		switch {
		case opts.NoArr:
			b.WriteString(yamlString(abbreviateArray(v, ""), 2) + "\n...\n")
		case v.Len() == 0:
			b.WriteString("[]\n")
		case opts.FlowStyle:
			b.WriteString(e.flow(v, "", 2) + "\n")
		default:
			e.sequence(v, 0)
		}
		return b.String() + "---\n", nil
	case reflect.Invalid, reflect.Pointer:
		return "null\n...\n---\n", nil
	}
	return e.scalar(v, 2) + "\n...\n---\n", nil
}

// SetField assigns value to the field at a dotted path of ROS field names
// ("goal_id.uuid") of msg, a pointer to a message struct. value must be
// assignable to the field's type; a pointer to a struct is dereferenced.
func SetField(msg any, path string, value any) error {
	v, ok := structValue(msg)
	if !ok || !v.CanSet() {
		return fmt.Errorf("SetField needs a pointer to a message struct, got %T", msg)
	}
	parts := strings.Split(path, ".")
	for i, part := range parts {
		if v.Kind() != reflect.Struct {
			return fmt.Errorf("cannot select field %q of %s", part, v.Type())
		}
		found := false
		for _, f := range fieldsOf(v.Type()) {
			if f.name == part {
				v = v.Field(f.index)
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("%s has no field %q", typeName(v.Type()), strings.Join(parts[:i+1], "."))
		}
	}
	x := reflect.ValueOf(value)
	if x.Kind() == reflect.Pointer && x.Elem().Kind() == reflect.Struct && v.Kind() == reflect.Struct {
		x = x.Elem()
	}
	if !x.IsValid() || !x.Type().AssignableTo(v.Type()) {
		return fmt.Errorf("cannot assign %T to field %q of type %s", value, path, v.Type())
	}
	v.Set(x)
	return nil
}

// Len returns the length of a slice or array value, or -1 for other values.
func Len(x any) int {
	v := reflect.ValueOf(x)
	if v.Kind() == reflect.Slice || v.Kind() == reflect.Array {
		return v.Len()
	}
	return -1
}
