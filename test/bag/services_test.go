package bagtest

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/bag"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	service_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/service_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// jazzyNode is node with the Jazzy dialect fixed: service introspection
// came with Jazzy.
func jazzyNode(t *testing.T, domain uint32, name string) *ros.Node {
	t.Helper()
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, Distro: "jazzy", NoSignals: true,
		LogOutput: testenv.LogWriter{T: t, Prefix: "[" + name + "] "}})
	if err != nil {
		t.Fatal(err)
	}
	n, err := rc.NewNode(name, "/")
	if err != nil {
		rc.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = rc.Spin(ctx) }()
	t.Cleanup(func() { cancel(); <-done; rc.Close() })
	return n
}

// Services are recorded as rosbag2 (Jazzy) records them: the events a
// service and a client with introspection on publish on
// <service>/_service_event, type std_srvs/srv/Trigger_Event, selected by
// --services, --all-services, -a, -e (the service's name) and
// --exclude-services; bag info lists them as services, and each recorded
// event decodes with its request or response.
func TestRecordServices(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	t.Parallel()
	domain := testenv.Domain(t)
	root := t.TempDir()

	// The events are kept (transient local, 100 deep) so that a recorder
	// matched a little after a call still gets them all.
	eventQoS := ros.QoSLatched.KeepLast(100)
	server := jazzyNode(t, domain, "server")
	handler := func(reply string) func(context.Context, *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
		return func(context.Context, *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
			return &std_srvs_srv.Trigger_Response{Success: true, Message: reply}, nil
		}
	}
	ping, err := ros.NewService(server, "/ping", std_srvs_srv.Trigger, handler("pong"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := ros.NewService(server, "/other", std_srvs_srv.Trigger, handler("other"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*ros.Service{ping, other} {
		if err := s.ConfigureIntrospection(nil, eventQoS, ros.IntrospectionContents); err != nil {
			t.Fatal(err)
		}
	}
	chatter, err := ros.NewPublisher[std_msgs_msg.String](server, "/chatter", ros.QoSLatched)
	if err != nil {
		t.Fatal(err)
	}
	if err := chatter.Publish(&std_msgs_msg.String{Data: "a topic beside the services"}); err != nil {
		t.Fatal(err)
	}
	caller := jazzyNode(t, domain, "caller")
	pingCli, err := ros.NewClient(caller, "/ping", std_srvs_srv.Trigger)
	if err != nil {
		t.Fatal(err)
	}
	if err := pingCli.ConfigureIntrospection(nil, eventQoS, ros.IntrospectionContents); err != nil {
		t.Fatal(err)
	}
	otherCli, err := ros.NewClient(caller, "/other", std_srvs_srv.Trigger) // no events of its own
	if err != nil {
		t.Fatal(err)
	}

	const pings, others = 5, 2
	const pingEvents, otherEvents = 4 * pings, 2 * others // client and server events / server events only
	const pingTopic, otherTopic = "/ping/_service_event", "/other/_service_event"
	exclude := "^/(rosout|parameter_events|diagnostics)$"
	recorders := []struct {
		name   string
		args   []string
		counts map[string]uint64 // topic → messages
	}{
		{"services", []string{"--services", "ping"}, map[string]uint64{pingTopic: pingEvents}},
		{"all", []string{"-a", "-x", exclude}, map[string]uint64{pingTopic: pingEvents, otherTopic: otherEvents, "/chatter": 1}},
		{"all_services", []string{"--all-services", "--exclude-services", "/other"}, map[string]uint64{pingTopic: pingEvents}},
		{"regex", []string{"-e", "^/oth"}, map[string]uint64{otherTopic: otherEvents}},
		{"all_topics", []string{"--all-topics", "-x", exclude}, map[string]uint64{"/chatter": 1}},
	}
	env := append(testenv.Env(domain), "ROS_DISTRO=jazzy")
	procs := make([]*testenv.Process, len(recorders))
	for i, r := range recorders {
		args := append([]string{"bag", "record", "-o", filepath.Join(root, r.name), "--report-period", "0.2"}, r.args...)
		procs[i] = testenv.Start(t, "record "+r.name, env, testenv.Executable(t, "cmd/fsmnodes"), args...)
		for topic := range r.counts {
			procs[i].WaitOutput(t, wait, regexp.MustCompile(`Subscribed to topic '`+regexp.QuoteMeta(topic)+`'`))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for _, c := range []struct {
		cli interface {
			Call(context.Context, *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error)
		}
		n    int
		want string
	}{{pingCli, pings, "pong"}, {otherCli, others, "other"}} {
		for range c.n {
			resp, err := c.cli.Call(ctx, &std_srvs_srv.Trigger_Request{})
			if err != nil || resp.Message != c.want {
				t.Fatalf("call: %v, %+v", err, resp)
			}
		}
	}
	for i, r := range recorders {
		var total uint64
		for _, n := range r.counts {
			total += n
		}
		procs[i].WaitOutput(t, wait, regexp.MustCompile(fmt.Sprintf(`\]: %d messages \(`, total)))
		stop(t, procs[i])
	}

	for _, r := range recorders {
		b, err := bag.Open(filepath.Join(root, r.name))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]uint64{}
		for _, tp := range b.Metadata.Topics {
			got[tp.Name] = tp.MessageCount
			if bag.IsServiceEventTopic(tp.Name, tp.Type) && (tp.Type != "std_srvs/srv/Trigger_Event" || len(tp.OfferedQoS) == 0 ||
				tp.OfferedQoS[0].Durability != ros.DurabilityTransientLocal || !strings.HasPrefix(tp.TypeHash, "RIHS01_") ||
				!strings.HasPrefix(tp.Schema, "service_msgs/ServiceEventInfo info\n") || !strings.Contains(tp.Schema, "\nMSG: std_srvs/Trigger_Response\n")) {
				t.Errorf("%s: %s: type %s, QoS %+v, hash %q, schema:\n%s", r.name, tp.Name, tp.Type, tp.OfferedQoS, tp.TypeHash, tp.Schema)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(r.counts) {
			t.Errorf("%s (%v): recorded %v, want %v", r.name, r.args, got, r.counts)
		}
	}

	// bag info lists the services apart from the topics, as Jazzy's does.
	out, _, ok := testenv.CLI(t, domain, "bag", "info", filepath.Join(root, "all"))
	for _, want := range []string{
		"Messages:          1\n",
		"Topic information: Topic: /chatter | Type: std_msgs/msg/String | Count: 1 | Serialization Format: cdr\n",
		"Service:           2\n",
		fmt.Sprintf("Service: /other | Type: std_srvs/srv/Trigger | Event Count: %d | Serialization Format: cdr\n", otherEvents),
		fmt.Sprintf("Service: /ping | Type: std_srvs/srv/Trigger | Event Count: %d | Serialization Format: cdr\n", pingEvents),
	} {
		if !ok || !strings.Contains(out, want) {
			t.Errorf("bag info lacks %q:\n%s", want, out)
		}
	}

	// Every event decodes: each call of /ping as the client sent it, the
	// server received and answered it, and the client received the answer.
	b, err := bag.Open(filepath.Join(root, "services"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[uint8]int{}
	var seqs []int64
	err = b.Messages([]string{pingTopic}, func(m *bag.Message) error {
		var ev std_srvs_srv.Trigger_Event
		if err := rosidl.Unmarshal(m.Data, &ev); err != nil {
			return err
		}
		kinds[ev.Info.EventType]++
		switch ev.Info.EventType {
		case service_msgs_msg.ServiceEventInfo_REQUEST_SENT, service_msgs_msg.ServiceEventInfo_REQUEST_RECEIVED:
			if len(ev.Request) != 1 || len(ev.Response) != 0 {
				return fmt.Errorf("request event %+v", ev)
			}
		default:
			if len(ev.Request) != 0 || len(ev.Response) != 1 || ev.Response[0].Message != "pong" || !ev.Response[0].Success {
				return fmt.Errorf("response event %+v", ev)
			}
		}
		if ev.Info.EventType == service_msgs_msg.ServiceEventInfo_RESPONSE_RECEIVED {
			seqs = append(seqs, ev.Info.SequenceNumber)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := uint8(0); k < 4; k++ {
		if kinds[k] != pings {
			t.Errorf("event type %d: %d events, want %d (%v)", k, kinds[k], pings, kinds)
		}
	}
	slices.Sort(seqs)
	if len(seqs) != pings || seqs[0] == seqs[len(seqs)-1] {
		t.Errorf("sequence numbers of the answers received: %v", seqs)
	}

	// bag play publishes the events again on their topic.
	playDomain := testenv.Domain(t)
	listener := jazzyNode(t, playDomain, "listener")
	var played collector[uint8]
	if _, err := ros.NewSubscription(listener, pingTopic, ros.QoSDefault.KeepLast(100), func(m *std_srvs_srv.Trigger_Event) {
		played.add(m.Info.EventType)
	}); err != nil {
		t.Fatal(err)
	}
	if _, errOut, ok := testenv.CLI(t, playDomain, "bag", "play", filepath.Join(root, "services"), "--delay", "1.5"); !ok ||
		!strings.Contains(errOut, fmt.Sprintf("Published %d messages", pingEvents)) {
		t.Fatalf("bag play:\n%s", errOut)
	}
	testenv.WaitFor(t, wait, "the played events", func() bool { return len(played.all()) >= pingEvents })

	// Which services play, as ros2 bag play (Jazzy) chooses them: the
	// topic list does not limit the services, nor the service lists the
	// topics.
	all := filepath.Join(root, "all")
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"--services", "ping"}, pingEvents + 1},
		{[]string{"--topics", "/chatter"}, 1 + pingEvents + otherEvents},
		{[]string{"--topics", "/chatter", "--exclude-services", "/ping"}, 1 + otherEvents},
		{[]string{"--services", "/other", "--topics", "/chatter"}, 1 + otherEvents},
	} {
		args := append([]string{"bag", "play", all, "--delay", "0", "--rate", "100"}, c.args...)
		if _, errOut, ok := testenv.CLI(t, playDomain, args...); !ok || !strings.Contains(errOut, fmt.Sprintf("Published %d messages", c.want)) {
			t.Errorf("bag play %v: want %d messages:\n%s", c.args, c.want, errOut)
		}
	}
	if _, errOut, ok := testenv.CLI(t, playDomain, "bag", "play", all, "--services", "/nope"); ok || !strings.Contains(errOut, "service /nope is not in the bag") {
		t.Errorf("bag play --services /nope: %v\n%s", ok, errOut)
	}
}
