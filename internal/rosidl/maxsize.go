package rosidl

// Field type ids of REP-2011 (type_description_interfaces/msg/FieldType).
// A field's TypeID is one of these plus 48 (T[N]), 96 (T[<=N]) or 144
// (T[]).
const (
	fieldNested         = 1
	fieldLongDouble     = 12
	fieldWChar          = 14
	fieldString         = 17
	fieldWString        = 18
	fieldFixedString    = 19
	fieldFixedWString   = 20
	fieldBoundedString  = 21
	fieldBoundedWString = 22

	kindArray          = 48
	kindBoundedSeq     = 96
	kindUnboundedSeq   = 144
	maxScalarFieldType = 47
)

// scalarSizes are the XCDR1 sizes of the primitive field types (index:
// type id); 0 for ids that are not fixed-size primitives.
var scalarSizes = [...]int{
	2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 4, 8: 8, 9: 8, 10: 4, 11: 8,
	fieldLongDouble: 16, 13: 1, fieldWChar: 4, 15: 1, 16: 1,
}

// MaxCDRSize returns an upper bound of the XCDR1 body size (without the
// 4-byte encapsulation header) of any message of the type d describes, as
// rmw_cyclonedds serializes it, and true; or false when the type has an
// unbounded string or sequence anywhere, or a nested type whose
// description is missing.
//
// The bound assumes the worst alignment padding before every primitive,
// string and sequence, so it holds wherever the message sits in a larger
// one. A sample longer than the bound (plus the header and up to 3 bytes
// of trailing padding) cannot be a valid message of the type.
func (d *TypeDescription) MaxCDRSize() (int, bool) {
	if d == nil {
		return 0, false
	}
	return d.maxSize(0, map[*TypeDescription]int{})
}

// maxNesting stops a malformed (cyclic) description from recursing for ever;
// real ROS types nest a handful of levels.
const maxNesting = 64

// maxSize computes the bound; memo holds the bounds of the nested types
// done so far (-1: unbounded), so a type used in many places is walked once.
func (d *TypeDescription) maxSize(depth int, memo map[*TypeDescription]int) (int, bool) {
	if n, ok := memo[d]; ok {
		return n, n >= 0
	}
	if depth > maxNesting {
		return 0, false
	}
	total := 0
	if len(d.Fields) == 0 {
		total = 1 // rosidl's structure_needs_at_least_one_member
	}
	for i := range d.Fields {
		n, ok := d.fieldMaxSize(&d.Fields[i], depth, memo)
		if !ok {
			memo[d] = -1
			return 0, false
		}
		total += n
	}
	memo[d] = total
	return total, true
}

// fieldMaxSize bounds one field: its elements, the padding before them and,
// for sequences, the count.
func (d *TypeDescription) fieldMaxSize(f *FieldDescription, depth int, memo map[*TypeDescription]int) (int, bool) {
	base := int(f.TypeID)
	count := 1
	prefix := 0
	switch {
	case base > kindUnboundedSeq:
		return 0, false
	case base > kindBoundedSeq:
		base -= kindBoundedSeq
		count = int(f.Capacity)
		prefix = 3 + 4 // padding before the uint32 count, the count
	case base > kindArray:
		base -= kindArray
		count = int(f.Capacity)
	}
	if base < 1 || base > maxScalarFieldType {
		return 0, false
	}
	var elem int
	switch base {
	case fieldNested:
		nested := d.ref(f.NestedTypeName)
		if nested == nil {
			return 0, false
		}
		n, ok := nested.maxSize(depth+1, memo)
		if !ok {
			return 0, false
		}
		elem = n
	case fieldString, fieldWString:
		return 0, false
	case fieldBoundedString, fieldFixedString:
		elem = 3 + 4 + int(f.StringCapacity) + 1 // padding, length, bytes, NUL
	case fieldBoundedWString, fieldFixedWString:
		elem = 3 + 4 + 4*int(f.StringCapacity) // padding, count, 4-byte units
	default:
		if base >= len(scalarSizes) || scalarSizes[base] == 0 {
			return 0, false
		}
		size := scalarSizes[base]
		// Elements of a primitive array follow each other; only the
		// first is padded.
		return prefix + min(size, 8) - 1 + count*size, true
	}
	return prefix + count*elem, true
}

// ref returns the directly referenced description called name.
func (d *TypeDescription) ref(name string) *TypeDescription {
	for _, r := range d.Refs {
		if r != nil && r.Name == name {
			return r
		}
	}
	return nil
}
