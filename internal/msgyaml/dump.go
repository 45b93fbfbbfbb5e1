package msgyaml

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Dump renders a plain value as PyYAML's yaml.dump(default_flow_style=False)
// does: maps (map[string]any) as block mappings with sorted keys, slices as
// indentless block sequences, scalars as Marshal renders message fields.
// `ros2 param dump` output is written this way.
func Dump(v any) string {
	var b strings.Builder
	rv := reflect.ValueOf(v)
	switch {
	case rv.Kind() == reflect.Map && rv.Len() > 0:
		dumpMap(&b, rv, 0)
	case (rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array) && rv.Len() > 0:
		dumpSeq(&b, rv, 0)
	case rv.Kind() == reflect.Map:
		b.WriteString("{}\n")
	case rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array:
		b.WriteString("[]\n")
	default:
		b.WriteString(dumpScalar(rv, 2) + "\n...\n")
	}
	return b.String()
}

func dumpScalar(v reflect.Value, indent int) string {
	if !v.IsValid() {
		return "null"
	}
	if v.Kind() == reflect.Interface {
		return dumpScalar(v.Elem(), indent)
	}
	return scalarYAML(v, indent)
}

func deref(v reflect.Value) reflect.Value {
	for v.IsValid() && v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	return v
}

func dumpMap(b *strings.Builder, m reflect.Value, indent int) {
	keys := m.MapKeys()
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	pad := strings.Repeat(" ", indent)
	for _, k := range keys {
		b.WriteString(pad + yamlString(fmt.Sprint(k.Interface()), indent) + ":")
		dumpValue(b, deref(m.MapIndex(k)), indent)
	}
}

// dumpValue writes the part after "key:" for a key at indent.
func dumpValue(b *strings.Builder, v reflect.Value, indent int) {
	switch {
	case v.IsValid() && v.Kind() == reflect.Map:
		if v.Len() == 0 {
			b.WriteString(" {}\n")
			return
		}
		b.WriteByte('\n')
		dumpMap(b, v, indent+2)
	case v.IsValid() && (v.Kind() == reflect.Slice || v.Kind() == reflect.Array):
		if v.Len() == 0 {
			b.WriteString(" []\n")
			return
		}
		b.WriteByte('\n')
		dumpSeq(b, v, indent)
	default:
		b.WriteString(" " + dumpScalar(v, indent+2) + "\n")
	}
}

func dumpSeq(b *strings.Builder, s reflect.Value, indent int) {
	pad := strings.Repeat(" ", indent)
	for i := 0; i < s.Len(); i++ {
		e := deref(s.Index(i))
		b.WriteString(pad + "- " + dumpScalar(e, indent+2) + "\n")
	}
}
