package ros

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	control_msgs_action "github.com/fsmnodes/fsmnodes/msgs/control_msgs/action"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
	trajectory_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/trajectory_msgs/msg"
)

func TestSampleLimit(t *testing.T) {
	twist, _ := geometry_msgs_msg.Twist_TypeInfo.Desc.MaxCDRSize()
	trigger, _ := std_srvs_srv.Trigger_Request_TypeInfo.Desc.MaxCDRSize()
	for _, c := range []struct {
		name                    string
		ti                      *rosidl.TypeInfo
		prefix, configured, def int
		want                    uint32
	}{
		{"default", std_msgs_msg.String_TypeInfo, 0, 0, DefaultMaxSampleSize, DefaultMaxSampleSize},
		{"configured", std_msgs_msg.String_TypeInfo, 0, 1000, DefaultMaxSampleSize, 1000},
		{"no limit", std_msgs_msg.String_TypeInfo, 0, NoSizeLimit, DefaultMaxSampleSize, 0},
		{"bounded type", geometry_msgs_msg.Twist_TypeInfo, 0, 0, DefaultMaxSampleSize, uint32(4 + twist + 3)},
		{"bounded type, no limit", geometry_msgs_msg.Twist_TypeInfo, 0, NoSizeLimit, DefaultMaxSampleSize, uint32(4 + twist + 3)},
		{"configured below the type bound", geometry_msgs_msg.Twist_TypeInfo, 0, 20, DefaultMaxSampleSize, 20},
		{"service request", std_srvs_srv.Trigger_Request_TypeInfo, requestHeaderSize, 0, DefaultMaxRequestSize, uint32(4 + 16 + trigger + 3)},
		{"no type information", &rosidl.TypeInfo{Name: "x/msg/Y", DDSName: "x::msg::dds_::Y_"}, 0, 0, DefaultMaxRequestSize, DefaultMaxRequestSize},
	} {
		if got := sampleLimit(c.ti, c.prefix, c.configured, c.def); got != c.want {
			t.Errorf("%s: sampleLimit = %d, want %d", c.name, got, c.want)
		}
	}
}

// A subscription drops samples above its limit before decoding them,
// counts them (Oversized, the node's oversized_samples) and goes on with
// the next; a bounded type is limited by its own bound without any
// configuration.
func TestSubscriptionDropsOversizedSamples(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	c1 := newTestContext(t, domain)
	c2 := newTestContext(t, domain)
	n := mustNode(t, c1, "small_eater", "")
	got := make(chan int, 10)
	sub, err := NewSubscription(n, "/blob", QoSDefault, func(m *std_msgs_msg.UInt8MultiArray) { got <- len(m.Data) },
		WithMaxSampleSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	if sub.MaxSampleSize() != 64<<10 {
		t.Errorf("MaxSampleSize = %d", sub.MaxSampleSize())
	}
	twists := make(chan float64, 10)
	tsub, err := NewSubscription(n, "/cmd", QoSDefault, func(m *geometry_msgs_msg.Twist) { twists <- m.Linear.X })
	if err != nil {
		t.Fatal(err)
	}
	pn := mustNode(t, c2, "big_sender", "")
	pub, err := NewPublisher[std_msgs_msg.UInt8MultiArray](pn, "/blob", QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	waitGraph(t, c2, "blob match", func() bool { k, _ := pub.SubscriptionCount(); return k == 1 })
	for _, size := range []int{1 << 20, 1000} {
		if err := pub.Publish(&std_msgs_msg.UInt8MultiArray{Data: make([]byte, size)}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case size := <-got:
		if size != 1000 {
			t.Fatalf("got a %d-byte message, want the 1000-byte one", size)
		}
	case <-time.After(failAfter):
		t.Fatal("the small message after a big one was not delivered")
	}
	testenv.WaitFor(t, failAfter, "Oversized 1", func() bool { return sub.Oversized() == 1 })

	// A Twist followed by 1 MiB of junk cannot be a Twist: the type's bound
	// drops it.
	tp, err := c2.Participant().Topic("rt/cmd", geometry_msgs_msg.Twist_TypeInfo.DDSName)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c2.Participant().NewWriter(tp, dds.QoS{History: dds.KeepLast, Depth: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	waitGraph(t, c1, "raw twist writer", func() bool { k, _ := tsub.PublisherCount(); return k == 1 })
	junk := append(rosidl.Marshal(&geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 9}}, nil), make([]byte, 1<<20)...)
	if err := w.Write(junk); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rosidl.Marshal(&geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 1}}, nil)); err != nil {
		t.Fatal(err)
	}
	select {
	case x := <-twists:
		if x != 1 {
			t.Fatalf("got linear.x %v, want the valid Twist (1)", x)
		}
	case <-time.After(failAfter):
		t.Fatal("the valid Twist was not delivered")
	}
	testenv.WaitFor(t, failAfter, "the Twist's Oversized 1", func() bool { return tsub.Oversized() == 1 })
	if got := n.Counter(CounterOversizedSamples).Load(); got != 2 {
		t.Errorf("oversized_samples = %d, want 2", got)
	}
}

// An action server with MaxGoalSize drops a larger goal before decoding it:
// the goal is never accepted (its sender times out), the drop is counted,
// and the next goal of normal size is served.
func TestActionServerDropsOversizedGoals(t *testing.T) {
	t.Parallel()
	type (
		goal     = control_msgs_action.FollowJointTrajectory_Goal
		result   = control_msgs_action.FollowJointTrajectory_Result
		feedback = control_msgs_action.FollowJointTrajectory_Feedback
	)
	domain := testenv.Domain(t)
	sn := mustNode(t, newTestContext(t, domain), "arm", "")
	executed := make(chan int, 4)
	srv, err := NewActionServer(sn, "follow", control_msgs_action.FollowJointTrajectory,
		func(_ context.Context, g *ServerGoal[goal, feedback]) (*result, error) {
			executed <- len(g.Goal().Trajectory.Points)
			return &result{}, nil
		}, ActionServerOptions[goal]{MaxGoalSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.services[0].MaxRequestSize(); got != 64<<10 {
		t.Errorf("send_goal limit %d", got)
	}
	cli, err := NewActionClient(mustNode(t, newTestContext(t, domain), "sender", ""), "/follow",
		control_msgs_action.FollowJointTrajectory)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	if err := cli.WaitForServer(ctx); err != nil {
		t.Fatal(err)
	}
	big := control_msgs_action.NewFollowJointTrajectory_Goal()
	big.Trajectory.Points = make([]trajectory_msgs_msg.JointTrajectoryPoint, 10_000)
	for i := range big.Trajectory.Points {
		big.Trajectory.Points[i].Positions = []float64{1, 2, 3}
	}
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	_, err = cli.SendGoal(short, big, nil)
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("oversized goal: %v, want no answer (deadline exceeded)", err)
	}
	testenv.WaitFor(t, failAfter, "the drop to be counted", func() bool { return sn.Counter(CounterOversizedSamples).Load() == 1 })
	small := control_msgs_action.NewFollowJointTrajectory_Goal()
	small.Trajectory.Points = big.Trajectory.Points[:50]
	if _, st, err := cli.Execute(ctx, small, nil); err != nil {
		t.Fatalf("normal goal after the oversized one: %v (%v)", err, st)
	}
	if n := <-executed; n != 50 {
		t.Errorf("executed a goal of %d points, want 50", n)
	}
	if srv.services[0].Oversized() != 1 {
		t.Errorf("send_goal Oversized = %d", srv.services[0].Oversized())
	}
}
