// Command state_interface runs the Robot Statemachine as the ROS 2 node
// rsmNode: Boot, Emergency Stop, Idle, Teleoperation, Waypoint Following
// and the plugin states (calculate goal, Nav2 navigation, mapping,
// routines); see docs/rsm.md.
//
//	state_interface [--ros-args --params-file params/rsm.yaml]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/rsm/rsmnode"
)

func main() {
	if err := rsmnode.RunStateInterface(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "state_interface:", err)
		os.Exit(1)
	}
}
