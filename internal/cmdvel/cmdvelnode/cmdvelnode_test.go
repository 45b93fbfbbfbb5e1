package cmdvelnode

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const waitLimit = 20 * time.Second

func TestMismatch(t *testing.T) {
	ep := func(node, typ string) ros.EndpointInfo {
		return ros.EndpointInfo{NodeName: node, NodeNamespace: "/", TopicType: typ}
	}
	tests := []struct {
		name    string
		sub     bool
		stamped bool
		peers   []ros.EndpointInfo
		want    string // "" = nothing to say
		unnamed bool
	}{
		{"no peers", true, true, nil, "", false},
		{"same type", true, true, []ros.EndpointInfo{ep("mux", TypeTwistStamped)}, "", false},
		{"stamped sub, plain publisher", true, true, []ros.EndpointInfo{ep("pub", TypeTwist)},
			"/cmd_vel: this node subscribes geometry_msgs/msg/TwistStamped (enable_stamped_cmd_vel is true) but its publishers (/pub) " +
				"send geometry_msgs/msg/Twist: none of their commands arrive. Set enable_stamped_cmd_vel:=false on this node, or make them publish geometry_msgs/msg/TwistStamped", false},
		{"plain sub, stamped publishers", true, false, []ros.EndpointInfo{ep("b", TypeTwistStamped), ep("a", TypeTwistStamped), ep("a", TypeTwistStamped)},
			"/cmd_vel: this node subscribes geometry_msgs/msg/Twist (enable_stamped_cmd_vel is false) but its publishers (/a, /b) send " +
				"geometry_msgs/msg/TwistStamped: none of their commands arrive. Set enable_stamped_cmd_vel:=true on this node, or make them publish geometry_msgs/msg/Twist", false},
		{"one peer of our type is enough", true, false, []ros.EndpointInfo{ep("b", TypeTwistStamped), ep("a", TypeTwist)}, "", false},
		{"other types are not ours to judge", true, false, []ros.EndpointInfo{ep("x", "std_msgs/msg/String")}, "", false},
		{"stamped publisher, plain subscriber", false, true, []ros.EndpointInfo{ep("sim", TypeTwist)},
			"/cmd_vel: this node publishes geometry_msgs/msg/TwistStamped (enable_stamped_cmd_vel is true) but its subscribers (/sim) take " +
				"geometry_msgs/msg/Twist: none of its commands arrive. Set enable_stamped_cmd_vel:=false on this node, or make them subscribe geometry_msgs/msg/TwistStamped", false},
		{"a peer whose node is not known (yet)", true, true, []ros.EndpointInfo{
			{NodeName: "_NODE_NAME_UNKNOWN_", NodeNamespace: "_NODE_NAMESPACE_UNKNOWN_", TopicType: TypeTwist}, ep("pub", TypeTwist)},
			"/cmd_vel: this node subscribes geometry_msgs/msg/TwistStamped (enable_stamped_cmd_vel is true) but its publishers (/pub, one without a ROS node name) " +
				"send geometry_msgs/msg/Twist: none of their commands arrive. Set enable_stamped_cmd_vel:=false on this node, or make them publish geometry_msgs/msg/TwistStamped", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, unnamed := Mismatch("/cmd_vel", tt.sub, tt.stamped, ParamStamped, tt.peers)
			if ok != (tt.want != "") || got != tt.want || unnamed != tt.unnamed {
				t.Errorf("Mismatch =\n%q, %v, unnamed %v\nwant\n%q, unnamed %v", got, ok, unnamed, tt.want, tt.unnamed)
			}
		})
	}
	if w, _, _ := Mismatch("/teleoperation/cmd_vel", false, false, ParamPublishStamped, []ros.EndpointInfo{ep("mux", TypeTwistStamped)}); !strings.Contains(w, "Set publish_stamped_twist:=true") {
		t.Errorf("the parameter named is not the node's: %q", w)
	}
}

