package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseMsg(t *testing.T) {
	text := `# file comment
int32 X=1   # a constant
string GREETING="a # not a comment"
uint8 FLAG = 0x10
Header header
geometry_msgs/Point p
Other o
string<=5 name "abc"
float64[3] v [1, 2.5, -3]
int8[] s
uint16[<=4] b [1, 2]
string<=3[<=2] tags ["x", 'y']
bool ok true
char c 65
byte y
`
	m, err := ParseMsg("pkg/msg/T.msg", "pkg", "T", text)
	if err != nil {
		t.Fatal(err)
	}
	wantConst := []Constant{
		{Name: "X", Type: BaseType{Prim: "int32"}, Value: int64(1), Text: "1", Comment: "file comment", LineComment: "a constant", Line: 2},
		{Name: "GREETING", Type: BaseType{Prim: "string"}, Value: "a # not a comment", Text: `"a # not a comment"`, Line: 3},
		{Name: "FLAG", Type: BaseType{Prim: "uint8"}, Value: uint64(16), Text: "0x10", Line: 4},
	}
	if !reflect.DeepEqual(m.Constants, wantConst) {
		t.Errorf("constants\n got %+v\nwant %+v", m.Constants, wantConst)
	}
	type f struct {
		name, typ string
		def       any
	}
	want := []f{
		{"header", "std_msgs/Header", nil},
		{"p", "geometry_msgs/Point", nil},
		{"o", "pkg/Other", nil},
		{"name", "string<=5", "abc"},
		{"v", "float64[3]", []any{1.0, 2.5, -3.0}},
		{"s", "int8[]", nil},
		{"b", "uint16[<=4]", []any{uint64(1), uint64(2)}},
		{"tags", "string<=3[<=2]", []any{"x", "y"}},
		{"ok", "bool", true},
		{"c", "char", uint64(65)},
		{"y", "byte", nil},
	}
	if len(m.Fields) != len(want) {
		t.Fatalf("%d fields, want %d", len(m.Fields), len(want))
	}
	for i, w := range want {
		g := m.Fields[i]
		if g.Name != w.name || g.Type.String() != w.typ || !reflect.DeepEqual(g.Default, w.def) {
			t.Errorf("field %d: got %s %s %#v, want %s %s %#v", i, g.Name, g.Type, g.Default, w.name, w.typ, w.def)
		}
	}
	if m.Fields[0].Type.Base.FullName() != "std_msgs/msg/Header" || m.Fields[0].Line != 5 {
		t.Errorf("header field: %+v", m.Fields[0])
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{"int32", `T.msg:1: missing field name after type "int32"`},
		{"\n\nint32 Bad", `T.msg:3: invalid field name "Bad" (lower_snake_case, no double or trailing underscore)`},
		{"int32 a__b", `T.msg:1: invalid field name "a__b" (lower_snake_case, no double or trailing underscore)`},
		{"int32 a_", `T.msg:1: invalid field name "a_" (lower_snake_case, no double or trailing underscore)`},
		{"foo_bar x", `T.msg:1: unknown type "foo_bar" (not a primitive and not a valid message type name)`},
		{"Pkg/Foo x", `T.msg:1: invalid package name "Pkg" in type "Pkg/Foo"`},
		{"int32[0] a", `T.msg:1: bad array size in "int32[0]": must be at least 1`},
		{"int32[<=x] a", `T.msg:1: bad sequence bound in "int32[<=x]": "x" is not a positive integer`},
		{"int32]x[ a", `T.msg:1: malformed type "int32]x["`},
		{"string<=0 s", `T.msg:1: bad string bound in "string<=0": must be at least 1`},
		{"int8 a 200", `T.msg:1: field a: "200" is not a valid int8 (range -128..127)`},
		{"uint8 a -1", `T.msg:1: field a: "-1" is not a valid uint8 (range 0..255)`},
		{"float32 f 1e40", `T.msg:1: field f: 1e40 is out of range for float32`},
		{"float64 f x", `T.msg:1: field f: "x" is not a number`},
		{"bool b maybe", `T.msg:1: field b: "maybe" is not a bool (use true or false)`},
		{"int32 A=1\nint32 A=2", `T.msg:2: duplicate name "A" (first defined on line 1)`},
		{"int32 a\nfloat64 a", `T.msg:2: duplicate name "a" (first defined on line 1)`},
		{"int32[] A=1", `T.msg:1: constant A must have a primitive non-array type, not int32[]`},
		{"Foo A=1", `T.msg:1: constant A must have a primitive non-array type, not pkg/Foo`},
		{"int32 lower=1", `T.msg:1: invalid constant name "lower" (must be UPPER_CASE)`},
		{"int32 X=", `T.msg:1: constant X has no value`},
		{"Foo f 1", `T.msg:1: field f: a nested message type cannot have a default value`},
		{"int32[2] a [1, 2, 3]", `T.msg:1: field a: array default has 3 elements, type int32[2] needs 2`},
		{"int32[<=1] a [1, 2]", `T.msg:1: field a: sequence default has 2 elements, more than the bound 1`},
		{"int32[] a 1", `T.msg:1: field a: array default "1" must be written as [a, b, ...]`},
		{"int32[] a [1,,2]", `T.msg:1: field a: empty element in list`},
		{`string s "abc`, `T.msg:1: field s: unterminated string "abc`},
		{`string s "a\qb"`, `T.msg:1: field s: unknown escape \q in string "a\qb"`},
		{`string<=3 s "abcd"`, `T.msg:1: field s: string "abcd" is longer than the bound 3`},
	}
	for _, c := range cases {
		_, err := ParseMsg("T.msg", "pkg", "T", c.text)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.text, err, c.want)
		}
	}
}

