// Command foxglove_bridge serves the Foxglove WebSocket protocol
// (foxglove.websocket.v1 or foxglove.sdk.v1) for the ROS 2 graph, as foxglove_bridge does,
// and the dashboard page (internal/dashboard) on the same port; see
// internal/foxglove.
//
//	foxglove_bridge [--ros-args -p port:=8765 -p address:=127.0.0.1 ...]
//
// Connect Foxglove or Lichtblick to ws://127.0.0.1:8765, or open
// http://127.0.0.1:8765/ in a browser.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/dashboard"
	"github.com/fsmnodes/fsmnodes/internal/foxglove/rosbridge"
	"github.com/fsmnodes/fsmnodes/internal/ros"
)

func main() {
	if err := ros.Run(context.Background(), os.Args[1:], rosbridge.NodeName, rosbridge.NewSetup(dashboard.Handler(), nil)); err != nil {
		fmt.Fprintln(os.Stderr, "foxglove_bridge:", err)
		os.Exit(1)
	}
}
