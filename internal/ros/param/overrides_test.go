package param

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseFile_Good_AllShapesAndTypes(t *testing.T) {
	blocks, err := ParseFile("testdata/good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, b := range blocks {
		nodes = append(nodes, b.Node)
	}
	if got := strings.Join(nodes, " "); got != "/** /robotControlMuxNode /ns/talker /ns2/listener /ns/*" {
		t.Fatalf("node keys = %s", got)
	}
	if !strings.HasPrefix(blocks[1].Source, "testdata/good.yaml:") {
		t.Errorf("source = %q", blocks[1].Source)
	}
	var o Overrides
	if err := o.AddFile("testdata/good.yaml"); err != nil {
		t.Fatal(err)
	}
	mux := o.For("/robotControlMuxNode")
	want := map[string]Value{
		"use_sim_time":             BoolValue(true),
		"rate":                     DoubleValue(50), // exact beats /**
		"teleoperation_idle_timer": DoubleValue(0.5),
		"joystick_topic":           StringValue("joy"),
		"quoted_number":            StringValue("42"),
		"ids":                      IntegerArrayValue([]int64{1, 2, 3}),
		"gains":                    DoubleArrayValue([]float64{0.5, 1}),
		"names":                    StringArrayValue([]string{"a", "b"}),
		"flags":                    BoolArrayValue([]bool{true, false}),
		"big":                      IntegerValue(math.MinInt64),
		"exp":                      DoubleValue(1500),
		"hex":                      StringValue("0x10"),
		"group.sub_param":          IntegerValue(2),
		"group.deeper.leaf":        BoolValue(true),
	}
	for k, w := range want {
		if g, ok := mux[k]; !ok || !g.Equal(w) {
			t.Errorf("%s = %v (%v), want %v (%v)", k, g, g.Type(), w, w.Type())
		}
	}
	if e, ok := mux["empty"]; !ok || !e.emptyList {
		t.Errorf("empty = %#v, want an untyped empty list", e)
	}
	// Case matters: a lower-cased node name is another node.
	if _, ok := o.For("/robotcontrolmuxnode")["teleoperation_idle_timer"]; ok {
		t.Error("node keys were case-folded")
	}
	// /ns/talker: the /ns/* key (7.0) comes after the exact /ns/talker key
	// (1.0) in the file, so it wins, as in rclcpp.
	talker := o.For("/ns/talker")
	if talker["rate"].Double() != 7 || talker["only_wild"].Integer() != 1 {
		t.Errorf("/ns/talker overrides = %v", talker)
	}
	if r := o.For("/ns2/listener")["rate"]; r.Double() != 2 {
		t.Errorf("nested namespace key: rate = %v", r)
	}
	if r := o.For("/ns/other")["rate"]; r.Double() != 7 {
		t.Errorf("/ns/* wildcard: rate = %v", r)
	}
	// A plain key matches only the root namespace; /ns/a/b is not /ns/*.
	if r := o.For("/ns/a/b")["rate"]; r.Double() != 5 {
		t.Errorf("/ns/a/b rate = %v, want the /** value 5", r)
	}
}

func TestParseFile_BadInput_ClearErrors(t *testing.T) {
	cases := []struct {
		file string
		want []string // substrings of the error
	}{
		{"malformed.yaml", []string{"testdata/malformed.yaml", "line"}},
		{"mixed.yaml", []string{"mixed.yaml", `node "/talker"`, `parameter "mixed"`, "line 3", "homogeneous"}},
		{"badname.yaml", []string{"badname.yaml", `"bad name"`, "invalid character"}},
		{"noros.yaml", []string{"noros.yaml", "line 2", "/talker/rate", "ros__parameters"}},
		{"toplevel.yaml", []string{"toplevel.yaml", "must be under a node name"}},
		{"overflow.yaml", []string{"overflow", "out of the int64 range"}},
		{"nested.yaml", []string{`parameter "nested"`, "not a scalar"}},
		{"badnode.yaml", []string{`"tal ker"`, "not a valid node name"}},
		{"null.yaml", []string{`parameter "nothing"`, "empty"}},
		{"list.yaml", []string{"top level must be a map"}},
		{"nan.yaml", []string{"NaN"}},
		{"does-not-exist.yaml", []string{"does-not-exist.yaml"}},
	}
	for _, c := range cases {
		_, err := ParseFile("testdata/" + c.file)
		if err == nil {
			t.Errorf("%s: no error", c.file)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.file, err, w)
			}
		}
	}
	if b, err := ParseFile("testdata/empty.yaml"); err != nil || len(b) != 0 {
		t.Errorf("empty file = %v, %v", b, err)
	}
}

