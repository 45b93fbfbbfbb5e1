package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fsmnodes/fsmnodes/internal/launch"
)

func launchVerbs() map[string]verb {
	return map[string]verb{
		"launch": {
			usage: "launch [PACKAGE] FILE [name:=value ...] [--show-args] [--print] [--bin-dir DIR] [--share-dir DIR] [--log-dir DIR]",
			help: "Run a ROS 2 XML launch file: every <node> and <executable> becomes its own process,\n" +
				"started with the --ros-args ros2 launch would give it; output lines are prefixed with\n" +
				"the process label. Ctrl-C stops everything (SIGINT, then SIGTERM, then SIGKILL).\n" +
				"FILE is a path, or with PACKAGE a file name looked up in the package's share directory.\n" +
				"Executables are found in --bin-dir, $FSMNODES_BIN, lib/fsmnodes of an install prefix,\n" +
				"bin/ of the checkout, or next to this program; $(find-pkg-share fsmnodes) is --share-dir,\n" +
				"$FSMNODES_SHARE, or the checkout holding the launch file.\n" +
				"  --show-args, -s   list the launch arguments and exit\n" +
				"  --print, -p       print the processes and their command lines and exit",
			run: (*App).launch,
		},
	}
}

func (a *App) launch(ctx context.Context, args []string) error {
	p, err := parseFlags(args, flagSpec{"--show-args": false, "-s": false, "--show-arguments": false,
		"--print": false, "-p": false, "--print-description": false,
		"--bin-dir": true, "--share-dir": true, "--log-dir": true})
	if err != nil {
		return err
	}
	var files, largs []string
	for _, w := range p.pos {
		if strings.Contains(w, ":=") {
			largs = append(largs, w)
		} else {
			files = append(files, w)
		}
	}
	opts := launch.Options{BinDir: p.get("", "--bin-dir"), ShareDir: p.get("", "--share-dir"), LookupEnv: a.lookupEnv}
	if opts.Args, err = launch.ParseArgs(largs); err != nil {
		return usagef("%v", err)
	}
	var file string
	switch len(files) {
	case 1:
		file = files[0]
	case 2:
		if file, err = launch.FindLaunchFile(files[0], files[1], opts); err != nil {
			return err
		}
	default:
		return usagef("usage: fsmnodes launch [PACKAGE] FILE [name:=value ...]")
	}
	d, err := launch.Load(file, opts)
	if err != nil {
		return err
	}
	if p.has("--show-args", "-s", "--show-arguments") {
		a.showArgs(d)
		return nil
	}
	if p.has("--print", "-p", "--print-description") {
		return a.printDescription(d)
	}
	// The first Ctrl-C cancels ctx (Main's handler): a clean shutdown. A
	// second one skips the grace periods.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer func() { signal.Stop(sigs); close(sigs) }()
	kill := make(chan struct{})
	go func() {
		n := 0
		for range sigs {
			if n++; n == 2 {
				close(kill)
				return
			}
		}
	}()
	return launch.Run(ctx, d, launch.RunOptions{Stdout: a.Stdout, Stderr: a.Stderr, Env: os.Environ(),
		LogDir: p.get("", "--log-dir"), Kill: kill})
}

func (a *App) showArgs(d *launch.Description) {
	fmt.Fprintln(a.Stdout, "Arguments (pass arguments as '<name>:=<value>'):")
	seen := map[string]bool{}
	for _, arg := range d.Args {
		if seen[arg.Name] {
			continue
		}
		seen[arg.Name] = true
		fmt.Fprintf(a.Stdout, "\n    '%s':\n", arg.Name)
		desc := arg.Description
		if desc == "" {
			desc = "no description given"
		}
		fmt.Fprintf(a.Stdout, "        %s\n", desc)
		if len(arg.Choices) > 0 {
			fmt.Fprintf(a.Stdout, "        Valid choices are: ['%s']\n", strings.Join(arg.Choices, "', '"))
		}
		if arg.HasDefault {
			fmt.Fprintf(a.Stdout, "        (default: '%s')\n", arg.Default)
		}
	}
}

func (a *App) printDescription(d *launch.Description) error {
	tmp, err := os.MkdirTemp("", "fsmnodes-launch-print-")
	if err != nil {
		return fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, p := range d.Processes {
		argv, err := p.Command(tmp)
		if err != nil {
			return err
		}
		for i, w := range argv {
			if strings.HasPrefix(w, tmp+string(filepath.Separator)) {
				argv[i] = "<inline parameters>"
			}
		}
		fmt.Fprintf(a.Stdout, "%s (%s:%d)\n  %s\n", p.Label, p.File, p.Line, shellJoin(argv))
		for _, ps := range p.Params {
			if ps.File != "" {
				continue
			}
			text := p.ParamsYAML(ps.Inline)
			if ps.Content != nil {
				fmt.Fprintf(a.Stdout, "    # %s with substitutions:\n", ps.Origin)
				text = string(ps.Content)
			}
			for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
				fmt.Fprintf(a.Stdout, "    | %s\n", line)
			}
		}
	}
	return nil
}

// shellJoin quotes words that a shell would split.
func shellJoin(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n'\"$`\\|&;<>(){}*?[]#~") {
			out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		} else {
			out[i] = w
		}
	}
	return strings.Join(out, " ")
}
