package launch

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// typedValue types a parameter value string as launch_ros does: the text
// is read as YAML, so 1 is an integer, 1.0 a double, true a bool, [1, 2] an
// integer array and anything else a string. typ "str" keeps the text.
func typedValue(text, typ string) (any, error) {
	switch typ {
	case "", "auto":
	case "str", "string":
		return text, nil
	default:
		return nil, fmt.Errorf("type %q is not supported (use str, or leave it out)", typ)
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(text), &n); err != nil || len(n.Content) == 0 {
		return text, nil //nolint:nilerr // not YAML: a plain string
	}
	return nodeValue(n.Content[0], text)
}

func nodeValue(n *yaml.Node, text string) (any, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int":
			var i int64
			if err := n.Decode(&i); err != nil {
				return nil, fmt.Errorf("integer %s out of range", n.Value)
			}
			return i, nil
		case "!!float":
			var f float64
			if err := n.Decode(&f); err != nil {
				return nil, fmt.Errorf("bad number %s", n.Value)
			}
			return f, nil
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				return nil, fmt.Errorf("bad bool %s", n.Value)
			}
			return b, nil
		}
		return n.Value, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("array elements must be scalars in %q", text)
			}
			v, err := nodeValue(c, text)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return text, nil
}

// yamlScalar writes a typed parameter value so that rcl reads back the same
// type: doubles always carry a '.' or exponent, strings are double-quoted.
func yamlScalar(v any) string {
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		switch {
		case math.IsNaN(x):
			return ".nan"
		case math.IsInf(x, 1):
			return ".inf"
		case math.IsInf(x, -1):
			return "-.inf"
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		} else if strings.ContainsAny(s, "eE") && !strings.Contains(s, ".") {
			i := strings.IndexAny(s, "eE")
			s = s[:i] + ".0" + s[i:]
		}
		return s
	case string:
		b, _ := json.Marshal(x)
		return string(b)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = yamlScalar(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprintf("%q", fmt.Sprint(v))
}

// unsafeChars are replaced in file names made from labels.
var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// plainKey matches names that YAML reads back unchanged without quotes.
var plainKey = regexp.MustCompile(`^[A-Za-z_/][A-Za-z0-9_./*]*$`)

func yamlKey(k string) string {
	if plainKey.MatchString(k) {
		return k
	}
	return yamlScalar(k)
}

// ParamsYAML renders inline parameters as a ROS 2 parameter file keyed by
// the node's fully qualified name, or /** when it is not fully known.
func (p *Process) ParamsYAML(vals []ParamValue) string {
	key := p.FQN()
	if key == "" {
		key = "/**"
	}
	var b strings.Builder
	b.WriteString(yamlKey(key) + ":\n  ros__parameters:\n")
	for _, v := range vals {
		fmt.Fprintf(&b, "    %s: %s\n", yamlKey(v.Name), yamlScalar(v.Value))
	}
	return b.String()
}

// Command returns the full command line of the process (launch prefix,
// executable, arguments, --ros-args block), writing any inline parameters
// to a file launch_params_<label>.yaml in tmpDir.
func (p *Process) Command(tmpDir string) ([]string, error) {
	argv := append([]string{}, p.LaunchPrefix...)
	argv = append(argv, p.Path)
	argv = append(argv, p.Args...)
	if p.Kind != KindNode {
		return argv, nil
	}
	argv = append(argv, "--ros-args")
	if p.Name != "" {
		argv = append(argv, "-r", "__node:="+p.Name)
	}
	if p.Namespace != "" {
		argv = append(argv, "-r", "__ns:="+p.Namespace)
	}
	for i, ps := range p.Params {
		f := ps.File
		if f == "" {
			f = filepath.Join(tmpDir, fmt.Sprintf("launch_params_%s_%d.yaml", unsafeChars.ReplaceAllString(p.Label, "_"), i))
			content := ps.Content
			if content == nil {
				content = []byte(p.ParamsYAML(ps.Inline))
			}
			if err := os.WriteFile(f, content, 0o600); err != nil {
				return nil, fmt.Errorf("write parameters of %s: %w", p.Label, err)
			}
		}
		argv = append(argv, "--params-file", f)
	}
	for _, r := range p.Remaps {
		argv = append(argv, "-r", r[0]+":="+r[1])
	}
	return append(argv, p.RosArgs...), nil
}

// Environ returns the environment of the process: base without the names
// in p.Unset, with p.Env applied (later entries win).
func (p *Process) Environ(base []string) []string {
	key := func(kv string) string { return kv[:strings.IndexByte(kv+"=", '=')] }
	drop := map[string]bool{}
	for _, u := range p.Unset {
		drop[u] = true
	}
	final := map[string]string{}
	var order []string
	for _, kv := range p.Env {
		k := key(kv)
		if _, ok := final[k]; !ok {
			order = append(order, k)
		}
		final[k] = kv
		drop[k] = true
	}
	var out []string
	for _, kv := range base {
		if !drop[key(kv)] {
			out = append(out, kv)
		}
	}
	for _, k := range order {
		out = append(out, final[k])
	}
	return out
}
