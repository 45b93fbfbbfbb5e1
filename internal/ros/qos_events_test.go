package ros

import (
	"context"
	"io"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// logContext is a spinning Context (like newTestContext) whose console
// output is also kept in out.
func logContext(t *testing.T, domain uint32, out *syncBuffer) *Context {
	t.Helper()
	c, err := NewContext(ContextOptions{Args: []string{"--ros-args", "--disable-rosout-logs"}, DomainID: &domain, Getenv: testEnv,
		NoSignals: true, LogOutput: io.MultiWriter(out, testenv.LogWriter{T: t})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Spin(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		c.Close()
	})
	return c
}

// eventLog records event infos of one kind, checking that each callback
// runs on its node's callback goroutine.
type eventLog[T any] struct {
	t   *testing.T
	n   *Node
	mu  sync.Mutex
	got []T
}

func (l *eventLog[T]) add(v T) {
	if !l.n.OnCallbackGoroutine() {
		l.t.Error("event callback not on the node's callback goroutine")
	}
	l.mu.Lock()
	l.got = append(l.got, v)
	l.mu.Unlock()
}

func (l *eventLog[T]) wait(what string, ok func(T) bool) T {
	l.t.Helper()
	var v T
	testenv.WaitFor(l.t, failAfter, what, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		for i := len(l.got) - 1; i >= 0; i-- {
			if ok(l.got[i]) {
				v = l.got[i]
				return true
			}
		}
		return false
	})
	return v
}

// Without callbacks, a publisher and a subscription of two Contexts whose
// QoS does not match each log rclcpp's warning, word for word.
func TestIncompatibleQoSDefaultWarnings(t *testing.T) {
	domain := testenv.Domain(t)
	t.Parallel()
	var pubOut, subOut syncBuffer
	talker := mustNode(t, logContext(t, domain, &pubOut), "talker", "")
	listener := mustNode(t, logContext(t, domain, &subOut), "listener", "")
	if _, err := NewSubscription(listener, "chatter", QoSDefault, func(*std_msgs_msg.String) {}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewPublisher[std_msgs_msg.String](talker, "chatter", QoSSensorData); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		who  string
		out  *syncBuffer
		want string
	}{
		{"subscription", &subOut, "[WARN] [listener]: New publisher discovered on topic '/chatter', offering incompatible QoS. No messages will be sent to it. Last incompatible policy: RELIABILITY_QOS_POLICY"},
		{"publisher", &pubOut, "[WARN] [talker]: New subscription discovered on topic '/chatter', requesting incompatible QoS. No messages will be sent to it. Last incompatible policy: RELIABILITY_QOS_POLICY"},
	} {
		testenv.WaitFor(t, failAfter, "the "+tc.who+"'s warning", func() bool {
			return strings.Contains(stripStamps(tc.out.String()), tc.want)
		})
	}
}

// stripStamps removes the "[<seconds>] " time stamps of log lines.
func stripStamps(s string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if i := strings.Index(line, "] ["); i >= 0 {
			if j := strings.Index(line[i+3:], "] "); j >= 0 {
				line = line[:i+2] + line[i+3+j+2:]
			}
		}
		b.WriteString(line)
	}
	return b.String()
}

