// Command msggen generates the Go bindings of the ROS 2 interface
// definitions under msgs/: for every msgs/<pkg>/{msg,srv,action} directory a
// Go package <pkg>_<sub> with one plain struct per type, generated CDR
// marshal/unmarshal code, constants, defaults, bound checks and the type
// information (ROS name, DDS name, REP-2011 RIHS01 hash, definition text),
// plus msgs/registry.go listing every type.
//
// It is run by `go generate ./msgs/...` (see msgs/generate.go):
//
//	msggen -root . -module github.com/fsmnodes/fsmnodes/msgs
//
// Output is deterministic; files whose content is unchanged are not
// rewritten, and stale generated files (*.gen.go) are removed.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "msggen:", err)
		os.Exit(1)
	}
}

// run is the testable body of the command.
func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("msggen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", ".", "directory holding <pkg>/{msg,srv,action}/ definitions")
	module := fs.String("module", "github.com/fsmnodes/fsmnodes/msgs", "import path of the root directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	u, err := Load(*root)
	if err != nil {
		return err
	}
	g := &Generator{U: u, Module: *module}
	files, err := g.Generate()
	if err != nil {
		return err
	}
	reg, err := g.Registry()
	if err != nil {
		return err
	}
	files[filepath.Join(*root, "registry.go")] = reg
	return writeFiles(*root, files)
}

// writeFiles writes the generated files and deletes generated files that
// are no longer produced.
func writeFiles(root string, files map[string][]byte) error {
	old, err := filepath.Glob(filepath.Join(root, "*", "*", "*.gen.go"))
	if err != nil {
		return err
	}
	for _, p := range old {
		if _, keep := files[p]; keep {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.HasPrefix(data, []byte(generatedHeader[:len(generatedHeader)-2])) {
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("remove stale %s: %w", p, err)
			}
		}
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if cur, err := os.ReadFile(p); err == nil && bytes.Equal(cur, files[p]) {
			continue
		}
		if err := os.WriteFile(p, files[p], 0o644); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	return nil
}

// Registry returns the source of msgs/registry.go.
func (g *Generator) Registry() ([]byte, error) {
	var b strings.Builder
	b.WriteString(generatedHeader)
	b.WriteString("// Package msgs collects the generated ROS 2 interface bindings. The\n")
	b.WriteString("// bindings themselves live in the sub-packages msgs/<pkg>/<msg|srv|action>.\n")
	b.WriteString("package msgs\n\nimport (\n")
	b.WriteString("\t\"github.com/fsmnodes/fsmnodes/internal/rosidl\"\n")
	for _, gp := range g.U.Packages {
		fmt.Fprintf(&b, "\t%s %q\n", gp.GoName(), g.Module+"/"+gp.Pkg+"/"+gp.Sub)
	}
	b.WriteString(")\n\n")
	b.WriteString("// Registry returns a new registry holding every generated message, service\n")
	b.WriteString("// and action type.\nfunc Registry() *rosidl.Registry {\n\tr := rosidl.NewRegistry()\n")
	for _, gp := range g.U.Packages {
		for _, m := range gp.Msgs {
			fmt.Fprintf(&b, "\tr.AddMessage(%s.%s_TypeInfo)\n", gp.GoName(), m.Name)
		}
		for _, s := range gp.Srvs {
			fmt.Fprintf(&b, "\tr.AddService(%s.%s_ServiceType)\n", gp.GoName(), s.Name)
		}
		for _, a := range gp.Actions {
			fmt.Fprintf(&b, "\tr.AddAction(%s.%s_ActionType)\n", gp.GoName(), a.Name)
		}
	}
	b.WriteString("\treturn r\n}\n")
	return formatSource("registry.go", b.String())
}
