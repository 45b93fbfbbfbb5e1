package rosbridge

import (
	"sort"
	"strings"

	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

// definitionSeparator is the line of 80 '=' that precedes each dependency
// in a ros2msg schema.
var definitionSeparator = strings.Repeat("=", 80)

// shortName turns "pkg/msg/Name" (or "pkg/srv/Name_Request", ...) into
// "pkg/Name", the form .msg files use for field types and the MSG: lines
// must match.
func shortName(full string) string {
	parts := strings.Split(full, "/")
	if len(parts) == 3 {
		return parts[0] + "/" + parts[2]
	}
	return full
}

// FullDefinition returns the ros2msg schema of ti: its definition text,
// then for each type it uses (transitively, depth first, each once) a
// newline, a line of 80 '=', a line "MSG: pkg/Name" and that type's
// definition. This is
// the concatenation foxglove_bridge and rosbag2 produce, and what
// @foxglove/rosmsg parses.
func FullDefinition(reg *rosidl.Registry, ti *rosidl.TypeInfo) string {
	var b strings.Builder
	b.WriteString(definitionText(reg, ti.Name, ti))
	seen := map[string]bool{ti.Name: true}
	var deps func(d *rosidl.TypeDescription)
	deps = func(d *rosidl.TypeDescription) {
		if d == nil {
			return
		}
		refs := make([]*rosidl.TypeDescription, 0, len(d.Refs))
		for _, r := range d.Refs {
			if r != nil && !seen[r.Name] {
				refs = append(refs, r)
			}
		}
		sort.Slice(refs, func(i, j int) bool { return shortName(refs[i].Name) < shortName(refs[j].Name) })
		for _, r := range refs {
			if seen[r.Name] {
				continue
			}
			seen[r.Name] = true
			text := definitionText(reg, r.Name, nil)
			b.WriteByte('\n')
			b.WriteString(definitionSeparator)
			b.WriteString("\nMSG: ")
			b.WriteString(shortName(r.Name))
			b.WriteByte('\n')
			b.WriteString(text)
			deps(r)
		}
	}
	deps(ti.Desc)
	return b.String()
}

// definitionText is the .msg text of a type: the registry's definition
// (which service and action parts have too), else the description's
// source, else text rebuilt from the description's fields.
func definitionText(reg *rosidl.Registry, name string, ti *rosidl.TypeInfo) string {
	if ti == nil && reg != nil {
		ti, _ = reg.Message(name)
	}
	if ti != nil && ti.Definition != "" {
		return ti.Definition
	}
	if ti != nil && ti.Desc != nil && ti.Desc.Source != "" {
		return ti.Desc.Source
	}
	var d *rosidl.TypeDescription
	if ti != nil {
		d = ti.Desc
	}
	if d == nil {
		return ""
	}
	return fieldsText(d)
}

// scalarNames maps REP-2011 field type ids to .msg type names.
var scalarNames = map[uint8]string{
	2: "int8", 3: "uint8", 4: "int16", 5: "uint16", 6: "int32", 7: "uint32", 8: "int64", 9: "uint64",
	10: "float32", 11: "float64", 13: "char", 14: "wchar", 15: "bool", 16: "byte",
	17: "string", 18: "wstring", 19: "string", 20: "wstring", 21: "string", 22: "wstring",
}

// fieldsText writes a .msg body from a type description (for types that
// have no text of their own).
func fieldsText(d *rosidl.TypeDescription) string {
	var b strings.Builder
	for _, f := range d.Fields {
		base := f.TypeID % 48
		kind := f.TypeID / 48
		if f.TypeID == 0 || kind > 3 {
			continue
		}
		name := scalarNames[base]
		if base == 1 {
			name = shortName(f.NestedTypeName)
		}
		if name == "" {
			continue
		}
		if (base >= 19 && base <= 22) && f.StringCapacity > 0 {
			name += "<=" + itoa(f.StringCapacity)
		}
		switch kind {
		case 1:
			name += "[" + itoa(f.Capacity) + "]"
		case 2:
			name += "[<=" + itoa(f.Capacity) + "]"
		case 3:
			name += "[]"
		}
		b.WriteString(name)
		b.WriteByte(' ')
		b.WriteString(f.Name)
		b.WriteByte('\n')
	}
	return b.String()
}

func itoa(n uint64) string {
	if n == 0 {
		return "0"
	}
	var buf [20]byte
	i := len(buf)
	for n > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	return string(buf[i:])
}
