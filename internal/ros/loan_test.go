package ros

import (
	"reflect"
	"testing"

	"github.com/fsmnodes/fsmnodes/msgs"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// TestGoLayoutIsCLayout checks every generated message type whose
// description makes it fixed-size: its Go struct must have the C layout,
// else a loaned chunk could not be a *T.
func TestGoLayoutIsCLayout(t *testing.T) {
	reg := msgs.Registry()
	fixed := 0
	for _, name := range reg.Names() {
		ti, err := reg.Message(name)
		if err != nil {
			continue // a service or action
		}
		want, ok := ti.Desc.FixedLayout()
		if !ok {
			continue
		}
		if ti.New == nil {
			t.Errorf("%s: no constructor", name)
			continue
		}
		typ := reflect.TypeOf(ti.New()).Elem()
		if typ.Size() == 0 {
			// An empty message is one byte in C (rosidl's
			// structure_needs_at_least_one_member) and nothing in Go: it
			// cannot be lent; publishing and receiving it work as ever.
			continue
		}
		fixed++
		got, ok := goLayout(typ)
		if !ok || !want.Equal(got) {
			t.Errorf("%s: Go layout %+v (%v), C layout %+v", name, got, ok, want)
		}
	}
	if fixed < 20 {
		t.Errorf("only %d fixed-size message types", fixed)
	}
	t.Logf("%d fixed-size message types", fixed)
	if newLoanInfo[geometry_msgs_msg.Twist](geometry_msgs_msg.Twist_TypeInfo, fixedLayout(geometry_msgs_msg.Twist_TypeInfo)) == nil ||
		newLoanInfo[builtin_interfaces_msg.Time](builtin_interfaces_msg.Time_TypeInfo, fixedLayout(builtin_interfaces_msg.Time_TypeInfo)) == nil {
		t.Error("Twist or Time cannot be lent")
	}
	if newLoanInfo[std_msgs_msg.String](std_msgs_msg.String_TypeInfo, fixedLayout(std_msgs_msg.String_TypeInfo)) != nil ||
		newLoanInfo[geometry_msgs_msg.TwistStamped](geometry_msgs_msg.TwistStamped_TypeInfo, fixedLayout(geometry_msgs_msg.TwistStamped_TypeInfo)) != nil {
		t.Error("String or TwistStamped (strings) can be lent")
	}
}

// TestGoLayout covers the Go side's refusals.
func TestGoLayout(t *testing.T) {
	type inner struct {
		B uint8
		C int64
	}
	type outer struct {
		A int8
		S [2]inner
	}
	got, ok := goLayout(reflect.TypeFor[outer]())
	want := []struct{ off, n, size uint32 }{{0, 1, 1}, {8, 1, 1}, {16, 1, 8}, {24, 1, 1}, {32, 1, 8}}
	if !ok || got.Size != 40 || len(got.Runs) != len(want) {
		t.Fatalf("outer: %+v %v", got, ok)
	}
	for i, w := range want {
		if r := got.Runs[i]; r.Offset != w.off || r.Count != w.n || r.Size != w.size {
			t.Errorf("run %d: %+v, want %+v", i, r, w)
		}
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[struct{ S string }](),
		reflect.TypeFor[struct{ B []byte }](),
		reflect.TypeFor[struct{ P *int32 }](),
		reflect.TypeFor[struct{}](),
		reflect.TypeFor[struct{ I int }](),
		reflect.TypeFor[struct{ M map[int]int }](),
	} {
		if l, ok := goLayout(typ); ok {
			t.Errorf("%v: layout %+v", typ, l)
		}
	}
}