// An IncompatibleQoS callback replaces the warning and names the policy;
// event options of the wrong kind are refused.
func TestIncompatibleQoSCallbacks(t *testing.T) {
	domain := testenv.Domain(t)
	t.Parallel()
	var out syncBuffer
	n := mustNode(t, logContext(t, domain, &out), "node", "")
	other := mustNode(t, newTestContext(t, domain), "other", "")
	subLog := &eventLog[IncompatibleQoSInfo]{t: t, n: n}
	pubLog := &eventLog[IncompatibleQoSInfo]{t: t, n: other}
	if _, err := NewSubscription(n, "latched", QoSLatched, func(*std_msgs_msg.String) {},
		WithSubscriptionEvents(SubscriptionEventCallbacks{IncompatibleQoS: subLog.add})); err != nil {
		t.Fatal(err)
	}
	if _, err := NewPublisher[std_msgs_msg.String](other, "latched", QoSDefault,
		WithPublisherEvents(PublisherEventCallbacks{IncompatibleQoS: pubLog.add})); err != nil {
		t.Fatal(err)
	}
	for who, l := range map[string]*eventLog[IncompatibleQoSInfo]{"subscription": subLog, "publisher": pubLog} {
		info := l.wait("the "+who+"'s callback", func(IncompatibleQoSInfo) bool { return true })
		if info.LastPolicyKind != QoSPolicyDurability || info.LastPolicyKind.String() != "DURABILITY_QOS_POLICY" ||
			info.TotalCount != 1 || info.TotalCountChange != 1 {
			t.Errorf("%s: %+v", who, info)
		}
	}
	if strings.Contains(out.String(), "incompatible QoS") {
		t.Errorf("warning logged although a callback was set:\n%s", out.String())
	}
	if _, err := NewPublisher[std_msgs_msg.String](n, "x", QoSDefault, WithSubscriptionEvents(SubscriptionEventCallbacks{})); err == nil {
		t.Error("publisher accepted subscription event callbacks")
	}
	if _, err := NewSubscription(n, "x", QoSDefault, func(*std_msgs_msg.String) {}, WithPublisherEvents(PublisherEventCallbacks{})); err == nil {
		t.Error("subscription accepted publisher event callbacks")
	}
}

