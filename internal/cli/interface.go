package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/fsmnodes/fsmnodes/internal/msgyaml"
)

func interfaceVerbs() map[string]verb {
	return map[string]verb{
		"interface show": {
			usage: "interface show TYPE [--all-comments | --no-comments]",
			help: "Print the definition of a message, service or action type (e.g. geometry_msgs/msg/Twist),\n" +
				"with nested types expanded and indented by tabs, as `ros2 interface show` does.",
			run: (*App).interfaceShow,
		},
		"interface list": {
			usage: "interface list [-m] [-s] [-a]",
			help:  "List the interface types this build knows (-m messages, -s services, -a actions only).",
			run:   (*App).interfaceList,
		},
		"interface package": {
			usage: "interface package PACKAGE",
			help:  "List the interface types of one package.",
			run:   (*App).interfacePackage,
		},
		"interface proto": {
			usage: "interface proto TYPE",
			help:  "Print a message of TYPE with its default values as quoted YAML, ready to edit for topic pub.",
			run:   (*App).interfaceProto,
		},
		"interface packages": {
			usage: "interface packages",
			help:  "List the packages that have interface types.",
			run:   (*App).interfacePackages,
		},
	}
}

// kindOf returns "msg", "srv" or "action" for a full type name.
func kindOf(name string) string {
	parts := strings.Split(name, "/")
	if len(parts) != 3 {
		return ""
	}
	return parts[1]
}

// interfaceNames returns the user-facing type names by kind: messages
// (pkg/msg/X), services (pkg/srv/X) and actions (pkg/action/X), without the
// request/response and action-protocol types derived from them.
func (a *App) interfaceNames() (msgs, srvs, actions []string) {
	for _, n := range a.Registry.Names() {
		switch kindOf(n) {
		case "msg":
			if _, err := a.Registry.Message(n); err == nil {
				msgs = append(msgs, n)
			}
		case "srv":
			if _, err := a.Registry.Service(n); err == nil {
				srvs = append(srvs, n)
			}
		case "action":
			if _, err := a.Registry.Action(n); err == nil {
				actions = append(actions, n)
			}
		}
	}
	return msgs, srvs, actions
}

func (a *App) interfaceList(_ context.Context, args []string) error {
	p, err := parseFlags(args, flagSpec{"-m": false, "--only-msgs": false, "-s": false, "--only-srvs": false,
		"-a": false, "--only-actions": false})
	if err != nil {
		return err
	}
	if len(p.pos) > 0 {
		return usagef("interface list takes no arguments")
	}
	msgs, srvs, actions := a.interfaceNames()
	onlyM, onlyS, onlyA := p.has("-m", "--only-msgs"), p.has("-s", "--only-srvs"), p.has("-a", "--only-actions")
	all := !onlyM && !onlyS && !onlyA
	section := func(title string, names []string) {
		fmt.Fprintln(a.Stdout, title+":")
		for _, n := range names {
			fmt.Fprintln(a.Stdout, "    "+n)
		}
	}
	if all || onlyM {
		section("Messages", msgs)
	}
	if all || onlyS {
		section("Services", srvs)
	}
	if all || onlyA {
		section("Actions", actions)
	}
	return nil
}

