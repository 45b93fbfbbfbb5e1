// Command robot_state_publisher publishes a robot's URDF on
// robot_description and the transforms of its links on /tf_static (fixed
// joints) and /tf (from joint_states), with the parameters of ROS 2's
// robot_state_publisher; see internal/rsp and internal/rsp/rspnode.
//
//	robot_state_publisher --ros-args -p robot_description:="$(cat robot.urdf)"
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rsp/rspnode"
)

func main() {
	if err := ros.Run(context.Background(), os.Args[1:], rspnode.Name, rspnode.Setup); err != nil {
		fmt.Fprintln(os.Stderr, "robot_state_publisher:", err)
		os.Exit(1)
	}
}