// A publisher that stops publishing misses its offered deadline and its
// subscription the requested one; both callbacks run, again and again.
func TestDeadlineCallbacks(t *testing.T) {
	domain := testenv.Domain(t)
	t.Parallel()
	a := mustNode(t, newTestContext(t, domain), "a", "")
	b := mustNode(t, newTestContext(t, domain), "b", "")
	q := QoSDefault
	q.Deadline = 50 * time.Millisecond
	subLog := &eventLog[DeadlineMissedInfo]{t: t, n: a}
	pubLog := &eventLog[DeadlineMissedInfo]{t: t, n: b}
	got := make(chan string, 10)
	if _, err := NewSubscription(a, "beat", q, func(m *std_msgs_msg.String) { got <- m.Data },
		WithSubscriptionEvents(SubscriptionEventCallbacks{Deadline: subLog.add})); err != nil {
		t.Fatal(err)
	}
	pub, err := NewPublisher[std_msgs_msg.String](b, "beat", q, WithPublisherEvents(PublisherEventCallbacks{Deadline: pubLog.add}))
	if err != nil {
		t.Fatal(err)
	}
	waitGraph(t, b.Context(), "the match", func() bool { n, _ := pub.SubscriptionCount(); return n == 1 })
	if err := pub.Publish(&std_msgs_msg.String{Data: "one"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(failAfter):
		t.Fatal("message not received")
	}
	three := func(i DeadlineMissedInfo) bool { return i.TotalCount >= 3 && i.TotalCountChange >= 1 }
	subLog.wait("three requested deadlines missed", three)
	pubLog.wait("three offered deadlines missed", three)
}

// A manual-by-topic publisher is alive while it asserts its liveliness:
// when it stops, its Liveliness callback reports the loss and the
// subscription's reports the publisher not alive; asserting again brings
// it back.
func TestLivelinessCallbacks(t *testing.T) {
	domain := testenv.Domain(t)
	t.Parallel()
	a := mustNode(t, newTestContext(t, domain), "a", "")
	b := mustNode(t, newTestContext(t, domain), "b", "")
	q := QoSDefault
	q.Liveliness = LivelinessManualByTopic
	q.LivelinessLeaseDuration = 200 * time.Millisecond
	subLog := &eventLog[LivelinessChangedInfo]{t: t, n: a}
	pubLog := &eventLog[LivelinessLostInfo]{t: t, n: b}
	if _, err := NewSubscription(a, "alive", q, func(*std_msgs_msg.String) {},
		WithSubscriptionEvents(SubscriptionEventCallbacks{Liveliness: subLog.add})); err != nil {
		t.Fatal(err)
	}
	pub, err := NewPublisher[std_msgs_msg.String](b, "alive", q, WithPublisherEvents(PublisherEventCallbacks{Liveliness: pubLog.add}))
	if err != nil {
		t.Fatal(err)
	}
	waitGraph(t, b.Context(), "the match", func() bool { n, _ := pub.SubscriptionCount(); return n == 1 })
	if err := pub.AssertLiveliness(); err != nil {
		t.Fatal(err)
	}
	subLog.wait("the publisher alive", func(i LivelinessChangedInfo) bool { return i.AliveCount == 1 })
	lost := pubLog.wait("the publisher's liveliness lost", func(LivelinessLostInfo) bool { return true })
	if lost.TotalCount < 1 || lost.TotalCountChange < 1 {
		t.Errorf("lost: %+v", lost)
	}
	subLog.wait("the publisher not alive", func(i LivelinessChangedInfo) bool {
		return i.AliveCount == 0 && i.NotAliveCount == 1 && i.NotAliveCountChange >= 1
	})
	if err := pub.Publish(&std_msgs_msg.String{Data: "here"}); err != nil { // publishing asserts too
		t.Fatal(err)
	}
	subLog.wait("the publisher alive again", func(i LivelinessChangedInfo) bool { return i.AliveCount == 1 && i.NotAliveCount == 0 })
	pub.Close()
	if err := pub.AssertLiveliness(); err != ErrClosed {
		t.Errorf("AssertLiveliness after Close = %v, want ErrClosed", err)
	}
}

// Another process: a best-effort `fsmnodes topic pub` draws our reliable
// subscription's warning, and a reliable one that is killed leaves the
// subscription's liveliness callback counting one publisher fewer.
func TestQoSEventsWithAnotherProcess(t *testing.T) {
	domain := testenv.Domain(t)
	t.Parallel()
	var out syncBuffer
	n := mustNode(t, logContext(t, domain, &out), "listener", "")
	live := &eventLog[LivelinessChangedInfo]{t: t, n: n}
	got := make(chan struct{}, 100)
	if _, err := NewSubscription(n, "chatter", QoSDefault, func(*std_msgs_msg.String) {
		select {
		case got <- struct{}{}:
		default:
		}
	}, WithSubscriptionEvents(SubscriptionEventCallbacks{Liveliness: live.add})); err != nil {
		t.Fatal(err)
	}
	cli := testenv.Executable(t, "cmd/fsmnodes")
	env := testenv.Env(domain)
	testenv.Start(t, "best-effort-pub", env, cli, "topic", "pub", "/chatter", "std_msgs/msg/String", "{data: x}", "-r", "5", "--qos-reliability", "best_effort")
	testenv.WaitFor(t, failAfter, "the warning", func() bool {
		return strings.Contains(out.String(), "New publisher discovered on topic '/chatter', offering incompatible QoS. No messages will be sent to it. Last incompatible policy: RELIABILITY_QOS_POLICY")
	})
	p := testenv.Start(t, "reliable-pub", env, cli, "topic", "pub", "/chatter", "std_msgs/msg/String", "{data: y}", "-r", "5")
	select {
	case <-got:
	case <-time.After(failAfter):
		t.Fatal("no message from the reliable publisher")
	}
	live.wait("the publisher alive", func(i LivelinessChangedInfo) bool { return i.AliveCount == 1 })
	if err := syscall.Kill(p.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Its participant's lease runs out: the publisher is gone.
	live.wait("the killed publisher gone", func(i LivelinessChangedInfo) bool { return i.AliveCount == 0 && i.AliveCountChange < 0 })
}
