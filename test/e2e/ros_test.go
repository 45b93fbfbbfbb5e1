// Package e2e holds multi-process tests: they build real executables, start
// them as separate processes and talk to them over Cyclone DDS. The peer of
// the ros tests, test/gopeer, is built once per run into a temporary
// directory.
//
// Every test uses its own ROS_DOMAIN_ID (15-21 belong to the ros tests
// here) and ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST, so nothing leaves the
// machine and parallel tests never hear each other. Timeouts are failure
// deadlines only; no assertion depends on timing. The tests are skipped
// with -short.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/msgs"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// deadline bounds every wait; reaching it is a failure, never a result.
const deadline = 60 * time.Second

// TestMain keeps the whole package on loopback: contexts of the test
// process that read the real environment (the other tests of this package
// rely on it) get ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and no peers,
// like the child processes.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// jazzyEnv and humbleEnv are the ROS environments of both sides of a test
// (plus ROS_DOMAIN_ID): loopback only.
var (
	jazzyEnv  = map[string]string{"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
	humbleEnv = map[string]string{"ROS_DISTRO": "humble", "ROS_LOCALHOST_ONLY": "1"}
)

// ---- helpers ----

// buildPeer returns the test/gopeer executable.
func buildPeer(t *testing.T) string {
	t.Helper()
	return testenv.Executable(t, "test/gopeer")
}

// proc is a running peer process.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// startNodes runs bin with args in domain with the ROS environment rosEnv
// (nil = jazzyEnv) and stops it at the end of the test.
func startNodes(t *testing.T, bin string, domain uint32, rosEnv map[string]string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	env := []string{}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); (strings.HasPrefix(k, "ROS_") && k != "ROS_LOG_DIR") || k == "CYCLONEDDS_URI" {
			continue
		}
		env = append(env, kv)
	}
	if rosEnv == nil {
		rosEnv = jazzyEnv
	}
	for k, v := range rosEnv {
		env = append(env, k+"="+v)
	}
	cmd.Env = append(env, fmt.Sprintf("ROS_DOMAIN_ID=%d", domain))
	w := testenv.LogWriter{T: t, Prefix: fmt.Sprintf("[%s %d] ", args[0], domain)}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", args[0], err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(p.stop)
	return p
}

// stop sends SIGTERM and waits for the process to exit (killing it if it
// does not within the deadline).
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(deadline):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// newContext creates a spinning Context of the test process on domain with
// the ROS environment rosEnv (nil = jazzyEnv).
func newContext(t *testing.T, domain uint32, rosEnv map[string]string) *ros.Context {
	t.Helper()
	if rosEnv == nil {
		rosEnv = jazzyEnv
	}
	getenv := func(k string) string { return rosEnv[k] }
	c, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, Getenv: getenv, NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "[test] "}})
	if err != nil {
		t.Fatalf("NewContext: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Spin(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func newNode(t *testing.T, c *ros.Context, name string) *ros.Node {
	t.Helper()
	n, err := c.NewNode(name, "")
	if err != nil {
		t.Fatalf("NewNode %s: %v", name, err)
	}
	return n
}

func waitGraph(t *testing.T, c *ros.Context, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := c.WaitForGraph(ctx, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func hasNodes(c *ros.Context, fqns ...string) bool {
	var have []string
	for _, n := range c.NodeNames() {
		have = append(have, n.FullyQualifiedName())
	}
	for _, f := range fqns {
		if !slices.Contains(have, f) {
			return false
		}
	}
	return true
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(deadline):
		var zero T
		t.Fatalf("%s: nothing received", what)
		return zero
	}
}

// fill sets every field of v to a deterministic non-zero value (sequences
// get two elements), so that a round trip exercises every field.
func fill(v reflect.Value, seed *int) {
	*seed++
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(*seed%2 == 1)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		v.SetInt(int64(-(*seed % 100)))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		v.SetUint(uint64(*seed % 200))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*seed) + 0.25)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d-ü", *seed))
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := 0; i < 2; i++ {
			fill(s.Index(i), seed)
		}
		v.Set(s)
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fill(v.Index(i), seed)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), seed)
			}
		}
	}
}

func topicSuffix(typeName string) string { return strings.ReplaceAll(typeName, "/", "_") }

// ---- tests ----

