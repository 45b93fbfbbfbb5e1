package dds

import "fmt"

// Layout is the memory layout of a fixed-size message type as C and C++
// lay it out (rosidl's structs on a 64-bit little-endian host): its size
// and its primitives, in declaration order, grouped in runs. CDR puts the
// same primitives in the same order, each run aligned to its element
// size, so the layout is all Cyclone's C code needs to turn a sample in
// memory into CDR and back without Go.
type Layout struct {
	// Size is sizeof the struct, trailing padding included.
	Size uint32
	// Runs are the primitives in declaration order.
	Runs []Run
}

// Run is Count primitives of Size bytes (1, 2, 4 or 8) at byte Offset.
type Run struct {
	Offset, Count, Size uint32
}

// maxRuns bounds a layout (rawcdr.h FSM_MAX_RUNS): a type with more runs
// (say, a long fixed array of structs) is treated as variable-size.
const maxRuns = 4096

// check validates l (nil is valid: no layout).
func (l *Layout) check() error {
	if l == nil {
		return nil
	}
	if len(l.Runs) == 0 || len(l.Runs) > maxRuns {
		return fmt.Errorf("layout has %d runs (want 1 to %d)", len(l.Runs), maxRuns)
	}
	for i, r := range l.Runs {
		switch r.Size {
		case 1, 2, 4, 8:
		default:
			return fmt.Errorf("layout run %d: element size %d is not 1, 2, 4 or 8", i, r.Size)
		}
		if r.Count == 0 || uint64(r.Offset)+uint64(r.Count)*uint64(r.Size) > uint64(l.Size) {
			return fmt.Errorf("layout run %d (%d×%d bytes at %d) does not fit in %d bytes", i, r.Count, r.Size, r.Offset, l.Size)
		}
	}
	return nil
}
