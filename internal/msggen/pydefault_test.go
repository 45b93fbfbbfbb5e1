package main

import (
	"math"
	"testing"
)

// TestPyDefault checks default values rendered as rosidl's type
// description does (Python str/repr of the parsed value).
func TestPyDefault(t *testing.T) {
	scalar := FieldType{Base: BaseType{Prim: "float64"}}
	array := FieldType{Base: BaseType{Prim: "int32"}, Array: FixedArray, Size: 3}
	cases := []struct {
		t    FieldType
		v    any
		want string
	}{
		{scalar, 1.0, "1.0"},
		{scalar, 0.1, "0.1"},
		{scalar, math.Copysign(0, -1), "-0.0"},
		{scalar, 1e16, "1e+16"},
		{scalar, 1e-5, "1e-05"},
		{scalar, 0.0001, "0.0001"},
		{scalar, 123456789012345.0, "123456789012345.0"},
		{FieldType{Base: BaseType{Prim: "bool"}}, true, "True"},
		{FieldType{Base: BaseType{Prim: "uint8"}}, uint64(7), "7"},
		{FieldType{Base: BaseType{Prim: "string"}}, "it's", "it's"},
		{array, []any{int64(1), int64(-2), int64(3)}, "(1, -2, 3)"},
		{array, []any{int64(1)}, "(1,)"},
		{FieldType{Base: BaseType{Prim: "string"}, Array: UnboundedSeq}, []any{"a", "it's"}, `('a', "it's")`},
	}
	for _, c := range cases {
		if got := pyDefault(c.t, c.v); got != c.want {
			t.Errorf("pyDefault(%v, %#v) = %q, want %q", c.t, c.v, got, c.want)
		}
	}
}
