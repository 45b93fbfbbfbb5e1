package launch

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Bounds of substitution: a launch file of a few lines that doubles a
// value with <let> thirty times would otherwise make a value of gigabytes
// and end the launcher out of memory.
const (
	// MaxSubstitutedValue is the longest value, in bytes, that a text with
	// substitutions (an attribute, an argument's default) may expand to.
	MaxSubstitutedValue = 1 << 20
	// MaxSubstitutedTotal is the most bytes all the substitutions of one
	// load (the launch file and its includes) may produce together.
	MaxSubstitutedTotal = 64 << 20
)

// substitute expands every $(...) in s. Substitutions nest:
// "$(var $(env WHICH))" is allowed. The result is bounded by
// MaxSubstitutedValue and the whole load by MaxSubstitutedTotal; the error
// names the substitution that crossed the bound.
func (s *scope) substitute(e *element, text string) (string, error) {
	var out strings.Builder
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], "$(")
		if j < 0 {
			out.WriteString(text[i:])
			break
		}
		out.WriteString(text[i : i+j])
		start := i + j
		end, err := matchParen(text, start+1)
		if err != nil {
			return "", e.errorf("%v in %q", err, text)
		}
		body := text[start+2 : end]
		val, err := s.evalSubst(e, body)
		if err != nil {
			return "", err
		}
		if n := out.Len() + len(val); n > MaxSubstitutedValue {
			return "", newBoundError(e, "$(%s) makes a value of %d bytes, more than the %d a substituted value may have", shorten(body), n, MaxSubstitutedValue)
		}
		if s.l != nil {
			if s.l.substituted += int64(len(val)); s.l.substituted > MaxSubstitutedTotal {
				return "", newBoundError(e, "$(%s): the substitutions of this launch have produced more than %d bytes", shorten(body), MaxSubstitutedTotal)
			}
		}
		out.WriteString(val)
		i = end + 1
	}
	return out.String(), nil
}

// matchParen returns the index of the ')' closing the '(' at open,
// skipping quoted parts and nested parentheses.
func matchParen(text string, open int) (int, error) {
	depth := 0
	var quote byte
	for i := open; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("unterminated substitution")
}

