package velmanode

import (
	"context"

	"github.com/fsmnodes/fsmnodes/internal/ros"
)

// NodeName is the default node name of velma_bridge.
const NodeName = "velma_core"

// Run runs the velma_core node until SIGINT/SIGTERM or ctx is done. args
// is the command line without the program name (--ros-args are parsed).
func Run(ctx context.Context, args []string) error {
	return ros.Run(ctx, args, NodeName, Setup)
}

// Setup creates the bridge on n and starts its 500 Hz loop as a background
// loop of the node's Context (the template of ros.Run).
func Setup(_ context.Context, n *ros.Node) error {
	b, err := NewBridge(n)
	if err != nil {
		return err
	}
	n.Context().Go(b.Run)
	n.Logger().Infof("velma core agent running at %.0f Hz (ve_body idle, cs idle)", 1/b.runner.Params().Period)
	return nil
}
