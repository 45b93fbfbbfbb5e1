// Package bagtest checks fsmnodes bag record, info and play with real
// processes over Cyclone DDS, each test in its own domains: a recording of
// live publishers read back and played into a second domain, and a
// recorded teleoperation session with an e-stop that, played into a fresh
// RSM graph, drives rsmNode through the same transitions, while the
// flight recorder keeps the seconds before the e-stop.
package bagtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/bag"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	fsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/fsm_msgs/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rosgraph_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rosgraph_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

func TestMain(m *testing.M) {
	testenv.DefaultParallel(2)
	os.Exit(testenv.Main(m))
}

// wait bounds every wait of these tests; reaching it is a failure.
const wait = 60 * time.Second

func node(t *testing.T, domain uint32, name string) *ros.Node {
	t.Helper()
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "[" + name + "] "}})
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

// collector keeps the messages a subscription received.
type collector[T any] struct {
	mu  sync.Mutex
	got []T
}

func (c *collector[T]) add(v T) { c.mu.Lock(); c.got = append(c.got, v); c.mu.Unlock() }
func (c *collector[T]) all() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.got)
}

// startRecord starts `fsmnodes bag record args...` in domain and waits
// until it has subscribed to each of topics.
func startRecord(t *testing.T, domain uint32, name string, topics []string, args ...string) *testenv.Process {
	t.Helper()
	p := testenv.Start(t, name, testenv.Env(domain), testenv.Executable(t, "cmd/fsmnodes"), append([]string{"bag", "record"}, args...)...)
	for _, topic := range topics {
		p.WaitOutput(t, wait, regexp.MustCompile(`Subscribed to topic '`+regexp.QuoteMeta(topic)+`'`))
	}
	return p
}

func stop(t *testing.T, p *testenv.Process) {
	t.Helper()
	for _, problem := range p.Stop() {
		t.Error(problem)
	}
}

