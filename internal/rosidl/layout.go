package rosidl

// MemoryLayout is the memory layout of a fixed-size message type as
// rosidl's C and C++ structs have it on a 64-bit host: natural alignment,
// nested structs aligned to their widest member, trailing padding. Such a
// type has only primitives, nested fixed-size types and fixed arrays of
// them: no strings, no sequences. rmw_cyclonedds_cpp calls these types
// self-contained; with shared memory on it publishes them as raw memory
// (and lends them for zero-copy publishing).
type MemoryLayout struct {
	// Size is the size of the struct, trailing padding included.
	Size uint32
	// Runs are the type's primitives in declaration order, adjacent
	// primitives of one size merged.
	Runs []MemoryRun
}

// MemoryRun is Count primitives of Size bytes each at byte Offset.
type MemoryRun struct {
	Offset, Count, Size uint32
}

// maxLayoutRuns bounds a layout: a long fixed array of structs whose
// members do not merge would need a run per member per element.
const maxLayoutRuns = 4096

// FixedLayout returns the memory layout of the type d describes and true,
// or false when the type is not fixed-size (a string or sequence anywhere,
// long double or wchar, whose C sizes differ from their CDR sizes, a
// nested type whose description is missing), or when its layout would
// need more than 4096 runs.
func (d *TypeDescription) FixedLayout() (*MemoryLayout, bool) {
	if d == nil {
		return nil, false
	}
	refs := map[string]*TypeDescription{}
	for _, r := range d.Referenced() {
		refs[r.Name] = r
	}
	sub, ok := structLayout(d, refs, 0)
	if !ok {
		return nil, false
	}
	return &MemoryLayout{Size: sub.size, Runs: sub.runs}, true
}

// Equal reports whether l and o are the same layout.
func (l *MemoryLayout) Equal(o *MemoryLayout) bool {
	if l.Size != o.Size || len(l.Runs) != len(o.Runs) {
		return false
	}
	for i := range l.Runs {
		if l.Runs[i] != o.Runs[i] {
			return false
		}
	}
	return true
}

// structLayoutOf is one struct's layout, its runs relative to its start.
type structLayoutOf struct {
	size, align uint32
	runs        []MemoryRun
}

func alignUp(x, a uint32) uint32 { return (x + a - 1) / a * a }

// AppendRun appends r to runs, merging it into the last run when it
// continues it with the same size; false when there would be more than
// 4096 runs.
func AppendRun(runs []MemoryRun, r MemoryRun) ([]MemoryRun, bool) {
	if n := len(runs); n > 0 {
		last := &runs[n-1]
		if last.Size == r.Size && last.Offset+last.Count*last.Size == r.Offset {
			last.Count += r.Count
			return runs, true
		}
	}
	if len(runs) >= maxLayoutRuns {
		return runs, false
	}
	return append(runs, r), true
}

// maxFixedSize keeps offsets far from uint32 overflow.
const maxFixedSize = 1 << 30

func structLayout(t *TypeDescription, refs map[string]*TypeDescription, depth int) (structLayoutOf, bool) {
	if depth > maxNesting {
		return structLayoutOf{}, false
	}
	if len(t.Fields) == 0 {
		// rosidl's structure_needs_at_least_one_member
		return structLayoutOf{size: 1, align: 1, runs: []MemoryRun{{0, 1, 1}}}, true
	}
	var off uint32
	align := uint32(1)
	var runs []MemoryRun
	ok := true
	for i := range t.Fields {
		f := &t.Fields[i]
		id, count := uint32(f.TypeID), uint32(1)
		switch {
		case id > kindBoundedSeq: // bounded and unbounded sequences
			return structLayoutOf{}, false
		case id > kindArray:
			id -= kindArray
			if f.Capacity == 0 || f.Capacity > maxFixedSize {
				return structLayoutOf{}, false
			}
			count = uint32(f.Capacity)
		}
		if id == fieldNested {
			nt := refs[f.NestedTypeName]
			if nt == nil {
				return structLayoutOf{}, false
			}
			sub, good := structLayout(nt, refs, depth+1)
			if !good {
				return structLayoutOf{}, false
			}
			off = alignUp(off, sub.align)
			if uint64(off)+uint64(sub.size)*uint64(count) > maxFixedSize {
				return structLayoutOf{}, false
			}
			for e := uint32(0); e < count; e++ {
				for _, r := range sub.runs {
					r.Offset += off + e*sub.size
					if runs, ok = AppendRun(runs, r); !ok {
						return structLayoutOf{}, false
					}
				}
			}
			off += sub.size * count
			align = max(align, sub.align)
			continue
		}
		if int(id) >= len(scalarSizes) || id == fieldLongDouble || id == fieldWChar || scalarSizes[id] == 0 {
			return structLayoutOf{}, false
		}
		s := uint32(scalarSizes[id])
		off = alignUp(off, s)
		if uint64(off)+uint64(s)*uint64(count) > maxFixedSize {
			return structLayoutOf{}, false
		}
		if runs, ok = AppendRun(runs, MemoryRun{Offset: off, Count: count, Size: s}); !ok {
			return structLayoutOf{}, false
		}
		off += s * count
		align = max(align, s)
	}
	return structLayoutOf{size: alignUp(off, align), align: align, runs: runs}, true
}
