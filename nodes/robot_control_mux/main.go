// Command robot_control_mux runs the Robot Statemachine's control
// multiplexer as the ROS 2 node robotControlMuxNode: operation mode
// (Stopped / Autonomy / Teleoperation), software e-stop, teleoperation idle
// timer and joystick; see docs/rsm.md.
//
//	robot_control_mux [--ros-args --params-file params/rsm.yaml]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/rsm/rsmnode"
)

func main() {
	if err := rsmnode.RunMux(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "robot_control_mux:", err)
		os.Exit(1)
	}
}