func TestRecordInfoPlay(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	t.Parallel()
	recDomain, playDomain := testenv.Domain(t), testenv.Domain(t)
	dir := filepath.Join(t.TempDir(), "talk")

	pubNode := node(t, recDomain, "talker")
	chatter, err := ros.NewPublisher[std_msgs_msg.String](pubNode, "/chatter", ros.QoSDefault.KeepLast(7))
	if err != nil {
		t.Fatal(err)
	}
	latched, err := ros.NewPublisher[std_msgs_msg.String](pubNode, "/latched", ros.QoSLatched)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ros.NewPublisher[std_msgs_msg.String](pubNode, "/excluded", ros.QoSDefault); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, "the talker's node in the graph", func() bool { return len(pubNode.Context().PublishersInfo("/latched")) > 0 })
	if err := latched.Publish(&std_msgs_msg.String{Data: "latched before the recorder"}); err != nil {
		t.Fatal(err)
	}
	rec := startRecord(t, recDomain, "record", []string{"/chatter", "/latched"},
		"-a", "-x", "^/(excluded|rosout|parameter_events|diagnostics)$", "-d", "1", "-o", dir)
	// The first message only once the recorder's reader is matched (its
	// "Subscribed" line can come before the match).
	testenv.WaitFor(t, wait, "the recorder matched on /chatter", func() bool {
		n, err := chatter.SubscriptionCount()
		return err == nil && n > 0
	})
	const n = 40
	for i := 0; i < n; i++ {
		if err := chatter.Publish(&std_msgs_msg.String{Data: fmt.Sprintf("hello %d", i)}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	stop(t, rec)
	if !strings.Contains(rec.Output(), fmt.Sprintf("Recorded %d messages on 2 topics", n+1)) {
		t.Errorf("record's summary:\n%s", rec.Output())
	}

	b, err := bag.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := b.Metadata
	if len(m.Files) < 2 {
		t.Errorf("2 s split every second: %d files", len(m.Files))
	}
	ch, ok1 := b.Topic("/chatter")
	lt, ok2 := b.Topic("/latched")
	if !ok1 || !ok2 || len(m.Topics) != 2 || ch.MessageCount != n || lt.MessageCount != 1 {
		t.Fatalf("topics: %+v", m.Topics)
	}
	if len(ch.OfferedQoS) != 1 || ch.OfferedQoS[0].Depth != 7 || lt.OfferedQoS[0].Durability != ros.DurabilityTransientLocal {
		t.Errorf("offered QoS: %+v / %+v", ch.OfferedQoS, lt.OfferedQoS)
	}
	if !strings.HasPrefix(ch.TypeHash, "RIHS01_") || !strings.Contains(ch.Schema, "string data") {
		t.Errorf("type hash %q, schema %q", ch.TypeHash, ch.Schema)
	}

	out, _, ok := testenv.CLI(t, playDomain, "bag", "info", dir)
	if !ok || !strings.Contains(out, fmt.Sprintf("Topic: /chatter | Type: std_msgs/msg/String | Count: %d | Serialization Format: cdr", n)) ||
		!strings.Contains(out, "Storage id:        mcap") || !strings.Contains(out, fmt.Sprintf("Messages:          %d", n+1)) {
		t.Errorf("bag info:\n%s", out)
	}

	// Play /chatter as /renamed at twice the speed, with /clock.
	sub := node(t, playDomain, "listener")
	var got collector[string]
	if _, err := ros.NewSubscription(sub, "/renamed", ros.QoSDefault.KeepLast(100), func(m *std_msgs_msg.String) { got.add(m.Data) }); err != nil {
		t.Fatal(err)
	}
	var clock collector[time.Time]
	if _, err := ros.NewSubscription(sub, "/clock", ros.QoSClock, func(m *rosgraph_msgs_msg.Clock) {
		clock.add(time.Unix(int64(m.Clock.Sec), int64(m.Clock.Nanosec)))
	}); err != nil {
		t.Fatal(err)
	}
	_, errOut, ok := testenv.CLI(t, playDomain, "bag", "play", dir, "--rate", "2", "--clock", "50", "--topics", "/chatter", "-m", "/chatter:=/renamed", "--delay", "1.5")
	if !ok || !strings.Contains(errOut, fmt.Sprintf("Published %d messages", n)) {
		t.Fatalf("bag play:\n%s", errOut)
	}
	testenv.WaitFor(t, wait, "the played messages", func() bool { return len(got.all()) >= n })
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("hello %d", i)
	}
	if g := got.all(); !slices.Equal(g, want) {
		t.Errorf("played:\n%q\nwant\n%q", g, want)
	}
	cl := clock.all()
	if len(cl) < 5 || cl[0].Before(m.Start) || cl[len(cl)-1].After(m.End().Add(time.Second)) || !slices.IsSortedFunc(cl, func(a, b time.Time) int { return a.Compare(b) }) {
		t.Errorf("/clock: %d stamps from %v to %v; bag from %v to %v", len(cl), cl[0], cl[len(cl)-1], m.Start, m.End())
	}

	// --loop plays the bag again until stopped.
	var looped collector[string]
	if _, err := ros.NewSubscription(sub, "/looped", ros.QoSDefault.KeepLast(100), func(m *std_msgs_msg.String) { looped.add(m.Data) }); err != nil {
		t.Fatal(err)
	}
	loop := testenv.Start(t, "play --loop", testenv.Env(playDomain), testenv.Executable(t, "cmd/fsmnodes"),
		"bag", "play", dir, "--loop", "--rate", "10", "--topics", "/chatter", "-m", "/chatter:=/looped", "--delay", "1")
	testenv.WaitFor(t, wait, "the bag played three times", func() bool { return len(looped.all()) >= 3*n })
	stop(t, loop)
	if l := looped.all(); l[n] != "hello 0" || l[2*n] != "hello 0" || l[2*n-1] != fmt.Sprintf("hello %d", n-1) {
		t.Errorf("looped: %q", l[:3*n])
	}

	// Refused: an existing output directory, a missing bag, a bad rate.
	for _, args := range [][]string{
		{"bag", "record", "-a", "-o", dir},
		{"bag", "play", filepath.Join(dir, "nope")},
		{"bag", "play", dir, "--rate", "-1"},
		{"bag", "record"},
	} {
		if _, e, ok := testenv.CLI(t, playDomain, args...); ok || e == "" {
			t.Errorf("%v accepted: %s", args, e)
		}
	}
}

// stateSeq follows rsmNode's state: its /rsm/stateInfo messages.
func stateSeq(t *testing.T, n *ros.Node) *collector[string] {
	t.Helper()
	var c collector[string]
	if _, err := ros.NewSubscription(n, "/rsm/stateInfo", ros.QoSDefault.KeepLast(100), func(m *std_msgs_msg.String) { c.add(m.Data) }); err != nil {
		t.Fatal(err)
	}
	return &c
}

// waitState waits until rsmNode's /rsm/stateInfo service names state.
func waitState(t *testing.T, n *ros.Node, state string) {
	t.Helper()
	c, err := ros.NewClient(n, "/rsm/stateInfo", std_srvs_srv.Trigger)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var last string
	testenv.WaitFor(t, wait, "rsmNode in "+state, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		r, err := c.Call(ctx, &std_srvs_srv.Trigger_Request{})
		if err == nil {
			last = r.Message
		}
		return err == nil && r.Message == state
	})
	_ = last
}