// roundTripTypes are the message kinds issue 2 lists.
var roundTripTypes = []string{
	"builtin_interfaces/msg/Time", "builtin_interfaces/msg/Duration",
	"std_msgs/msg/Header", "std_msgs/msg/String", "std_msgs/msg/Bool", "std_msgs/msg/Empty",
	"std_msgs/msg/Int32", "std_msgs/msg/Float64", "std_msgs/msg/Float64MultiArray", "std_msgs/msg/ColorRGBA",
	"geometry_msgs/msg/Point", "geometry_msgs/msg/Vector3", "geometry_msgs/msg/Quaternion",
	"geometry_msgs/msg/Pose", "geometry_msgs/msg/PoseStamped", "geometry_msgs/msg/PoseArray",
	"geometry_msgs/msg/Twist", "geometry_msgs/msg/TwistStamped", "geometry_msgs/msg/Transform",
	"geometry_msgs/msg/TransformStamped", "geometry_msgs/msg/Wrench",
	"sensor_msgs/msg/Joy", "sensor_msgs/msg/JointState",
	"nav_msgs/msg/Odometry", "nav_msgs/msg/OccupancyGrid",
	"tf2_msgs/msg/TFMessage", "rosgraph_msgs/msg/Clock", "rcl_interfaces/msg/Log",
	"rcl_interfaces/msg/ParameterEvent", "rmw_dds_common/msg/ParticipantEntitiesInfo",
}

func TestPubSubAcrossProcesses(t *testing.T) {
	domainPubSub := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process test")
	}
	t.Parallel()
	bin := buildPeer(t)
	reg := msgs.Registry()
	startNodes(t, bin, domainPubSub, nil, append([]string{"echo"}, roundTripTypes...)...)
	c := newContext(t, domainPubSub, nil)
	n := newNode(t, c, "prober")

	type endpoint struct {
		ti  *rosidl.TypeInfo
		pub *ros.DynamicPublisher
		sub *ros.Subscription
		got chan rosidl.Message
	}
	var eps []endpoint
	for _, name := range roundTripTypes {
		ti, err := reg.Message(name)
		if err != nil {
			t.Fatal(err)
		}
		ep := endpoint{ti: ti, got: make(chan rosidl.Message, 4)}
		if ep.pub, err = ros.NewDynamicPublisher(n, "/e2e/in/"+topicSuffix(name), ti, ros.QoSDefault); err != nil {
			t.Fatal(err)
		}
		got := ep.got
		if ep.sub, err = ros.NewDynamicSubscription(n, "/e2e/out/"+topicSuffix(name), ti, ros.QoSDefault, func(m rosidl.Message) { got <- m }); err != nil {
			t.Fatal(err)
		}
		eps = append(eps, ep)
	}
	// unmatched lists the topics not (yet) matched with the echo node, so
	// that a failed wait says where it stood.
	unmatched := func() []string {
		var out []string
		for _, ep := range eps {
			p, _ := ep.pub.SubscriptionCount()
			s, _ := ep.sub.PublisherCount()
			if p != 1 || s != 1 {
				out = append(out, fmt.Sprintf("%s (%d subscriptions, %d publishers)", topicSuffix(ep.ti.Name), p, s))
			}
		}
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := c.WaitForGraph(ctx, func() bool { return len(unmatched()) == 0 }); err != nil {
		t.Fatalf("waiting for the echo node to match every topic: %v; not matched: %s", err, strings.Join(unmatched(), ", "))
	}
	seed := 0
	for _, ep := range eps {
		m := ep.ti.New()
		fill(reflect.ValueOf(m).Elem(), &seed)
		if v, ok := m.(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				t.Fatalf("%s: filled message invalid: %v", ep.ti.Name, err)
			}
		}
		if err := ep.pub.Publish(m); err != nil {
			t.Fatalf("publish %s: %v", ep.ti.Name, err)
		}
		back := receive(t, ep.got, ep.ti.Name)
		if !reflect.DeepEqual(back, m) {
			t.Errorf("%s changed on the round trip:\n sent %+v\n got  %+v", ep.ti.Name, m, back)
		}
		if ep.sub.Malformed() != 0 {
			t.Errorf("%s: %d malformed samples", ep.ti.Name, ep.sub.Malformed())
		}
	}

	// A 1 MiB occupancy grid through the same echo.
	var grid *endpoint
	for i := range eps {
		if eps[i].ti.Name == "nav_msgs/msg/OccupancyGrid" {
			grid = &eps[i]
		}
	}
	big := &nav_msgs_msg.OccupancyGrid{Data: make([]int8, 1<<20)}
	big.Header.FrameId = "map"
	big.Info.Width, big.Info.Height, big.Info.Resolution = 1024, 1024, 0.05
	for i := range big.Data {
		big.Data[i] = int8(i*7%201 - 100)
	}
	if err := grid.pub.Publish(big); err != nil {
		t.Fatal(err)
	}
	back := receive(t, grid.got, "1 MiB OccupancyGrid").(*nav_msgs_msg.OccupancyGrid)
	if !reflect.DeepEqual(back, big) {
		t.Errorf("1 MiB OccupancyGrid changed on the round trip (len %d)", len(back.Data))
	}

	// The graph of the other process: topics, types, node names.
	infos := c.PublishersInfo("/e2e/out/std_msgs_msg_String")
	if len(infos) != 1 || infos[0].NodeName != "echo" || infos[0].NodeNamespace != "/" ||
		infos[0].TopicType != "std_msgs/msg/String" || infos[0].TopicTypeHash != std_msgs_msg.String_TypeInfo.Hash {
		t.Errorf("PublishersInfo(/e2e/out/std_msgs_msg_String) = %+v", infos)
	}
}

