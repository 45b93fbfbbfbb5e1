package rosidl_test

import (
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

func TestMaxCDRSizeCases(t *testing.T) {
	inner := &rosidl.TypeDescription{Name: "p/msg/In", Fields: []rosidl.FieldDescription{
		{Name: "a", TypeID: 3},  // uint8: 1
		{Name: "b", TypeID: 11}, // float64: up to 7 padding + 8
	}}
	cyclic := &rosidl.TypeDescription{Name: "p/msg/Loop", Fields: []rosidl.FieldDescription{{Name: "l", TypeID: 1, NestedTypeName: "p/msg/Loop"}}}
	cyclic.Refs = []*rosidl.TypeDescription{cyclic}
	for _, c := range []struct {
		name string
		d    *rosidl.TypeDescription
		want int
		ok   bool
	}{
		{"nil", nil, 0, false},
		{"empty struct", &rosidl.TypeDescription{Name: "p/msg/E"}, 1, true},
		{"primitives", inner, 16, true},
		{"int32[4]", &rosidl.TypeDescription{Fields: []rosidl.FieldDescription{{TypeID: 6 + 48, Capacity: 4}}}, 3 + 16, true},
		{"int32[<=4]", &rosidl.TypeDescription{Fields: []rosidl.FieldDescription{{TypeID: 6 + 96, Capacity: 4}}}, 7 + 3 + 16, true},
		{"int32[]", &rosidl.TypeDescription{Fields: []rosidl.FieldDescription{{TypeID: 6 + 144}}}, 0, false},
		{"string<=5", &rosidl.TypeDescription{Fields: []rosidl.FieldDescription{{TypeID: 21, StringCapacity: 5}}}, 3 + 4 + 6, true},
		{"wstring<=5", &rosidl.TypeDescription{Fields: []rosidl.FieldDescription{{TypeID: 22, StringCapacity: 5}}}, 3 + 4 + 20, true},
		{"string", &rosidl.TypeDescription{Fields: []rosidl.FieldDescription{{TypeID: 17}}}, 0, false},
		{"string<=5[<=2]", &rosidl.TypeDescription{Fields: []rosidl.FieldDescription{{TypeID: 21 + 96, Capacity: 2, StringCapacity: 5}}}, 7 + 2*13, true},
		{"nested[3]", &rosidl.TypeDescription{Fields: []rosidl.FieldDescription{{TypeID: 1 + 48, Capacity: 3, NestedTypeName: "p/msg/In"}},
			Refs: []*rosidl.TypeDescription{inner}}, 48, true},
		{"missing nested", &rosidl.TypeDescription{Fields: []rosidl.FieldDescription{{TypeID: 1, NestedTypeName: "p/msg/In"}}}, 0, false},
		{"cyclic", cyclic, 0, false},
		{"unknown type id", &rosidl.TypeDescription{Fields: []rosidl.FieldDescription{{TypeID: 40}}}, 0, false},
		{"type id beyond sequences", &rosidl.TypeDescription{Fields: []rosidl.FieldDescription{{TypeID: 200}}}, 0, false},
		{"type id 0", &rosidl.TypeDescription{Fields: []rosidl.FieldDescription{{TypeID: 0}}}, 0, false},
	} {
		got, ok := c.d.MaxCDRSize()
		if got != c.want || ok != c.ok {
			t.Errorf("%s: MaxCDRSize() = %d, %v; want %d, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
