package msgyaml

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Error is a problem with one field of the YAML a user gave.
type Error struct {
	// Type is the message type that holds the field ("geometry_msgs/msg/Twist").
	Type string
	// Path is the field path from the top-level message ("linear.x",
	// "poses[2].position"); empty for the message itself.
	Path string
	// Line is the 1-based line of the offending YAML node, 0 if unknown.
	Line int
	// Reason says what is wrong.
	Reason string
}

// Error implements error.
func (e *Error) Error() string {
	where := e.Type
	if e.Path != "" {
		where = fmt.Sprintf("field %q of %s", e.Path, e.Type)
	}
	return fmt.Sprintf("%s: %s", where, e.Reason)
}

// Options adjust Decode.
type Options struct {
	// (optional) Now enables the keywords of ros2 topic pub: the scalar
	// "now" for a builtin_interfaces/msg/Time field and "auto" for a
	// std_msgs/msg/Header field set the time (and leave frame_id empty).
	// Without Now the keywords are errors like any other wrong value.
	Now func() time.Time
}

// Decode fills msg, a pointer to a message struct, from YAML text. Fields
// not mentioned keep their current values. Empty text and "{}" change
// nothing.
func Decode(text string, msg any) error { return DecodeWith(text, msg, Options{}) }

// DecodeWith is Decode with options.
func DecodeWith(text string, msg any, opts Options) error {
	v, ok := structValue(msg)
	if !ok || !v.CanSet() {
		return fmt.Errorf("msgyaml: Decode needs a non-nil pointer to a message struct, got %T", msg)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return fmt.Errorf("invalid YAML: %w", err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // empty input
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil
	}
	d := decoder{top: typeName(v.Type()), now: opts.Now}
	return d.value(root, v, "")
}

// DecodeNode fills msg from an already parsed YAML node (for callers that
// embed message values in larger documents).
func DecodeNode(n *yaml.Node, msg any) error {
	v, ok := structValue(msg)
	if !ok || !v.CanSet() {
		return fmt.Errorf("msgyaml: DecodeNode needs a non-nil pointer to a message struct, got %T", msg)
	}
	d := decoder{top: typeName(v.Type())}
	return d.value(n, v, "")
}

type decoder struct {
	top string           // top-level type name, for errors
	now func() time.Time // nil: no "now"/"auto" keywords
}

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) error {
	return &Error{Type: d.top, Path: path, Line: n.Line, Reason: fmt.Sprintf(format, args...)}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.AliasNode:
		return "an alias"
	}
	tag := strings.TrimPrefix(n.ShortTag(), "!!")
	return fmt.Sprintf("%s %q", tag, n.Value)
}

func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch v.Kind() {
	case reflect.Struct:
		return d.message(n, v, path)
	case reflect.Slice:
		return d.sequence(n, v, path)
	case reflect.Array:
		return d.array(n, v, path)
	}
	if n.Kind != yaml.ScalarNode {
		return d.fail(n, path, "expected a %s value, got %s", kindName(v.Type()), describe(n))
	}
	return d.scalar(n, v, path)
}

