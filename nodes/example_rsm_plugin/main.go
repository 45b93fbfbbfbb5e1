// Command example_rsm_plugin is the example plugin node of the Robot
// Statemachine: a calculate-goal state that visits a list of goals in
// order, served as the rsm_msgs/action/RunState action goal_list. Select it
// in state_interface with calculate_goal_plugin:=action:goal_list (same
// namespace); docs/rsm.md#writing-a-plugin explains it.
//
//	example_rsm_plugin --ros-args -p goals:="[2.0, 0.0, 2.0, 2.0]" -p dwell:=1.0
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/rsm/rsmnode"
)

func main() {
	if err := rsmnode.RunExamplePlugin(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "example_rsm_plugin:", err)
		os.Exit(1)
	}
}
