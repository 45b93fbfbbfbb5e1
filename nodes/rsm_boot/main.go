// Command rsm_boot runs the ROS 2 node bootUpNode, which serves
// /rsm/bootUpFinished: "Still booting ..." until wait_time seconds have
// passed, then "Finished" (after which it exits unless exit_when_finished
// is false). Robots with their own boot check serve the service instead.
//
//	rsm_boot [--ros-args -p wait_time:=2.0]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/rsm/rsmnode"
)

func main() {
	if err := rsmnode.RunBoot(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "rsm_boot:", err)
		os.Exit(1)
	}
}
