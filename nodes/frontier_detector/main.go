// Command frontier_detector runs the frontier detector publishing /rsm/explorationGoals; see internal/sim/simnode.
//
//	frontier_detector [--ros-args -p name:=value ...]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/sim/simnode"
)

func main() {
	if err := ros.Run(context.Background(), os.Args[1:], simnode.FrontierNodeName, simnode.SetupFrontier); err != nil {
		fmt.Fprintln(os.Stderr, "frontier_detector:", err)
		os.Exit(1)
	}
}