// splitSubstArgs splits the inside of $(...) into words. Words may be
// quoted with ' or " and may contain nested substitutions.
func splitSubstArgs(body string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '$' && i+1 < len(body) && body[i+1] == '(':
			end, err := matchParen(body, i+1)
			if err != nil {
				return nil, err
			}
			cur.WriteString(body[i : end+1])
			i = end
			inWord = true
		case c == '\'' || c == '"':
			k := strings.IndexByte(body[i+1:], c)
			if k < 0 {
				return nil, fmt.Errorf("unterminated quote")
			}
			cur.WriteString(body[i+1 : i+1+k])
			i += k + 1
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// substArity is how many arguments each substitution takes, at least and
// at most.
var substArity = map[string][2]int{
	"var": {1, 2}, "env": {1, 2}, "optenv": {1, 2}, "find-pkg-share": {1, 1}, "find-pkg-prefix": {1, 1},
	"exec-in-pkg": {2, 2}, "dirname": {0, 0}, "filename": {0, 0}, "command": {1, 2},
	"not": {1, 1}, "and": {2, 2}, "or": {2, 2}, "equals": {2, 2}, "not-equals": {2, 2},
}

// evalSubst evaluates the substitution $(body): its arguments first (they
// may hold substitutions), then the substitution, a lookup or a condition.
func (s *scope) evalSubst(e *element, body string) (string, error) {
	words, err := splitSubstArgs(body)
	if err != nil {
		return "", e.errorf("%v in $(%s)", err, body)
	}
	if len(words) == 0 {
		return "", e.errorf("empty substitution $()")
	}
	// Arguments may themselves hold substitutions.
	for k := 1; k < len(words); k++ {
		if words[k], err = s.substitute(e, words[k]); err != nil {
			return "", err
		}
	}
	name, args := words[0], words[1:]
	arity, ok := substArity[name]
	if !ok {
		return "", unknownSubst(e, name)
	}
	if least, most := arity[0], arity[1]; len(args) < least || len(args) > most {
		if least == most {
			return "", e.errorf("$(%s) takes %d argument(s), got %d", name, least, len(args))
		}
		return "", e.errorf("$(%s) takes %d to %d arguments, got %d", name, least, most, len(args))
	}
	switch name {
	case "not", "and", "or", "equals", "not-equals":
		return evalCondition(e, name, args)
	}
	return s.evalLookup(e, name, args)
}

// unknownSubst is the error of a substitution name launch does not have.
func unknownSubst(e *element, name string) error {
	return e.errorf("unknown substitution $(%s) (supported: var, env, optenv, find-pkg-share, find-pkg-prefix, exec-in-pkg, dirname, filename, command, not, and, or, equals, not-equals)", name)
}

// evalLookup evaluates the substitutions that look a value up: launch
// configurations, the environment, packages, the launch file, a command's
// output. args has the substitution's arity.
func (s *scope) evalLookup(e *element, name string, args []string) (string, error) {
	switch name {
	case "var":
		v, ok := s.configs[args[0]]
		switch {
		case ok:
			return v, nil
		case len(args) == 2:
			return args[1], nil
		}
		return "", e.errorf("launch configuration %q does not exist (declare it with <arg> or <let>, or give a default: $(var %s default))", args[0], args[0])
	case "env", "optenv":
		if v, ok := s.getenv(args[0]); ok {
			return v, nil
		}
		if len(args) == 2 {
			return args[1], nil
		}
		if name == "optenv" {
			return "", nil
		}
		return "", e.errorf("environment variable %q is not set and $(env) has no default", args[0])
	case "find-pkg-share":
		dir, err := s.l.pkgShare(args[0])
		if err != nil {
			return "", e.errorf("%v", err)
		}
		return dir, nil
	case "find-pkg-prefix":
		dir, err := s.l.pkgShare(args[0])
		if err != nil {
			return "", e.errorf("%v", err)
		}
		return s.l.pkgPrefix(args[0], dir), nil
	case "exec-in-pkg":
		p, err := s.l.findExecutable(args[1], args[0])
		if err != nil {
			return "", e.errorf("%v", err)
		}
		return p, nil
	case "dirname":
		return filepath.Dir(s.file), nil
	case "filename":
		return s.file, nil
	case "command":
		onStderr := "fail"
		if len(args) == 2 {
			onStderr = args[1]
		}
		out, err := s.command(args[0], onStderr)
		if err != nil {
			return "", e.errorf("$(command %s): %v", args[0], err)
		}
		return out, nil
	}
	return "", unknownSubst(e, name)
}

// evalCondition evaluates the boolean substitutions. args has the
// substitution's arity.
func evalCondition(e *element, name string, args []string) (string, error) {
	switch name {
	case "not":
		b, err := parseBool(args[0])
		if err != nil {
			return "", e.errorf("$(not): %v", err)
		}
		return boolString(!b), nil
	case "and", "or":
		a, err := parseBool(args[0])
		if err != nil {
			return "", e.errorf("$(%s): %v", name, err)
		}
		b, err := parseBool(args[1])
		if err != nil {
			return "", e.errorf("$(%s): %v", name, err)
		}
		if name == "and" {
			return boolString(a && b), nil
		}
		return boolString(a || b), nil
	case "equals", "not-equals":
		eq := args[0] == args[1]
		if name == "not-equals" {
			eq = !eq
		}
		return boolString(eq), nil
	}
	return "", unknownSubst(e, name)
}

// parseBool reads a condition value the way launch does: true/false in any
// case, or 1/0.
func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean (want true, false, 1 or 0)", v)
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// shorten cuts a substitution's text for an error message.
func shorten(body string) string {
	if len(body) > 80 {
		return body[:77] + "..."
	}
	return body
}

// boundError is a substitution that crossed MaxSubstitutedValue or
// MaxSubstitutedTotal; <let> adds its name to it.
type boundError struct {
	at  error  // the error with the element's file and line
	msg string // the message without them
}

func newBoundError(e *element, format string, args ...any) *boundError {
	msg := fmt.Sprintf(format, args...)
	return &boundError{at: e.errorf("%s", msg), msg: msg}
}

func (b *boundError) Error() string { return b.at.Error() }
