package rsmnode

import (
	"context"

	"github.com/fsmnodes/fsmnodes/internal/ros"
)

// RunMux runs robotControlMuxNode until shutdown.
func RunMux(ctx context.Context, args []string) error {
	return ros.Run(ctx, args, MuxNodeName, func(_ context.Context, n *ros.Node) error {
		return SetupMux(n)
	})
}

// RunStateInterface runs rsmNode until shutdown.
func RunStateInterface(ctx context.Context, args []string) error {
	return ros.Run(ctx, args, StateInterfaceNodeName, func(ctx context.Context, n *ros.Node) error {
		_, err := SetupStateInterface(ctx, n, nil)
		return err
	})
}

// RunServiceProvider runs serviceProviderNode until shutdown.
func RunServiceProvider(ctx context.Context, args []string) error {
	return ros.Run(ctx, args, ServiceProviderNodeName, func(_ context.Context, n *ros.Node) error {
		_, err := SetupServiceProvider(n)
		return err
	})
}

// RunBoot runs bootUpNode until it has answered "Finished" (or shutdown).
func RunBoot(ctx context.Context, args []string) error {
	return ros.Run(ctx, args, BootNodeName, func(_ context.Context, n *ros.Node) error {
		return SetupBoot(n, n.Context().Shutdown)
	})
}