func TestParseValue_TypingLikeRcl(t *testing.T) {
	cases := []struct {
		in   string
		want Value
	}{
		{"1", IntegerValue(1)},
		{"-7", IntegerValue(-7)},
		{"1.0", DoubleValue(1)},
		{"1.", DoubleValue(1)},
		{".5", DoubleValue(.5)},
		{"1e3", DoubleValue(1000)},
		{"-.inf", DoubleValue(math.Inf(-1))},
		{"true", BoolValue(true)},
		{"False", BoolValue(false)},
		{"'1'", StringValue("1")},
		{`"true"`, StringValue("true")},
		{"''", StringValue("")},
		{"hello world", StringValue("hello world")},
		{"[1, 2]", IntegerArrayValue([]int64{1, 2})},
		{"[1.5]", DoubleArrayValue([]float64{1.5})},
		{"['a', b]", StringArrayValue([]string{"a", "b"})},
		{"[true]", BoolArrayValue([]bool{true})},
	}
	for _, c := range cases {
		got, err := ParseValue(c.in)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("ParseValue(%q) = %v (%v), %v; want %v (%v)", c.in, got, got.Type(), err, c.want, c.want.Type())
		}
	}
	for _, bad := range []string{"", "  ", "[1, 'a']", "{a: 1}", "[[1]]", "[1, 2", ".nan", "1e999", "123456789012345678901"} {
		if v, err := ParseValue(bad); err == nil {
			t.Errorf("ParseValue(%q) = %v, want an error", bad, v)
		}
	}
}

func TestParseRule_AndPrecedence(t *testing.T) {
	var o Overrides
	if err := o.AddFile("testdata/good.yaml"); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"robotControlMuxNode:rate:=99.0", "rate:=3.0", "extra:=[x, y]", "/other:rate:=1.0"} {
		if err := o.AddRule(r); err != nil {
			t.Fatalf("AddRule(%q): %v", r, err)
		}
	}
	mux := o.For("/robotControlMuxNode")
	if mux["rate"].Double() != 99 {
		t.Errorf("targeted -p should win over global -p and files: rate = %v", mux["rate"])
	}
	if mux["teleoperation_idle_timer"].Double() != 0.5 {
		t.Errorf("file value lost: %v", mux["teleoperation_idle_timer"])
	}
	// rate:=3.0 joins the file's /** key, which comes first: /ns/*
	// (7.0) still wins for /ns/talker, as in rclcpp; a node only /**
	// matches gets the rule.
	if got := o.For("/ns/talker")["rate"]; got.Double() != 7 {
		t.Errorf("/ns/talker: the later /ns/* key should beat -p rate (a /** rule): rate = %v", got)
	}
	if got := o.For("/a/b")["rate"]; got.Double() != 3 {
		t.Errorf("/a/b: -p rate:=3.0 should replace the file's /** 5.0: rate = %v", got)
	}
	if got := o.For("/other")["rate"]; got.Double() != 1 {
		t.Errorf("/other rate = %v", got)
	}
	for _, bad := range []string{"rate", "bad name:=1", "rate:=", "no de:x:=1", "a..b:=1", "x:=[1, 2.0]"} {
		if err := o.AddRule(bad); err == nil {
			t.Errorf("AddRule(%q): no error", bad)
		}
	}
}

