// Command service_provider runs the Robot Statemachine's data store as the
// ROS 2 node serviceProviderNode: waypoints (kept in waypoints_file across
// restarts), navigation goal, exploration and reverse mode, and the robot
// pose from TF; see docs/rsm.md.
//
//	service_provider [--ros-args --params-file params/rsm.yaml]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/rsm/rsmnode"
)

func main() {
	if err := rsmnode.RunServiceProvider(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "service_provider:", err)
		os.Exit(1)
	}
}