func TestStampedMsg(t *testing.T) {
	now := time.Unix(1700000000, 123456789)
	m := StampedMsg(cmdvel.Twist{Linear: [3]float64{0.25, 1, 2}, Angular: [3]float64{3, 4, -0.5}}, now, "base_link")
	if m.Header.Stamp.Sec != 1700000000 || m.Header.Stamp.Nanosec != 123456789 || m.Header.FrameId != "base_link" {
		t.Errorf("header %+v", m.Header)
	}
	if m.Twist.Linear.X != 0.25 || m.Twist.Linear.Y != 1 || m.Twist.Linear.Z != 2 || m.Twist.Angular.X != 3 || m.Twist.Angular.Y != 4 || m.Twist.Angular.Z != -0.5 {
		t.Errorf("twist %+v", m.Twist)
	}
	if got := TwistOf(&m.Twist); got != (cmdvel.Twist{Linear: [3]float64{0.25, 1, 2}, Angular: [3]float64{3, 4, -0.5}}) {
		t.Errorf("TwistOf = %+v", got)
	}
	if !StampOf(&m).Equal(now) {
		t.Errorf("StampOf = %v, want %v", StampOf(&m), now)
	}
	var zero geometry_msgs_msg.TwistStamped
	if !cmdvel.IsZeroStamp(StampOf(&zero)) {
		t.Errorf("an unset stamp %v is not zero", StampOf(&zero))
	}
}

// syncBuffer is a log sink written by the node's logger goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newContext(t *testing.T, domain uint32, log *syncBuffer) *ros.Context {
	t.Helper()
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true, LogOutput: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = rc.Spin(ctx) }()
	return rc
}

// A stamped subscription over DDS, one row per stamp rule: zero stamps
// and future ones count from their receipt, stale ones are ignored and
// counted, fresh ones count from their stamp, and the sender's frame is
// passed on and never changes a verdict.
func TestSubscribe_StampRules(t *testing.T) {
	t.Parallel()
	log := &syncBuffer{}
	rc := newContext(t, testenv.Domain(t), log)
	rx, err := rc.NewNode("rx", "")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan Command, 10)
	sub, err := Subscribe(rx, "cmd_vel", SubscriptionOptions{Stamped: true, Timeout: func() time.Duration { return 500 * time.Millisecond }},
		func(c Command) { got <- c })
	if err != nil {
		t.Fatal(err)
	}
	tx, err := rc.NewNode("tx", "")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ros.NewPublisher[geometry_msgs_msg.TwistStamped](tx, "cmd_vel", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := rc.WaitForGraph(ctx, func() bool { n, _ := pub.SubscriptionCount(); return n > 0 }); err != nil {
		t.Fatal(err)
	}
	send := func(stamp time.Time, x float64, frame string) {
		t.Helper()
		m := geometry_msgs_msg.TwistStamped{Header: std_msgs_msg.Header{FrameId: frame}}
		if !stamp.IsZero() {
			m.Header.Stamp = builtin_interfaces_msg.TimeOf(stamp)
		}
		m.Twist.Linear.X = x
		if err := pub.Publish(&m); err != nil {
			t.Fatal(err)
		}
	}
	next := func() Command {
		t.Helper()
		select {
		case c := <-got:
			return c
		case <-ctx.Done():
			t.Fatal("no command received")
		}
		return Command{}
	}
	// One row per rule, sent in order over one reliable writer: a row that
	// must not be delivered would show up as the next row's command.
	type at int
	const (
		atReceipt at = iota // the time of receipt (zero or future stamp)
		atStamp             // the stamp itself
		never               // ignored as stale
	)
	rows := []struct {
		name  string
		stamp func(now time.Time) time.Time // zero: not set
		frame string
		at    at
	}{
		{"zero stamp is the time of receipt", func(time.Time) time.Time { return time.Time{} }, "teleop_twist_joy", atReceipt},
		{"an hour old is ignored", func(now time.Time) time.Time { return now.Add(-time.Hour) }, "base_link", never},
		{"50 ms old counts from its stamp", func(now time.Time) time.Time { return now.Add(-50 * time.Millisecond) }, "", atStamp},
		{"an hour ahead counts from receipt; its frame is passed on, not read", func(now time.Time) time.Time { return now.Add(time.Hour) }, "odom", atReceipt},
		{"older than the 500 ms timeout is ignored, whatever its frame", func(now time.Time) time.Time { return now.Add(-600 * time.Millisecond) }, "map", never},
		{"stamped now", func(now time.Time) time.Time { return now }, "base_link", atStamp},
	}
	stale := 0
	for i, r := range rows {
		x := float64(i+1) / 10
		before := time.Now()
		stamp := r.stamp(before)
		send(stamp, x, r.frame)
		if r.at == never {
			stale++
			continue
		}
		c := next()
		after := time.Now()
		switch {
		case c.Twist.Linear[0] != x:
			t.Errorf("%s: got the command with x %v, want x %v (a row before it was delivered?)", r.name, c.Twist.Linear[0], x)
		case c.Frame != r.frame:
			t.Errorf("%s: frame %q, want the sender's %q", r.name, c.Frame, r.frame)
		case r.at == atStamp && !c.At.Equal(stamp):
			t.Errorf("%s: counts from %v, want its stamp %v", r.name, c.At, stamp)
		case r.at == atReceipt && (c.At.Before(before) || c.At.After(after)):
			t.Errorf("%s: counts from %v, want the time of receipt (between %v and %v)", r.name, c.At, before, after)
		}
	}
	if sub.Stale() != uint64(stale) {
		t.Errorf("Stale() = %d, want %d", sub.Stale(), stale)
	}
	if n := rx.Counter(CounterStale).Load(); n != uint64(stale) {
		t.Errorf("%s counter = %d, want %d", CounterStale, n, stale)
	}
	testenv.WaitFor(t, waitLimit, "the stale command's warning", func() bool { return strings.Contains(log.String(), "ignoring a command stamped") })
}

