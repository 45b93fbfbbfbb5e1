package main

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// ParseError is a problem in an interface file, located by file and line.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

var (
	// Name rules of rosidl_adapter / rosidl_parser.
	reFieldName    = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	reConstantName = regexp.MustCompile(`^[A-Z]([A-Z0-9_]?[A-Z0-9]+)*$`)
	reTypeName     = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	rePackageName  = regexp.MustCompile(`^[a-z]([a-z0-9_]?[a-z0-9]+)*$`)
)

// validFieldName applies rosidl's rule: lower case letters, digits and
// underscores, starting with a letter, no double or trailing underscore.
func validFieldName(s string) bool {
	return reFieldName.MatchString(s) && !strings.Contains(s, "__") && !strings.HasSuffix(s, "_")
}

// section is a run of lines of one file with the line number of its first
// line.
type section struct {
	text      string
	firstLine int
}

// splitSections splits a .srv/.action text at lines consisting of "---".
func splitSections(text string) []section {
	lines := strings.Split(text, "\n")
	var out []section
	start := 0
	for i, l := range lines {
		if strings.TrimSpace(l) == "---" {
			out = append(out, section{strings.Join(lines[start:i], "\n"), start + 1})
			start = i + 1
		}
	}
	out = append(out, section{strings.Join(lines[start:], "\n"), start + 1})
	return out
}

// ParseSrv parses the text of pkg/srv/name.srv.
func ParseSrv(file, pkg, name, text string) (*SrvSpec, error) {
	if err := checkNames(file, pkg, name); err != nil {
		return nil, err
	}
	secs := splitSections(text)
	if len(secs) != 2 {
		return nil, &ParseError{file, 1, fmt.Sprintf("a service needs exactly one \"---\" separator, found %d", len(secs)-1)}
	}
	req, err := parseMsgSection(file, pkg, "srv", name+"_Request", secs[0])
	if err != nil {
		return nil, err
	}
	resp, err := parseMsgSection(file, pkg, "srv", name+"_Response", secs[1])
	if err != nil {
		return nil, err
	}
	return &SrvSpec{Pkg: pkg, Name: name, Request: req, Response: resp, Text: text}, nil
}

// ParseAction parses the text of pkg/action/name.action and derives the
// protocol types (SendGoal, GetResult, FeedbackMessage) as rosidl does.
func ParseAction(file, pkg, name, text string) (*ActionSpec, error) {
	if err := checkNames(file, pkg, name); err != nil {
		return nil, err
	}
	secs := splitSections(text)
	if len(secs) != 3 {
		return nil, &ParseError{file, 1, fmt.Sprintf("an action needs exactly two \"---\" separators, found %d", len(secs)-1)}
	}
	var parts [3]*MsgSpec
	for i, suffix := range []string{"_Goal", "_Result", "_Feedback"} {
		m, err := parseMsgSection(file, pkg, "action", name+suffix, secs[i])
		if err != nil {
			return nil, err
		}
		parts[i] = m
	}
	a := &ActionSpec{Pkg: pkg, Name: name, Goal: parts[0], Result: parts[1], Feedback: parts[2], Text: text}
	uuid := FieldType{Base: BaseType{Pkg: "unique_identifier_msgs", Sub: "msg", Name: "UUID"}}
	nested := func(m *MsgSpec) FieldType {
		return FieldType{Base: BaseType{Pkg: m.Pkg, Sub: m.Sub, Name: m.Name}}
	}
	derived := func(suffix, text string, fields ...Field) *MsgSpec {
		return &MsgSpec{Pkg: pkg, Sub: "action", Name: name + suffix, Fields: fields, Text: text, File: file}
	}
	a.SendGoal = &SrvSpec{
		Pkg: pkg, Name: name + "_SendGoal",
		Request: derived("_SendGoal_Request",
			"unique_identifier_msgs/UUID goal_id\n"+name+"_Goal goal\n",
			Field{Name: "goal_id", Type: uuid}, Field{Name: "goal", Type: nested(a.Goal)}),
		Response: derived("_SendGoal_Response",
			"bool accepted\nbuiltin_interfaces/Time stamp\n",
			Field{Name: "accepted", Type: FieldType{Base: BaseType{Prim: "bool"}}},
			Field{Name: "stamp", Type: FieldType{Base: BaseType{Pkg: "builtin_interfaces", Sub: "msg", Name: "Time"}}}),
	}
	a.SendGoal.Text = a.SendGoal.Request.Text + "---\n" + a.SendGoal.Response.Text
	a.GetResult = &SrvSpec{
		Pkg: pkg, Name: name + "_GetResult",
		Request: derived("_GetResult_Request", "unique_identifier_msgs/UUID goal_id\n",
			Field{Name: "goal_id", Type: uuid}),
		Response: derived("_GetResult_Response", "int8 status\n"+name+"_Result result\n",
			Field{Name: "status", Type: FieldType{Base: BaseType{Prim: "int8"}}},
			Field{Name: "result", Type: nested(a.Result)}),
	}
	a.GetResult.Text = a.GetResult.Request.Text + "---\n" + a.GetResult.Response.Text
	a.FeedbackMessage = derived("_FeedbackMessage",
		"unique_identifier_msgs/UUID goal_id\n"+name+"_Feedback feedback\n",
		Field{Name: "goal_id", Type: uuid}, Field{Name: "feedback", Type: nested(a.Feedback)})
	return a, nil
}

