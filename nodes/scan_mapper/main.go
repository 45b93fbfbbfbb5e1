// Command scan_mapper builds /map from /scan and /odom for a robot with exact
// odometry (Gazebo), where slam_toolbox is not installed; see internal/sim/simnode.
//
//	scan_mapper [--ros-args -p name:=value ...]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/sim/simnode"
)

func main() {
	if err := ros.Run(context.Background(), os.Args[1:], simnode.MapperNodeName, simnode.SetupMapper); err != nil {
		fmt.Fprintln(os.Stderr, "scan_mapper:", err)
		os.Exit(1)
	}
}
