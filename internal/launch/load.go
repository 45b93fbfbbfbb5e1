package launch

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DefaultPackage is the package whose share directory and executables the
// launcher finds without an ament install.
const DefaultPackage = "fsmnodes"

// Environment variables that override where the launcher looks.
const (
	// EnvShare names the share directory of fsmnodes (the directory holding
	// launch/ and params/).
	EnvShare = "FSMNODES_SHARE"
	// EnvBin names the directory holding the fsmnodes executables.
	EnvBin = "FSMNODES_BIN"
)

// Options configure Load. The zero value works: arguments come only from
// defaults, directories are found as described on each field.
type Options struct {
	// (optional) Args are launch arguments given on the command line
	// (name:=value), in order; later entries win.
	Args [][2]string
	// (optional) ShareDir is the share directory of DefaultPackage for
	// $(find-pkg-share fsmnodes). Default: $FSMNODES_SHARE, else the
	// nearest directory at or above the launch file holding package.xml or
	// launch/ and params/, else <prefix>/share/fsmnodes from
	// AMENT_PREFIX_PATH.
	ShareDir string
	// (optional) BinDir holds the executables of DefaultPackage. Default:
	// $FSMNODES_BIN, else lib/fsmnodes of an install prefix, else bin/
	// next to the share directory (a repository checkout), else the
	// directory of the running program.
	BinDir string
	// (optional) LookupEnv reads the environment; default os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// (optional) Warn receives warnings found while loading (a $(command)
	// with on_stderr warn); default: printed to standard error as
	// "[WARNING] [launch]: ...".
	Warn func(msg string)
}

// Kind says whether a process is a ROS node or a plain executable.
type Kind int

// Process kinds.
const (
	KindNode Kind = iota
	KindExecutable
)

// ParamSource is one --params-file of a node: a file given with <param
// from=...>, or inline values written to a temporary file at start.
type ParamSource struct {
	File   string       // path of a YAML file; empty for inline values
	Inline []ParamValue // inline <param name value/> entries, in order
	// Content is a parameter file after substitution (<param from
	// allow_substs="true">), written to a temporary file at start; Origin
	// is the file it came from.
	Content []byte
	Origin  string
}

// ParamValue is one inline parameter with its value already typed the way
// launch_ros types it (YAML rules: 1 int, 1.0 double, true bool, text string).
type ParamValue struct {
	Name  string
	Value any // bool, int64, float64, string, or []any of those
}

// Process is one process to start.
type Process struct {
	Kind Kind
	// Label prefixes output lines: "<exec>-<n>" like ros2 launch.
	Label      string
	Package    string
	Executable string // exec attribute, or the first word of cmd
	Path       string // resolved executable path
	// Args are the user arguments (the args attribute, or the rest of cmd).
	Args []string
	// Node name and namespace as given after substitution ("" = unset).
	Name, Namespace string
	Params          []ParamSource
	Remaps          [][2]string
	// RosArgs are extra arguments from the ros_args attribute.
	RosArgs      []string
	LaunchPrefix []string
	// Env holds KEY=VALUE entries applied over the launcher's environment;
	// Unset names variables to remove.
	Env   []string
	Unset []string
	Cwd   string
	// Output is "screen", "log" or "both".
	Output            string
	Respawn           bool
	RespawnDelay      time.Duration
	RespawnMaxRetries int // -1 = unlimited
	// ShutdownOnExit stops the whole launch when this process exits.
	ShutdownOnExit bool
	SigtermTimeout time.Duration
	SigkillTimeout time.Duration
	// File and Line locate the <node> or <executable> element.
	File string
	Line int
}

// FQN returns the node's fully qualified name when both name and namespace
// are known, else "".
func (p *Process) FQN() string {
	if p.Name == "" || p.Namespace == "" {
		return ""
	}
	if p.Namespace == "/" {
		return "/" + p.Name
	}
	return p.Namespace + "/" + p.Name
}