// ParseMsg parses the text of pkg/msg/name.msg.
func ParseMsg(file, pkg, name, text string) (*MsgSpec, error) {
	if err := checkNames(file, pkg, name); err != nil {
		return nil, err
	}
	return parseMsgSection(file, pkg, "msg", name, section{text, 1})
}

func checkNames(file, pkg, name string) error {
	if !rePackageName.MatchString(pkg) {
		return &ParseError{file, 1, fmt.Sprintf("invalid package name %q", pkg)}
	}
	if !reTypeName.MatchString(name) {
		return &ParseError{file, 1, fmt.Sprintf("invalid type name %q (must be CamelCase starting with an upper-case letter)", name)}
	}
	return nil
}

// stripComment removes a '#' comment that is not inside a quoted string.
func stripComment(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == '#':
			return line[:i]
		}
	}
	return line
}

func parseMsgSection(file, pkg, sub, name string, sec section) (*MsgSpec, error) {
	m := &MsgSpec{Pkg: pkg, Sub: sub, Name: name, Text: sec.text, File: file}
	seen := map[string]int{}
	var pending []string // comment lines above the next member
	for i, raw := range strings.Split(sec.text, "\n") {
		lineNo := sec.firstLine + i
		fail := func(format string, args ...any) error {
			return &ParseError{file, lineNo, fmt.Sprintf(format, args...)}
		}
		full := strings.ReplaceAll(raw, "\t", " ")
		line := strings.TrimSpace(stripComment(full))
		comment := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(full[len(stripComment(full)):]), "#"))
		if line == "" {
			if strings.TrimSpace(full) == "" {
				pending = nil // a blank line ends a comment block
			} else {
				pending = append(pending, comment)
			}
			continue
		}
		doc := strings.Join(pending, "\n")
		pending = nil
		typeStr, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		if rest == "" {
			return nil, fail("missing field name after type %q", typeStr)
		}
		// A constant is "TYPE NAME=value" (spaces around '=' allowed); a
		// field is "type name [default]".
		nameEnd := strings.IndexAny(rest, " =")
		memberName, after := rest, ""
		if nameEnd >= 0 {
			memberName, after = rest[:nameEnd], strings.TrimSpace(rest[nameEnd:])
		}
		if prev, dup := seen[memberName]; dup {
			return nil, fail("duplicate name %q (first defined on line %d)", memberName, prev)
		}
		seen[memberName] = lineNo
		ft, err := parseType(typeStr, pkg)
		if err != nil {
			return nil, fail("%v", err)
		}
		if strings.HasPrefix(after, "=") {
			if !reConstantName.MatchString(memberName) {
				return nil, fail("invalid constant name %q (must be UPPER_CASE)", memberName)
			}
			if ft.Base.IsNested() || ft.Array != NotArray {
				return nil, fail("constant %s must have a primitive non-array type, not %s", memberName, ft)
			}
			valText := strings.TrimSpace(after[1:])
			if valText == "" {
				return nil, fail("constant %s has no value", memberName)
			}
			v, err := parseScalar(ft.Base, valText)
			if err != nil {
				return nil, fail("constant %s: %v", memberName, err)
			}
			m.Constants = append(m.Constants, Constant{Name: memberName, Type: ft.Base, Value: v, Text: valText, Comment: doc, LineComment: comment, Line: lineNo})
			continue
		}
		if !validFieldName(memberName) {
			return nil, fail("invalid field name %q (lower_snake_case, no double or trailing underscore)", memberName)
		}
		f := Field{Name: memberName, Type: ft, Comment: doc, LineComment: comment, Line: lineNo}
		if after != "" {
			if ft.Base.IsNested() {
				return nil, fail("field %s: a nested message type cannot have a default value", memberName)
			}
			v, err := parseDefault(ft, after)
			if err != nil {
				return nil, fail("field %s: %v", memberName, err)
			}
			f.Default, f.DefaultText = v, after
		}
		m.Fields = append(m.Fields, f)
	}
	return m, nil
}

