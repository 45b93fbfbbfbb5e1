// Command cmd_vel_reverse runs the Robot Statemachine's reverse-driving
// relay (the original's rsm_additions): it republishes the velocity
// commands of a second navigation stack that drives backwards, from
// <autonomy_cmd_vel_topic>_reverse to <autonomy_cmd_vel_topic> with the
// linear part negated, and serves /rsm/setNavigationToReverse; see
// docs/rsm.md.
//
//	cmd_vel_reverse [--ros-args -p autonomy_cmd_vel_topic:=autonomy/cmd_vel]
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmnodes/fsmnodes/internal/rsm/rsmnode"
)

func main() {
	if err := rsmnode.RunCmdVelReverse(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cmd_vel_reverse:", err)
		os.Exit(1)
	}
}
