package cli

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"

	"github.com/fsmnodes/fsmnodes/internal/launch"
)

func runVerbs() map[string]verb {
	return map[string]verb{
		"run": {
			usage: "run [--bin-dir DIR] PACKAGE EXECUTABLE [args ...]",
			help: "Run one executable of a package, found as <node pkg exec> finds it (see 'fsmnodes launch\n" +
				"--help'), with the remaining arguments (e.g. --ros-args -r __node:=x -p rate:=5).\n" +
				"Ctrl-C is passed on; the exit status is the program's.",
			run:         (*App).run,
			passThrough: true,
		},
	}
}

// exitStatus makes Main exit with a program's own status.
type exitStatus struct{ code int }

// Error implements error.
func (e *exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func (a *App) run(ctx context.Context, args []string) error {
	opts := launch.Options{LookupEnv: a.lookupEnv}
	for len(args) > 0 && (args[0] == "--bin-dir" || args[0] == "--share-dir") {
		if len(args) < 2 {
			return usagef("option %s needs a value", args[0])
		}
		if args[0] == "--bin-dir" {
			opts.BinDir = args[1]
		} else {
			opts.ShareDir = args[1]
		}
		args = args[2:]
	}
	if len(args) < 2 {
		return usagef("usage: fsmnodes run [--bin-dir DIR] PACKAGE EXECUTABLE [args ...]")
	}
	path, err := launch.FindExecutable(args[0], args[1], opts)
	if err != nil {
		return err
	}
	cmd := exec.Command(path, args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.Stdin, a.Stdout, a.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGINT)
		werr = <-done
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		code := ee.ExitCode()
		if code < 0 {
			code = 130 // ended by a signal
		}
		return &exitStatus{code: code}
	}
	if werr != nil {
		return fmt.Errorf("%s: %w", path, werr)
	}
	return nil
}
