// Command motion_control runs the hexapod motion controller as the ROS 2
// node hexapod_controller (see internal/hexapod/hexapodnode and docs/hexapod.md).
//
//	motion_control [--ros-args --params-file params/hexapod.yaml -p servo.driver:=dynamixel]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/hexapod/hexapodnode"
)

func main() {
	if err := hexapodnode.Run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "motion_control:", err)
		os.Exit(1)
	}
}
