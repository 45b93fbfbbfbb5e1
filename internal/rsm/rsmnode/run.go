package rsmnode

import (
	"context"

	"github.com/fsmnodes/fsmnodes/internal/ros"
)

// RunMux runs robotControlMuxNode until shutdown.
func RunMux(ctx context.Context, args []string) error {
	return ros.Run(ctx, args, MuxNodeName, SetupMux)
}

// RunStateInterface runs rsmNode until shutdown.
func RunStateInterface(ctx context.Context, args []string) error {
	return ros.Run(ctx, args, StateInterfaceNodeName, SetupStateInterface)
}

// RunServiceProvider runs serviceProviderNode until shutdown.
func RunServiceProvider(ctx context.Context, args []string) error {
	return ros.Run(ctx, args, ServiceProviderNodeName, SetupServiceProvider)
}

// RunBoot runs bootUpNode until it has answered "Finished" (or shutdown).
func RunBoot(ctx context.Context, args []string) error {
	return ros.Run(ctx, args, BootNodeName, SetupBoot)
}
