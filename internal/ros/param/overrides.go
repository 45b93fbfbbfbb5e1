package param

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

// NodeParams is one `node: ros__parameters:` block of a parameter file, or
// one -p rule.
type NodeParams struct {
	// Node is the node pattern as a fully qualified name: "/talker",
	// "/ns/talker", "/**", "/ns/*". A key without a leading slash gets one
	// (so a plain "talker:" matches only the node talker in the root
	// namespace, as in rclcpp).
	Node   string
	Params []Parameter
	// Source says where the block came from, for error messages
	// ("file.yaml:3" or "-p").
	Source string
}

// Wildcard reports whether the node pattern contains '*' tokens.
func (np NodeParams) Wildcard() bool { return strings.Contains(np.Node, "*") }

// Matches reports whether the pattern matches a fully qualified node name.
// '*' matches exactly one token, '**' zero or more tokens.
func (np NodeParams) Matches(nodeFQN string) bool {
	return matchTokens(splitPath(np.Node), splitPath(nodeFQN))
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func matchTokens(pat, name []string) bool {
	if len(pat) == 0 {
		return len(name) == 0
	}
	switch pat[0] {
	case "**":
		for i := 0; i <= len(name); i++ {
			if matchTokens(pat[1:], name[i:]) {
				return true
			}
		}
		return false
	case "*":
		return len(name) > 0 && matchTokens(pat[1:], name[1:])
	}
	return len(name) > 0 && pat[0] == name[0] && matchTokens(pat[1:], name[1:])
}

// Overrides collects parameter overrides from --params-file files and -p
// rules in command-line order and resolves them for one node, as rcl and
// rclcpp do.
//
// rcl merges every file and rule into one table of node keys ("/**",
// "/talker", "/ns/*"; a -p rule without a node is "/**") in the order each
// key first appears; a later value under the same key replaces an earlier
// one. rclcpp then walks the keys in that order and applies every key that
// matches the node, so the key that appeared later wins: a `/**` block in a
// later file beats a block naming the node in an earlier one (which is how
// a launch file's parameters={...} override a params file), and a block
// naming the node in a later file beats an earlier -p rule. The declared
// default is below all of them. (rcl keeps "talker" and "/talker" as two
// keys; here they are one, which matters only to a file that spells the
// same node both ways.)
type Overrides struct {
	blocks []NodeParams // in the order added
}

// AddFile parses a ROS 2 parameter file and adds its blocks.
func (o *Overrides) AddFile(path string) error {
	blocks, err := ParseFile(path)
	if err != nil {
		return err
	}
	o.blocks = append(o.blocks, blocks...)
	return nil
}

// AddRule parses a -p rule ("name:=value" or "node:name:=value") and adds it.
func (o *Overrides) AddRule(rule string) error {
	np, err := ParseRule(rule)
	if err != nil {
		return err
	}
	o.blocks = append(o.blocks, np)
	return nil
}

// For returns the overrides that apply to the node with the given fully
// qualified name.
func (o *Overrides) For(nodeFQN string) map[string]Value {
	vals, _ := o.resolve(nodeFQN)
	return vals
}

// Sources returns, for each override of For(nodeFQN), where it came from:
// `file.yaml:12 (node key "/talker")` or `-p`. Errors about a bad override
// quote it.
func (o *Overrides) Sources(nodeFQN string) map[string]string {
	_, src := o.resolve(nodeFQN)
	return src
}

func (o *Overrides) resolve(nodeFQN string) (map[string]Value, map[string]string) {
	out := map[string]Value{}
	src := map[string]string{}
	var keys []string // node keys in the order they first appear
	seen := map[string]bool{}
	for _, b := range o.blocks {
		if !seen[b.Node] {
			seen[b.Node] = true
			keys = append(keys, b.Node)
		}
	}
	for _, key := range keys {
		for _, b := range o.blocks {
			if b.Node != key || !b.Matches(nodeFQN) {
				continue
			}
			for _, p := range b.Params {
				out[p.Name] = p.Value
				switch {
				case b.Source == "-p" && b.Node == "/**":
					src[p.Name] = "-p " + p.Name
				case b.Source == "-p":
					src[p.Name] = "-p " + b.Node + ":" + p.Name
				default:
					src[p.Name] = fmt.Sprintf("params file %s (node key %q)", b.Source, b.Node)
				}
			}
		}
	}
	return out, src
}

// AddParam adds one -p override already split by the command-line parser:
// node "" applies to every node, else node is a node name, /ns/name or a
// wildcard pattern; value is the YAML text.
func (o *Overrides) AddParam(node, name, value string) error {
	rule := name + ":=" + value
	if node != "" {
		rule = node + ":" + rule
	}
	return o.AddRule(rule)
}

// ParseRule parses a -p rule: "name:=value" applies to every node,
// "node:name:=value" (node given as name, /ns/name or a wildcard pattern)
// to matching nodes only. The value is YAML, typed as in parameter files.
func ParseRule(rule string) (NodeParams, error) {
	lhs, text, ok := strings.Cut(rule, ":=")
	if !ok {
		return NodeParams{}, fmt.Errorf("-p %q: expected name:=value", rule)
	}
	node, name := "/**", lhs
	if i := strings.LastIndexByte(lhs, ':'); i >= 0 {
		node, name = lhs[:i], lhs[i+1:]
		if err := validateNodeKey(node); err != nil {
			return NodeParams{}, fmt.Errorf("-p %q: %w", rule, err)
		}
		node = "/" + strings.TrimPrefix(node, "/")
	}
	if err := ValidateName(name); err != nil {
		return NodeParams{}, fmt.Errorf("-p %q: %w", rule, err)
	}
	v, err := ParseValue(text)
	if err != nil {
		return NodeParams{}, fmt.Errorf("-p %q: parameter %q: %w", rule, name, err)
	}
	return NodeParams{Node: node, Params: []Parameter{{Name: name, Value: v}}, Source: "-p"}, nil
}

// ParseValue parses a parameter value written in YAML, as given to
// `-p name:=value` or `ros2 param set`: "1" is an integer, "1.0" a double,
// "true" a bool, "[1, 2]" an integer array, "'1'" a string, and anything
// that is not a canonical bool, int or float is a string.
func ParseValue(text string) (Value, error) {
	if strings.TrimSpace(text) == "" {
		return Value{}, errors.New("empty value (quote it, '', for an empty string)")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return Value{}, fmt.Errorf("value %q is not valid YAML: %w", text, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return Value{}, fmt.Errorf("value %q is not a single YAML value", text)
	}
	n := resolveAlias(doc.Content[0])
	if n.Kind == yaml.MappingNode {
		return Value{}, fmt.Errorf("value %q is a map; a parameter value is a scalar or a list", text)
	}
	return yamlValue(n)
}

// viperKey is where the codec leaves the parsed file inside viper. Viper
// folds map keys to lower case, and ROS node and parameter names are case
// sensitive (robotControlMuxNode), so the codec hands viper one opaque
// value that viper stores and returns untouched.
const viperKey = "ros2_parameter_file"

type fileCodec struct{}

type parsedFile struct{ blocks []NodeParams }

func (fileCodec) Encode(map[string]any) ([]byte, error) {
	return nil, errors.New("writing ROS 2 parameter files is not supported")
}

func (fileCodec) Decode(b []byte, m map[string]any) error {
	blocks, err := parseFileBytes(b)
	if err != nil {
		return err
	}
	m[viperKey] = &parsedFile{blocks: blocks}
	return nil
}

// ParseFile reads a ROS 2 parameter file through viper (which does the file
// handling; a YAML codec registered with viper builds the parameter blocks)
// and returns its blocks in file order. Errors name the file, the node key,
// the parameter and the line.
func ParseFile(path string) ([]NodeParams, error) {
	reg := viper.NewCodecRegistry()
	if err := reg.RegisterCodec("yaml", fileCodec{}); err != nil {
		return nil, fmt.Errorf("params file %s: %w", path, err)
	}
	v := viper.NewWithOptions(viper.WithCodecRegistry(reg))
	v.SetConfigFile(path)
	v.SetConfigType("yaml")
	if err := v.ReadInConfig(); err != nil {
		var pe viper.ConfigParseError
		if errors.As(err, &pe) {
			err = pe.Unwrap()
		}
		return nil, fmt.Errorf("params file %s: %w", path, err)
	}
	pf, ok := v.Get(viperKey).(*parsedFile)
	if !ok { // empty file: the codec stored nothing
		return nil, nil
	}
	for i := range pf.blocks {
		pf.blocks[i].Source = path + ":" + pf.blocks[i].Source
	}
	return pf.blocks, nil
}

func parseFileBytes(b []byte) ([]NodeParams, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	root := resolveAlias(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: the top level must be a map of node names", root.Line)
	}
	var out []NodeParams
	w := &walker{}
	if err := w.nodes(root, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Limits that keep hostile files (alias loops, alias "bombs") from
// exhausting the stack or memory.
const (
	maxNodeDepth  = 32
	maxFileParams = 100000 // counts every key visited, maps included
)

// walker carries the running parameter count of one file.
type walker struct{ visited int }

// nodes descends through node name / namespace keys until it finds
// ros__parameters.
func (w *walker) nodes(m *yaml.Node, path []string, out *[]NodeParams) error {
	if len(path) > maxNodeDepth {
		return fmt.Errorf("line %d: node keys nested deeper than %d levels", m.Line, maxNodeDepth)
	}
	if w.visited += len(m.Content) / 2; w.visited > maxFileParams {
		return fmt.Errorf("line %d: more than %d keys in one file", m.Line, maxFileParams)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], resolveAlias(m.Content[i+1])
		key := k.Value
		if key == "ros__parameters" {
			if len(path) == 0 {
				return fmt.Errorf("line %d: ros__parameters must be under a node name", k.Line)
			}
			node := "/" + strings.Join(path, "/")
			np := NodeParams{Node: node, Source: strconv.Itoa(k.Line)}
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				*out = append(*out, np)
				continue
			}
			if v.Kind != yaml.MappingNode {
				return fmt.Errorf("node %q: line %d: ros__parameters must be a map of parameters", node, v.Line)
			}
			if err := w.params(v, "", &np.Params); err != nil {
				return fmt.Errorf("node %q: %w", node, err)
			}
			*out = append(*out, np)
			continue
		}
		if err := validateNodeKey(key); err != nil {
			return fmt.Errorf("line %d: %w", k.Line, err)
		}
		if v.Kind != yaml.MappingNode {
			return fmt.Errorf("line %d: node key %q must hold a map with ros__parameters", k.Line, joinKey(path, key))
		}
		if err := w.nodes(v, append(append([]string(nil), path...), strings.Trim(key, "/")), out); err != nil {
			return err
		}
	}
	return nil
}

func joinKey(path []string, key string) string {
	return "/" + strings.Join(append(append([]string(nil), path...), strings.Trim(key, "/")), "/")
}

var nodeToken = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*|\*|\*\*)$`)

// validateNodeKey checks a node name, namespace or pattern key.
func validateNodeKey(key string) error {
	t := strings.TrimPrefix(key, "/")
	if t == "" {
		return fmt.Errorf("node key %q is empty", key)
	}
	for _, tok := range strings.Split(t, "/") {
		if !nodeToken.MatchString(tok) {
			return fmt.Errorf("node key %q: %q is not a valid node name token", key, tok)
		}
	}
	return nil
}

func (w *walker) params(m *yaml.Node, prefix string, out *[]Parameter) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], resolveAlias(m.Content[i+1])
		if w.visited++; w.visited > maxFileParams {
			return fmt.Errorf("line %d: more than %d parameter keys in one file", k.Line, maxFileParams)
		}
		name := k.Value
		if prefix != "" {
			name = prefix + "." + k.Value
		}
		if err := ValidateName(name); err != nil {
			return fmt.Errorf("line %d: %w", k.Line, err)
		}
		if v.Kind == yaml.MappingNode {
			if err := w.params(v, name, out); err != nil {
				return err
			}
			continue
		}

		val, err := yamlValue(v)
		if err != nil {
			return fmt.Errorf("parameter %q: line %d: %w", name, v.Line, err)
		}
		*out = append(*out, Parameter{Name: name, Value: val})
	}
	return nil
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

var (
	intRE   = regexp.MustCompile(`^[-+]?[0-9]+$`)
	floatRE = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
)

// yamlValue types a scalar or a list the way rcl_yaml_param_parser does:
// quoted scalars are strings, plain scalars are bools, canonical integers,
// canonical floats (incl. .inf) or else strings; lists must be homogeneous.
func yamlValue(n *yaml.Node) (Value, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		return scalarValue(n)
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			return Value{typ: TypeStringArray, emptyList: true}, nil
		}
		elems := make([]Value, len(n.Content))
		for i, c := range n.Content {
			c = resolveAlias(c)
			if c.Kind != yaml.ScalarNode {
				return Value{}, fmt.Errorf("list element %d is not a scalar (nested lists and maps are not parameter values)", i)
			}
			v, err := scalarValue(c)
			if err != nil {
				return Value{}, fmt.Errorf("list element %d: %w", i, err)
			}
			if v.typ != elems[0].typ && i > 0 {
				return Value{}, fmt.Errorf("list mixes %s and %s elements (lists must be homogeneous)", elems[0].typ, v.typ)
			}
			elems[i] = v
		}
		return arrayOf(elems), nil
	case yaml.MappingNode:
		return Value{}, errors.New("a map is not a parameter value")
	}
	return Value{}, fmt.Errorf("unsupported YAML node kind %d", n.Kind)
}

func arrayOf(elems []Value) Value {
	switch elems[0].typ {
	case TypeBool:
		out := make([]bool, len(elems))
		for i, e := range elems {
			out[i] = e.b
		}
		return Value{typ: TypeBoolArray, bools: out}
	case TypeInteger:
		out := make([]int64, len(elems))
		for i, e := range elems {
			out[i] = e.i
		}
		return Value{typ: TypeIntegerArray, ints: out}
	case TypeDouble:
		out := make([]float64, len(elems))
		for i, e := range elems {
			out[i] = e.f
		}
		return Value{typ: TypeDoubleArray, floats: out}
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		out[i] = e.s
	}
	return Value{typ: TypeStringArray, strs: out}
}

func scalarValue(n *yaml.Node) (Value, error) {
	s := n.Value
	if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 ||
		n.Tag == "!!str" && n.Style&yaml.TaggedStyle != 0 {
		return StringValue(s), nil
	}
	if n.Tag == "!!null" {
		return Value{}, errors.New("value is empty (null); quote it for an empty string")
	}
	switch s {
	case "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON":
		return BoolValue(true), nil
	case "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF":
		return BoolValue(false), nil
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF":
		return DoubleValue(math.Inf(1)), nil
	case "-.inf", "-.Inf", "-.INF":
		return DoubleValue(math.Inf(-1)), nil
	case ".nan", ".NaN", ".NAN":
		return Value{}, errors.New("NaN is not a valid parameter value")
	}
	if intRE.MatchString(s) {
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Value{}, fmt.Errorf("integer %s is out of the int64 range", s)
		}
		return IntegerValue(i), nil
	}
	if floatRE.MatchString(s) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) {
			return Value{}, fmt.Errorf("float %s is out of the float64 range", s)
		}
		return DoubleValue(f), nil
	}
	return StringValue(s), nil
}