func TestServiceAcrossProcesses(t *testing.T) {
	domainService := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process test")
	}
	t.Parallel()
	bin := buildPeer(t)
	startNodes(t, bin, domainService, nil, "server")
	c := newContext(t, domainService, nil)
	n := newNode(t, c, "client")
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()

	set, err := ros.NewClient(n, "/server/set", std_srvs_srv.SetBool)
	if err != nil {
		t.Fatal(err)
	}
	trig, err := ros.NewClient(n, "/server/trigger", std_srvs_srv.Trigger)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	if err := trig.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := set.Call(ctx, &std_srvs_srv.SetBool_Request{Data: true})
	if err != nil || !resp.Success || resp.Message != "echo: true" {
		t.Fatalf("set(true) = %+v, %v", resp, err)
	}
	for i := 1; i <= 3; i++ {
		r, err := trig.Call(ctx, &std_srvs_srv.Trigger_Request{})
		if err != nil || r.Message != fmt.Sprintf("triggered %d", i) {
			t.Fatalf("trigger #%d = %+v, %v", i, r, err)
		}
	}
	// Concurrent calls of one client are matched to their own replies
	// (fewer than the QoS depth of 10, which bounds requests in flight).
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(v bool) {
			defer wg.Done()
			r, err := set.Call(ctx, &std_srvs_srv.SetBool_Request{Data: v})
			if err == nil && r.Message != fmt.Sprintf("echo: %v", v) {
				err = fmt.Errorf("set(%v) answered %q", v, r.Message)
			}
			errs <- err
		}(i%2 == 0)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}

	// From inside a subscription callback of the client's own node.
	results := make(chan string, 1)
	if _, err := ros.NewSubscription(n, "/kick", ros.QoSDefault, func(m *std_msgs_msg.Bool) {
		r, err := set.Call(ctx, &std_srvs_srv.SetBool_Request{Data: m.Data})
		if err != nil {
			results <- "error: " + err.Error()
			return
		}
		results <- r.Message
	}); err != nil {
		t.Fatal(err)
	}
	kick, err := ros.NewPublisher[std_msgs_msg.Bool](n, "/kick", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	waitGraph(t, c, "/kick to match", func() bool { k, _ := kick.SubscriptionCount(); return k == 1 })
	if err := kick.Publish(&std_msgs_msg.Bool{Data: false}); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, results, "call from callback"); got != "echo: false" {
		t.Errorf("call from callback: %s", got)
	}

	// Another binary calling from inside its own subscription callback.
	startNodes(t, bin, domainService, nil, "caller")
	trigger, err := ros.NewPublisher[std_msgs_msg.String](n, "/caller/trigger", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	answers := make(chan string, 1)
	if _, err := ros.NewSubscription(n, "/caller/result", ros.QoSDefault, func(m *std_msgs_msg.String) { answers <- m.Data }); err != nil {
		t.Fatal(err)
	}
	waitGraph(t, c, "the caller process", func() bool {
		a, _ := trigger.SubscriptionCount()
		return a == 1 && c.CountPublishers("/caller/result") == 1
	})
	if err := trigger.Publish(&std_msgs_msg.String{Data: "true"}); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, answers, "caller result"); got != "true -> echo: true" {
		t.Errorf("caller process answered %q", got)
	}

	// The service is visible in the graph with its node.
	s, err := c.ServiceNamesAndTypesByNode("server", "/")
	if err != nil {
		t.Fatalf("ServiceNamesAndTypesByNode: %v (nodes %+v)", err, c.NodeNames())
	}
	want := map[string]string{"/server/set": "std_srvs/srv/SetBool", "/server/trigger": "std_srvs/srv/Trigger"}
	for _, nt := range s {
		if typ, ok := want[nt.Name]; ok && len(nt.Types) == 1 && nt.Types[0] == typ {
			delete(want, nt.Name)
		}
	}
	if len(want) != 0 {
		t.Errorf("services of /server = %+v; missing %v", s, want)
	}
}

