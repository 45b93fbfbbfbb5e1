package rosidl

import (
	"reflect"
	"testing"
)

func TestFixedLayout(t *testing.T) {
	vec3 := &TypeDescription{Name: "geometry_msgs/msg/Vector3", Fields: []FieldDescription{
		{Name: "x", TypeID: 11}, {Name: "y", TypeID: 11}, {Name: "z", TypeID: 11}}}
	twist := &TypeDescription{Name: "geometry_msgs/msg/Twist", Fields: []FieldDescription{
		{Name: "linear", TypeID: 1, NestedTypeName: vec3.Name}, {Name: "angular", TypeID: 1, NestedTypeName: vec3.Name}},
		Refs: []*TypeDescription{vec3}}
	inner := &TypeDescription{Name: "p/msg/Inner", Fields: []FieldDescription{
		{Name: "b", TypeID: 3}, {Name: "c", TypeID: 8}}} // uint8, int64: size 16, align 8
	empty := &TypeDescription{Name: "p/msg/Empty"}
	cases := []struct {
		name string
		d    *TypeDescription
		want *MemoryLayout // nil: not fixed-size
	}{
		{"twist: six doubles, one run", twist, &MemoryLayout{Size: 48, Runs: []MemoryRun{{0, 6, 8}}}},
		{"time", &TypeDescription{Name: "t", Fields: []FieldDescription{{Name: "sec", TypeID: 6}, {Name: "nanosec", TypeID: 7}}},
			&MemoryLayout{Size: 8, Runs: []MemoryRun{{0, 2, 4}}}},
		{"padding and trailing padding", &TypeDescription{Name: "t", Fields: []FieldDescription{
			{Name: "a", TypeID: 15}, {Name: "b", TypeID: 5 + kindArray, Capacity: 3}, {Name: "c", TypeID: 9}, {Name: "d", TypeID: 10}}},
			&MemoryLayout{Size: 24, Runs: []MemoryRun{{0, 1, 1}, {2, 3, 2}, {8, 1, 8}, {16, 1, 4}}}},
		{"nested struct aligned to its widest member", &TypeDescription{Name: "t", Fields: []FieldDescription{
			{Name: "a", TypeID: 2}, {Name: "s", TypeID: 1, NestedTypeName: inner.Name}}, Refs: []*TypeDescription{inner}},
			&MemoryLayout{Size: 24, Runs: []MemoryRun{{0, 1, 1}, {8, 1, 1}, {16, 1, 8}}}},
		{"array of structs", &TypeDescription{Name: "t", Fields: []FieldDescription{
			{Name: "s", TypeID: 1 + kindArray, Capacity: 2, NestedTypeName: inner.Name}}, Refs: []*TypeDescription{inner}},
			&MemoryLayout{Size: 32, Runs: []MemoryRun{{0, 1, 1}, {8, 1, 8}, {16, 1, 1}, {24, 1, 8}}}},
		{"empty message", empty, &MemoryLayout{Size: 1, Runs: []MemoryRun{{0, 1, 1}}}},
		{"big byte array", &TypeDescription{Name: "t", Fields: []FieldDescription{
			{Name: "seq", TypeID: 9}, {Name: "data", TypeID: 3 + kindArray, Capacity: 1 << 20}}},
			&MemoryLayout{Size: 8 + 1<<20, Runs: []MemoryRun{{0, 1, 8}, {8, 1 << 20, 1}}}},
		{"string", &TypeDescription{Name: "t", Fields: []FieldDescription{{Name: "s", TypeID: fieldString}}}, nil},
		{"bounded string", &TypeDescription{Name: "t", Fields: []FieldDescription{{Name: "s", TypeID: fieldBoundedString, StringCapacity: 4}}}, nil},
		{"sequence", &TypeDescription{Name: "t", Fields: []FieldDescription{{Name: "s", TypeID: 3 + kindUnboundedSeq}}}, nil},
		{"bounded sequence", &TypeDescription{Name: "t", Fields: []FieldDescription{{Name: "s", TypeID: 3 + kindBoundedSeq, Capacity: 4}}}, nil},
		{"long double", &TypeDescription{Name: "t", Fields: []FieldDescription{{Name: "x", TypeID: fieldLongDouble}}}, nil},
		{"wchar", &TypeDescription{Name: "t", Fields: []FieldDescription{{Name: "x", TypeID: fieldWChar}}}, nil},
		{"missing nested description", &TypeDescription{Name: "t", Fields: []FieldDescription{{Name: "x", TypeID: 1, NestedTypeName: "p/msg/Gone"}}}, nil},
		{"too many runs", &TypeDescription{Name: "t", Fields: []FieldDescription{
			{Name: "s", TypeID: 1 + kindArray, Capacity: 5000, NestedTypeName: inner.Name}}, Refs: []*TypeDescription{inner}}, nil},
		{"nil", nil, nil},
	}
	for _, c := range cases {
		got, ok := c.d.FixedLayout()
		if c.want == nil {
			if ok {
				t.Errorf("%s: fixed-size %+v, want not", c.name, got)
			}
			continue
		}
		if !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v %v, want %+v", c.name, got, ok, c.want)
		}
	}
}
