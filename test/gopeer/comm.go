package main

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/msgs"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// topicSuffix is the topic name part used for a message type by the echo
// mode: "std_msgs/msg/String" -> "std_msgs_msg_String".
func topicSuffix(typeName string) string { return strings.ReplaceAll(typeName, "/", "_") }

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
