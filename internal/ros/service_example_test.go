package ros_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// A service and a client of it, each on its own Context (in real life, its
// own process). The generated descriptor std_srvs_srv.Trigger gives both
// their Go types: a handler or a client of other request or response types
// would not compile.
func ExampleNewService() {
	domain, release, err := testenv.ReserveDomain() // a real program leaves this to ROS_DOMAIN_ID
	if err != nil {
		fmt.Println(err)
		return
	}
	defer release()
	opts := ros.ContextOptions{DomainID: &domain, NoSignals: true,
		Args: []string{"--ros-args", "--disable-rosout-logs", "--log-level", "warn"}}

	serverCtx, err := ros.NewContext(opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer serverCtx.Close()
	motor, err := serverCtx.NewNode("motor", "/demo")
	if err != nil {
		fmt.Println(err)
		return
	}
	resets := 0
	if _, err := ros.NewService(motor, "~/reset", std_srvs_srv.Trigger,
		func(_ context.Context, _ *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
			resets++ // the handler runs on the node's callback goroutine
			return &std_srvs_srv.Trigger_Response{Success: true, Message: fmt.Sprintf("reset %d", resets)}, nil
		}); err != nil {
		fmt.Println(err)
		return
	}

	callerCtx, err := ros.NewContext(opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer callerCtx.Close()
	caller, err := callerCtx.NewNode("caller", "/demo")
	if err != nil {
		fmt.Println(err)
		return
	}
	cli, err := ros.NewClient(caller, "/demo/motor/reset", std_srvs_srv.Trigger)
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go serverCtx.Spin(ctx)
	go callerCtx.Spin(ctx)
	if err := cli.WaitForService(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for i := 0; i < 2; i++ {
		resp, err := cli.Call(ctx, &std_srvs_srv.Trigger_Request{})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(resp.Success, resp.Message)
	}
	// Output:
	// true reset 1
	// true reset 2
}
