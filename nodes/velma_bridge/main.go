// Command velma_bridge runs the Velma core agent — the ve_body safety
// layer and the cs control subsystem at 500 Hz over simulated effectors —
// as the ROS 2 node velma_core (see internal/velma and docs/velma.md).
//
//	velma_bridge [--ros-args --params-file params/velma.yaml]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/velma/velmanode"
)

func main() {
	if err := velmanode.Run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "velma_bridge:", err)
		os.Exit(1)
	}
}
