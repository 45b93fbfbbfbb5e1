package ros

import (
	"fmt"
	"strings"
)

// Length limits of ROS names (rmw/validate_*.h).
const (
	// MaxNodeNameLength is RMW_NODE_NAME_MAX_NAME_LENGTH.
	MaxNodeNameLength = 255
	// MaxNamespaceLength is RMW_NAMESPACE_MAX_LENGTH (topic limit minus 2).
	MaxNamespaceLength = 245
	// MaxTopicNameLength is RMW_TOPIC_MAX_NAME_LENGTH: the DDS limit of 255
	// minus room for the "rt/", "rq/", "rr/" prefixes and suffixes.
	MaxTopicNameLength = 247
)

// NameError reports an invalid node name, namespace or topic/service name.
// Index is the byte offset of the offending character (or -1).
type NameError struct {
	Kind   string // "node name", "namespace", "topic name", ...
	Name   string
	Reason string
	Index  int
}

// Error formats the name, the reason and the index.
func (e *NameError) Error() string {
	if e.Index >= 0 {
		return fmt.Sprintf("invalid %s %q: %s (at index %d)", e.Kind, e.Name, e.Reason, e.Index)
	}
	return fmt.Sprintf("invalid %s %q: %s", e.Kind, e.Name, e.Reason)
}

func isAlnumUnderscore(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// ValidateNodeName checks a node name as rmw_validate_node_name does:
// non-empty, only [A-Za-z0-9_], not starting with a digit, at most 255
// characters.
func ValidateNodeName(name string) error {
	fail := func(reason string, i int) error {
		return &NameError{Kind: "node name", Name: name, Reason: reason, Index: i}
	}
	if name == "" {
		return fail("must not be empty", -1)
	}
	for i := 0; i < len(name); i++ {
		if !isAlnumUnderscore(name[i]) {
			return fail("must contain only alphanumeric characters and underscores", i)
		}
	}
	if isDigit(name[0]) {
		return fail("must not start with a number", 0)
	}
	if len(name) > MaxNodeNameLength {
		return fail(fmt.Sprintf("must not be longer than %d characters", MaxNodeNameLength), MaxNodeNameLength)
	}
	return nil
}

// validateAbsolute checks a fully qualified name (namespace or topic):
// starts with '/', tokens of [A-Za-z0-9_] not starting with a digit, no
// empty tokens, no trailing '/' unless the whole name is "/".
func validateAbsolute(kind, name string, maxLen int, allowRoot bool) error {
	fail := func(reason string, i int) error {
		return &NameError{Kind: kind, Name: name, Reason: reason, Index: i}
	}
	if name == "" {
		return fail("must not be empty", -1)
	}
	if name[0] != '/' {
		return fail("must be absolute (start with '/')", 0)
	}
	if name == "/" {
		if allowRoot {
			return nil
		}
		return fail("must not end with '/'", 0)
	}
	if name[len(name)-1] == '/' {
		return fail("must not end with '/'", len(name)-1)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '/' {
			if i+1 < len(name) && name[i+1] == '/' {
				return fail("must not contain repeated '/'", i+1)
			}
			if i+1 < len(name) && isDigit(name[i+1]) {
				return fail("a token must not start with a number", i+1)
			}
			continue
		}
		if !isAlnumUnderscore(c) {
			return fail("must contain only alphanumeric characters, underscores and '/'", i)
		}
	}
	if len(name) > maxLen {
		return fail(fmt.Sprintf("must not be longer than %d characters", maxLen), maxLen)
	}
	return nil
}

// ValidateNamespace checks an absolute node namespace as
// rmw_validate_namespace does ("/" is valid).
func ValidateNamespace(ns string) error {
	return validateAbsolute("namespace", ns, MaxNamespaceLength, true)
}

// ValidateFullTopicName checks a fully qualified (expanded) topic or service
// name as rmw_validate_full_topic_name does.
func ValidateFullTopicName(name string) error {
	return validateAbsolute("topic name", name, MaxTopicNameLength, false)
}

// ValidateTopicName checks a topic or service name before expansion, as
// rcl_validate_topic_name does: relative, absolute and private ("~", "~/x")
// names with balanced {substitutions} are accepted.
func ValidateTopicName(name string) error {
	fail := func(reason string, i int) error {
		return &NameError{Kind: "topic name", Name: name, Reason: reason, Index: i}
	}
	if name == "" {
		return fail("must not be empty", -1)
	}
	if isDigit(name[0]) {
		return fail("must not start with a number", 0)
	}
	if name[len(name)-1] == '/' {
		return fail("must not end with '/'", len(name)-1)
	}
	open := -1
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '~':
			if i != 0 {
				return fail("'~' is only allowed as the first character", i)
			}
			if len(name) > 1 && name[1] != '/' {
				return fail("'~' must be followed by '/'", 1)
			}
		case c == '{':
			if open >= 0 {
				return fail("nested '{' in substitution", i)
			}
			open = i
			if i+1 < len(name) && isDigit(name[i+1]) {
				return fail("a substitution must not start with a number", i+1)
			}
		case c == '}':
			if open < 0 {
				return fail("unmatched '}'", i)
			}
			if i == open+1 {
				return fail("empty substitution '{}'", i)
			}
			open = -1
		case c == '/':
			if i+1 < len(name) && name[i+1] == '/' {
				return fail("must not contain repeated '/'", i+1)
			}
			if i+1 < len(name) && isDigit(name[i+1]) {
				return fail("a token must not start with a number", i+1)
			}
			if open >= 0 {
				return fail("'/' inside a substitution", i)
			}
		case isAlnumUnderscore(c):
		default:
			return fail("must contain only alphanumeric characters, underscores, '/', '~' and '{}'", i)
		}
	}
	if open >= 0 {
		return fail("unbalanced '{'", open)
	}
	return nil
}