func TestClientWhoseServerAppearsLate(t *testing.T) {
	domainLate := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process test")
	}
	t.Parallel()
	bin := buildPeer(t)
	c := newContext(t, domainLate, nil)
	n := newNode(t, c, "early_client")
	cli, err := ros.NewClient(n, "/server/set", std_srvs_srv.SetBool)
	if err != nil {
		t.Fatal(err)
	}
	if cli.ServiceIsReady() {
		t.Fatal("service ready before any server exists")
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	waited := make(chan error, 1)
	go func() { waited <- cli.WaitForService(ctx) }()
	select {
	case err := <-waited:
		t.Fatalf("WaitForService returned %v before the server started", err)
	default:
	}
	server := startNodes(t, bin, domainLate, nil, "server")
	if err := receive(t, waited, "WaitForService"); err != nil {
		t.Fatal(err)
	}
	r, err := cli.Call(ctx, &std_srvs_srv.SetBool_Request{Data: true})
	if err != nil || r.Message != "echo: true" {
		t.Fatalf("Call = %+v, %v", r, err)
	}
	// The server goes away (SIGTERM shuts it down cleanly) and a new one
	// comes.
	server.stop()
	if server.err != nil {
		t.Errorf("server after SIGTERM: %v, want exit status 0", server.err)
	}
	waitGraph(t, c, "the server to leave", func() bool { return !cli.ServiceIsReady() && !hasNodes(c, "/server") })
	startNodes(t, bin, domainLate, nil, "server")
	if err := cli.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	r, err = cli.Call(ctx, &std_srvs_srv.SetBool_Request{Data: false})
	if err != nil || r.Message != "echo: false" {
		t.Fatalf("Call to the second server = %+v, %v", r, err)
	}
}

func testNodeList(t *testing.T, domain uint32, rosEnv map[string]string, distro ros.Distro) {
	bin := buildPeer(t)
	startNodes(t, bin, domain, rosEnv, "nodes", "/alpha", "/robot/beta", "/robot/arm/gamma")
	c := newContext(t, uint32(domain), rosEnv)
	if c.Distro() != distro {
		t.Fatalf("Distro = %v, want %v", c.Distro(), distro)
	}
	newNode(t, c, "observer")
	waitGraph(t, c, "the other process's nodes", func() bool {
		return hasNodes(c, "/alpha", "/robot/beta", "/robot/arm/gamma", "/observer")
	})
	var got []string
	for _, n := range c.NodeNames() {
		got = append(got, n.FullyQualifiedName())
	}
	if want := []string{"/alpha", "/observer", "/robot/arm/gamma", "/robot/beta"}; !reflect.DeepEqual(got, want) {
		t.Errorf("NodeNames = %q, want %q", got, want)
	}
	if c.MalformedDiscoveryInfo() != 0 {
		t.Errorf("%d malformed ros_discovery_info samples", c.MalformedDiscoveryInfo())
	}
}

func TestNodeListSeesOtherProcess(t *testing.T) {
	domainNodeList := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process test")
	}
	t.Parallel()
	testNodeList(t, domainNodeList, jazzyEnv, ros.Jazzy)
}

func TestNodeListSeesOtherProcessHumble(t *testing.T) {
	domainHumble := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process test")
	}
	t.Parallel()
	testNodeList(t, domainHumble, humbleEnv, ros.Humble)
}

func TestParallelTestsDoNotHearEachOther(t *testing.T) {
	domainParallelA := testenv.Domain(t)
	domainParallelB := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process test")
	}
	t.Parallel()
	bin := buildPeer(t)
	for _, tc := range []struct {
		domain uint32
		text   string
	}{{domainParallelA, "from A"}, {domainParallelB, "from B"}} {
		t.Run(tc.text, func(t *testing.T) {
			t.Parallel()
			startNodes(t, bin, tc.domain, nil, "talker", tc.text)
			c := newContext(t, uint32(tc.domain), nil)
			n := newNode(t, c, "listener")
			got := make(chan string, 1000)
			if _, err := ros.NewSubscription(n, "/crosstalk", ros.QoSDefault, func(m *std_msgs_msg.String) { got <- m.Data }); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 30; i++ {
				if s := receive(t, got, "crosstalk"); s != tc.text {
					t.Fatalf("message %d = %q, want only %q", i, s, tc.text)
				}
			}
			if names := c.NodeNames(); len(names) != 2 {
				t.Errorf("NodeNames = %+v, want only /listener and this domain's /talker", names)
			}
			if pubs := c.CountPublishers("/crosstalk"); pubs != 1 {
				t.Errorf("%d publishers on /crosstalk, want 1", pubs)
			}
		})
	}
}
