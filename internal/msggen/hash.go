package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
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

// individualDescription writes m's individual type description in the
// json.dumps form REP-2011 hashes (default values omitted).
func individualDescription(b *strings.Builder, m *MsgSpec) {
	b.WriteString(`{"type_name": `)
	b.WriteString(strconv.Quote(m.FullName()))
	b.WriteString(`, "fields": [`)
	for i, f := range hashFields(m) {
		if i > 0 {
			b.WriteString(", ")
		}
		capacity := 0
		if f.Type.Array != NotArray && f.Type.Array != UnboundedSeq {
			capacity = f.Type.Size
		}
		nested := ""
		if f.Type.Base.IsNested() {
			nested = f.Type.Base.FullName()
		}
		fmt.Fprintf(b, `{"name": %s, "type": {"type_id": %d, "capacity": %d, "string_capacity": %d, "nested_type_name": %s}}`,
			strconv.Quote(f.Name), typeID(f.Type), capacity, f.Type.Base.StringBound, strconv.Quote(nested))
	}
	b.WriteString("]}")
}

// TypeDescriptionJSON returns the hashed JSON text of the full type
// description of the named type (message, service or action).
func (u *Universe) TypeDescriptionJSON(name string) (string, error) {
	top := u.lookup(name)
	if top == nil {
		return "", fmt.Errorf("unknown type %s", name)
	}
	refs := map[string]*MsgSpec{}
	var walk func(m *MsgSpec) error
	walk = func(m *MsgSpec) error {
		for _, f := range m.Fields {
			if !f.Type.Base.IsNested() {
				continue
			}
			n := f.Type.Base.FullName()
			if _, ok := refs[n]; ok {
				continue
			}
			r := u.lookup(n)
			if r == nil {
				return fmt.Errorf("%s references unknown type %s", m.FullName(), n)
			}
			refs[n] = r
			if err := walk(r); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(top); err != nil {
		return "", err
	}
	names := make([]string, 0, len(refs))
	for n := range refs {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(`{"type_description": `)
	individualDescription(&b, top)
	b.WriteString(`, "referenced_type_descriptions": [`)
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		individualDescription(&b, refs[n])
	}
	b.WriteString("]}")
	return b.String(), nil
}

// Hash returns the RIHS01 hash string of the named type.
func (u *Universe) Hash(name string) (string, error) {
	j, err := u.TypeDescriptionJSON(name)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(j))
	return "RIHS01_" + hex.EncodeToString(sum[:]), nil
}
