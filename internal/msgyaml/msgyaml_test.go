package msgyaml

import (
	"math"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fsmnodes/fsmnodes/internal/cdr"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

// Local stand-ins for generated bindings: same shape and tags.

type vector3 struct {
	X float64 `ros:"x"`
	Y float64 `ros:"y"`
	Z float64 `ros:"z"`
}

type twist struct {
	Linear  vector3 `ros:"linear"`
	Angular vector3 `ros:"angular"`
}

func (*twist) MarshalCDR(*cdr.Encoder)           {}
func (*twist) UnmarshalCDR(d *cdr.Decoder) error { return nil }
func (*twist) ROSType() *rosidl.TypeInfo {
	return &rosidl.TypeInfo{Name: "geometry_msgs/msg/Twist"}
}

type stamp struct {
	Sec     int32  `ros:"sec"`
	Nanosec uint32 `ros:"nanosec"`
}

type header struct {
	Stamp   stamp  `ros:"stamp"`
	FrameID string `ros:"frame_id"`
}

type pose struct {
	Position vector3 `ros:"position"`
}

type empty struct{}

type kitchen struct {
	Header     header     `ros:"header"`
	Flag       bool       `ros:"flag"`
	Small      int8       `ros:"small"`
	Byte       uint8      `ros:"byte"`
	Count      uint32     `ros:"count"`
	Big        int64      `ros:"big"`
	F32        float32    `ros:"f32"`
	Names      []string   `ros:"names"`
	Data       []uint8    `ros:"data"`
	Covariance [3]float64 `ros:"covariance"`
	Poses      []pose     `ros:"poses"`
	Nothing    empty      `ros:"nothing"`
	Fixed      [2]vector3 `ros:"fixed"`
	unexported int        // must be ignored by Marshal and Unmarshal
	Skipped    int        `ros:"-"`
	Values     []float64  `ros:"values"`
}

func TestDecode_FlowAndBlock(t *testing.T) {
	for _, text := range []string{
		"{linear: {x: 0.5}, angular: {z: 0.1}}",
		"linear:\n  x: 0.5\nangular:\n  z: 0.1\n",
		"{linear: {x: 0.5, y: 0}, angular: {z: 1e-1}}",
	} {
		m := twist{Linear: vector3{Z: 7}}
		if err := Decode(text, &m); err != nil {
			t.Fatalf("Decode(%q): %v", text, err)
		}
		want := twist{Linear: vector3{X: 0.5, Z: 7}, Angular: vector3{Z: 0.1}}
		if m != want {
			t.Errorf("Decode(%q) = %+v, want %+v (untouched fields keep their values)", text, m, want)
		}
	}
}

func TestDecode_EmptyKeepsDefaults(t *testing.T) {
	for _, text := range []string{"", "{}", "  \n", "null"} {
		m := twist{Linear: vector3{X: 3}}
		if err := Decode(text, &m); err != nil {
			t.Fatalf("Decode(%q): %v", text, err)
		}
		if m.Linear.X != 3 {
			t.Errorf("Decode(%q) changed a default", text)
		}
	}
}

func TestDecode_AllKinds(t *testing.T) {
	var m kitchen
	text := `{header: {stamp: {sec: -3, nanosec: 5}, frame_id: map}, flag: yes, small: -128, byte: 255,
	  count: 4294967295, big: -9223372036854775808, f32: 1.5, names: [a, 'b c'], data: [0, 1, 255],
	  covariance: [1, 2.5, -3], poses: [{position: {x: 1}}, {}], nothing: {},
	  fixed: [{x: 1}, {y: 2}], values: []}`
	if err := Decode(text, &m); err != nil {
		t.Fatal(err)
	}
	if m.Header.Stamp.Sec != -3 || m.Header.Stamp.Nanosec != 5 || m.Header.FrameID != "map" {
		t.Errorf("header = %+v", m.Header)
	}
	if !m.Flag || m.Small != -128 || m.Byte != 255 || m.Count != math.MaxUint32 || m.Big != math.MinInt64 || m.F32 != 1.5 {
		t.Errorf("scalars = %+v", m)
	}
	if strings.Join(m.Names, "|") != "a|b c" || len(m.Data) != 3 || m.Data[2] != 255 {
		t.Errorf("sequences = %v %v", m.Names, m.Data)
	}
	if m.Covariance != [3]float64{1, 2.5, -3} || len(m.Poses) != 2 || m.Poses[0].Position.X != 1 {
		t.Errorf("arrays = %v %v", m.Covariance, m.Poses)
	}
	if m.Fixed[1].Y != 2 || m.Values == nil || len(m.Values) != 0 {
		t.Errorf("fixed = %v values = %#v", m.Fixed, m.Values)
	}
}

func TestDecode_Errors(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"unknown field", "{linear: {w: 1}}",
			`field "linear" of geometry_msgs/msg/Twist: unknown field "w" in msgyaml.vector3 (its fields are x, y, z)`},
		{"unknown top field", "{speed: 1}",
			`geometry_msgs/msg/Twist: unknown field "speed" in geometry_msgs/msg/Twist (its fields are linear, angular)`},
		{"string for float", "{linear: {x: fast}}",
			`field "linear.x" of geometry_msgs/msg/Twist: expected a number (float64), got str "fast"`},
		{"scalar for message", "{linear: 1}",
			`field "linear" of geometry_msgs/msg/Twist: expected a mapping of the fields of msgyaml.vector3, got int "1"`},
		{"not a mapping", "[1, 2]",
			`geometry_msgs/msg/Twist: expected a mapping of the fields of geometry_msgs/msg/Twist, got a sequence`},
		{"duplicate", "{linear: {x: 1, x: 2}}",
			`field "linear" of geometry_msgs/msg/Twist: field "x" given twice`},
		{"bad yaml", "{linear: {x: 1}", "invalid YAML: yaml: line 1: did not find expected ',' or '}'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var m twist
			err := Decode(c.text, &m)
			if err == nil || err.Error() != c.want {
				t.Errorf("Decode(%q) error = %v\nwant %s", c.text, err, c.want)
			}
		})
	}
}