// Both ends of a mismatch say so once, naming the parameter: a stamped
// subscription with only a plain publisher, and a stamped publisher with
// only a plain subscriber.
func TestWatch_WarnsOnMismatch(t *testing.T) {
	t.Parallel()
	// One participant cannot use a topic with two types: the plain side
	// is another context (process) in the same domain.
	domain := testenv.Domain(t)
	log := &syncBuffer{}
	rc := newContext(t, domain, log)
	other := newContext(t, domain, &syncBuffer{})
	stampedSub, err := rc.NewNode("stamped_sub", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Subscribe(stampedSub, "in", SubscriptionOptions{Stamped: true}, func(Command) {}); err != nil {
		t.Fatal(err)
	}
	stampedPub, err := rc.NewNode("stamped_pub", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Advertise(stampedPub, "out", PublisherOptions{Stamped: true, Frame: "base_link"}); err != nil {
		t.Fatal(err)
	}
	plain, err := other.NewNode("plain", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewPublisher[geometry_msgs_msg.Twist](plain, "in", ros.QoSDefault); err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewSubscription(plain, "out", ros.QoSDefault, func(*geometry_msgs_msg.Twist) {}); err != nil {
		t.Fatal(err)
	}
	wantSub := "/in: this node subscribes geometry_msgs/msg/TwistStamped (enable_stamped_cmd_vel is true) but its publishers (/plain)"
	wantPub := "/out: this node publishes geometry_msgs/msg/TwistStamped (enable_stamped_cmd_vel is true) but its subscribers (/plain)"
	testenv.WaitFor(t, waitLimit, "both mismatch warnings", func() bool {
		s := log.String()
		return strings.Contains(s, wantSub) && strings.Contains(s, wantPub)
	})
	// Once each, even as the graph keeps changing.
	for i := range 3 {
		if _, err := rc.NewNode("churn"+string(rune('a'+i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if s := log.String(); strings.Count(s, wantSub) != 1 || strings.Count(s, wantPub) != 1 {
		t.Errorf("warnings repeated:\n%s", s)
	}
}