// edge is one transition of a machine as "machine: from -> to: cause".
func edge(m *fsm_msgs_msg.Transition) string {
	return m.Machine + ": " + m.FromState + " -> " + m.ToState + ": " + m.Cause
}

func dedup(s []string) []string {
	var out []string
	for _, v := range s {
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

func TestTeleopEStopSession_FlightRecorderAndReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	t.Parallel()
	liveDomain, replayDomain := testenv.Domain(t), testenv.Domain(t)
	tmp := t.TempDir()
	dir, snaps := filepath.Join(tmp, "session"), filepath.Join(tmp, "flight")

	// The live graph: the RSM core (mux, service provider, rsmNode, boot).
	testenv.Launch(t, liveDomain, "launch/rsm.launch.xml", "waypoints_file:="+filepath.Join(tmp, "wp.yaml"))
	live := node(t, liveDomain, "operator")
	waitState(t, live, "Idle")
	liveStates := stateSeq(t, live)
	teleop, err := ros.NewPublisher[geometry_msgs_msg.Twist](live, "/teleoperation/cmd_vel", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	topics := []string{"/rsm/operationMode", "/rsm/stateInfo", "/teleoperation/cmd_vel", "/cmd_vel", "/rsmNode/fsm/transition"}
	rec := startRecord(t, liveDomain, "record", topics, append(slices.Clone(topics), "-o", dir)...)
	flight := startRecord(t, liveDomain, "flight", []string{"/rsm/operationMode", "/teleoperation/cmd_vel"},
		"-a", "--snapshot-duration", "4", "--snapshot-holdoff", "1", "-o", snaps)

	testenv.WaitFor(t, wait, "the mux to match the teleop publisher", func() bool { n, _ := teleop.SubscriptionCount(); return n >= 2 })
	// drive publishes teleop commands every 100 ms until stop is ready.
	drive := func(stop <-chan time.Time) {
		for {
			if err := teleop.Publish(&geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 0.2}}); err != nil {
				t.Error(err)
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	setMode := func(estop bool) {
		t.Helper()
		v := fmt.Sprintf("{operation_mode: {emergency_stop: %t, mode: 0}}", estop)
		if out, e, ok := testenv.CLI(t, liveDomain, "service", "call", "/rsm/setOperationMode", "rsm_msgs/srv/SetOperationMode", v); !ok || !strings.Contains(out, "success=True") {
			t.Fatalf("setOperationMode %s: %s %s", v, out, e)
		}
	}
	// The session: drive, let go (the idle timer stops), drive again and
	// press the e-stop while driving, release it. The second drive lasts
	// until the e-stop call has returned: on a loaded machine the CLI's
	// call took seconds, and a drive of fixed length had ended before the
	// e-stop, leaving the snapshot of the seconds before it without a
	// teleop command (fresh-clone run 39).
	sessionStart := time.Now()
	drive(time.After(1500 * time.Millisecond))
	time.Sleep(1500 * time.Millisecond)
	stopDriving := make(chan time.Time)
	drove := make(chan struct{})
	go func() {
		defer close(drove)
		drive(stopDriving)
	}()
	endDrive := sync.OnceFunc(func() { close(stopDriving); <-drove })
	defer endDrive() // also when setMode fails the test
	time.Sleep(time.Second)
	estopAt := time.Now()
	setMode(true)
	endDrive()
	time.Sleep(1500 * time.Millisecond)
	setMode(false)
	time.Sleep(1500 * time.Millisecond)
	stop(t, rec)
	stop(t, flight)
	recorded := dedup(liveStates.all())
	if len(recorded) < 4 || !slices.Contains(recorded, "Teleoperation") || !slices.Contains(recorded, "Emergency Stop") {
		t.Fatalf("live rsmNode states: %q", recorded)
	}

	// The bag holds the same sequence of states.
	b, err := bag.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var inBag []string
	err = b.Messages([]string{"/rsm/stateInfo"}, func(m *bag.Message) error {
		var s std_msgs_msg.String
		if err := rosidl.Unmarshal(m.Data, &s); err != nil {
			return err
		}
		inBag = append(inBag, s.Data)
		return nil
	})
	if err != nil || !slices.Equal(dedup(inBag), recorded) {
		t.Errorf("bag's /rsm/stateInfo %q (%v), live %q", inBag, err, recorded)
	}
	// rsmNode's own transitions (~/fsm/transition, docs/fsm.md) with their
	// causes, as recorded.
	var recordedEdges []string
	err = b.Messages([]string{"/rsmNode/fsm/transition"}, func(m *bag.Message) error {
		var tr fsm_msgs_msg.Transition
		if err := rosidl.Unmarshal(m.Data, &tr); err != nil {
			return err
		}
		recordedEdges = append(recordedEdges, edge(&tr))
		return nil
	})
	if err != nil || len(recordedEdges) < len(recorded) {
		t.Errorf("bag's /rsmNode/fsm/transition: %q (%v)", recordedEdges, err)
	}

	// The flight recorder wrote the seconds before the e-stop.
	entries, err := os.ReadDir(snaps)
	if err != nil {
		t.Fatal(err)
	}
	var estopBag *bag.Bag
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		if strings.HasSuffix(e.Name(), "_estop") {
			if estopBag, err = bag.Open(filepath.Join(snaps, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	if estopBag == nil {
		t.Fatalf("no e-stop snapshot in %s: %v\n%s", snaps, names, flight.Output())
	}
	ev, ok := bag.EventOf(estopBag.Metadata)
	// The mux publishes its transitions (docs/fsm.md): the trigger is the
	// operation_mode machine's own.
	// From TELEOPERATION, or STOPPED when the teleop idle timer ran out
	// first (a loaded machine, the e-stop call late).
	if !ok || ev.Kind != "estop" || ev.Topic != "/robotControlMuxNode/fsm/transition" || ev.Machine != "operation_mode" ||
		(ev.From != "TELEOPERATION" && ev.From != "STOPPED") || ev.To != "E-STOP/STOPPED" || ev.Cause == "" {
		t.Errorf("trigger: %+v", ev)
	}
	sm := estopBag.Metadata
	if tc, _ := estopBag.Topic("/teleoperation/cmd_vel"); tc.MessageCount < 5 || ev.Time.Sub(sm.Start) < 3*time.Second || sm.End().Before(ev.Time) || ev.Time.Before(estopAt.Add(-time.Second)) {
		t.Errorf("snapshot from %v to %v, %d teleop commands; e-stop at %v", sm.Start, sm.End(), tc.MessageCount, ev.Time)
	}
	info, _, _ := testenv.CLI(t, replayDomain, "bag", "info", estopBag.Dir)
	if !strings.Contains(info, "Trigger:           estop on /robotControlMuxNode/fsm/transition: operation_mode "+ev.From+" -> E-STOP/STOPPED") {
		t.Errorf("bag info of the snapshot:\n%s", info)
	}

	// Replay: a fresh RSM graph without the mux; the player stands in for
	// it (rsmNode trusts only robotControlMuxNode's operation mode).
	testenv.Launch(t, replayDomain, "test/bag/testdata/rsm_without_mux.launch.xml", "waypoints_file:="+filepath.Join(tmp, "wp2.yaml"))
	fresh := node(t, replayDomain, "observer")
	waitState(t, fresh, "Idle")
	replayStates := stateSeq(t, fresh)
	var replayEdges collector[string]
	if _, err := ros.NewSubscription(fresh, "/rsmNode/fsm/transition", ros.QoSLatched.KeepLast(100), func(m *fsm_msgs_msg.Transition) { replayEdges.add(edge(m)) }); err != nil {
		t.Fatal(err)
	}
	// The play takes as long as the session did, which on a loaded machine
	// was 37 s (slow CLI calls): more than CLITimeout.
	if _, e, ok := testenv.CLIWithin(t, replayDomain, time.Since(sessionStart)+testenv.CLITimeout, "bag", "play", dir, "--topics", "/rsm/operationMode", "--node-name", "/robotControlMuxNode", "--delay", "1.5"); !ok {
		t.Fatalf("bag play: %s", e)
	}
	testenv.WaitFor(t, wait, "the replayed transitions", func() bool { return len(dedup(replayStates.all())) >= len(recorded) })
	time.Sleep(500 * time.Millisecond)
	if replayed := dedup(replayStates.all()); !slices.Equal(replayed, recorded) {
		t.Errorf("replayed states %q, recorded %q", replayed, recorded)
	} else {
		t.Logf("recorded and replayed rsmNode states: %q", recorded)
	}
	// The same edges with the same causes: the recording's (its history
	// from the start included) and the fresh rsmNode's since its start.
	testenv.WaitFor(t, wait, "the fresh rsmNode's transitions", func() bool { return len(replayEdges.all()) >= len(recordedEdges) })
	if got := replayEdges.all(); !slices.Equal(got, recordedEdges) {
		t.Errorf("replayed rsmNode transitions:\n  %s\nrecorded:\n  %s", strings.Join(got, "\n  "), strings.Join(recordedEdges, "\n  "))
	} else {
		t.Logf("recorded and replayed rsmNode transitions (from -> to: cause):\n  %s", strings.Join(got, "\n  "))
	}
}
