package param

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestValue_OfAs_RoundTripsEveryKind(t *testing.T) {
	check := func(name string, v Value, want Type, back func(Value) (any, error), orig any) {
		t.Helper()
		if v.Type() != want {
			t.Errorf("%s: type %v, want %v", name, v.Type(), want)
		}
		got, err := back(v)
		if err != nil || !reflect.DeepEqual(got, orig) {
			t.Errorf("%s: As = %v, %v; want %v", name, got, err, orig)
		}
	}
	check("bool", Of(true), TypeBool, func(v Value) (any, error) { return As[bool](v) }, true)
	check("int", Of(int64(-3)), TypeInteger, func(v Value) (any, error) { return As[int64](v) }, int64(-3))
	check("double", Of(2.5), TypeDouble, func(v Value) (any, error) { return As[float64](v) }, 2.5)
	check("string", Of("x"), TypeString, func(v Value) (any, error) { return As[string](v) }, "x")
	check("bytes", Of([]byte{1, 2}), TypeByteArray, func(v Value) (any, error) { return As[[]byte](v) }, []byte{1, 2})
	check("bools", Of([]bool{true}), TypeBoolArray, func(v Value) (any, error) { return As[[]bool](v) }, []bool{true})
	check("ints", Of([]int64{1, 2}), TypeIntegerArray, func(v Value) (any, error) { return As[[]int64](v) }, []int64{1, 2})
	check("doubles", Of([]float64{.5}), TypeDoubleArray, func(v Value) (any, error) { return As[[]float64](v) }, []float64{.5})
	check("strings", Of([]string{"a"}), TypeStringArray, func(v Value) (any, error) { return As[[]string](v) }, []string{"a"})

	if _, err := As[string](Of(int64(1))); err == nil {
		t.Error("As[string] of an integer: no error")
	}
}

func TestValue_SliceIsCopied_CallerCannotMutate(t *testing.T) {
	src := []int64{1, 2}
	v := IntegerArrayValue(src)
	src[0] = 99
	got := v.Integers()
	got[1] = 77
	if w := v.Integers(); w[0] != 1 || w[1] != 2 {
		t.Fatalf("stored array changed to %v", w)
	}
}

func TestValue_String_MatchesRos2ParamGet(t *testing.T) {
	for _, c := range []struct {
		v    Value
		want string
	}{
		{BoolValue(true), "True"},
		{IntegerValue(42), "42"},
		{DoubleValue(2), "2.0"},
		{DoubleValue(0.25), "0.25"},
		{StringValue("hi"), "hi"},
		{IntegerArrayValue([]int64{1, 2}), "[1, 2]"},
		{StringArrayValue([]string{"a", "b"}), "['a', 'b']"},
		{Value{}, "not set"},
	} {
		if got := c.v.String(); got != c.want {
			t.Errorf("%v: String() = %q, want %q", c.v.Type(), got, c.want)
		}
	}
}

