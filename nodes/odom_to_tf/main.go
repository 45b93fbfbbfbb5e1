// Command odom_to_tf publishes each odometry message (nav_msgs/Odometry on
// odom) as its transform on /tf, for odometry sources that publish no
// transform (Gazebo Fortress's OdometryPublisher); see internal/sim/simnode.
//
//	odom_to_tf [--ros-args -r odom:=<topic> ...]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/sim/simnode"
)

func main() {
	if err := ros.Run(context.Background(), os.Args[1:], simnode.OdomTFNodeName, simnode.SetupOdomTF); err != nil {
		fmt.Fprintln(os.Stderr, "odom_to_tf:", err)
		os.Exit(1)
	}
}
