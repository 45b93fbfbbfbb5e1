// Command flight_recorder keeps the last seconds of every topic in memory
// and writes them as a bag (rosbag2's MCAP layout) when a state machine
// shows an event: an e-stop, the autonomy stopping, ve_body leaving
// transp for safe, a fault counter rising; see docs/recording.md.
//
//	flight_recorder [--ros-args -p snapshot_duration:=30.0 -p output_dir:=DIR ...]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/bag"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/msgs"
)

func main() {
	if err := ros.Run(context.Background(), os.Args[1:], bag.FlightRecorderNodeName, bag.FlightRecorderSetup(msgs.Registry())); err != nil {
		fmt.Fprintln(os.Stderr, "flight_recorder:", err)
		os.Exit(1)
	}
}
