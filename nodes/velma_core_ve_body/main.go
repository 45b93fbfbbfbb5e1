// Command velma_core_ve_body runs the safety layer ve_body of the Velma core
// agent as its own process: it owns the 500 Hz loop clock, reads the
// effectors' status, passes it up to velma_core_cs, checks cs's command and
// commands the effectors (safe joint damping when the command is missing or
// bad) (see docs/velma.md#separate-processes).
//
//	velma_core_ve_body [--ros-args --params-file params/velma.yaml]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/velma/velmanode"
)

func main() {
	if err := velmanode.RunVeBody(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "velma_core_ve_body:", err)
		os.Exit(1)
	}
}