func TestFromAny(t *testing.T) {
	if v, err := FromAny(3); err != nil || v.Type() != TypeInteger || v.Integer() != 3 {
		t.Errorf("FromAny(3) = %v, %v", v, err)
	}
	if v, err := FromAny(float32(0.5)); err != nil || v.Double() != 0.5 {
		t.Errorf("FromAny(float32) = %v, %v", v, err)
	}
	if _, err := FromAny(uint64(math.MaxUint64)); err == nil {
		t.Error("FromAny(MaxUint64): no error")
	}
	if _, err := FromAny(struct{}{}); err == nil {
		t.Error("FromAny(struct{}): no error")
	}
}

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"rate", "a.b.c", "use_sim_time", "qos_overrides./parameter_events.publisher.depth", "Speed2"} {
		if err := ValidateName(ok); err != nil {
			t.Errorf("ValidateName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", ".a", "a.", "a..b", "a b", "a:b", "a=b", "ä", strings.Repeat("x", 256)} {
		if err := ValidateName(bad); err == nil {
			t.Errorf("ValidateName(%q) = nil, want an error", bad)
		}
	}
}

func TestStore_Declare_DefaultOverrideAndErrors(t *testing.T) {
	s := NewStore(StoreOptions{Overrides: map[string]Value{
		"rate":     DoubleValue(20),
		"name":     IntegerValue(5), // wrong type for a string parameter
		"ids":      {typ: TypeStringArray, emptyList: true},
		"limit":    IntegerValue(50),
		"readonly": BoolValue(true),
	}})
	cases := []struct {
		name    string
		def     Value
		desc    Descriptor
		want    Value
		wantErr error
	}{
		{"rate", DoubleValue(10), Descriptor{}, DoubleValue(20), nil},
		{"plain", IntegerValue(3), Descriptor{}, IntegerValue(3), nil},
		{"name", StringValue("x"), Descriptor{}, Value{}, ErrWrongType},
		{"ids", IntegerArrayValue([]int64{1}), Descriptor{}, IntegerArrayValue(nil), nil},
		{"limit", IntegerValue(1), Descriptor{IntegerRange: &IntegerRange{From: 0, To: 10}}, Value{}, ErrInvalidValue},
		{"readonly", BoolValue(false), Descriptor{ReadOnly: true}, BoolValue(true), nil},
		{"bad name", IntegerValue(1), Descriptor{}, Value{}, ErrInvalidName},
		{"mismatch", IntegerValue(1), Descriptor{Type: TypeDouble}, Value{}, ErrWrongType},
		{"nan", DoubleValue(math.NaN()), Descriptor{}, Value{}, ErrInvalidValue},
		{"rate", DoubleValue(1), Descriptor{}, Value{}, ErrAlreadyDeclared},
	}
	for _, c := range cases {
		got, err := s.Declare(c.name, c.def, c.desc)
		if c.wantErr != nil {
			if !errors.Is(err, c.wantErr) {
				t.Errorf("Declare(%q) error = %v, want %v", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil || !got.Equal(c.want) {
			t.Errorf("Declare(%q) = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if _, err := s.Declare("nodefault", Value{}, Descriptor{Type: TypeInteger}); err == nil {
		t.Error("Declare without default and override: no error")
	}
	if v, err := s.Declare("dyn", Value{}, Descriptor{DynamicTyping: true}); err != nil || v.IsSet() {
		t.Errorf("Declare dynamic without default = %v, %v", v, err)
	}
}

func TestStore_Set_RulesOfRclcpp(t *testing.T) {
	s := NewStore(StoreOptions{})
	mustDeclare(t, s, "speed", DoubleValue(1), Descriptor{FloatRange: &FloatRange{From: 0, To: 2, Step: 0.5}})
	mustDeclare(t, s, "count", IntegerValue(0), Descriptor{IntegerRange: &IntegerRange{From: 0, To: 9, Step: 3}})
	mustDeclare(t, s, "frame", StringValue("map"), Descriptor{ReadOnly: true})
	mustDeclare(t, s, "any", IntegerValue(0), Descriptor{DynamicTyping: true})
	cases := []struct {
		p       Parameter
		wantErr error
	}{
		{Parameter{"speed", DoubleValue(1.5)}, nil},
		{Parameter{"speed", DoubleValue(2)}, nil},
		{Parameter{"speed", DoubleValue(1.2)}, ErrInvalidValue},
		{Parameter{"speed", DoubleValue(2.5)}, ErrInvalidValue},
		{Parameter{"speed", DoubleValue(math.NaN())}, ErrInvalidValue},
		{Parameter{"speed", DoubleValue(math.Inf(1))}, ErrInvalidValue},
		{Parameter{"speed", IntegerValue(1)}, ErrWrongType},
		{Parameter{"count", IntegerValue(6)}, nil},
		{Parameter{"count", IntegerValue(9)}, nil},
		{Parameter{"count", IntegerValue(4)}, ErrInvalidValue},
		{Parameter{"count", IntegerValue(-1)}, ErrInvalidValue},
		{Parameter{"frame", StringValue("odom")}, ErrReadOnly},
		{Parameter{"missing", IntegerValue(1)}, ErrNotDeclared},
		{Parameter{"any", StringValue("now a string")}, nil},
		{Parameter{"count", Value{}}, ErrWrongType}, // static: cannot delete
		{Parameter{"any", Value{}}, nil},            // dynamic: deleted
	}
	for _, c := range cases {
		err := s.SetValue(c.p.Name, c.p.Value)
		if c.wantErr == nil && err != nil || c.wantErr != nil && !errors.Is(err, c.wantErr) {
			t.Errorf("Set(%v) = %v, want %v", c.p, err, c.wantErr)
		}
	}
	if s.Has("any") {
		t.Error("dynamic parameter still declared after setting NOT_SET")
	}
	if v, _ := s.Get("speed"); v.Double() != 2 {
		t.Errorf("speed = %v, want 2", v)
	}
}

func TestStore_SetAtomically_AllOrNothing(t *testing.T) {
	s := NewStore(StoreOptions{})
	mustDeclare(t, s, "a", IntegerValue(1), Descriptor{})
	mustDeclare(t, s, "b", IntegerValue(2), Descriptor{ReadOnly: true})
	err := s.SetAtomically([]Parameter{{"a", IntegerValue(10)}, {"b", IntegerValue(20)}})
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("SetAtomically = %v, want ErrReadOnly", err)
	}
	if v, _ := s.Get("a"); v.Integer() != 1 {
		t.Fatalf("a = %v after a failed atomic set, want 1", v)
	}
	res := s.Set([]Parameter{{"a", IntegerValue(10)}, {"b", IntegerValue(20)}})
	if !res[0].Successful || res[1].Successful || res[1].Reason == "" {
		t.Fatalf("Set results = %+v, want [ok, fail with reason]", res)
	}
	if v, _ := s.Get("a"); v.Integer() != 10 {
		t.Fatalf("a = %v after individual set, want 10", v)
	}
}

func TestStore_Validator_RejectsWithReasonAndSeesBatch(t *testing.T) {
	var events []string
	s := NewStore(StoreOptions{OnEvent: func(e Event) {
		events = append(events, fmt.Sprintf("new=%v changed=%v deleted=%v", e.New, e.Changed, e.Deleted))
	}})
	mustDeclare(t, s, "min", IntegerValue(0), Descriptor{})
	mustDeclare(t, s, "max", IntegerValue(10), Descriptor{})
	var seen [][]Parameter
	remove := s.OnSet(func(ps []Parameter) error {
		seen = append(seen, ps)
		lo, _ := s.Get("min")
		hi, _ := s.Get("max")
		for _, p := range ps {
			switch p.Name {
			case "min":
				lo = p.Value
			case "max":
				hi = p.Value
			}
		}
		if lo.Integer() > hi.Integer() {
			return fmt.Errorf("min %d must not exceed max %d", lo.Integer(), hi.Integer())
		}
		return nil
	})
	res := s.Set([]Parameter{{"min", IntegerValue(20)}})
	if res[0].Successful || res[0].Reason != "min 20 must not exceed max 10" {
		t.Fatalf("result = %+v, want the validator's reason verbatim", res[0])
	}
	if err := s.SetAtomically([]Parameter{{"max", IntegerValue(30)}, {"min", IntegerValue(20)}}); err != nil {
		t.Fatalf("consistent batch rejected: %v", err)
	}
	if len(seen) != 2 || len(seen[1]) != 2 {
		t.Fatalf("validator calls = %v, want 2 with the batch of 2 last", seen)
	}
	remove()
	if err := s.SetValue("min", IntegerValue(100)); err != nil {
		t.Fatalf("set after removing the validator: %v", err)
	}
	want := []string{
		"new=[min: 0] changed=[] deleted=[]",
		"new=[max: 10] changed=[] deleted=[]",
		"new=[] changed=[max: 30 min: 20] deleted=[]",
		"new=[] changed=[min: 100] deleted=[]",
	}
	if !reflect.DeepEqual(events, want) {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
}

func TestStore_Declare_ValidatorCanRejectInitialValue(t *testing.T) {
	s := NewStore(StoreOptions{})
	s.OnSet(func(ps []Parameter) error { return errors.New("no") })
	if _, err := s.Declare("x", IntegerValue(1), Descriptor{}); !errors.Is(err, ErrRejected) {
		t.Fatalf("Declare = %v, want ErrRejected", err)
	}
	if s.Has("x") {
		t.Fatal("rejected declaration left the parameter declared")
	}
}

func TestStore_List_DepthAndPrefixesLikeRclcpp(t *testing.T) {
	s := NewStore(StoreOptions{})
	for _, n := range []string{"a", "b.c", "b.d.e", "b.d.f", "use_sim_time"} {
		mustDeclare(t, s, n, BoolValue(true), Descriptor{})
	}
	cases := []struct {
		prefixes          []string
		depth             uint64
		names, outPrefixs []string
	}{
		{nil, 0, []string{"a", "b.c", "b.d.e", "b.d.f", "use_sim_time"}, []string{"b", "b.d"}},
		{nil, 1, []string{"a", "use_sim_time"}, []string{}},
		{nil, 2, []string{"a", "b.c", "use_sim_time"}, []string{"b"}},
		{[]string{"b"}, 0, []string{"b.c", "b.d.e", "b.d.f"}, []string{"b", "b.d"}},
		{[]string{"b"}, 2, []string{"b.c"}, []string{"b"}},
		{[]string{"b.d"}, 0, []string{"b.d.e", "b.d.f"}, []string{"b.d"}},
		{[]string{"a"}, 0, []string{"a"}, []string{}},
		{[]string{"zzz"}, 0, []string{}, []string{}},
	}
	for _, c := range cases {
		got := s.List(c.prefixes, c.depth)
		if !reflect.DeepEqual(got.Names, c.names) || !reflect.DeepEqual(got.Prefixes, c.outPrefixs) {
			t.Errorf("List(%v, %d) = %v / %v, want %v / %v", c.prefixes, c.depth, got.Names, got.Prefixes, c.names, c.outPrefixs)
		}
	}
}

func TestStore_DescribeTypesGetAll(t *testing.T) {
	s := NewStore(StoreOptions{})
	r := &IntegerRange{From: 1, To: 5, Step: 1}
	mustDeclare(t, s, "n", IntegerValue(2), Descriptor{Description: "count", IntegerRange: r})
	r.To = 100 // the store keeps its own copy
	d, err := s.Describe([]string{"n"})
	if err != nil || d[0].Name != "n" || d[0].Type != TypeInteger || d[0].Description != "count" || d[0].IntegerRange.To != 5 {
		t.Fatalf("Describe = %+v, %v", d, err)
	}
	if _, err := s.Describe([]string{"n", "nope"}); !errors.Is(err, ErrNotDeclared) {
		t.Fatalf("Describe with unknown name = %v", err)
	}
	if ty := s.Types([]string{"nope", "n"}); ty[0] != TypeNotSet || ty[1] != TypeInteger {
		t.Fatalf("Types = %v", ty)
	}
	if _, err := s.GetAll([]string{"n", "nope"}); !errors.Is(err, ErrNotDeclared) {
		t.Fatalf("GetAll with unknown name = %v", err)
	}
}

func TestStore_Undeclare(t *testing.T) {
	s := NewStore(StoreOptions{})
	mustDeclare(t, s, "static", IntegerValue(1), Descriptor{})
	mustDeclare(t, s, "ro", IntegerValue(1), Descriptor{ReadOnly: true, DynamicTyping: true})
	mustDeclare(t, s, "dyn", IntegerValue(1), Descriptor{DynamicTyping: true})
	if err := s.Undeclare("static"); !errors.Is(err, ErrWrongType) {
		t.Errorf("Undeclare(static) = %v", err)
	}
	if err := s.Undeclare("ro"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Undeclare(ro) = %v", err)
	}
	if err := s.Undeclare("dyn"); err != nil || s.Has("dyn") {
		t.Errorf("Undeclare(dyn) = %v", err)
	}
	if err := s.Undeclare("dyn"); !errors.Is(err, ErrNotDeclared) {
		t.Errorf("second Undeclare(dyn) = %v", err)
	}
}

func TestDescriptor_RangeEdges(t *testing.T) {
	big := &IntegerRange{From: math.MinInt64, To: math.MaxInt64, Step: 2}
	if err := big.check(math.MaxInt64 - 2); err == nil {
		t.Error("MaxInt64-2 from MinInt64 step 2 should be off-step (odd distance)")
	}
	if err := big.check(math.MinInt64 + 2); err != nil {
		t.Errorf("MinInt64+2: %v", err)
	}
	f := &FloatRange{From: 0, To: 1, Step: 0.1}
	if err := f.check(0.3); err != nil {
		t.Errorf("0.3 on step 0.1: %v", err)
	}
	if err := f.check(0.35); err == nil {
		t.Error("0.35 on step 0.1 accepted")
	}
	bad := Descriptor{FloatRange: &FloatRange{From: 1, To: 0}}
	if err := bad.check(); err == nil {
		t.Error("inverted float range accepted")
	}
	both := Descriptor{FloatRange: &FloatRange{}, IntegerRange: &IntegerRange{}}
	if err := both.check(); err == nil {
		t.Error("descriptor with two ranges accepted")
	}
	arr := Descriptor{IntegerRange: &IntegerRange{From: 0, To: 3}}
	if err := arr.checkValue(IntegerArrayValue([]int64{1, 4})); err == nil || !strings.Contains(err.Error(), "element 1") {
		t.Errorf("array element out of range: %v", err)
	}
}

func mustDeclare(t *testing.T, s *Store, name string, v Value, d Descriptor) {
	t.Helper()
	if _, err := s.Declare(name, v, d); err != nil {
		t.Fatalf("Declare(%q): %v", name, err)
	}
}

func TestValue_YAML_RoundTripsThroughParseValue(t *testing.T) {
	vals := []Value{
		BoolValue(true), IntegerValue(-3), DoubleValue(2), DoubleValue(1e-7), DoubleValue(math.Inf(-1)),
		StringValue("plain"), StringValue("true"), StringValue("42"), StringValue(""), StringValue("it's: [x]"),
		StringValue(" padded "), StringValue("0x10"), StringValue("a\nb"),
		BoolArrayValue([]bool{true, false}), IntegerArrayValue([]int64{1, 2}), DoubleArrayValue([]float64{0.5, 3}),
		StringArrayValue([]string{"a", "yes", "c, d"}),
	}
	for _, v := range vals {
		text := v.YAML()
		back, err := ParseValue(text)
		if err != nil || !back.Equal(v) {
			t.Errorf("%v (%v) -> %q -> %v (%v), %v", v, v.Type(), text, back, back.Type(), err)
		}
	}
	if got := ByteArrayValue([]byte{1, 255}).YAML(); got != "[1, 255]" {
		t.Errorf("byte array YAML = %q", got)
	}
}

// TestFloatRange_Extremes: values near the top of the double range are
// compared without overflow (a tolerance of scale*100*eps was +Inf above
// 1.8e306 and let 1e308 into [0, 1000]), infinities are refused wherever a
// range is declared, and the bounds and steps still get rclcpp's 100-ulp
// tolerance.
func TestFloatRange_Extremes(t *testing.T) {
	cases := []struct {
		r    FloatRange
		v    float64
		want bool // accepted
	}{
		{FloatRange{From: 0, To: 1000}, 1e308, false},
		{FloatRange{From: 0, To: 1000}, 1e307, false},
		{FloatRange{From: 0, To: 1000}, 1.8e306, false},
		{FloatRange{From: 0, To: 1000}, math.MaxFloat64, false},
		{FloatRange{From: 0, To: 1000}, -math.MaxFloat64, false},
		{FloatRange{From: -1000, To: 0}, -1e308, false},
		{FloatRange{From: 0, To: 1000}, math.Inf(1), false},
		{FloatRange{From: 0, To: 1000}, math.Inf(-1), false},
		{FloatRange{From: 0, To: 1000}, math.NaN(), false},
		{FloatRange{From: 0, To: 1000}, 1000, true},
		{FloatRange{From: 0, To: 1000}, 1000 * (1 + 50*2.220446049250313e-16), true}, // within 100 ulps of the bound
		{FloatRange{From: 0, To: 1000}, 1000 * (1 + 1e-12), false},                   // beyond
		{FloatRange{From: 0, To: 1000}, 0, true},
		{FloatRange{From: 0, To: 1000}, -1e-300, false}, // relative tolerance: nothing is "equal" to 0 but 0, as in rclcpp
		{FloatRange{From: 0, To: math.MaxFloat64}, math.MaxFloat64, true},
		{FloatRange{From: 0, To: math.MaxFloat64}, 1e308, true},
		{FloatRange{From: -math.MaxFloat64, To: math.MaxFloat64}, 0, true},
		{FloatRange{From: -math.MaxFloat64, To: math.MaxFloat64}, math.Inf(1), false},
		{FloatRange{From: 0, To: 1e308, Step: 1e307}, 5e307, true},
		{FloatRange{From: 0, To: 1e308, Step: 1e307}, 5.5e307, false},
		{FloatRange{From: 0, To: 1, Step: 0.1}, 0.7, true},
	}
	for _, c := range cases {
		err := c.r.check(c.v)
		if (err == nil) != c.want {
			t.Errorf("[%g, %g] step %g: check(%g) = %v, want accepted %v", c.r.From, c.r.To, c.r.Step, c.v, err, c.want)
		}
	}
}