// NormalizeNamespace applies rcl's namespace normalisation: "" becomes "/"
// and a missing leading '/' is added. It does not validate.
func NormalizeNamespace(ns string) string {
	if ns == "" {
		return "/"
	}
	if ns[0] != '/' {
		return "/" + ns
	}
	return ns
}

// FullyQualifiedNodeName joins a namespace and a node name: "/talker",
// "/demo/talker".
func FullyQualifiedNodeName(namespace, name string) string {
	if namespace == "/" || namespace == "" {
		return "/" + name
	}
	return namespace + "/" + name
}

// LoggerName returns the rcl logger name of a node: the namespace without the
// leading '/', with '/' replaced by '.', then '.' and the node name
// ("/demo/sub", "talker" -> "demo.sub.talker").
func LoggerName(namespace, name string) string {
	ns := strings.Trim(namespace, "/")
	if ns == "" {
		return name
	}
	return strings.ReplaceAll(ns, "/", ".") + "." + name
}

// ExpandTopicName turns a topic or service name into a fully qualified name
// for the node nodeName in namespace (as rcl_expand_topic_name): "~" is the
// node's FQN, {node}, {ns} and {namespace} are substituted, relative names
// are put under the namespace. The node name, the namespace and the result
// are validated.
func ExpandTopicName(name, nodeName, namespace string) (string, error) {
	if err := ValidateTopicName(name); err != nil {
		return "", err
	}
	if err := ValidateNodeName(nodeName); err != nil {
		return "", err
	}
	namespace = NormalizeNamespace(namespace)
	if err := ValidateNamespace(namespace); err != nil {
		return "", err
	}
	fqn := FullyQualifiedNodeName(namespace, nodeName)
	out := name
	switch {
	case out == "~":
		out = fqn
	case strings.HasPrefix(out, "~/"):
		out = fqn + out[1:]
	}
	if strings.ContainsRune(out, '{') {
		var b strings.Builder
		for len(out) > 0 {
			i := strings.IndexByte(out, '{')
			if i < 0 {
				b.WriteString(out)
				break
			}
			j := strings.IndexByte(out[i:], '}')
			if j < 0 {
				return "", &NameError{Kind: "topic name", Name: name, Reason: "unbalanced '{'", Index: i}
			}
			j += i
			b.WriteString(out[:i])
			switch key := out[i+1 : j]; key {
			case "node":
				b.WriteString(nodeName)
			case "ns", "namespace":
				b.WriteString(namespace)
			default:
				return "", &NameError{Kind: "topic name", Name: name, Reason: fmt.Sprintf("unknown substitution {%s}", key), Index: i}
			}
			out = out[j+1:]
		}
		out = b.String()
		if namespace == "/" {
			// "{ns}/x" in the root namespace is "/x", not "//x".
			out = strings.ReplaceAll(out, "//", "/")
		}
	}
	if out[0] != '/' {
		if namespace == "/" {
			out = "/" + out
		} else {
			out = namespace + "/" + out
		}
	}
	if err := ValidateFullTopicName(out); err != nil {
		return "", err
	}
	return out, nil
}

// RemapKind says which names a remap rule applies to.
type RemapKind int

// Remap rule kinds.
const (
	// RemapTopicOrService applies to topic and service names.
	RemapTopicOrService RemapKind = iota
	// RemapTopic applies to topic names only ("rostopic://" match side).
	RemapTopic
	// RemapService applies to service names only ("rosservice://").
	RemapService
	// RemapNodeName renames the node ("__node:=" or "__name:=").
	RemapNodeName
	// RemapNamespace sets the node namespace ("__ns:=").
	RemapNamespace
)

// RemapRule is one "-r [node:]from:=to" rule from --ros-args.
type RemapRule struct {
	// Node limits the rule to nodes with this name ("" = all nodes).
	Node string
	Kind RemapKind
	// Match is the name to match (URL scheme removed); empty for node-name
	// and namespace rules.
	Match string
	// Replacement is the new name (or node name / namespace).
	Replacement string
}