func (a *App) interfacePackage(_ context.Context, args []string) error {
	if len(args) != 1 {
		return usagef("usage: fsmnodes interface package PACKAGE")
	}
	msgs, srvs, actions := a.interfaceNames()
	var out []string
	for _, n := range append(append(msgs, srvs...), actions...) {
		if strings.HasPrefix(n, args[0]+"/") {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return fmt.Errorf("unknown package %q", args[0])
	}
	sort.Strings(out)
	for _, n := range out {
		fmt.Fprintln(a.Stdout, n)
	}
	return nil
}

func (a *App) interfacePackages(_ context.Context, args []string) error {
	if len(args) != 0 {
		return usagef("interface packages takes no arguments")
	}
	seen := map[string]bool{}
	var pkgs []string
	msgs, srvs, actions := a.interfaceNames()
	for _, n := range append(append(msgs, srvs...), actions...) {
		pkg := strings.SplitN(n, "/", 2)[0]
		if !seen[pkg] {
			seen[pkg] = true
			pkgs = append(pkgs, pkg)
		}
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		fmt.Fprintln(a.Stdout, p)
	}
	return nil
}

// definition returns the interface text of a full type name.
func (a *App) definition(name string) (string, error) {
	switch kindOf(name) {
	case "msg":
		t, err := a.Registry.Message(name)
		if err != nil {
			return "", err
		}
		return t.Definition, nil
	case "srv":
		t, err := a.Registry.Service(name)
		if err != nil {
			return "", err
		}
		return t.Definition, nil
	case "action":
		t, err := a.Registry.Action(name)
		if err != nil {
			return "", err
		}
		return t.Definition, nil
	}
	return "", fmt.Errorf("invalid name %q: expected three parts separated by '/' (pkg/msg/Name, pkg/srv/Name or pkg/action/Name)", name)
}

func (a *App) interfaceShow(_ context.Context, args []string) error {
	p, err := parseFlags(args, flagSpec{"--all-comments": false, "--no-comments": false})
	if err != nil {
		return err
	}
	if len(p.pos) != 1 {
		return usagef("usage: fsmnodes interface show TYPE")
	}
	if p.has("--all-comments") && p.has("--no-comments") {
		return usagef("--all-comments and --no-comments exclude each other")
	}
	name := p.pos[0]
	if name == "-" {
		var line string
		if _, err := fmt.Fscanln(a.Stdin, &line); err != nil {
			return fmt.Errorf("reading the type from stdin: %w", err)
		}
		name = strings.TrimSpace(line)
	}
	if strings.Count(name, "/") == 1 { // pkg/Name: try each kind
		pkg, base, _ := strings.Cut(name, "/")
		for _, k := range []string{"msg", "srv", "action"} {
			if _, err := a.definition(pkg + "/" + k + "/" + base); err == nil {
				name = pkg + "/" + k + "/" + base
				break
			}
		}
	}
	top := p.has("--all-comments") || !p.has("--no-comments")
	nested := p.has("--all-comments")
	var b strings.Builder
	if err := a.showInterface(&b, name, top, nested, 0, 0); err != nil {
		return err
	}
	_, err = fmt.Fprint(a.Stdout, b.String())
	return err
}

// showInterface writes the definition of name like ros2 interface show:
// each line as written, nested types expanded below their field one tab
// deeper; comments and blank lines shown only when comments is set.
func (a *App) showInterface(b *strings.Builder, name string, comments, nestedComments bool, indent, depth int) error {
	if depth > 32 {
		return fmt.Errorf("type %s nests more than 32 levels deep", name)
	}
	def, err := a.definition(name)
	if err != nil {
		return err
	}
	pkg := strings.SplitN(name, "/", 2)[0]
	for _, raw := range strings.Split(strings.TrimSuffix(def, "\n"), "\n") {
		line := strings.TrimRight(raw, " \t\r")
		text := line
		trimmed := strings.TrimSpace(line)
		isSep := trimmed == "---"
		isComment := strings.HasPrefix(trimmed, "#")
		if !comments {
			if trimmed == "" || isComment {
				continue
			}
			if i := commentStart(line); i > 0 {
				text = strings.TrimSpace(line[:i-1])
			}
		}
		if text == "" {
			b.WriteByte('\n')
		} else {
			b.WriteString(strings.Repeat("\t", indent) + text + "\n")
		}
		if isSep || isComment || trimmed == "" {
			continue
		}
		if nt := nestedType(pkg, trimmed); nt != "" {
			if err := a.showInterface(b, nt, nestedComments, nestedComments, indent+1, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// commentStart returns the index of the '#' that starts a trailing comment
// of a field or constant line, ignoring '#' inside quoted default values; 0
// when there is none.
func commentStart(line string) int {
	var quote rune
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '#':
			return i
		}
	}
	return 0
}

var primitiveTypes = map[string]bool{
	"bool": true, "byte": true, "char": true, "float32": true, "float64": true,
	"int8": true, "uint8": true, "int16": true, "uint16": true, "int32": true, "uint32": true,
	"int64": true, "uint64": true, "string": true, "wstring": true,
}

// nestedType returns the full message name of the type of a field line
// ("Vector3 linear" in geometry_msgs -> geometry_msgs/msg/Vector3), or ""
// for primitive fields and constants.
func nestedType(pkg, line string) string {
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return ""
	}
	t := fields[0]
	if i := strings.IndexByte(t, '['); i >= 0 {
		t = t[:i]
	}
	if i := strings.Index(t, "<="); i >= 0 {
		t = t[:i]
	}
	if primitiveTypes[t] {
		return ""
	}
	if t == "Header" {
		return "std_msgs/msg/Header"
	}
	if p, n, ok := strings.Cut(t, "/"); ok {
		return p + "/msg/" + n
	}
	return pkg + "/msg/" + t
}

func (a *App) interfaceProto(_ context.Context, args []string) error {
	if len(args) != 1 {
		return usagef("usage: fsmnodes interface proto TYPE")
	}
	name := args[0]
	ti, err := a.Registry.Message(name)
	if err != nil || ti.New == nil {
		if st, serr := a.Registry.Service(name); serr == nil && st.Request != nil && st.Request.New != nil {
			ti, err = st.Request, nil // a service: its request, as ros2 does
		} else if at, aerr := a.Registry.Action(name); aerr == nil && at.Goal != nil && at.Goal.New != nil {
			ti, err = at.Goal, nil // an action: its goal
		}
	}
	if err != nil || ti == nil || ti.New == nil {
		return fmt.Errorf("unknown type %q", name)
	}
	text, err := msgyaml.Marshal(ti.New())
	if err != nil {
		return err
	}
	fmt.Fprintf(a.Stdout, "\"%s\"\n", text)
	return nil
}