func TestDecode_KitchenErrors(t *testing.T) {
	cases := []struct {
		text, want string
	}{
		{"{byte: 256}", `field "byte" of msgyaml.kitchen: value 256 is out of range for uint8 [0, 255]`},
		{"{byte: -1}", `field "byte" of msgyaml.kitchen: value -1 is out of range for uint8 [0, 255]`},
		{"{small: 128}", `field "small" of msgyaml.kitchen: value 128 is out of range for int8 [-128, 127]`},
		{"{big: 9223372036854775808}", `field "big" of msgyaml.kitchen: value 9223372036854775808 is out of range for int64`},
		{"{count: 1.5}", `field "count" of msgyaml.kitchen: expected an integer (uint32), got float "1.5"`},
		{"{f32: 1e39}", `field "f32" of msgyaml.kitchen: value 1e39 is out of range for float32`},
		{"{flag: 1}", `field "flag" of msgyaml.kitchen: expected a bool (true or false), got int "1"`},
		{"{flag: 'yes'}", `field "flag" of msgyaml.kitchen: expected a bool (true or false), got str "yes"`},
		{"{names: [a, 1]}", `field "names[1]" of msgyaml.kitchen: expected a string, got int "1" (quote it to pass it as a string: '1')`},
		{"{names: a}", `field "names" of msgyaml.kitchen: expected a sequence of string, got str "a"`},
		{"{covariance: [1, 2]}", `field "covariance" of msgyaml.kitchen: fixed-size array needs exactly 3 elements, got 2`},
		{"{covariance: 1}", `field "covariance" of msgyaml.kitchen: expected a sequence of 3 float64, got int "1"`},
		{"{poses: [{position: {x: a}}]}", `field "poses[0].position.x" of msgyaml.kitchen: expected a number (float64), got str "a"`},
		{"{header: {frame_id: [1]}}", `field "header.frame_id" of msgyaml.kitchen: expected a string value, got a sequence`},
		{"{nothing: {a: 1}}", `field "nothing" of msgyaml.kitchen: unknown field "a" in msgyaml.empty (it has no fields)`},
		{"{Skipped: 1}", `unknown field "Skipped"`},
		{"{unexported: 1}", `unknown field "unexported"`},
	}
	for _, c := range cases {
		var m kitchen
		err := Decode(c.text, &m)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Decode(%q) error = %v\nwant it to contain %s", c.text, err, c.want)
		}
	}
}

