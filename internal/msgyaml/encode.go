package msgyaml

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Marshal renders msg (a pointer to or value of a message struct) as
// `ros2 topic echo` prints it, without the trailing "---" line. The result
// ends with a newline.
func Marshal(msg any) (string, error) {
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
	writeMapping(&b, v, 0, false)
	return b.String(), nil
}

// Echo is Marshal followed by the "---" separator line, exactly one message
// of `ros2 topic echo` output.
func Echo(msg any) (string, error) {
	s, err := Marshal(msg)
	if err != nil {
		return "", err
	}
	return s + "---\n", nil
}

// writeMapping writes the fields of struct v as a block mapping at indent.
// If inSeq is true the first key continues a "- " already written.
func writeMapping(b *strings.Builder, v reflect.Value, indent int, inSeq bool) {
	pad := strings.Repeat(" ", indent)
	for i, f := range fieldsOf(v.Type()) {
		if i > 0 || !inSeq {
			b.WriteString(pad)
		}
		b.WriteString(f.name)
		b.WriteByte(':')
		writeValue(b, v.Field(f.index), indent)
	}
}

// writeValue writes the value part of "key:" whose key sits at indent.
func writeValue(b *strings.Builder, v reflect.Value, indent int) {
	switch v.Kind() {
	case reflect.Struct:
		if len(fieldsOf(v.Type())) == 0 {
			b.WriteString(" {}\n")
			return
		}
		b.WriteByte('\n')
		writeMapping(b, v, indent+2, false)
	case reflect.Slice, reflect.Array:
		if v.Len() == 0 {
			b.WriteString(" []\n")
			return
		}
		b.WriteByte('\n')
		writeSequence(b, v, indent)
	default:
		b.WriteByte(' ')
		b.WriteString(scalarYAML(v, indent+2))
		b.WriteByte('\n')
	}
}

// writeSequence writes the items of v as an indentless block sequence at
// indent (PyYAML does not indent a sequence that is a mapping value).
func writeSequence(b *strings.Builder, v reflect.Value, indent int) {
	pad := strings.Repeat(" ", indent)
	for i := 0; i < v.Len(); i++ {
		e := v.Index(i)
		b.WriteString(pad)
		b.WriteString("-")
		if e.Kind() == reflect.Struct {
			if len(fieldsOf(e.Type())) == 0 {
				b.WriteString(" {}\n")
				continue
			}
			b.WriteByte(' ')
			writeMapping(b, e, indent+2, true)
			continue
		}
		b.WriteByte(' ')
		b.WriteString(scalarYAML(e, indent+2))
		b.WriteByte('\n')
	}
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
