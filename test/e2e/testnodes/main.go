// Command testnodes is the peer process of the multi-process tests in
// test/e2e. It runs one of a few small ROS nodes, chosen by the first
// argument, until SIGINT/SIGTERM:
//
//	testnodes echo TYPE...      node "echo": for every message type
//	                            pkg/msg/Name, republishes what arrives on
//	                            /e2e/in/pkg_msg_Name on /e2e/out/pkg_msg_Name
//	testnodes server            node "server": ~/set (std_srvs/SetBool,
//	                            message "echo: <data>") and ~/trigger
//	                            (std_srvs/Trigger, message "triggered <n>")
//	testnodes caller            node "caller": on every std_msgs/String on
//	                            ~/trigger, calls /server/set from inside the
//	                            callback and publishes the answer on ~/result
//	testnodes nodes NAME...     one node per fully qualified NAME
//	testnodes talker TEXT       node "talker": publishes TEXT on /crosstalk
//	                            every 10 ms
//
// Further arguments (--ros-args ...) go to the ROS context. The domain and
// discovery come from the environment (ROS_DOMAIN_ID, ...). With
// TESTNODES_EXIT_DELAY (a Go duration) set, shutting down prints
// "testnodes: shutting down" and then takes that long.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/msgs"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "testnodes:", err)
		os.Exit(1)
	}
}

// topicSuffix is the topic name part used for a message type by the echo
// mode: "std_msgs/msg/String" -> "std_msgs_msg_String".
func topicSuffix(typeName string) string { return strings.ReplaceAll(typeName, "/", "_") }

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: testnodes echo|server|caller|nodes|talker [args]")
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
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		return err
	}
	err = rc.Spin(context.Background())
	if d, _ := time.ParseDuration(os.Getenv("TESTNODES_EXIT_DELAY")); d > 0 {
		fmt.Println("testnodes: shutting down")
		time.Sleep(d)
	}
	return err
}

func echo(rc *ros.Context, types []string) error {
	n, err := rc.NewNode("echo", "")
	if err != nil {
		return err
	}
	reg := msgs.Registry()
	for _, name := range types {
		ti, err := reg.Message(name)
		if err != nil {
			return err
		}
		suffix := topicSuffix(ti.Name)
		pub, err := ros.NewDynamicPublisher(n, "/e2e/out/"+suffix, ti, ros.QoSDefault)
		if err != nil {
			return err
		}
		_, err = ros.NewDynamicSubscription(n, "/e2e/in/"+suffix, ti, ros.QoSDefault, func(m rosidl.Message) {
			if err := pub.Publish(m); err != nil {
				n.Logger().Errorf("echo %s: %v", suffix, err)
			}
		})
		if err != nil {
			return err
		}
	}
	n.Logger().Infof("echoing %d types", len(types))
	return nil
}

func server(rc *ros.Context) error {
	n, err := rc.NewNode("server", "")
	if err != nil {
		return err
	}
	_, err = ros.NewService(n, "~/set", std_srvs_srv.SetBool, func(_ context.Context, req *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
		return &std_srvs_srv.SetBool_Response{Success: true, Message: fmt.Sprintf("echo: %v", req.Data)}, nil
	})
	if err != nil {
		return err
	}
	count := 0
	_, err = ros.NewService(n, "~/trigger", std_srvs_srv.Trigger, func(_ context.Context, _ *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
		count++ // callbacks of one node never run concurrently
		return &std_srvs_srv.Trigger_Response{Success: true, Message: fmt.Sprintf("triggered %d", count)}, nil
	})
	return err
}

func caller(rc *ros.Context) error {
	n, err := rc.NewNode("caller", "")
	if err != nil {
		return err
	}
	cli, err := ros.NewClient(n, "/server/set", std_srvs_srv.SetBool)
	if err != nil {
		return err
	}
	result, err := ros.NewPublisher[std_msgs_msg.String](n, "~/result", ros.QoSDefault)
	if err != nil {
		return err
	}
	_, err = ros.NewSubscription(n, "~/trigger", ros.QoSDefault, func(m *std_msgs_msg.String) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		text := "error: "
		if err := cli.WaitForService(ctx); err != nil {
			text += err.Error()
		} else if resp, err := cli.Call(ctx, &std_srvs_srv.SetBool_Request{Data: m.Data == "true"}); err != nil {
			text += err.Error()
		} else {
			text = m.Data + " -> " + resp.Message
		}
		if err := result.Publish(&std_msgs_msg.String{Data: text}); err != nil {
			n.Logger().Errorf("publishing result: %v", err)
		}
	})
	return err
}

func nodes(rc *ros.Context, names []string) error {
	for _, fqn := range names {
		ns, name := path.Split(fqn)
		if _, err := rc.NewNode(name, strings.TrimSuffix(ns, "/")); err != nil {
			return err
		}
	}
	return nil
}

func talker(rc *ros.Context, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("talker needs one TEXT argument")
	}
	n, err := rc.NewNode("talker", "")
	if err != nil {
		return err
	}
	pub, err := ros.NewPublisher[std_msgs_msg.String](n, "/crosstalk", ros.QoSDefault)
	if err != nil {
		return err
	}
	_, err = n.NewTimer(10*time.Millisecond, func() {
		if err := pub.Publish(&std_msgs_msg.String{Data: args[0]}); err != nil {
			n.Logger().Errorf("publish: %v", err)
		}
	})
	return err
}