// Description is an evaluated launch file.
type Description struct {
	Processes []*Process
	// Logs are the messages of <log> actions, in order.
	Logs []string
	// Args lists the launch arguments declared by the files, with their
	// final values and descriptions, for --show-args.
	Args []DeclaredArg
}

// DeclaredArg is one <arg> declaration.
type DeclaredArg struct {
	Name, Value, Default, Description string
	HasDefault                        bool
	Choices                           []string
}

type loader struct {
	opts     Options
	desc     *Description
	counter  int
	shareDir string
	depth    int
	// includeArgs names the arguments the <include> being evaluated passes
	// (nil at the top level): an <arg> without default must be among them.
	includeArgs map[string]bool
	// substituted counts the bytes every substitution of this load has
	// produced, bounded by MaxSubstitutedTotal.
	substituted int64
}

// scope is the set of launch configurations and pushed state visible to an
// action.
type scope struct {
	l       *loader
	file    string
	configs map[string]string
	ns      string // pushed ROS namespace, absolute, "" when none
	env     []envOp
	remaps  [][2]string
}

type envOp struct {
	name, value string
	unset       bool
}

func (s *scope) child() *scope {
	c := *s
	c.configs = make(map[string]string, len(s.configs))
	for k, v := range s.configs {
		c.configs[k] = v
	}
	c.env = append([]envOp(nil), s.env...)
	c.remaps = append([][2]string(nil), s.remaps...)
	return &c
}

func (s *scope) getenv(name string) (string, bool) {
	for i := len(s.env) - 1; i >= 0; i-- {
		if s.env[i].name == name {
			return s.env[i].value, !s.env[i].unset
		}
	}
	return s.l.lookupEnv(name)
}

func (l *loader) warnf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if l.opts.Warn != nil {
		l.opts.Warn(msg)
		return
	}
	fmt.Fprintf(os.Stderr, "[WARNING] [launch]: %s\n", msg)
}

func (l *loader) lookupEnv(name string) (string, bool) {
	if l.opts.LookupEnv != nil {
		return l.opts.LookupEnv(name)
	}
	return os.LookupEnv(name)
}

// Load reads and evaluates the launch file at path.
func Load(path string, opts Options) (*Description, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("launch file %s: %w", path, err)
	}
	l := &loader{opts: opts, desc: &Description{}}
	l.shareDir = l.discoverShare(filepath.Dir(abs))
	s := &scope{l: l, file: abs, configs: map[string]string{}}
	for _, a := range opts.Args {
		s.configs[a[0]] = a[1]
	}
	if err := l.loadFile(s, abs); err != nil {
		return nil, err
	}
	return l.desc, nil
}

// ParseArgs splits command-line launch arguments of the form name:=value.
func ParseArgs(args []string) ([][2]string, error) {
	var out [][2]string
	for _, a := range args {
		i := strings.Index(a, ":=")
		if i <= 0 {
			return nil, fmt.Errorf("launch argument %q must have the form name:=value", a)
		}
		out = append(out, [2]string{a[:i], a[i+2:]})
	}
	return out, nil
}

