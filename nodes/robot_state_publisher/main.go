// Command robot_state_publisher publishes a robot's URDF on
// robot_description and the transforms of its links on /tf_static (fixed
// joints) and /tf (from joint_states), with the parameters of ROS 2's
// robot_state_publisher; see internal/robotstate and internal/robotstate/robotstatenode.
//
//	robot_state_publisher --ros-args -p robot_description:="$(cat robot.urdf)"
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/robotstate/robotstatenode"
	"github.com/fsmnodes/fsmnodes/internal/ros"
)

func main() {
	if err := ros.Run(context.Background(), os.Args[1:], robotstatenode.Name, robotstatenode.Setup); err != nil {
		fmt.Fprintln(os.Stderr, "robot_state_publisher:", err)
		os.Exit(1)
	}
}
