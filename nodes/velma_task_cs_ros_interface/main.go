// Command velma_task_cs_ros_interface runs the ROS interface agent of the
// Velma core agent as node velma_core: the actions, services and topics of
// velma_bridge (/velma_core/...), talking to velma_core_cs through its io
// buffers (see docs/velma.md#separate-processes).
//
//	velma_task_cs_ros_interface [--ros-args --params-file params/velma.yaml]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/velma/velmanode"
)

func main() {
	if err := velmanode.RunInterface(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "velma_task_cs_ros_interface:", err)
		os.Exit(1)
	}
}
