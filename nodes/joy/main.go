// Command joy runs the joystick driver (a Linux /dev/input/js* device to sensor_msgs/Joy on joy); see internal/joy/joynode.
//
//	joy [--ros-args -p name:=value ...]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/joy/joynode"
	"github.com/fsmnodes/fsmnodes/internal/ros"
)

func main() {
	if err := ros.Run(context.Background(), os.Args[1:], joynode.JoyNodeName, joynode.SetupJoy); err != nil {
		fmt.Fprintln(os.Stderr, "joy:", err)
		os.Exit(1)
	}
}