// parseType parses "float64", "string<=10", "geometry_msgs/Pose[]",
// "int32[3]", "Foo[<=5]" in the context of package pkg.
func parseType(s, pkg string) (FieldType, error) {
	var t FieldType
	base := s
	if strings.HasSuffix(s, "]") {
		open := strings.LastIndexByte(s, '[')
		if open < 0 {
			return t, fmt.Errorf("malformed array type %q", s)
		}
		base = s[:open]
		inner := s[open+1 : len(s)-1]
		switch {
		case inner == "":
			t.Array = UnboundedSeq
		case strings.HasPrefix(inner, "<="):
			n, err := parseBound(inner[2:])
			if err != nil {
				return t, fmt.Errorf("bad sequence bound in %q: %v", s, err)
			}
			t.Array, t.Size = BoundedSeq, n
		default:
			n, err := parseBound(inner)
			if err != nil {
				return t, fmt.Errorf("bad array size in %q: %v", s, err)
			}
			t.Array, t.Size = FixedArray, n
		}
	}
	b, err := parseBaseType(base, pkg)
	if err != nil {
		return t, err
	}
	t.Base = b
	return t, nil
}

func parseBound(s string) (int, error) {
	n, err := strconv.ParseUint(s, 10, 31)
	if err != nil {
		return 0, fmt.Errorf("%q is not a positive integer", s)
	}
	if n == 0 {
		return 0, fmt.Errorf("must be at least 1")
	}
	return int(n), nil
}

func parseBaseType(s, pkg string) (BaseType, error) {
	for _, p := range []string{"string", "wstring"} {
		if rest, ok := strings.CutPrefix(s, p+"<="); ok {
			n, err := parseBound(rest)
			if err != nil {
				return BaseType{}, fmt.Errorf("bad string bound in %q: %v", s, err)
			}
			return BaseType{Prim: p, StringBound: n}, nil
		}
	}
	if _, ok := primitiveSizes[s]; ok {
		return BaseType{Prim: s}, nil
	}
	if strings.ContainsAny(s, "<=[]") {
		return BaseType{}, fmt.Errorf("malformed type %q", s)
	}
	p, n, hasPkg := strings.Cut(s, "/")
	if !hasPkg {
		n = s
		p = pkg
		if s == "Header" && pkg != "std_msgs" {
			// As in ROS 1 and rosbags: a bare Header means std_msgs/Header.
			p = "std_msgs"
		}
	}
	if !rePackageName.MatchString(p) {
		return BaseType{}, fmt.Errorf("invalid package name %q in type %q", p, s)
	}
	if !reTypeName.MatchString(n) {
		return BaseType{}, fmt.Errorf("unknown type %q (not a primitive and not a valid message type name)", s)
	}
	return BaseType{Pkg: p, Sub: "msg", Name: n}, nil
}

