// Command simple_navigator runs a small Nav2 stand-in serving navigate_to_pose on the built-in world; see internal/sim/simnode.
//
//	simple_navigator [--ros-args -p name:=value ...]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/sim/simnode"
)

func main() {
	if err := ros.Run(context.Background(), os.Args[1:], simnode.NavigatorNodeName, simnode.SetupNavigator); err != nil {
		fmt.Fprintln(os.Stderr, "simple_navigator:", err)
		os.Exit(1)
	}
}
