// Command diff_drive_sim runs the built-in differential-drive simulator (stands in for Gazebo + ros_gz_bridge); see internal/sim/simnode.
//
//	diff_drive_sim [--ros-args -p name:=value ...]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/ros/lifecycle"
	"github.com/fsmnodes/fsmnodes/internal/sim/simnode"
)

func main() {
	if err := lifecycle.Run(context.Background(), os.Args[1:], simnode.DriveNodeName, simnode.SetupDiffDrive); err != nil {
		fmt.Fprintln(os.Stderr, "diff_drive_sim:", err)
		os.Exit(1)
	}
}
