// Command velma_sim runs the simulated effectors of Velma (arms, torso, head)
// as the lowest subsystem, stepping once per ve_body command record (see
// docs/velma.md#separate-processes).
//
//	velma_sim [--ros-args --params-file params/velma.yaml]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/velma/velmanode"
)

func main() {
	if err := velmanode.RunSim(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "velma_sim:", err)
		os.Exit(1)
	}
}
