// Command gopeer is the Go peer process of the multi-process tests: small
// nodes on internal/ros for test/e2e (our library against itself) and for
// test/ros2 (against real ROS 2, beside the rclcpp peer test/ros2/peer). It
// runs one mode, chosen by the first argument, prints "gopeer ready" once
// the mode's entities exist, and runs until SIGINT/SIGTERM:
//
//	gopeer echo TYPE...   node "echo": for every message type pkg/msg/Name,
//	                      republishes what arrives on /e2e/in/pkg_msg_Name on
//	                      /e2e/out/pkg_msg_Name
//	gopeer server         node "server": ~/set (std_srvs/SetBool, message
//	                      "echo: <data>") and ~/trigger (std_srvs/Trigger,
//	                      message "triggered <n>")
//	gopeer caller         node "caller": on every std_msgs/String on ~/trigger,
//	                      calls /server/set from inside the callback and
//	                      publishes the answer on ~/result
//	gopeer nodes FQN...   one bare node per fully qualified name
//	gopeer talker TEXT    node "talker": publishes TEXT on /crosstalk every
//	                      10 ms
//	gopeer params         node "param_node" declaring
//	                        rate   double, default 10.0, range 0..100
//	                        mode   string, default "slow"
//	                        ids    integer array, default [1]
//	                        limit  integer, default 10; a validator rejects
//	                               values above 100 ("limit must not exceed 100")
//	                        frame  string, read-only, default "map"
//	                      and publishing every accepted change as "name=value"
//	                      on ~/changed (std_msgs/String)
//	gopeer sim            node "sim_node" with a timer on its ROS clock (period
//	                      1 s) that publishes the clock's time in seconds on
//	                      ~/tick (std_msgs/Float64); run it with
//	                      -p use_sim_time:=true to follow /clock
//	gopeer nav_server [INSTANCE]
//	                      node "nav_server": action navigate_to_pose
//	                      (nav2_msgs/action/NavigateToPose). Goals with
//	                      behavior_tree "reject" are rejected; "loop" publishes
//	                      feedback every 20 ms until canceled; others publish
//	                      three feedbacks and succeed with error_msg =
//	                      behavior_tree + "@" + INSTANCE (default "a")
//	gopeer ours_talker    node "ours_talker": std_msgs/String "ours <n>" on
//	                      /ours/chatter every 100 ms (reliable, volatile,
//	                      keep last 10); "latched from ours" once on
//	                      /ours/latched (transient local, keep last 1);
//	                      every String on /ours/to_ours is printed and
//	                      logged at info ("got: <text>") and at warn
//	                      ("warned: <text>")
//	gopeer ours_server [introspection]
//	                      node "ours_server": ~/set (std_srvs/SetBool,
//	                      success = data, message "set <data>"), ~/trigger
//	                      (std_srvs/Trigger, message "triggered <n>"),
//	                      ~/fibonacci (example_interfaces/action/Fibonacci:
//	                      one feedback per step every 100 ms, cancelable;
//	                      negative orders rejected), parameters speed
//	                      (double 1.5, 0..10), label ("ours"), enabled
//	                      (true), limit (int 7, read-only); with
//	                      introspection, also the parameters
//	                      service_configure_introspection and
//	                      client_configure_introspection
//	                      (ros.Node.DeclareIntrospectionParameters)
//
// Further arguments (--ros-args ...) go to the ROS context; the domain and
// discovery come from the environment (ROS_DOMAIN_ID, ...). A declaration
// error (bad --params-file, wrongly typed -p) ends the process with exit
// status 1 and the error on stderr. With PEER_EXIT_DELAY (a Go duration)
// set, shutting down prints "gopeer: shutting down" and then takes that long.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gopeer:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: gopeer echo|server|caller|nodes|talker|params|sim|nav_server|ours_talker|ours_server [args] [--ros-args ...]")
	}
	mode, rest := args[0], args[1:]
	parsed, err := ros.ParseArgs(rest)
	if err != nil {
		return err
	}
	plain := parsed.User // the arguments outside --ros-args
	rc, err := ros.NewContext(ros.ContextOptions{Args: rest})
	if err != nil {
		return err
	}
	defer rc.Close()
	switch mode {
	case "echo":
		err = echo(rc, plain)
	case "server":
		err = server(rc)
	case "caller":
		err = caller(rc)
	case "nodes":
		err = nodes(rc, plain)
	case "talker":
		err = talker(rc, plain)
	case "params":
		err = params(rc)
	case "sim":
		err = sim(rc)
	case "nav_server":
		instance := "a"
		if len(plain) > 0 {
			instance = plain[0]
		}
		err = navServer(rc, instance)
	case "ours_talker":
		err = oursTalker(rc)
	case "ours_server":
		err = oursServer(rc, len(plain) > 0 && plain[0] == "introspection")
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		return err
	}
	fmt.Println("gopeer ready")
	err = rc.Spin(context.Background())
	if d, _ := time.ParseDuration(os.Getenv("PEER_EXIT_DELAY")); d > 0 {
		fmt.Println("gopeer: shutting down")
		time.Sleep(d)
	}
	return err
}
