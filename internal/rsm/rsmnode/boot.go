package rsmnode

import (
	"context"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// BootNodeName is the boot node's name (rsm_additions' bootUpNode).
const BootNodeName = "bootUpNode"

// SetupBoot serves rsm/bootUpFinished on n: success=false "Still booting
// ..." until wait_time (s) has passed since start, then success=true
// "Finished". With exit_when_finished (default true, as the original) done
// is called once "Finished" has been answered, so the process can end.
func SetupBoot(n *ros.Node, done func()) error {
	wait, err := seconds(n, "wait_time", 1.0, "seconds until the robot counts as booted")
	if err != nil {
		return err
	}
	exit, err := ros.DeclareParam(n, "exit_when_finished", true,
		ros.ParamDescriptor{Description: "end the node after answering Finished once", ReadOnly: true})
	if err != nil {
		return err
	}
	ready := time.Now().Add(wait)
	_, err = ros.NewService(n, Namespace+"bootUpFinished",
		func(context.Context, *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
			if time.Now().Before(ready) {
				return &std_srvs_srv.SetBool_Response{Success: false, Message: "Still booting ..."}, nil
			}
			if exit && done != nil {
				// Let the response go out before the node ends.
				time.AfterFunc(500*time.Millisecond, done)
			}
			return &std_srvs_srv.SetBool_Response{Success: true, Message: "Finished"}, nil
		})
	return err
}
