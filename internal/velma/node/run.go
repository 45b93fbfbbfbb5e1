package node

import (
	"context"
	"errors"

	"github.com/fsmnodes/fsmnodes/internal/ros"
)

// NodeName is the default node name of velma_bridge.
const NodeName = "velma_core"

// Run runs the velma_core node until SIGINT/SIGTERM or ctx is done. args
// is the command line without the program name (--ros-args are parsed).
func Run(ctx context.Context, args []string) (err error) {
	rc, err := ros.NewContext(ros.ContextOptions{Args: args})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rc.Close()) }()
	n, err := rc.NewNode(NodeName, "")
	if err != nil {
		return err
	}
	b, err := NewBridge(n)
	if err != nil {
		return err
	}
	loopCtx, cancel := context.WithCancel(ctx)
	loopDone := make(chan error, 1)
	go func() { loopDone <- b.Run(loopCtx) }()
	n.Logger().Infof("velma core agent running at %.0f Hz (ve_body idle, cs idle)", 1/b.runner.Params().Period)
	spinErr := rc.Spin(ctx)
	cancel()
	if lerr := <-loopDone; lerr != nil && !errors.Is(lerr, context.Canceled) {
		err = errors.Join(err, lerr)
	}
	if spinErr != nil && !errors.Is(spinErr, context.Canceled) {
		return errors.Join(err, spinErr)
	}
	return err
}
