// Command velma_core_cs runs the control subsystem cs of the Velma core agent
// as its own process: its FSM, trajectories, control laws and collision
// checks, driven by ve_body's status records (see
// docs/velma.md#separate-processes).
//
//	velma_core_cs [--ros-args --params-file params/velma.yaml]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/velma/velmanode"
)

func main() {
	if err := velmanode.RunCS(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "velma_core_cs:", err)
		os.Exit(1)
	}
}
