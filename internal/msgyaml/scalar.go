package msgyaml

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// pyFloatRepr formats f as Python's repr(float) does: the shortest string
// that round-trips, in positional notation for exponents -4..15 (always with
// a fractional part) and in scientific notation otherwise ("1e-05",
// "1.5e+16"). NaN and infinities print as nan, inf and -inf.
func pyFloatRepr(f float64) string { return pyFloatReprBits(f, 64) }

// pyFloatReprBits is pyFloatRepr with the shortest digits that round-trip
// at bitSize (32: numpy's str(numpy.float32)).
func pyFloatReprBits(f float64, bitSize int) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, bitSize) // d.ddde±XX
	i := strings.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[i+1:])
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, bitSize)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// yamlFloat formats f as PyYAML's float representer does (repr, lower
// case, ".0" inserted before a bare exponent, .nan/.inf/-.inf).
func yamlFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	}
	s := pyFloatRepr(f)
	if !strings.Contains(s, ".") && strings.Contains(s, "e") {
		s = strings.Replace(s, "e", ".0e", 1)
	}
	return s
}

// Patterns of PyYAML's implicit resolvers (YAML 1.1). A string that one of
// them matches must be quoted, or it would read back as another type.
var implicitResolvers = []*regexp.Regexp{
	regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`),
	regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`),
	regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`),
	regexp.MustCompile(`^(?:<<)$`),
	regexp.MustCompile(`^(?:~|null|Null|NULL|)$`),
	regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`),
	regexp.MustCompile(`^(?:=)$`),
	regexp.MustCompile(`^(?:!|&|\*)$`),
}

// scalarStyle is the quoting PyYAML chooses for a string in block context.
type scalarStyle int

const (
	stylePlain scalarStyle = iota
	styleSingle
	styleDouble
)

