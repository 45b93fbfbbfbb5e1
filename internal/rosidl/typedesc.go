package rosidl

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strconv"
	"strings"
)

// Encodings of TypeDescription.Encoding, as in type_description_interfaces'
// TypeSource: the kind of file that defined a type, or "implicit" for the
// types the tooling derives (service halves and events, action parts).
const (
	EncodingMsg      = "msg"
	EncodingSrv      = "srv"
	EncodingAction   = "action"
	EncodingImplicit = "implicit"
)

// FieldDescription is one member of a REP-2011 individual type description
// (type_description_interfaces/msg/Field with its FieldType flattened).
type FieldDescription struct {
	Name string
	// TypeID is the FieldType id: the scalar id plus 48 for T[N], 96 for
	// T[<=N] and 144 for T[].
	TypeID uint8
	// Capacity is N of T[N] and T[<=N], else 0.
	Capacity uint64
	// StringCapacity is N of string<=N and wstring<=N, else 0.
	StringCapacity uint64
	// NestedTypeName is "pkg/msg/Name" of a nested type, else "".
	NestedTypeName string
	// DefaultValue is the default as rosidl renders it ("" if none). It is
	// not part of the hash.
	DefaultValue string
}

// TypeDescription is the individual type description of one type, the raw
// text that defined it, and links to the descriptions of the types its
// fields reference directly. Generated code builds one for every message,
// service and action type; message types cannot be recursive, so the links
// form a DAG.
type TypeDescription struct {
	// Name is "pkg/msg/Name", "pkg/srv/Name_Request", "pkg/srv/Name", ...
	Name   string
	Fields []FieldDescription
	// Refs are the types referenced directly by Fields (in any order,
	// duplicates allowed).
	Refs []*TypeDescription
	// Encoding is EncodingMsg, EncodingSrv, EncodingAction or
	// EncodingImplicit.
	Encoding string
	// Source is the raw text of the defining file ("" for implicit types).
	Source string
}

// Referenced returns the descriptions of all types d references
// transitively, each name once, sorted by name — the
// referenced_type_descriptions of the full description. It tolerates nil
// links.
func (d *TypeDescription) Referenced() []*TypeDescription {
	seen := map[string]*TypeDescription{}
	var walk func(t *TypeDescription)
	walk = func(t *TypeDescription) {
		for _, r := range t.Refs {
			if r == nil {
				continue
			}
			if _, ok := seen[r.Name]; ok {
				continue
			}
			seen[r.Name] = r
			walk(r)
		}
	}
	walk(d)
	delete(seen, d.Name) // a type never references itself; be safe anyway
	out := make([]*TypeDescription, 0, len(seen))
	for _, r := range seen {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// HashJSON returns the text REP-2011 hashes for the full description of d:
// Python json.dumps of {"type_description": ..., "referenced_type_descriptions":
// [...]} with default values removed, separators ", " and ": ", ASCII only.
func (d *TypeDescription) HashJSON() string {
	var b strings.Builder
	b.WriteString(`{"type_description": `)
	d.writeIndividual(&b)
	b.WriteString(`, "referenced_type_descriptions": [`)
	for i, r := range d.Referenced() {
		if i > 0 {
			b.WriteString(", ")
		}
		r.writeIndividual(&b)
	}
	b.WriteString("]}")
	return b.String()
}

// TypeHash returns the REP-2011 hash string "RIHS01_<64 hex>" of d.
func (d *TypeDescription) TypeHash() string {
	sum := sha256.Sum256([]byte(d.HashJSON()))
	return "RIHS01_" + hex.EncodeToString(sum[:])
}

func (d *TypeDescription) writeIndividual(b *strings.Builder) {
	b.WriteString(`{"type_name": `)
	writeJSONString(b, d.Name)
	b.WriteString(`, "fields": [`)
	for i, f := range d.Fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"name": `)
		writeJSONString(b, f.Name)
		b.WriteString(`, "type": {"type_id": `)
		b.WriteString(strconv.FormatUint(uint64(f.TypeID), 10))
		b.WriteString(`, "capacity": `)
		b.WriteString(strconv.FormatUint(f.Capacity, 10))
		b.WriteString(`, "string_capacity": `)
		b.WriteString(strconv.FormatUint(f.StringCapacity, 10))
		b.WriteString(`, "nested_type_name": `)
		writeJSONString(b, f.NestedTypeName)
		b.WriteString("}}")
	}
	b.WriteString("]}")
}

// writeJSONString writes s as Python's json.dumps (ensure_ascii=True) does.
func writeJSONString(b *strings.Builder, s string) {
	const hexDigits = "0123456789abcdef"
	u4 := func(r rune) {
		b.WriteString(`\u`)
		for shift := 12; shift >= 0; shift -= 4 {
			b.WriteByte(hexDigits[(r>>shift)&0xf])
		}
	}
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (r >= 0x7f && r < 0x10000):
			u4(r) // invalid UTF-8 arrives as utf8.RuneError, U+FFFD
		case r >= 0x10000:
			r -= 0x10000
			u4(0xd800 + (r >> 10))
			u4(0xdc00 + (r & 0x3ff))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// TypeSource is one entry of type_description_interfaces/msg/TypeSource.
type TypeSource struct {
	TypeName, Encoding, RawFileContents string
}

// Sources returns the sources of d and of every type it references, in
// the order rosidl's generated code lists them: d first, then the
// referenced types sorted by name. Implicit types have empty contents.
func (d *TypeDescription) Sources() []TypeSource {
	refs := d.Referenced()
	out := make([]TypeSource, 0, 1+len(refs))
	for _, t := range append([]*TypeDescription{d}, refs...) {
		enc := t.Encoding
		if enc == "" {
			enc = EncodingImplicit
		}
		out = append(out, TypeSource{TypeName: t.Name, Encoding: enc, RawFileContents: t.Source})
	}
	return out
}