func TestDecode_FixedArrayUnchangedOnError(t *testing.T) {
	m := kitchen{Covariance: [3]float64{9, 9, 9}}
	if err := Decode("{covariance: [1, 2, x]}", &m); err == nil {
		t.Fatal("want error")
	}
	if m.Covariance != [3]float64{9, 9, 9} {
		t.Errorf("covariance changed to %v on error", m.Covariance)
	}
}

func TestDecode_NotAPointer(t *testing.T) {
	if err := Decode("{}", twist{}); err == nil {
		t.Error("Decode into a value must fail")
	}
	var p *twist
	if err := Decode("{}", p); err == nil {
		t.Error("Decode into a nil pointer must fail")
	}
}

func TestMarshal_Twist(t *testing.T) {
	m := twist{Linear: vector3{X: 0.5}, Angular: vector3{Z: -1e-05}}
	got, err := Echo(&m)
	if err != nil {
		t.Fatal(err)
	}
	want := `linear:
  x: 0.5
  y: 0.0
  z: 0.0
angular:
  x: 0.0
  y: 0.0
  z: -1.0e-05
---
`
	if got != want {
		t.Errorf("Echo =\n%s\nwant\n%s", got, want)
	}
}

func TestMarshal_Kitchen(t *testing.T) {
	m := kitchen{
		Header: header{Stamp: stamp{Sec: 12, Nanosec: 5}},
		Flag:   true, Small: -1, Byte: 7, Count: 3, Big: 1 << 40, F32: 0.1,
		Names:      []string{"hello", "Hello World: 1", "true", "", "1.5", "- x", "#c", "a#b", "it's"},
		Data:       []uint8{1, 2},
		Covariance: [3]float64{1, 1e16, 123456789.125},
		Poses:      []pose{{Position: vector3{X: 1}}, {}},
		Values:     nil,
	}
	got, err := Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	want := `header:
  stamp:
    sec: 12
    nanosec: 5
  frame_id: ''
flag: true
small: -1
byte: 7
count: 3
big: 1099511627776
f32: 0.10000000149011612
names:
- hello
- 'Hello World: 1'
- 'true'
- ''
- '1.5'
- '- x'
- '#c'
- a#b
- it's
data:
- 1
- 2
covariance:
- 1.0
- 1.0e+16
- 123456789.125
poses:
- position:
    x: 1.0
    y: 0.0
    z: 0.0
- position:
    x: 0.0
    y: 0.0
    z: 0.0
nothing: {}
fixed:
- x: 0.0
  y: 0.0
  z: 0.0
- x: 0.0
  y: 0.0
  z: 0.0
values: []
`
	if got != want {
		t.Errorf("Marshal =\n%s\nwant\n%s", got, want)
	}
}

func TestMarshal_EmptyMessage(t *testing.T) {
	got, err := Echo(&empty{})
	if err != nil || got != "{}\n---\n" {
		t.Errorf("Echo(empty) = %q, %v", got, err)
	}
}

func TestRoundTrip(t *testing.T) {
	in := kitchen{Header: header{FrameID: "base link: x"}, Names: []string{"yes", "a\tb", "multi\nline"},
		Covariance: [3]float64{math.Inf(1), math.Copysign(0, -1), 2.5e-7}, F32: -3.25, Big: -5, unexported: 7}
	text, err := Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	var out kitchen
	if err := Decode(text, &out); err != nil {
		t.Fatalf("Decode(Marshal(x)): %v\n%s", err, text)
	}
	if out.Header.FrameID != in.Header.FrameID || strings.Join(out.Names, "|") != strings.Join(in.Names, "|") ||
		out.Covariance != in.Covariance || out.F32 != in.F32 || out.Big != in.Big {
		t.Errorf("round trip changed the message:\n%+v\n%+v\n%s", in, out, text)
	}
	if !math.Signbit(out.Covariance[1]) {
		t.Errorf("negative zero lost its sign:\n%s", text)
	}
	if out.unexported != 0 || strings.Contains(string(text), "unexported") {
		t.Errorf("an unexported field was written or read:\n%s", text)
	}
}