func isSpaceOrEnd(r rune) bool {
	switch r {
	case 0, ' ', '\t', '\r', '\n', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

func isBreak(r rune) bool {
	switch r {
	case '\n', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// printableUnicode reports whether PyYAML (allow_unicode=True) writes r as
// is rather than escaping it.
func printableUnicode(r rune) bool {
	if r == '\n' || (r >= 0x20 && r <= 0x7e) {
		return true
	}
	return (r == 0x85 || (r >= 0xa0 && r <= 0xd7ff) || (r >= 0xe000 && r <= 0xfffd) ||
		(r >= 0x10000 && r < 0x10ffff)) && r != 0xfeff
}

// chooseStyle follows PyYAML's Emitter.analyze_scalar and
// choose_scalar_style for a string value in a block mapping or sequence.
func chooseStyle(s string) scalarStyle {
	for _, re := range implicitResolvers {
		if re.MatchString(s) {
			return styleSingle
		}
	}
	rs := []rune(s)
	if !utf8.ValidString(s) {
		return styleDouble
	}
	var blockIndicators, lineBreaks, special bool
	var leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		blockIndicators = true
	}
	preceded := true
	followed := len(rs) == 1 || isSpaceOrEnd(rs[1])
	prevSpace, prevBreak := false, false
	for i, ch := range rs {
		if i == 0 {
			if strings.ContainsRune("#,[]{}&*!|>'\"%@`", ch) {
				blockIndicators = true
			}
			if (ch == '?' || ch == ':') && followed {
				blockIndicators = true
			}
			if ch == '-' && followed {
				blockIndicators = true
			}
		} else {
			if ch == ':' && followed {
				blockIndicators = true
			}
			if ch == '#' && preceded {
				blockIndicators = true
			}
		}
		if isBreak(ch) {
			lineBreaks = true
		}
		if !printableUnicode(ch) {
			special = true
		}
		switch {
		case ch == ' ':
			if i == 0 {
				leadingSpace = true
			}
			if i == len(rs)-1 {
				trailingSpace = true
			}
			if prevBreak {
				breakSpace = true
			}
			prevSpace, prevBreak = true, false
		case isBreak(ch):
			if i == 0 {
				leadingBreak = true
			}
			if i == len(rs)-1 {
				trailingBreak = true
			}
			if prevSpace {
				spaceBreak = true
			}
			prevSpace, prevBreak = false, true
		default:
			prevSpace, prevBreak = false, false
		}
		preceded = isSpaceOrEnd(ch)
		followed = i+2 >= len(rs) || isSpaceOrEnd(rs[i+2])
	}
	plain, single := true, true
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak {
		plain = false
	}
	if breakSpace {
		plain, single = false, false
	}
	if spaceBreak || special {
		plain, single = false, false
	}
	if lineBreaks || blockIndicators {
		plain = false
	}
	switch {
	case plain:
		return stylePlain
	case single:
		return styleSingle
	}
	return styleDouble
}

// yamlString renders s as PyYAML does inside block collections. indent is
// the column continuation lines of a multi-line single-quoted scalar start
// at.
func yamlString(s string, indent int) string {
	switch chooseStyle(s) {
	case stylePlain:
		return s
	case styleSingle:
		return singleQuoted(s, indent)
	}
	return doubleQuoted(s)
}

// flowString renders s as PyYAML does inside a flow collection: a plain
// scalar there may in addition hold none of the flow indicators ",?[]{}"
// and no ':' (PyYAML's analyze_scalar).
func flowString(s string, indent int) string {
	style := chooseStyle(s)
	if style == stylePlain && strings.ContainsAny(s, ",?[]{}:") {
		style = styleSingle
	}
	switch style {
	case stylePlain:
		return s
	case styleSingle:
		return singleQuoted(s, indent)
	}
	return doubleQuoted(s)
}

func singleQuoted(s string, indent int) string {
	var b strings.Builder
	b.WriteByte('\'')
	rs := []rune(s)
	for i := 0; i < len(rs); {
		if isBreak(rs[i]) {
			j := i
			for j < len(rs) && isBreak(rs[j]) {
				j++
			}
			if rs[i] == '\n' {
				b.WriteByte('\n')
			}
			for _, br := range rs[i:j] {
				if br == '\n' {
					b.WriteByte('\n')
				} else {
					b.WriteRune(br)
				}
			}
			b.WriteString(strings.Repeat(" ", indent))
			i = j
			continue
		}
		if rs[i] == '\'' {
			b.WriteString("''")
		} else {
			b.WriteRune(rs[i])
		}
		i++
	}
	b.WriteByte('\'')
	return b.String()
}

var yamlEscapes = map[rune]string{
	0: "0", 0x07: "a", 0x08: "b", 0x09: "t", 0x0a: "n", 0x0b: "v", 0x0c: "f", 0x0d: "r",
	0x1b: "e", '"': "\"", '\\': "\\", 0x85: "N", 0xa0: "_", 0x2028: "L", 0x2029: "P",
}

func doubleQuoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		plainOK := (r >= 0x20 && r <= 0x7e) || ((r >= 0xa0 && r <= 0xd7ff) || (r >= 0xe000 && r <= 0xfffd))
		if r == '"' || r == '\\' || r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xfeff || !plainOK {
			if esc, ok := yamlEscapes[r]; ok {
				b.WriteString("\\" + esc)
			} else if r <= 0xff {
				b.WriteString("\\x" + hex(uint64(r), 2))
			} else if r <= 0xffff {
				b.WriteString("\\u" + hex(uint64(r), 4))
			} else {
				b.WriteString("\\U" + hex(uint64(r), 8))
			}
			continue
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

func hex(v uint64, width int) string {
	s := strings.ToUpper(strconv.FormatUint(v, 16))
	return strings.Repeat("0", max(0, width-len(s))) + s
}

// pyStrRepr renders s as Python's repr(str): single quotes unless the string
// holds a single quote and no double quote; \\, \n, \r, \t and other
// non-printable characters escaped.
func pyStrRepr(s string) string {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x` + strings.ToLower(hex(uint64(r), 2)))
		case r >= 0x80 && !strconv.IsPrint(r):
			if r <= 0xff {
				b.WriteString(`\x` + strings.ToLower(hex(uint64(r), 2)))
			} else if r <= 0xffff {
				b.WriteString(`\u` + strings.ToLower(hex(uint64(r), 4)))
			} else {
				b.WriteString(`\U` + strings.ToLower(hex(uint64(r), 8)))
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// PyFloat formats f as Python's repr(float) ("0.0", "1e-05", "inf").
func PyFloat(f float64) string { return pyFloatRepr(f) }

// PyStr formats s as Python's repr(str) ("'hello'", "\"it's\"").
func PyStr(s string) string { return pyStrRepr(s) }
