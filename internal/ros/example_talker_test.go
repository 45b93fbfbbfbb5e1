package ros_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// A talker and a listener, each on its own Context (in real life, its own
// process): the talker publishes on chatter every 50 ms, the listener
// prints the first message it hears. docs/client-library.md walks through
// the same node.
func Example_talkerListener() {
	domain, release, err := testenv.ReserveDomain() // a real program leaves this to ROS_DOMAIN_ID
	if err != nil {
		fmt.Println(err)
		return
	}
	defer release()
	opts := ros.ContextOptions{DomainID: &domain, NoSignals: true,
		Args: []string{"--ros-args", "--disable-rosout-logs", "--log-level", "warn"}}

	talkerCtx, err := ros.NewContext(opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer talkerCtx.Close()
	talker, err := talkerCtx.NewNode("talker", "/demo")
	if err != nil {
		fmt.Println(err)
		return
	}
	pub, err := ros.NewPublisher[std_msgs_msg.String](talker, "chatter", ros.QoSDefault)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := talker.NewTimer(50*time.Millisecond, func() {
		_ = pub.Publish(&std_msgs_msg.String{Data: "hello"})
	}); err != nil {
		fmt.Println(err)
		return
	}

	listenerCtx, err := ros.NewContext(opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer listenerCtx.Close()
	listener, err := listenerCtx.NewNode("listener", "/demo")
	if err != nil {
		fmt.Println(err)
		return
	}
	heard := make(chan string, 1)
	if _, err := ros.NewSubscription(listener, "chatter", ros.QoSDefault, func(m *std_msgs_msg.String) {
		select {
		case heard <- m.Data:
		default:
		}
	}); err != nil {
		fmt.Println(err)
		return
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go talkerCtx.Spin(ctx)
	go listenerCtx.Spin(ctx)
	select {
	case s := <-heard:
		fmt.Println("/demo/listener heard:", s)
	case <-ctx.Done():
		fmt.Println("nothing heard")
	}
	// Output: /demo/listener heard: hello
}
