package rsmnode

import (
	"context"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// BootNodeName is the boot node's name (rsm_additions' bootUpNode).
const BootNodeName = "bootUpNode"

// SetupBoot is the setup of bootUpNode (serveBoot): once "Finished" is
// answered with exit_when_finished, it shuts the node's Context down.
func SetupBoot(_ context.Context, n *ros.Node) error { return serveBoot(n, n.Context().Shutdown) }

// serveBoot serves rsm/bootUpFinished on n: success=false "Still booting
// ..." until wait_time (s) of the node clock has passed since start, then
// success=true "Finished". Under use_sim_time the wait is sim time, counted
// from the first /clock time the node has seen (and again from the new time
// if the simulation jumps back before booting ends). With exit_when_finished (default true, as the original) done
// is called once "Finished" has been answered, so the process can end.
func serveBoot(n *ros.Node, done func()) error {
	d := ros.NewDeclarer(n)
	wait := param.DeclareDuration(d, "wait_time", time.Second,
		param.ReadOnly("seconds until the robot counts as booted", "the boot time is counted from start-up"), nil)
	exit := param.Declare(d, "exit_when_finished", true,
		param.ReadOnly("end the node after answering Finished once", "read once at start-up"), nil)
	if err := d.Err(); err != nil {
		return err
	}
	clk := n.Clock()
	var since time.Time // zero while the node clock has no time yet
	booting := func(now time.Time) bool {
		if now.Equal(time.Unix(0, 0)) {
			return true // sim time before the first /clock
		}
		if since.IsZero() || now.Before(since) {
			since = now
		}
		return now.Sub(since) < wait
	}
	booting(clk.Now())
	_, err := ros.NewService(n, Namespace+"bootUpFinished", std_srvs_srv.SetBool,
		func(context.Context, *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
			if booting(clk.Now()) {
				return &std_srvs_srv.SetBool_Response{Success: false, Message: "Still booting ..."}, nil
			}
			if exit && done != nil {
				// Let the response go out before the node ends (wall
				// time: this is about I/O, not the robot's behaviour).
				time.AfterFunc(500*time.Millisecond, done)
			}
			return &std_srvs_srv.SetBool_Response{Success: true, Message: "Finished"}, nil
		})
	return err
}