func TestScalarStyles(t *testing.T) {
	cases := map[string]string{
		"hello":           "hello",
		"":                "''",
		"Hello World: 1":  "'Hello World: 1'",
		"null":            "'null'",
		"~":               "'~'",
		"yes":             "'yes'",
		"0x1F":            "'0x1F'",
		"2024-01-01":      "'2024-01-01'",
		" lead":           "' lead'",
		"trail ":          "'trail '",
		"a\tb":            `"a\tb"`,
		"tab\x00":         `"tab\0"`,
		"ключ":            "ключ",
		"key: value":      "'key: value'",
		"a:b":             "a:b",
		"-":               "'-'",
		"-x":              "-x",
		"[x]":             "'[x]'",
		"a, b":            "a, b",
		"multi\nline":     "'multi\n\n  line'",
		"say \"hi\"":      `say "hi"`,
		"\"quoted\"":      `'"quoted"'`,
		"---":             "'---'",
		"1e5":             "1e5",
		"1.0e+5":          "'1.0e+5'",
		".inf":            "'.inf'",
		"back\\slash":     `back\slash`,
		"percent%":        "percent%",
		"%percent":        "'%percent'",
		"under_score 1_2": "under_score 1_2",
	}
	for in, want := range cases {
		if got := yamlString(in, 2); got != want {
			t.Errorf("yamlString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestFloatRepr(t *testing.T) {
	cases := []struct {
		f          float64
		py, pyyaml string
	}{
		{0, "0.0", "0.0"},
		{math.Copysign(0, -1), "-0.0", "-0.0"},
		{1.5, "1.5", "1.5"},
		{0.1, "0.1", "0.1"},
		{1e-4, "0.0001", "0.0001"},
		{1e-5, "1e-05", "1.0e-05"},
		{1.5e-5, "1.5e-05", "1.5e-05"},
		{1e15, "1000000000000000.0", "1000000000000000.0"},
		{1e16, "1e+16", "1.0e+16"},
		{123456789012.5, "123456789012.5", "123456789012.5"},
		{math.Inf(1), "inf", ".inf"},
		{math.Inf(-1), "-inf", "-.inf"},
		{math.NaN(), "nan", ".nan"},
		{float64(float32(0.1)), "0.10000000149011612", "0.10000000149011612"},
	}
	for _, c := range cases {
		if got := pyFloatRepr(c.f); got != c.py {
			t.Errorf("pyFloatRepr(%v) = %s, want %s", c.f, got, c.py)
		}
		if got := yamlFloat(c.f); got != c.pyyaml {
			t.Errorf("yamlFloat(%v) = %s, want %s", c.f, got, c.pyyaml)
		}
	}
}

func TestRepr(t *testing.T) {
	m := kitchen{Flag: true, Names: []string{"it's", "a'b\"c", "x\n"}, Covariance: [3]float64{1, 0, 0.5}, Data: []uint8{3}}
	got := Repr(&m)
	want := `kitchen(header=header(stamp=stamp(sec=0, nanosec=0), frame_id=''), flag=True, small=0, byte=0, count=0, big=0, f32=0.0, ` +
		`names=["it's", 'a\'b"c', 'x\n'], data=[3], covariance=array([1.0, 0.0, 0.5]), poses=[], nothing=empty(), ` +
		`fixed=[vector3(x=0.0, y=0.0, z=0.0), vector3(x=0.0, y=0.0, z=0.0)], values=[])`
	if got != want {
		t.Errorf("Repr =\n%s\nwant\n%s", got, want)
	}
	if got := Repr(&twist{}); !strings.HasPrefix(got, "geometry_msgs.msg.Twist(linear=vector3(x=0.0") {
		t.Errorf("Repr(twist) = %s", got)
	}
}

func TestFieldAndEchoValue(t *testing.T) {
	m := kitchen{Header: header{FrameID: "map"}, Names: []string{"a"}, Poses: []pose{{}}}
	h, err := Field(&m, "header")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Field(h, "frame_id")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		v    any
		want string
	}{
		{f, "map\n...\n---\n"},
		{m.Names, "- a\n---\n"},
		{m.Data, "[]\n---\n"},
		{h, "stamp:\n  sec: 0\n  nanosec: 0\nframe_id: map\n---\n"},
		{2.5, "2.5\n...\n---\n"},
	}
	for _, c := range cases {
		got, err := EchoValue(c.v)
		if err != nil || got != c.want {
			t.Errorf("EchoValue(%v) = %q, %v; want %q", c.v, got, err, c.want)
		}
	}
	if _, err := Field(&m, "nope"); err == nil || !strings.Contains(err.Error(), `msgyaml.kitchen has no field "nope" (its fields are header, flag,`) {
		t.Errorf("Field(nope) error = %v", err)
	}
	if _, err := Field(3, "x"); err == nil {
		t.Error("Field on a non-struct must fail")
	}
}

func TestDump(t *testing.T) {
	v := map[string]any{
		"/talker": map[string]any{"ros__parameters": map[string]any{
			"rate": int64(10), "scale": 1.0, "name": "base link: x", "ids": []int64{1, 2},
			"flags": []bool{}, "group": map[string]any{"sub": "yes"}, "use_sim_time": false,
		}},
	}
	want := `/talker:
  ros__parameters:
    flags: []
    group:
      sub: 'yes'
    ids:
    - 1
    - 2
    name: 'base link: x'
    rate: 10
    scale: 1.0
    use_sim_time: false
`
	if got := Dump(v); got != want {
		t.Errorf("Dump =\n%s\nwant\n%s", got, want)
	}
	if got := Dump("x"); got != "x\n...\n" {
		t.Errorf("Dump(scalar) = %q", got)
	}
}

func TestSetField(t *testing.T) {
	var m kitchen
	if err := SetField(&m, "header.stamp.sec", int32(5)); err != nil || m.Header.Stamp.Sec != 5 {
		t.Errorf("SetField sec: %v %+v", err, m.Header)
	}
	if err := SetField(&m, "header.stamp", &stamp{Nanosec: 7}); err != nil || m.Header.Stamp.Nanosec != 7 {
		t.Errorf("SetField stamp pointer: %v %+v", err, m.Header)
	}
	if err := SetField(&m, "covariance", [3]float64{1, 2, 3}); err != nil || m.Covariance[2] != 3 {
		t.Errorf("SetField array: %v", err)
	}
	if err := SetField(&m, "header.nope", 1); err == nil || err.Error() != `msgyaml.header has no field "header.nope"` {
		t.Errorf("SetField unknown: %v", err)
	}
	if err := SetField(&m, "flag", 1); err == nil || err.Error() != `cannot assign int to field "flag" of type bool` {
		t.Errorf("SetField wrong type: %v", err)
	}
}

// stampMsg and stampHeader carry the ROS names that enable "now"/"auto".
type stampMsg struct {
	Sec     int32  `ros:"sec"`
	Nanosec uint32 `ros:"nanosec"`
}

func (*stampMsg) MarshalCDR(*cdr.Encoder)           {}
func (*stampMsg) UnmarshalCDR(d *cdr.Decoder) error { return nil }
func (*stampMsg) ROSType() *rosidl.TypeInfo {
	return &rosidl.TypeInfo{Name: "builtin_interfaces/msg/Time"}
}

type stampHeader struct {
	Stamp   stampMsg `ros:"stamp"`
	FrameID string   `ros:"frame_id"`
}

func (*stampHeader) MarshalCDR(*cdr.Encoder)           {}
func (*stampHeader) UnmarshalCDR(d *cdr.Decoder) error { return nil }
func (*stampHeader) ROSType() *rosidl.TypeInfo {
	return &rosidl.TypeInfo{Name: "std_msgs/msg/Header"}
}

type stamped struct {
	Header stampHeader `ros:"header"`
	When   stampMsg    `ros:"when"`
}

func TestDecode_NowAndAuto(t *testing.T) {
	now := func() time.Time { return time.Unix(1700000000, 250) }
	var m stamped
	if err := DecodeWith("{header: auto, when: now}", &m, Options{Now: now}); err != nil {
		t.Fatal(err)
	}
	if m.Header.Stamp.Sec != 1700000000 || m.Header.Stamp.Nanosec != 250 || m.When.Sec != 1700000000 {
		t.Errorf("now/auto: %+v", m)
	}
	m = stamped{}
	if err := DecodeWith("{header: {stamp: now, frame_id: map}}", &m, Options{Now: now}); err != nil || m.Header.FrameID != "map" || m.Header.Stamp.Nanosec != 250 {
		t.Errorf("stamp: now: %+v %v", m, err)
	}
	if err := Decode("{when: now}", &m); err == nil {
		t.Error("now accepted without Options.Now")
	}
	if err := DecodeWith("{when: 'now'}", &m, Options{Now: now}); err == nil {
		t.Error("quoted 'now' accepted as the keyword")
	}
}

type tagged struct {
	Ranges     []float32  `ros:"ranges" rostype:"float32[]"`
	Covariance [3]float64 `ros:"covariance" rostype:"float64[3]"`
	Names      []string   `ros:"names" rostype:"string<=8[<=4]"`
	Points     []vector3  `ros:"points" rostype:"geometry_msgs/Point[]"`
	Label      string     `ros:"label" rostype:"string"`
	Flags      []bool     `ros:"flags"`
}

func TestMarshalWith_NoArrNoStr(t *testing.T) {
	m := tagged{Ranges: []float32{1, 2}, Names: []string{"a"}, Label: "héllo"}
	got, err := MarshalWith(&m, EchoOptions{NoArr: true, NoStr: true})
	if err != nil {
		t.Fatal(err)
	}
	want := `ranges: '<sequence type: float, length: 2>'
covariance: '<array type: double[3]>'
names: '<sequence type: string[4], length: 1>'
points: '<sequence type: geometry_msgs/msg/Point, length: 0>'
label: '<string length: <5>>'
flags: '<sequence type: boolean, length: 0>'
`
	if got != want {
		t.Errorf("MarshalWith(NoArr, NoStr) =\n%s\nwant\n%s", got, want)
	}
}

func TestMarshalWith_Truncate(t *testing.T) {
	m := tagged{Ranges: []float32{1, 2, 3, 4}, Names: []string{"abcdef", "ab"}, Label: "abc"}
	got, err := MarshalWith(&m, EchoOptions{TruncateLength: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := `ranges:
- 1.0
- 2.0
- 3.0
- '...'
covariance:
- 0.0
- 0.0
- 0.0
names:
- abc...
- ab
points: []
label: abc
flags: []
`
	if got != want {
		t.Errorf("MarshalWith(Truncate 3) =\n%s\nwant\n%s", got, want)
	}
	if got, _ := EchoValueWith([]int32{1, 2, 3}, EchoOptions{TruncateLength: 2}); got != "- 1\n- 2\n- '...'\n---\n" {
		t.Errorf("EchoValueWith truncated = %q", got)
	}
	if got, _ := EchoValueWith([]int32{1, 2, 3}, EchoOptions{NoArr: true}); got != "'<sequence type: int32, length: 3>'\n...\n---\n" {
		t.Errorf("EchoValueWith no_arr = %q", got)
	}
}

func TestDecode_Uint64Extremes(t *testing.T) {
	var m struct {
		U uint64 `ros:"u"`
		I int16  `ros:"i"`
	}
	if err := Decode("{u: 18446744073709551615, i: -32768}", &m); err != nil || m.U != math.MaxUint64 || m.I != math.MinInt16 {
		t.Errorf("extremes: %v %+v", err, m)
	}
	if err := Decode("{u: -1}", &m); err == nil || !strings.Contains(err.Error(), "value -1 is out of range for uint64 [0, 18446744073709551615]") {
		t.Errorf("negative uint64: %v", err)
	}
	if err := Decode("{u: 18446744073709551616}", &m); err == nil || !strings.Contains(err.Error(), "out of range for uint64") {
		t.Errorf("uint64 overflow: %v", err)
	}
}

func TestDecodeNode(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("outer: {linear: {x: 2}}"), &doc); err != nil {
		t.Fatal(err)
	}
	var m twist
	if err := DecodeNode(doc.Content[0].Content[1], &m); err != nil || m.Linear.X != 2 {
		t.Errorf("DecodeNode: %v %+v", err, m)
	}
	if err := DecodeNode(doc.Content[0].Content[1], m); err == nil {
		t.Error("DecodeNode into a value must fail")
	}
}