func TestStore_WithOverrides_EmptyListTakesDeclaredType(t *testing.T) {
	var o Overrides
	if err := o.AddFile("testdata/good.yaml"); err != nil {
		t.Fatal(err)
	}
	s := NewStore(StoreOptions{Overrides: o.For("/robotControlMuxNode")})
	v, err := s.Declare("empty", DoubleArrayValue([]float64{1}), Descriptor{})
	if err != nil || v.Type() != TypeDoubleArray || v.Len() != 0 {
		t.Fatalf("Declare(empty) = %v (%v), %v", v, v.Type(), err)
	}
	if _, err := s.Declare("empty2", IntegerValue(0), Descriptor{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Declare("joystick_topic", IntegerValue(1), Descriptor{}); err == nil ||
		!strings.Contains(err.Error(), "joystick_topic") || !strings.Contains(err.Error(), "string") {
		t.Fatalf("wrong-typed override: %v", err)
	}
}

func TestMatches_Wildcards(t *testing.T) {
	cases := []struct {
		pat, fqn string
		want     bool
	}{
		{"/**", "/a", true},
		{"/**", "/a/b/c", true},
		{"/**/c", "/c", true},
		{"/**/c", "/a/b/c", true},
		{"/**/c", "/a/b", false},
		{"/*", "/a", true},
		{"/*", "/a/b", false},
		{"/a/*", "/a/b", true},
		{"/a", "/a", true},
		{"/a", "/ns/a", false},
	}
	for _, c := range cases {
		if got := (NodeParams{Node: c.pat}).Matches(c.fqn); got != c.want {
			t.Errorf("%s matches %s = %v, want %v", c.pat, c.fqn, got, c.want)
		}
	}
}

func TestStore_WrongTypedOverride_NamesFileNodeAndParameter(t *testing.T) {
	var o Overrides
	if err := o.AddFile("testdata/good.yaml"); err != nil {
		t.Fatal(err)
	}
	s := NewStore(StoreOptions{Overrides: o.For("/robotControlMuxNode"), OverrideSources: o.Sources("/robotControlMuxNode")})
	_, err := s.Declare("ids", StringValue("x"), Descriptor{})
	for _, w := range []string{`"ids"`, "testdata/good.yaml:", `"/robotControlMuxNode"`, "integer array", "string"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v does not mention %s", err, w)
		}
	}
}

func TestParseFile_HostileAliases_ErrorNotHang(t *testing.T) {
	bomb := "n:\n  ros__parameters:\n    a: &a {x: 1, y: 1}\n"
	prev := "a"
	for i := 0; i < 40; i++ {
		name := "b" + strings.Repeat("x", i)
		bomb += "    " + name + ": &" + name + " {p: *" + prev + ", q: *" + prev + "}\n"
		prev = name
	}
	for name, in := range map[string]string{
		"node key loop": "a: &x {b: *x}\n",
		"param loop":    "n:\n  ros__parameters: &p {q: *p}\n",
		"alias bomb":    bomb,
	} {
		if _, err := parseFileBytes([]byte(in)); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// TestOverrides_KeyOrderLikeRclcpp: the node keys of every file and rule
// are kept in the order they first appear and applied in that order, so the
// key that appeared later wins, whichever is a wildcard. Each case was run
// against rclcpp (Humble, the test peer's params node, `ros2 param get`)
// and gave the value wanted here.
func TestOverrides_KeyOrderLikeRclcpp(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	exact := file("exact.yaml", "params:\n  ros__parameters:\n    gain: 1.0\n    mode: exact\n")
	wild := file("wild.yaml", "/**:\n  ros__parameters:\n    gain: 2.0\n")
	star := file("star.yaml", "/*:\n  ros__parameters:\n    gain: 4.0\n")
	both := file("both.yaml", "/**:\n  ros__parameters:\n    mode: wild\nparams:\n  ros__parameters:\n    count: 5\n")
	type arg struct{ file, rule string }
	cases := []struct {
		name string
		args []arg
		want map[string]string
	}{
		{"a later /** file beats an earlier exact one (a launch file's parameters={...})",
			[]arg{{file: exact}, {file: wild}}, map[string]string{"gain": "2.0", "mode": "exact"}},
		{"an exact file after a /** one wins", []arg{{file: wild}, {file: exact}}, map[string]string{"gain": "1.0"}},
		{"a later /* file beats an earlier exact one", []arg{{file: exact}, {file: star}}, map[string]string{"gain": "4.0"}},
		{"-p after the file wins", []arg{{file: exact}, {rule: "gain:=9.0"}}, map[string]string{"gain": "9.0"}},
		{"-p before the file loses to the later exact key", []arg{{rule: "gain:=9.0"}, {file: exact}}, map[string]string{"gain": "1.0"}},
		{"-p joins an earlier /** key, below the exact one", []arg{{file: wild}, {file: exact}, {rule: "gain:=9.0"}}, map[string]string{"gain": "1.0"}},
		{"a third file's /** joins the first key", []arg{{file: wild}, {file: exact}, {file: both}},
			map[string]string{"gain": "1.0", "mode": "exact", "count": "5"}},
	}
	for _, c := range cases {
		var o Overrides
		for _, a := range c.args {
			var err error
			if a.file != "" {
				err = o.AddFile(a.file)
			} else {
				err = o.AddRule(a.rule)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		got := o.For("/params")
		for k, w := range c.want {
			if g, ok := got[k]; !ok || g.String() != w {
				t.Errorf("%s: %s = %v, want %s", c.name, k, g, w)
			}
		}
	}
}
