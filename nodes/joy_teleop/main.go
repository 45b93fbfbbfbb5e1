// Command joy_teleop runs the joystick teleop (joy to teleoperation/cmd_vel, like teleop_twist_joy); see internal/joy/joynode.
//
//	joy_teleop [--ros-args -p name:=value ...]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/joy/joynode"
	"github.com/fsmnodes/fsmnodes/internal/ros"
)

func main() {
	if err := ros.Run(context.Background(), os.Args[1:], joynode.TeleopNodeName, joynode.SetupTeleop); err != nil {
		fmt.Fprintln(os.Stderr, "joy_teleop:", err)
		os.Exit(1)
	}
}
