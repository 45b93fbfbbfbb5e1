package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

// FieldType ids of type_description_interfaces/msg/FieldType.
var typeIDs = map[string]int{
	"nested":  1,
	"int8":    2,
	"uint8":   3,
	"int16":   4,
	"uint16":  5,
	"int32":   6,
	"uint32":  7,
	"int64":   8,
	"uint64":  9,
	"float32": 10,
	"float64": 11,
	"char":    3, // .msg char is IDL uint8
	"bool":    15,
	"byte":    16,
	"string":  17,
	"wstring": 18,
}

// typeID returns the REP-2011 FieldType id of t.
func typeID(t FieldType) int {
	var id int
	switch {
	case t.Base.IsNested():
		id = typeIDs["nested"]
	case t.Base.Prim == "string" && t.Base.StringBound > 0:
		id = 21 // BOUNDED_STRING
	case t.Base.Prim == "wstring" && t.Base.StringBound > 0:
		id = 22 // BOUNDED_WSTRING
	default:
		id = typeIDs[t.Base.Prim]
	}
	switch t.Array {
	case FixedArray:
		id += 48
	case BoundedSeq:
		id += 96
	case UnboundedSeq:
		id += 144
	}
	return id
}

// placeholderField is the member rosidl inserts into an empty structure.
var placeholderField = Field{Name: "structure_needs_at_least_one_member", Type: FieldType{Base: BaseType{Prim: "uint8"}}}

// hashFields returns the fields as rosidl sees them (with the placeholder
// for empty messages).
func hashFields(m *MsgSpec) []Field {
	if len(m.Fields) == 0 {
		return []Field{placeholderField}
	}
	return m.Fields
}

// fieldDesc is one field of an individual type description.
type fieldDesc struct {
	name                             string
	typeID, capacity, stringCapacity int
	nested, defaultValue             string
}

// fieldDescs returns the fields of m's individual type description.
func fieldDescs(m *MsgSpec) []fieldDesc {
	fields := hashFields(m)
	out := make([]fieldDesc, 0, len(fields))
	for _, f := range fields {
		d := fieldDesc{name: f.Name, typeID: typeID(f.Type), stringCapacity: f.Type.Base.StringBound}
		if f.Type.Array != NotArray && f.Type.Array != UnboundedSeq {
			d.capacity = f.Type.Size
		}
		if f.Type.Base.IsNested() {
			d.nested = f.Type.Base.FullName()
		}
		if f.Default != nil {
			d.defaultValue = pyDefault(f.Type, f.Default)
		}
		out = append(out, d)
	}
	return out
}

// pyDefault renders a default value as rosidl_generator_type_description
// does: str() of the value rosidl_parser reads from the IDL @default
// annotation. Scalars come out as Python prints them (True, 1.0, text);
// arrays are the repr of a tuple, which is how rosidl_adapter writes array
// defaults into the IDL.
func pyDefault(t FieldType, v any) string {
	if t.Array == NotArray {
		if s, ok := v.(string); ok {
			return s
		}
		return pyRepr(v)
	}
	items, _ := v.([]any)
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = pyRepr(it)
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// pyRepr renders a parsed scalar like Python's repr.
func pyRepr(v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return pyFloat(x)
	case string:
		x = strings.ReplaceAll(x, `\`, `\\`)
		if strings.Contains(x, "'") && !strings.Contains(x, `"`) {
			return `"` + x + `"`
		}
		return "'" + strings.ReplaceAll(x, "'", `\'`) + "'"
	}
	return fmt.Sprint(v)
}

// pyFloat renders x as Python's float repr: shortest round-trip digits,
// positional for exponents in [-4, 16), with ".0" on integral values.
func pyFloat(x float64) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	if x != 0 {
		e := strconv.FormatFloat(x, 'e', -1, 64)
		exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
		if exp < -4 || exp >= 16 {
			return e
		}
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// description builds the runtime description graph (rosidl) of the named
// type (message, service or action): the same structure the generated code
// carries, so the generated hashes and the ones nodes compute at run time
// come from one serializer.
func (u *Universe) description(name string) (*rosidl.TypeDescription, error) {
	top := u.lookup(name)
	if top == nil {
		return nil, fmt.Errorf("unknown type %s", name)
	}
	built := map[string]*rosidl.TypeDescription{}
	var build func(m *MsgSpec) (*rosidl.TypeDescription, error)
	build = func(m *MsgSpec) (*rosidl.TypeDescription, error) {
		if d, ok := built[m.FullName()]; ok {
			return d, nil
		}
		d := &rosidl.TypeDescription{Name: m.FullName()}
		built[m.FullName()] = d
		for _, f := range fieldDescs(m) {
			d.Fields = append(d.Fields, rosidl.FieldDescription{Name: f.name, TypeID: uint8(f.typeID),
				Capacity: uint64(f.capacity), StringCapacity: uint64(f.stringCapacity), NestedTypeName: f.nested})
			if f.nested == "" {
				continue
			}
			r := u.lookup(f.nested)
			if r == nil {
				return nil, fmt.Errorf("%s references unknown type %s", m.FullName(), f.nested)
			}
			rd, err := build(r)
			if err != nil {
				return nil, err
			}
			d.Refs = append(d.Refs, rd)
		}
		return d, nil
	}
	return build(top)
}

// TypeDescriptionJSON returns the hashed JSON text of the full type
// description of the named type (message, service or action).
func (u *Universe) TypeDescriptionJSON(name string) (string, error) {
	d, err := u.description(name)
	if err != nil {
		return "", err
	}
	return d.HashJSON(), nil
}

// Hash returns the RIHS01 hash string of the named type.
func (u *Universe) Hash(name string) (string, error) {
	d, err := u.description(name)
	if err != nil {
		return "", err
	}
	return d.TypeHash(), nil
}