func (l *loader) loadFile(s *scope, path string) error {
	if l.depth > 32 {
		return fmt.Errorf("%s: includes nested more than 32 deep (an include loop?)", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("launch file: %w", err)
	}
	if ext := filepath.Ext(path); ext == ".py" || ext == ".yaml" || ext == ".yml" {
		return fmt.Errorf("%s: only XML launch files are supported (got %s)", path, ext)
	}
	root, err := parseXML(path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	if root.tag != "launch" {
		return root.errorf("root element must be <launch>, got <%s>", root.tag)
	}
	if err := root.checkAttrs("version"); err != nil {
		return err
	}
	s.file = path
	return l.actions(s, root.children)
}

// actions evaluates a list of action elements in order.
func (l *loader) actions(s *scope, elems []*element) error {
	for _, e := range elems {
		if err := l.action(s, e); err != nil {
			return err
		}
	}
	return nil
}

// condition evaluates the if/unless attributes of e.
func (s *scope) condition(e *element) (bool, error) {
	if v, ok := e.attr("if"); ok {
		v, err := s.substitute(e, v)
		if err != nil {
			return false, err
		}
		b, err := parseBool(v)
		if err != nil {
			return false, e.errorf("if: %v", err)
		}
		if !b {
			return false, nil
		}
	}
	if v, ok := e.attr("unless"); ok {
		v, err := s.substitute(e, v)
		if err != nil {
			return false, err
		}
		b, err := parseBool(v)
		if err != nil {
			return false, e.errorf("unless: %v", err)
		}
		if b {
			return false, nil
		}
	}
	return true, nil
}

// get returns the substituted value of an attribute, or def when absent.
func (s *scope) get(e *element, name, def string) (string, error) {
	v, ok := e.attr(name)
	if !ok {
		return def, nil
	}
	return s.substitute(e, v)
}

// need returns the substituted value of a required attribute.
func (s *scope) need(e *element, name string) (string, error) {
	v, ok := e.attr(name)
	if !ok {
		return "", e.errorf("<%s> needs the attribute %q", e.tag, name)
	}
	return s.substitute(e, v)
}

func noChildren(e *element) error {
	if len(e.children) > 0 {
		return e.children[0].errorf("unknown tag <%s> inside <%s> (it takes no children)", e.children[0].tag, e.tag)
	}
	return nil
}

// actionTag is one action tag of a launch file: the attributes it takes
// besides if and unless, whether it takes children, and what it does.
type actionTag struct {
	attrs []string
	leaf  bool // takes no children
	run   func(l *loader, s *scope, e *element) error
}

// actionTags are the action tags, by name (ros2 launch also takes the
// dashed spellings). Set in init: the handlers of nested actions refer back
// to it through action.
var actionTags map[string]actionTag

func init() {
	nodeAttrs := []string{"pkg", "exec", "name", "namespace", "output", "respawn", "respawn_delay",
		"respawn_max_retries", "args", "ros_args", "launch-prefix", "exec_name", "cwd", "on_exit",
		"sigterm_timeout", "sigkill_timeout"}
	execAttrs := []string{"cmd", "name", "output", "cwd", "launch-prefix", "respawn", "respawn_delay",
		"respawn_max_retries", "on_exit", "sigterm_timeout", "sigkill_timeout", "shell"}
	actionTags = map[string]actionTag{
		"arg":                {attrs: []string{"name", "default", "description"}, run: (*loader).arg},
		"let":                {attrs: []string{"name", "value"}, leaf: true, run: (*loader).let},
		"node":               {attrs: nodeAttrs, run: (*loader).node},
		"executable":         {attrs: execAttrs, run: (*loader).executable},
		"group":              {attrs: []string{"scoped", "forwarding"}, run: (*loader).group},
		"push_ros_namespace": {attrs: []string{"namespace"}, leaf: true, run: (*loader).pushNamespace},
		"include":            {attrs: []string{"file"}, run: (*loader).include},
		"set_env":            {attrs: []string{"name", "value"}, leaf: true, run: (*loader).setEnv},
		"unset_env":          {attrs: []string{"name"}, leaf: true, run: (*loader).unsetEnv},
		"set_remap":          {attrs: []string{"from", "to"}, leaf: true, run: (*loader).setRemap},
		"log":                {attrs: []string{"message"}, leaf: true, run: (*loader).log},
	}
	for _, t := range []string{"push_ros_namespace", "set_env", "unset_env", "set_remap"} {
		actionTags[strings.ReplaceAll(t, "_", "-")] = actionTags[t]
	}
}

func (l *loader) action(s *scope, e *element) error {
	t, ok := actionTags[e.tag]
	switch {
	case e.tag == "lifecycle_node" || e.tag == "lifecycle-node":
		// ros2 launch (Humble, Jazzy) has no XML form of LifecycleNode either;
		// our managed nodes start themselves (their autostart parameter).
		return e.errorf("unknown tag <%s>: ROS 2 Humble and Jazzy launch files have no lifecycle nodes in XML; use <node> (a managed node configures and activates itself unless its parameter autostart is false)", e.tag)
	case !ok:
		return e.errorf("unknown tag <%s> (supported: arg, let, node, executable, group, push_ros_namespace, include, set_env, unset_env, set_remap, log)", e.tag)
	}
	if err := e.checkAttrs(append(t.attrs[:len(t.attrs):len(t.attrs)], "if", "unless")...); err != nil {
		return err
	}
	ok, err := s.condition(e)
	if err != nil || !ok {
		return err
	}
	if t.leaf {
		if err := noChildren(e); err != nil {
			return err
		}
	}
	return t.run(l, s, e)
}

func (l *loader) let(s *scope, e *element) error {
	name, err := s.need(e, "name")
	if err != nil {
		return err
	}
	v, err := s.need(e, "value")
	if err != nil {
		// A bound crossed deep in a chain of <let>s is found by the
		// configuration's name.
		var be *boundError
		if errors.As(err, &be) {
			return e.errorf("<let name=%q>: %s", name, be.msg)
		}
		return err
	}
	s.configs[name] = v
	return nil
}

func (l *loader) pushNamespace(s *scope, e *element) error {
	ns, err := s.need(e, "namespace")
	if err != nil {
		return err
	}
	s.ns = joinNamespace(s.ns, ns)
	// launch_ros keeps the pushed namespace in this launch configuration,
	// so $(var ros_namespace '') names it there too.
	s.configs[RosNamespaceConfig] = s.ns
	return nil
}

func (l *loader) setEnv(s *scope, e *element) error {
	name, err := s.need(e, "name")
	if err != nil {
		return err
	}
	v, err := s.need(e, "value")
	if err != nil {
		return err
	}
	s.env = append(s.env, envOp{name: name, value: v})
	return nil
}

func (l *loader) unsetEnv(s *scope, e *element) error {
	name, err := s.need(e, "name")
	if err != nil {
		return err
	}
	s.env = append(s.env, envOp{name: name, unset: true})
	return nil
}

func (l *loader) setRemap(s *scope, e *element) error {
	from, err := s.need(e, "from")
	if err != nil {
		return err
	}
	to, err := s.need(e, "to")
	if err != nil {
		return err
	}
	s.remaps = append(s.remaps, [2]string{from, to})
	return nil
}

func (l *loader) log(s *scope, e *element) error {
	msg, err := s.need(e, "message")
	if err != nil {
		return err
	}
	l.desc.Logs = append(l.desc.Logs, msg)
	return nil
}

func (l *loader) arg(s *scope, e *element) error {
	name, err := s.need(e, "name")
	if err != nil {
		return err
	}
	var choices []string
	for _, c := range e.children {
		if c.tag != "choice" {
			return c.errorf("unknown tag <%s> inside <arg> (only <choice value=.../>)", c.tag)
		}
		if err := c.checkAttrs("value"); err != nil {
			return err
		}
		if err := noChildren(c); err != nil {
			return err
		}
		v, err := s.need(c, "value")
		if err != nil {
			return err
		}
		choices = append(choices, v)
	}
	def, hasDef := e.attr("default")
	if hasDef {
		if def, err = s.substitute(e, def); err != nil {
			return err
		}
	}
	desc, err := s.get(e, "description", "")
	if err != nil {
		return err
	}
	_, conditional := e.attr("if")
	if _, unless := e.attr("unless"); unless {
		conditional = true
	}
	if !hasDef && !conditional && l.includeArgs != nil && !l.includeArgs[name] {
		return e.errorf("included launch file needs the argument %q: pass it with <arg name=%q value=.../> in the <include>", name, name)
	}
	val, given := s.configs[name]
	if !given {
		if !hasDef {
			return e.errorf("launch argument %q has no default and was not given (pass %s:=value)", name, name)
		}
		val = def
		s.configs[name] = def
	}
	if len(choices) > 0 {
		found := false
		for _, c := range choices {
			found = found || c == val
		}
		if !found {
			return e.errorf("launch argument %q is %q; valid choices are %s", name, val, strings.Join(choices, ", "))
		}
	}
	l.desc.Args = append(l.desc.Args, DeclaredArg{Name: name, Value: val, Default: def, HasDefault: hasDef,
		Description: desc, Choices: choices})
	return nil
}

func (l *loader) group(s *scope, e *element) error {
	scoped, err := s.get(e, "scoped", "true")
	if err != nil {
		return err
	}
	isScoped, err := parseBool(scoped)
	if err != nil {
		return e.errorf("scoped: %v", err)
	}
	fwd, err := s.get(e, "forwarding", "true")
	if err != nil {
		return err
	}
	forwarding, err := parseBool(fwd)
	if err != nil {
		return e.errorf("forwarding: %v", err)
	}
	inner := s
	if isScoped {
		inner = s.child()
		if !forwarding {
			inner.configs = map[string]string{}
		}
	}
	var body []*element
	for _, c := range e.children {
		if c.tag != "keep" {
			body = append(body, c)
			continue
		}
		if err := c.checkAttrs("name", "value"); err != nil {
			return err
		}
		if forwarding {
			return c.errorf("<keep> only makes sense in a group with forwarding=\"false\"")
		}
		name, err := s.need(c, "name")
		if err != nil {
			return err
		}
		v, ok := c.attr("value")
		if ok {
			if v, err = s.substitute(c, v); err != nil {
				return err
			}
		} else if v, ok = s.configs[name]; !ok {
			return c.errorf("<keep name=%q> names no launch configuration", name)
		}
		inner.configs[name] = v
	}
	return l.actions(inner, body)
}

// include evaluates an included file. As in ROS 2's
// IncludeLaunchDescription, an include is not a scope: its arguments and
// whatever the included file sets (<let>, <arg>, <push_ros_namespace>, ...)
// stay visible after it; wrap it in a <group> to scope it.
func (l *loader) include(s *scope, e *element) error {
	file, err := s.need(e, "file")
	if err != nil {
		return err
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(filepath.Dir(s.file), file)
	}
	given := map[string]bool{}
	var args [][2]string
	for _, c := range e.children {
		if c.tag != "arg" {
			return c.errorf("unknown tag <%s> inside <include> (only <arg name value/>)", c.tag)
		}
		if err := c.checkAttrs("name", "value"); err != nil {
			return err
		}
		if err := noChildren(c); err != nil {
			return err
		}
		name, err := s.need(c, "name")
		if err != nil {
			return err
		}
		v, err := s.need(c, "value")
		if err != nil {
			return err
		}
		args = append(args, [2]string{name, v})
		given[name] = true
	}
	if _, err := os.Stat(file); err != nil {
		return e.errorf("include: %v", err)
	}
	for _, a := range args {
		s.configs[a[0]] = a[1]
	}
	outerFile, outerGiven := s.file, l.includeArgs
	l.includeArgs = given
	l.depth++
	defer func() { s.file, l.includeArgs = outerFile, outerGiven; l.depth-- }()
	return l.loadFile(s, file)
}

// RosNamespaceConfig is the launch configuration that holds the namespace
// pushed by <push_ros_namespace> (absolute, e.g. "/robot1"; unset while none
// is pushed), as launch_ros's PushRosNamespace keeps it. A launch file reads
// it with $(var ros_namespace DEFAULT), DEFAULT being what it means at the
// root.
const RosNamespaceConfig = "ros_namespace"

// joinNamespace prefixes ns with base unless ns is absolute, as
// push_ros_namespace and node namespaces do.
func joinNamespace(base, ns string) string {
	ns = strings.TrimSuffix(ns, "/")
	switch {
	case strings.HasPrefix(ns, "/"):
		return ns
	case ns == "":
		return base
	case base == "" || base == "/":
		return "/" + ns
	}
	return base + "/" + ns
}

func parseSeconds(e *element, attr, v string) (time.Duration, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 1e6 {
		return 0, e.errorf("%s: %q is not a duration in seconds (0 to 1e6)", attr, v)
	}
	return time.Duration(f * float64(time.Second)), nil
}

// common reads the attributes <node> and <executable> share.
func (l *loader) common(s *scope, e *element, p *Process) error {
	var err error
	if p.Output, err = s.get(e, "output", "log"); err != nil {
		return err
	}
	switch p.Output {
	case "screen", "log", "both":
	default:
		return e.errorf("output: %q is not one of screen, log, both", p.Output)
	}
	if p.Cwd, err = s.get(e, "cwd", ""); err != nil {
		return err
	}
	pre, err := s.get(e, "launch-prefix", "")
	if err != nil {
		return err
	}
	if p.LaunchPrefix, err = splitWords(pre); err != nil {
		return e.errorf("launch-prefix: %v", err)
	}
	r, err := s.get(e, "respawn", "false")
	if err != nil {
		return err
	}
	if p.Respawn, err = parseBool(r); err != nil {
		return e.errorf("respawn: %v", err)
	}
	d, err := s.get(e, "respawn_delay", "0")
	if err != nil {
		return err
	}
	if p.RespawnDelay, err = parseSeconds(e, "respawn_delay", d); err != nil {
		return err
	}
	m, err := s.get(e, "respawn_max_retries", "-1")
	if err != nil {
		return err
	}
	if p.RespawnMaxRetries, err = strconv.Atoi(m); err != nil || p.RespawnMaxRetries < -1 {
		return e.errorf("respawn_max_retries: %q is not an integer >= -1", m)
	}
	oe, err := s.get(e, "on_exit", "")
	if err != nil {
		return err
	}
	switch oe {
	case "":
	case "shutdown":
		p.ShutdownOnExit = true
	default:
		return e.errorf("on_exit: only \"shutdown\" is supported, got %q", oe)
	}
	for _, spec := range []struct {
		attr string
		dst  *time.Duration
	}{{"sigterm_timeout", &p.SigtermTimeout}, {"sigkill_timeout", &p.SigkillTimeout}} {
		v, err := s.get(e, spec.attr, "5")
		if err != nil {
			return err
		}
		if *spec.dst, err = parseSeconds(e, spec.attr, v); err != nil {
			return err
		}
	}
	// The last set_env/unset_env of a name wins.
	last := map[string]envOp{}
	var order []string
	for _, op := range s.env {
		if _, ok := last[op.name]; !ok {
			order = append(order, op.name)
		}
		last[op.name] = op
	}
	for _, name := range order {
		if op := last[name]; op.unset {
			p.Unset = append(p.Unset, name)
		} else {
			p.Env = append(p.Env, name+"="+op.value)
		}
	}
	p.File, p.Line = e.file, e.line
	return nil
}

// envChild reads an <env name value/> child.
func (s *scope) envChild(c *element, p *Process) error {
	if err := c.checkAttrs("name", "value"); err != nil {
		return err
	}
	if err := noChildren(c); err != nil {
		return err
	}
	name, err := s.need(c, "name")
	if err != nil {
		return err
	}
	v, err := s.need(c, "value")
	if err != nil {
		return err
	}
	p.Env = append(p.Env, name+"="+v)
	for i, u := range p.Unset {
		if u == name {
			p.Unset = append(p.Unset[:i], p.Unset[i+1:]...)
			break
		}
	}
	return nil
}

func (l *loader) label(base string) string {
	l.counter++
	return fmt.Sprintf("%s-%d", base, l.counter)
}

func (l *loader) node(s *scope, e *element) error {
	p := &Process{Kind: KindNode}
	var err error
	if p.Package, err = s.need(e, "pkg"); err != nil {
		return err
	}
	if p.Executable, err = s.need(e, "exec"); err != nil {
		return err
	}
	if p.Name, err = s.get(e, "name", ""); err != nil {
		return err
	}
	ns, err := s.get(e, "namespace", "")
	if err != nil {
		return err
	}
	_, nsGiven := e.attr("namespace")
	switch {
	case nsGiven:
		p.Namespace = joinNamespace(s.ns, ns)
		if p.Namespace == "" {
			p.Namespace = "/"
		}
	case s.ns != "":
		p.Namespace = s.ns
	}
	args, err := s.get(e, "args", "")
	if err != nil {
		return err
	}
	if p.Args, err = splitWords(args); err != nil {
		return e.errorf("args: %v", err)
	}
	rargs, err := s.get(e, "ros_args", "")
	if err != nil {
		return err
	}
	if p.RosArgs, err = splitWords(rargs); err != nil {
		return e.errorf("ros_args: %v", err)
	}
	if err := l.common(s, e, p); err != nil {
		return err
	}
	p.Remaps = append(p.Remaps, s.remaps...)
	var inline []ParamValue
	for _, c := range e.children {
		switch c.tag {
		case "param":
			if _, isFile := c.attr("from"); isFile {
				src, err := s.paramFile(c)
				if err != nil {
					return err
				}
				p.Params = append(p.Params, src)
				continue
			}
			vals, err := s.paramValues(c, "")
			if err != nil {
				return err
			}
			inline = append(inline, vals...)
		case "remap":
			r, err := s.remapChild(c)
			if err != nil {
				return err
			}
			p.Remaps = append(p.Remaps, r)
		case "env":
			if err := s.envChild(c, p); err != nil {
				return err
			}
		default:
			return c.errorf("unknown tag <%s> inside <node> (allowed: param, remap, env)", c.tag)
		}
	}
	// launch_ros passes parameter files first, then one file with all
	// inline values.
	if len(inline) > 0 {
		p.Params = append(p.Params, ParamSource{Inline: inline})
	}
	base, err := s.get(e, "exec_name", "")
	if err != nil {
		return err
	}
	if base == "" {
		base = filepath.Base(p.Executable)
	}
	if p.Path, err = l.findExecutable(p.Package, p.Executable); err != nil {
		return e.errorf("%v", err)
	}
	p.Label = l.label(base)
	l.desc.Processes = append(l.desc.Processes, p)
	return nil
}

// paramFile reads a <param from="file" [allow_substs]/> of a node: the
// file (relative to the launch file), or with allow_substs a copy with its
// own $(...) expanded.
func (s *scope) paramFile(c *element) (ParamSource, error) {
	if err := c.checkAttrs("from", "allow_substs"); err != nil {
		return ParamSource{}, err
	}
	if err := noChildren(c); err != nil {
		return ParamSource{}, err
	}
	from, _ := c.attr("from")
	f, err := s.substitute(c, from)
	if err != nil {
		return ParamSource{}, err
	}
	if !filepath.IsAbs(f) {
		f = filepath.Join(filepath.Dir(s.file), f)
	}
	if _, err := os.Stat(f); err != nil {
		return ParamSource{}, c.errorf("param file: %v", err)
	}
	subst, err := s.get(c, "allow_substs", "false")
	if err != nil {
		return ParamSource{}, err
	}
	allow, err := parseBool(subst)
	if err != nil {
		return ParamSource{}, c.errorf("allow_substs: %v", err)
	}
	if !allow {
		return ParamSource{File: f}, nil
	}
	// The file's own $(...) are expanded; the node gets a copy.
	data, err := os.ReadFile(f)
	if err != nil {
		return ParamSource{}, c.errorf("param file: %v", err)
	}
	text, err := s.substitute(c, string(data))
	if err != nil {
		return ParamSource{}, err
	}
	return ParamSource{Content: []byte(text), Origin: f}, nil
}

// remapChild reads a <remap from to/> of a node.
func (s *scope) remapChild(c *element) ([2]string, error) {
	if err := c.checkAttrs("from", "to"); err != nil {
		return [2]string{}, err
	}
	if err := noChildren(c); err != nil {
		return [2]string{}, err
	}
	from, err := s.need(c, "from")
	if err != nil {
		return [2]string{}, err
	}
	to, err := s.need(c, "to")
	if err != nil {
		return [2]string{}, err
	}
	return [2]string{from, to}, nil
}

// paramValues reads a <param name value [type]/> or a nested <param name>
// holding more params (dotted names).
func (s *scope) paramValues(c *element, prefix string) ([]ParamValue, error) {
	if err := c.checkAttrs("name", "value", "type", "value-sep"); err != nil {
		return nil, err
	}
	name, err := s.need(c, "name")
	if err != nil {
		return nil, err
	}
	if prefix != "" {
		name = prefix + "." + name
	}
	raw, hasValue := c.attr("value")
	if !hasValue {
		if len(c.children) == 0 {
			return nil, c.errorf("<param name=%q> needs value, from, or nested <param> elements", name)
		}
		var out []ParamValue
		for _, cc := range c.children {
			if cc.tag != "param" {
				return nil, cc.errorf("unknown tag <%s> inside <param>", cc.tag)
			}
			vals, err := s.paramValues(cc, name)
			if err != nil {
				return nil, err
			}
			out = append(out, vals...)
		}
		return out, nil
	}
	if err := noChildren(c); err != nil {
		return nil, err
	}
	v, err := s.substitute(c, raw)
	if err != nil {
		return nil, err
	}
	typ, err := s.get(c, "type", "")
	if err != nil {
		return nil, err
	}
	sep, hasSep := c.attr("value-sep")
	var val any
	if hasSep {
		var items []any
		for _, part := range strings.Split(v, sep) {
			it, err := typedValue(part, typ)
			if err != nil {
				return nil, c.errorf("param %q: %v", name, err)
			}
			items = append(items, it)
		}
		val = items
	} else if val, err = typedValue(v, typ); err != nil {
		return nil, c.errorf("param %q: %v", name, err)
	}
	return []ParamValue{{Name: name, Value: val}}, nil
}

// splitWords splits a command string into words like a POSIX shell
// without expansions: blanks separate words, quotes group, backslash
// escapes one character outside single quotes.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == '\'' || c == '"':
			k := strings.IndexByte(s[i+1:], c)
			if k < 0 {
				return nil, fmt.Errorf("unterminated %c quote in %q", c, s)
			}
			cur.WriteString(s[i+1 : i+1+k])
			i += k + 1
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

func (l *loader) executable(s *scope, e *element) error {
	p := &Process{Kind: KindExecutable}
	cmd, err := s.need(e, "cmd")
	if err != nil {
		return err
	}
	words, err := splitWords(cmd)
	if err != nil {
		return e.errorf("cmd: %v", err)
	}
	if len(words) == 0 {
		return e.errorf("cmd is empty")
	}
	sh, err := s.get(e, "shell", "false")
	if err != nil {
		return err
	}
	shell, err := parseBool(sh)
	if err != nil {
		return e.errorf("shell: %v", err)
	}
	if shell {
		p.Executable, p.Args = "/bin/sh", []string{"-c", cmd}
	} else {
		p.Executable, p.Args = words[0], words[1:]
	}
	if err := l.common(s, e, p); err != nil {
		return err
	}
	for _, c := range e.children {
		if c.tag != "env" {
			return c.errorf("unknown tag <%s> inside <executable> (allowed: env)", c.tag)
		}
		if err := s.envChild(c, p); err != nil {
			return err
		}
	}
	name, err := s.get(e, "name", "")
	if err != nil {
		return err
	}
	if name == "" {
		name = filepath.Base(words[0])
	}
	if p.Path, err = findInPath(p.Executable, s); err != nil {
		return e.errorf("%v", err)
	}
	p.Label = l.label(name)
	l.desc.Processes = append(l.desc.Processes, p)
	return nil
}