// parseDefault parses a field default value for type t.
func parseDefault(t FieldType, s string) (any, error) {
	if t.Array == NotArray {
		return parseScalar(t.Base, s)
	}
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return nil, fmt.Errorf("array default %q must be written as [a, b, ...]", s)
	}
	items, err := splitList(s[1 : len(s)-1])
	if err != nil {
		return nil, err
	}
	switch {
	case t.Array == FixedArray && len(items) != t.Size:
		return nil, fmt.Errorf("array default has %d elements, type %s needs %d", len(items), t, t.Size)
	case t.Array == BoundedSeq && len(items) > t.Size:
		return nil, fmt.Errorf("sequence default has %d elements, more than the bound %d", len(items), t.Size)
	}
	out := make([]any, 0, len(items))
	for _, it := range items {
		v, err := parseScalar(t.Base, it)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// splitList splits "a, 'b,c', d" at commas outside quotes.
func splitList(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	var quote byte
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == ',':
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated string in list")
	}
	out = append(out, strings.TrimSpace(s[start:]))
	for _, it := range out {
		if it == "" {
			return nil, fmt.Errorf("empty element in list")
		}
	}
	return out, nil
}

var intRanges = map[string][2]int64{
	"int8":  {math.MinInt8, math.MaxInt8},
	"int16": {math.MinInt16, math.MaxInt16},
	"int32": {math.MinInt32, math.MaxInt32},
	"int64": {math.MinInt64, math.MaxInt64},
}

var uintMax = map[string]uint64{
	"byte": math.MaxUint8, "char": math.MaxUint8, "uint8": math.MaxUint8,
	"uint16": math.MaxUint16, "uint32": math.MaxUint32, "uint64": math.MaxUint64,
}

// parseScalar parses a constant or default value of primitive type b. The
// result is bool, int64 (signed types), uint64 (unsigned, byte, char),
// float64 or string.
func parseScalar(b BaseType, s string) (any, error) {
	switch {
	case b.Prim == "bool":
		switch strings.ToLower(s) {
		case "true", "1":
			return true, nil
		case "false", "0":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not a bool (use true or false)", s)
	case b.IsString():
		v, err := parseStringLit(s)
		if err != nil {
			return nil, err
		}
		if b.StringBound > 0 && len([]rune(v)) > b.StringBound {
			return nil, fmt.Errorf("string %q is longer than the bound %d", v, b.StringBound)
		}
		return v, nil
	case b.Prim == "float32" || b.Prim == "float64":
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		if b.Prim == "float32" && !math.IsInf(v, 0) && math.Abs(v) > math.MaxFloat32 {
			return nil, fmt.Errorf("%s is out of range for float32", s)
		}
		return v, nil
	}
	if r, ok := intRanges[b.Prim]; ok {
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil || v < r[0] || v > r[1] {
			return nil, fmt.Errorf("%q is not a valid %s (range %d..%d)", s, b.Prim, r[0], r[1])
		}
		return v, nil
	}
	if mx, ok := uintMax[b.Prim]; ok {
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil || v > mx {
			return nil, fmt.Errorf("%q is not a valid %s (range 0..%d)", s, b.Prim, mx)
		}
		return v, nil
	}
	return nil, fmt.Errorf("type %s cannot have a value", b)
}

// parseStringLit accepts a single- or double-quoted string with backslash
// escapes, or an unquoted string taken literally (as rosidl does).
func parseStringLit(s string) (string, error) {
	if len(s) == 0 || (s[0] != '"' && s[0] != '\'') {
		return s, nil
	}
	q := s[0]
	if len(s) < 2 || s[len(s)-1] != q {
		return "", fmt.Errorf("unterminated string %s", s)
	}
	body := s[1 : len(s)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == q {
			return "", fmt.Errorf("unescaped quote inside string %s", s)
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(body) {
			return "", fmt.Errorf("dangling backslash in string %s", s)
		}
		switch body[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '\\', '"', '\'':
			b.WriteByte(body[i])
		default:
			return "", fmt.Errorf("unknown escape \\%c in string %s", body[i], s)
		}
	}
	return b.String(), nil
}