// String formats the rule as it would appear on the command line.
func (r RemapRule) String() string {
	var b strings.Builder
	if r.Node != "" {
		b.WriteString(r.Node + ":")
	}
	switch r.Kind {
	case RemapNodeName:
		b.WriteString("__node")
	case RemapNamespace:
		b.WriteString("__ns")
	case RemapTopic:
		b.WriteString("rostopic://" + r.Match)
	case RemapService:
		b.WriteString("rosservice://" + r.Match)
	default:
		b.WriteString(r.Match)
	}
	b.WriteString(":=" + r.Replacement)
	return b.String()
}

// ParseRemapRule parses the argument of -r/--remap.
func ParseRemapRule(s string) (RemapRule, error) {
	var r RemapRule
	sep := strings.Index(s, ":=")
	if sep < 0 {
		return r, fmt.Errorf("remap rule %q: missing ':='", s)
	}
	lhs, rhs := s[:sep], s[sep+2:]
	if rhs == "" {
		return r, fmt.Errorf("remap rule %q: empty replacement", s)
	}
	// A node prefix is "name:" before the match side; URL schemes contain
	// "://" and are not node prefixes.
	for _, scheme := range []string{"rostopic://", "rosservice://"} {
		if i := strings.Index(lhs, scheme); i >= 0 {
			if i > 0 {
				if lhs[i-1] != ':' {
					return r, fmt.Errorf("remap rule %q: malformed node prefix", s)
				}
				r.Node = lhs[:i-1]
			}
			if scheme == "rostopic://" {
				r.Kind = RemapTopic
			} else {
				r.Kind = RemapService
			}
			lhs = lhs[i+len(scheme):]
			goto matched
		}
	}
	if i := strings.IndexByte(lhs, ':'); i >= 0 {
		r.Node, lhs = lhs[:i], lhs[i+1:]
	}
	switch lhs {
	case "__node", "__name":
		r.Kind = RemapNodeName
	case "__ns":
		r.Kind = RemapNamespace
	}
matched:
	if r.Node != "" {
		if err := ValidateNodeName(r.Node); err != nil {
			return r, fmt.Errorf("remap rule %q: node prefix: %w", s, err)
		}
	}
	if strings.Contains(lhs, "*") || strings.Contains(rhs, "*") {
		return r, fmt.Errorf("remap rule %q: wildcard '*' is not implemented", s)
	}
	if strings.Contains(lhs, `\`) || strings.Contains(rhs, `\`) {
		return r, fmt.Errorf("remap rule %q: backreferences are not implemented", s)
	}
	switch r.Kind {
	case RemapNodeName:
		if err := ValidateNodeName(rhs); err != nil {
			return r, fmt.Errorf("remap rule %q: %w", s, err)
		}
	case RemapNamespace:
		if err := ValidateNamespace(rhs); err != nil {
			return r, fmt.Errorf("remap rule %q: %w", s, err)
		}
	default:
		if err := ValidateTopicName(lhs); err != nil {
			return r, fmt.Errorf("remap rule %q: match side: %w", s, err)
		}
		if err := ValidateTopicName(rhs); err != nil {
			return r, fmt.Errorf("remap rule %q: replacement: %w", s, err)
		}
		r.Match = lhs
	}
	r.Replacement = rhs
	return r, nil
}

// remapNodeName returns the node name after the first matching __node rule.
func remapNodeName(rules []RemapRule, name string) string {
	for _, r := range rules {
		if r.Kind == RemapNodeName && (r.Node == "" || r.Node == name) {
			return r.Replacement
		}
	}
	return name
}

// remapNamespace returns the namespace after the first matching __ns rule
// (name is the already remapped node name).
func remapNamespace(rules []RemapRule, name, ns string) string {
	for _, r := range rules {
		if r.Kind == RemapNamespace && (r.Node == "" || r.Node == name) {
			return r.Replacement
		}
	}
	return ns
}

// remapName applies the first matching topic/service rule to the fully
// qualified name fqn of the node nodeName in namespace. service selects
// which URL-scheme rules apply. Match and replacement are expanded for the
// node and compared exactly, as rcl does.
func remapName(rules []RemapRule, fqn string, service bool, nodeName, namespace string) (string, error) {
	for _, r := range rules {
		switch r.Kind {
		case RemapTopicOrService:
		case RemapTopic:
			if service {
				continue
			}
		case RemapService:
			if !service {
				continue
			}
		default:
			continue
		}
		if r.Node != "" && r.Node != nodeName {
			continue
		}
		m, err := ExpandTopicName(r.Match, nodeName, namespace)
		if err != nil {
			return "", fmt.Errorf("remap rule %s: %w", r, err)
		}
		if m != fqn {
			continue
		}
		out, err := ExpandTopicName(r.Replacement, nodeName, namespace)
		if err != nil {
			return "", fmt.Errorf("remap rule %s: %w", r, err)
		}
		return out, nil
	}
	return fqn, nil
}
