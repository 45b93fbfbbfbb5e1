package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/fsmnodes/fsmnodes/internal/ros"
)

// run creates a Context from args (--ros-args), one node with the given
// default name, calls setup and spins until SIGINT/SIGTERM or ctx ends.
func run(ctx context.Context, args []string, name string, setup func(ctx context.Context, rc *ros.Context, n *ros.Node) error) (err error) {
	rc, err := ros.NewContext(ros.ContextOptions{Args: args})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := rc.Close(); cerr != nil && !errors.Is(cerr, ros.ErrClosed) {
			err = errors.Join(err, cerr)
		}
	}()
	n, err := rc.NewNode(name, "")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := setup(ctx, rc, n); err != nil {
		return fmt.Errorf("%s: %w", n.FullyQualifiedName(), err)
	}
	n.Logger().Infof("%s ready", n.FullyQualifiedName())
	if err := rc.Spin(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// RunMux runs robotControlMuxNode until shutdown.
func RunMux(ctx context.Context, args []string) error {
	return run(ctx, args, MuxNodeName, func(_ context.Context, _ *ros.Context, n *ros.Node) error {
		return SetupMux(n)
	})
}

// RunStateInterface runs rsmNode until shutdown.
func RunStateInterface(ctx context.Context, args []string) error {
	return run(ctx, args, StateInterfaceNodeName, func(ctx context.Context, _ *ros.Context, n *ros.Node) error {
		_, err := SetupStateInterface(ctx, n, nil)
		return err
	})
}

// RunServiceProvider runs serviceProviderNode until shutdown.
func RunServiceProvider(ctx context.Context, args []string) error {
	return run(ctx, args, ServiceProviderNodeName, func(_ context.Context, _ *ros.Context, n *ros.Node) error {
		_, err := SetupServiceProvider(n)
		return err
	})
}

// RunBoot runs bootUpNode until it has answered "Finished" (or shutdown).
func RunBoot(ctx context.Context, args []string) error {
	return run(ctx, args, BootNodeName, func(_ context.Context, rc *ros.Context, n *ros.Node) error {
		return SetupBoot(n, rc.Shutdown)
	})
}
