// Package cli implements the verbs of the fsmnodes command line tool, which
// mirrors the ros2 CLI: topic, service, node, param, action, lifecycle,
// interface and launch (and fsm, which reads the nodes' state machines,
// docs/fsm.md). Each verb prints what the corresponding ros2 verb prints (YAML
// with "---" separators for echo, Python reprs for service call, ...), so
// scripts and habits carry over.
//
// cmd/fsmnodes is a thin shell around Main; tests call Main directly with
// their own writers.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

// App holds what every verb needs. Build one with its fields set and call
// Run; the zero value of each optional field is documented.
type App struct {
	// Registry resolves type names ("std_msgs/msg/String").
	Registry *rosidl.Registry
	// Stdin, Stdout and Stderr are the streams of the tool.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// (optional) Getenv reads the environment; default os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// UsageError is a bad command line; Main exits with status 2 for it.
type UsageError struct{ Msg string }

// Error implements error.
func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// reportedError is a failure the verb has already described on stderr in
// ros2's words; Main exits with status 1 without printing it again.
type reportedError struct{ err error }

// Error implements error.
func (e *reportedError) Error() string { return e.err.Error() }

// Unwrap returns the underlying error.
func (e *reportedError) Unwrap() error { return e.err }

// Main runs the tool with args (without the program name) and returns the
// exit status: 0 on success, 1 on failure, 2 on a usage error. SIGINT and
// SIGTERM cancel the running verb.
func Main(reg *rosidl.Registry, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := &App{Registry: reg, Stdin: stdin, Stdout: stdout, Stderr: stderr}
	err := app.Run(ctx, args)
	var ue *UsageError
	var re *reportedError
	var es *exitStatus
	switch {
	case err == nil:
		return 0
	case errors.As(err, &es):
		return es.code
	case errors.As(err, &re):
		return 1
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "fsmnodes: %v\n", err)
		fmt.Fprintln(stderr, "run 'fsmnodes --help' for the list of commands")
		return 2
	default:
		fmt.Fprintf(stderr, "fsmnodes: %v\n", err)
		return 1
	}
}

func (a *App) lookupEnv(k string) (string, bool) {
	if a.LookupEnv != nil {
		return a.LookupEnv(k)
	}
	return os.LookupEnv(k)
}

// verb is one "group verb" command.
type verb struct {
	usage string // "topic echo TOPIC [TYPE] [--once]"
	help  string
	run   func(a *App, ctx context.Context, args []string) error
	// passThrough verbs hand their arguments to another program: only a
	// first argument -h/--help asks for help.
	passThrough bool
}

// commands maps "group verb" (or "group" for single-word commands) to its
// implementation.
func commands() map[string]verb {
	m := map[string]verb{}
	for _, set := range []map[string]verb{interfaceVerbs(), launchVerbs(), runVerbs(), graphVerbs(), topicVerbs(),
		serviceVerbs(), paramVerbs(), actionVerbs(), lifecycleVerbs(), doctorVerbs(), bagVerbs(), fsmVerbs(), securityVerbs()} {
		for k, v := range set {
			m[k] = v
		}
	}
	return m
}

// Run executes one command.
func (a *App) Run(ctx context.Context, args []string) error {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		a.printHelp(cmds, "")
		if len(args) == 0 {
			return usagef("missing command")
		}
		return nil
	}
	if v, ok := cmds[args[0]]; ok { // single-word commands: launch, run
		help := wantsHelp(args[1:])
		if v.passThrough {
			help = len(args) > 1 && (args[1] == "-h" || args[1] == "--help")
		}
		if help {
			fmt.Fprintf(a.Stdout, "usage: fsmnodes %s\n\n%s\n", v.usage, v.help)
			return nil
		}
		return v.run(a, ctx, args[1:])
	}
	if len(args) < 2 || strings.HasPrefix(args[1], "-") {
		if hasGroup(cmds, args[0]) {
			a.printHelp(cmds, args[0])
			if len(args) >= 2 && (args[1] == "-h" || args[1] == "--help") {
				return nil
			}
			return usagef("%s: missing verb", args[0])
		}
		return usagef("unknown command %q", args[0])
	}
	key := args[0] + " " + args[1]
	v, ok := cmds[key]
	if !ok {
		if hasGroup(cmds, args[0]) {
			return usagef("%s: unknown verb %q (see 'fsmnodes %s --help')", args[0], args[1], args[0])
		}
		return usagef("unknown command %q", args[0])
	}
	if wantsHelp(args[2:]) {
		fmt.Fprintf(a.Stdout, "usage: fsmnodes %s\n\n%s\n", v.usage, v.help)
		return nil
	}
	return v.run(a, ctx, args[2:])
}

func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "--help" {
			return true
		}
	}
	return false
}

func hasGroup(cmds map[string]verb, group string) bool {
	for k := range cmds {
		if strings.HasPrefix(k, group+" ") {
			return true
		}
	}
	return false
}

func (a *App) printHelp(cmds map[string]verb, group string) {
	keys := make([]string, 0, len(cmds))
	for k := range cmds {
		if group == "" || strings.HasPrefix(k, group+" ") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	fmt.Fprintln(a.Stdout, "usage: fsmnodes <command> [<verb>] [args]  (mirrors the ros2 CLI)")
	fmt.Fprintln(a.Stdout)
	for _, k := range keys {
		fmt.Fprintf(a.Stdout, "  fsmnodes %s\n", cmds[k].usage)
	}
	fmt.Fprintln(a.Stdout)
	fmt.Fprintln(a.Stdout, "'fsmnodes <command> <verb> --help' describes one verb.")
}

// flagSpec describes the flags of a verb: name (with dashes, e.g. "--once"
// or "-1") to whether it takes a value.
type flagSpec map[string]bool

// parsed is a parsed command line: positionals in order and flag values
// (flags without a value map to "true"). Aliases are resolved by the caller.
type parsed struct {
	pos   []string
	flags map[string]string
}

func (p *parsed) has(names ...string) bool {
	for _, n := range names {
		if _, ok := p.flags[n]; ok {
			return true
		}
	}
	return false
}

func (p *parsed) get(def string, names ...string) string {
	for _, n := range names {
		if v, ok := p.flags[n]; ok {
			return v
		}
	}
	return def
}

// parseFlags splits args into flags and positionals. Flags may come before,
// between or after positionals (as with argparse); "--" ends the flags.
// A lone "-" and anything not starting with "-" is positional, and so is an
// unknown word that looks like a negative number ("-1.5").
func parseFlags(args []string, spec flagSpec) (*parsed, error) {
	p := &parsed{flags: map[string]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			p.pos = append(p.pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			p.pos = append(p.pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		takes, ok := spec[name]
		if !ok {
			if looksNumeric(a) {
				p.pos = append(p.pos, a)
				continue
			}
			return nil, usagef("unknown option %q", name)
		}
		switch {
		case takes && hasVal:
			p.flags[name] = val
		case takes:
			if i+1 >= len(args) {
				return nil, usagef("option %s needs a value", name)
			}
			i++
			p.flags[name] = args[i]
		case hasVal:
			return nil, usagef("option %s takes no value", name)
		default:
			p.flags[name] = "true"
		}
	}
	return p, nil
}

func looksNumeric(s string) bool {
	if len(s) < 2 {
		return false
	}
	c := s[1]
	return (c >= '0' && c <= '9') || c == '.'
}