func (d *decoder) message(n *yaml.Node, v reflect.Value, path string) error {
	t := v.Type()
	if d.now != nil && n.Kind == yaml.ScalarNode && n.Style == 0 {
		switch {
		case n.Value == "now" && typeName(t) == "builtin_interfaces/msg/Time":
			return setTime(v, d.now())
		case n.Value == "auto" && typeName(t) == "std_msgs/msg/Header":
			fresh := reflect.New(t).Elem()
			for _, f := range fieldsOf(t) {
				if f.name == "stamp" {
					if err := setTime(fresh.Field(f.index), d.now()); err != nil {
						return d.fail(n, path, "%v", err)
					}
				}
			}
			v.Set(fresh)
			return nil
		}
	}
	if n.Kind != yaml.MappingNode {
		return d.fail(n, path, "expected a mapping of the fields of %s, got %s", typeName(t), describe(n))
	}
	fields := fieldsOf(t)
	byName := make(map[string]int, len(fields))
	var names []string
	for _, f := range fields {
		byName[f.name] = f.index
		names = append(names, f.name)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return d.fail(k, path, "field names must be plain strings, got %s", describe(k))
		}
		idx, ok := byName[k.Value]
		if !ok {
			known := "it has no fields"
			if len(names) > 0 {
				known = "its fields are " + strings.Join(names, ", ")
			}
			return d.fail(k, path, "unknown field %q in %s (%s)", k.Value, typeName(t), known)
		}
		if seen[k.Value] {
			return d.fail(k, path, "field %q given twice", k.Value)
		}
		seen[k.Value] = true
		if err := d.value(val, v.Field(idx), join(path, k.Value)); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.SequenceNode {
		return d.fail(n, path, "expected a sequence of %s, got %s", kindName(v.Type().Elem()), describe(n))
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, e := range n.Content {
		if err := d.value(e, s.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	v.Set(s)
	return nil
}

func (d *decoder) array(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.SequenceNode {
		return d.fail(n, path, "expected a sequence of %d %s, got %s", v.Len(), kindName(v.Type().Elem()), describe(n))
	}
	if len(n.Content) != v.Len() {
		return d.fail(n, path, "fixed-size array needs exactly %d elements, got %d", v.Len(), len(n.Content))
	}
	tmp := reflect.New(v.Type()).Elem()
	tmp.Set(v)
	for i, e := range n.Content {
		if err := d.value(e, tmp.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	v.Set(tmp)
	return nil
}

// kindName names the ROS kind of a Go field type for error messages.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct:
		return typeName(t)
	case reflect.Float64:
		return "float64"
	case reflect.Float32:
		return "float32"
	case reflect.Slice, reflect.Array:
		return kindName(t.Elem()) + "[]"
	case reflect.Int:
		return "int64"
	case reflect.Uint:
		return "uint64"
	}
	return t.Kind().String()
}

func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) error {
	tag := n.ShortTag()
	switch v.Kind() {
	case reflect.Bool:
		b, ok := yamlBool(n)
		if !ok {
			return d.fail(n, path, "expected a bool (true or false), got %s", describe(n))
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if tag == "!!float" && integerText.MatchString(n.Value) { // too big for YAML's int
			return d.fail(n, path, "value %s is out of range for %s", n.Value, kindName(v.Type()))
		}
		if tag != "!!int" {
			return d.fail(n, path, "expected an integer (%s), got %s", kindName(v.Type()), describe(n))
		}
		var i int64
		if err := n.Decode(&i); err != nil {
			return d.fail(n, path, "value %s is out of range for %s", n.Value, kindName(v.Type()))
		}
		if v.OverflowInt(i) {
			return d.fail(n, path, "value %d is out of range for %s [%d, %d]", i, kindName(v.Type()),
				-(int64(1) << (v.Type().Bits() - 1)), int64(1)<<(v.Type().Bits()-1)-1)
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if tag == "!!float" && integerText.MatchString(n.Value) {
			return d.fail(n, path, "value %s is out of range for %s [0, %d]", n.Value, kindName(v.Type()),
				uint64(math.MaxUint64)>>(64-v.Type().Bits()))
		}
		if tag != "!!int" {
			return d.fail(n, path, "expected an integer (%s), got %s", kindName(v.Type()), describe(n))
		}
		var u uint64
		if err := n.Decode(&u); err != nil {
			return d.fail(n, path, "value %s is out of range for %s [0, %d]", n.Value, kindName(v.Type()),
				uint64(math.MaxUint64)>>(64-v.Type().Bits()))
		}
		if v.OverflowUint(u) {
			return d.fail(n, path, "value %d is out of range for %s [0, %d]", u, kindName(v.Type()),
				uint64(math.MaxUint64)>>(64-v.Type().Bits()))
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		if tag != "!!float" && tag != "!!int" {
			return d.fail(n, path, "expected a number (%s), got %s", kindName(v.Type()), describe(n))
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return d.fail(n, path, "bad number %q: %v", n.Value, errors.Unwrap(err))
		}
		if v.Kind() == reflect.Float32 && !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
			return d.fail(n, path, "value %s is out of range for float32", n.Value)
		}
		v.SetFloat(f)
	case reflect.String:
		if tag != "!!str" {
			return d.fail(n, path, "expected a string, got %s (quote it to pass it as a string: '%s')", describe(n), n.Value)
		}
		v.SetString(n.Value)
	default:
		return d.fail(n, path, "unsupported Go field type %s", v.Type())
	}
	return nil
}

// integerText matches decimal integers that YAML resolved as floats
// because they overflow 64 bits.
var integerText = regexp.MustCompile(`^[-+]?[0-9]+$`)

// yamlBool reads a bool the way PyYAML's safe_load (YAML 1.1) does, so the
// plain words yes/no/on/off are accepted as well as true/false.
func yamlBool(n *yaml.Node) (bool, bool) {
	if n.ShortTag() == "!!bool" {
		var b bool
		return b, n.Decode(&b) == nil
	}
	if n.Style != 0 {
		return false, false // quoted: a string
	}
	switch n.Value {
	case "yes", "Yes", "YES", "on", "On", "ON":
		return true, true
	case "no", "No", "NO", "off", "Off", "OFF":
		return false, true
	}
	return false, false
}

// setTime writes t into a builtin_interfaces/msg/Time struct value.
func setTime(v reflect.Value, t time.Time) error {
	set := 0
	for _, f := range fieldsOf(v.Type()) {
		fv := v.Field(f.index)
		switch {
		case f.name == "sec" && fv.CanInt():
			fv.SetInt(t.Unix())
			set++
		case f.name == "nanosec" && fv.CanUint():
			fv.SetUint(uint64(t.Nanosecond()))
			set++
		}
	}
	if set != 2 {
		return fmt.Errorf("%s has no sec/nanosec fields", v.Type())
	}
	return nil
}