func TestParseNames(t *testing.T) {
	if _, err := ParseMsg("x.msg", "Bad", "T", ""); err == nil || err.Error() != `x.msg:1: invalid package name "Bad"` {
		t.Errorf("package name: %v", err)
	}
	if _, err := ParseMsg("x.msg", "pkg", "lower", ""); err == nil ||
		err.Error() != `x.msg:1: invalid type name "lower" (must be CamelCase starting with an upper-case letter)` {
		t.Errorf("type name: %v", err)
	}
}

func TestParseSrvAndAction(t *testing.T) {
	if _, err := ParseSrv("S.srv", "pkg", "S", "int32 a\n"); err == nil ||
		err.Error() != `S.srv:1: a service needs exactly one "---" separator, found 0` {
		t.Errorf("srv separator: %v", err)
	}
	if _, err := ParseSrv("S.srv", "pkg", "S", "int32 a\n---\nint32 Bad\n"); err == nil ||
		err.Error() != `S.srv:3: invalid field name "Bad" (lower_snake_case, no double or trailing underscore)` {
		t.Errorf("srv line numbers: %v", err)
	}
	s, err := ParseSrv("S.srv", "pkg", "S", "int32 a\n---\n")
	if err != nil {
		t.Fatal(err)
	}
	if s.Request.FullName() != "pkg/srv/S_Request" || s.Response.FullName() != "pkg/srv/S_Response" || len(s.Response.Fields) != 0 {
		t.Errorf("srv: %+v %+v", s.Request, s.Response)
	}
	if _, err := ParseAction("A.action", "pkg", "A", "int32 a\n---\n"); err == nil ||
		err.Error() != `A.action:1: an action needs exactly two "---" separators, found 1` {
		t.Errorf("action separators: %v", err)
	}
	a, err := ParseAction("A.action", "pkg", "A", "int32 order\n---\nint32[] sequence\n---\nint32[] partial\n")
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, m := range []*MsgSpec{a.Goal, a.Result, a.Feedback, a.SendGoal.Request, a.SendGoal.Response,
		a.GetResult.Request, a.GetResult.Response, a.FeedbackMessage} {
		fs := []string{}
		for _, f := range m.Fields {
			fs = append(fs, f.Type.String()+" "+f.Name)
		}
		got = append(got, m.FullName()+"{"+strings.Join(fs, "; ")+"}")
	}
	want := []string{
		"pkg/action/A_Goal{int32 order}",
		"pkg/action/A_Result{int32[] sequence}",
		"pkg/action/A_Feedback{int32[] partial}",
		"pkg/action/A_SendGoal_Request{unique_identifier_msgs/UUID goal_id; pkg/A_Goal goal}",
		"pkg/action/A_SendGoal_Response{bool accepted; builtin_interfaces/Time stamp}",
		"pkg/action/A_GetResult_Request{unique_identifier_msgs/UUID goal_id}",
		"pkg/action/A_GetResult_Response{int8 status; pkg/A_Result result}",
		"pkg/action/A_FeedbackMessage{unique_identifier_msgs/UUID goal_id; pkg/A_Feedback feedback}",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("derived action types\n got %q\nwant %q", got, want)
	}
}

func TestCamel(t *testing.T) {
	for in, want := range map[string]string{
		"frame_id": "FrameId", "x": "X", "uuid": "Uuid", "node_entities_info_seq": "NodeEntitiesInfoSeq", "a1_b2": "A1B2",
	} {
		if got := camel(in); got != want {
			t.Errorf("camel(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseMsg(f *testing.F) {
	f.Add("int32 X=1\nstring<=5 name \"abc\"\nfloat64[3] v [1, 2, 3]\n")
	f.Add("Header header\ngeometry_msgs/Pose[<=2] p # c\n")
	f.Add("string s 'a#b'\nbool[] b [true, false]\n")
	f.Fuzz(func(t *testing.T, text string) {
		m, err := ParseMsg("F.msg", "pkg", "F", text)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		// Every accepted type renders back to text that parses to the same
		// type, and every name obeys the rules.
		for _, fl := range m.Fields {
			if !validFieldName(fl.Name) {
				t.Fatalf("accepted field name %q", fl.Name)
			}
			again, err := parseType(fl.Type.String(), "pkg")
			if err != nil || again != fl.Type {
				t.Fatalf("type %s does not round trip: %+v %v", fl.Type, again, err)
			}
		}
		for _, k := range m.Constants {
			if !reConstantName.MatchString(k.Name) {
				t.Fatalf("accepted constant name %q", k.Name)
			}
		}
	})
}
