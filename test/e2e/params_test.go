package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	rcl_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/msg"
	rcl_interfaces_srv "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/srv"
	rosgraph_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rosgraph_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// pnDeadline bounds every wait of these tests; reaching it is a failure.
const pnDeadline = 60 * time.Second

// peerOrSkip returns the test/gopeer executable; -short skips the test.
func peerOrSkip(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("multi-process test")
	}
	return buildPeer(t)
}

// pnProc is a running peer process.
type pnProc struct {
	cmd    *exec.Cmd
	done   chan struct{}
	mu     sync.Mutex
	output strings.Builder
}

func (p *pnProc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.Write(b)
}

func (p *pnProc) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.String()
}

func pnEnv(domain uint32) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); (strings.HasPrefix(k, "ROS_") && k != "ROS_LOG_DIR") || k == "CYCLONEDDS_URI" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, fmt.Sprintf("ROS_DOMAIN_ID=%d", domain), "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST")
}

// startPeer runs peer with args in domain; it is stopped
// (SIGTERM) at the end of the test and its output is logged.
func startPeer(t *testing.T, domain uint32, args ...string) *pnProc {
	t.Helper()
	p := &pnProc{cmd: exec.Command(peerOrSkip(t), args...), done: make(chan struct{})}
	p.cmd.Env = pnEnv(domain)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start peer %v: %v", args, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop()
		t.Logf("peer %v output:\n%s", args, p.text())
	})
	return p
}

func (p *pnProc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(pnDeadline):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// runPeerFailing runs peer expecting it to exit with an error
// before the deadline and returns its output.
func runPeerFailing(t *testing.T, domain uint32, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), pnDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, peerOrSkip(t), args...)
	cmd.Env = pnEnv(domain)
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("peer %v: err = %v (ctx %v), want a failing exit\n%s", args, err, ctx.Err(), out)
	}
	return string(out)
}

// pnContext is a spinning Context of the test process on domain.
func pnContext(t *testing.T, domain uint32) *ros.Context {
	t.Helper()
	c, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "[test] "}})
	if err != nil {
		t.Fatalf("NewContext: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Spin(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func pnWait(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), pnDeadline)
	t.Cleanup(cancel)
	return ctx
}

// pnWaitFor polls cond until it holds; ctx's deadline is a failure.
func pnWaitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		}
	}
}

// pnCall waits for a service and calls it once.
func pnCall[Req, Resp any](t *testing.T, n *ros.Node, name string, srv rosidl.Service[Req, Resp], req *Req) *Resp {
	t.Helper()
	cli, err := ros.NewClient(n, name, srv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := pnWait(t)
	if err := cli.WaitForService(ctx); err != nil {
		t.Fatalf("waiting for %s: %v", name, err)
	}
	resp, err := cli.Call(ctx, req)
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return resp
}

func getParams(t *testing.T, n *ros.Node, names ...string) []rcl_interfaces_msg.ParameterValue {
	t.Helper()
	return pnCall(t, n,
		"/param_node/get_parameters", rcl_interfaces_srv.GetParameters, &rcl_interfaces_srv.GetParameters_Request{Names: names}).Values
}

func TestParams_FromYAMLFileAndCommandLine(t *testing.T) {
	domainParamsFile := testenv.Domain(t)
	file := filepath.Join(t.TempDir(), "params.yaml")
	yaml := `# wildcard first, exact node key wins
/**:
  ros__parameters:
    rate: 20.0
    mode: wildcard
param_node:
  ros__parameters:
    mode: from_file
    ids: [3, 4, 5]
some_other_node:
  ros__parameters:
    limit: 99
`
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	startPeer(t, domainParamsFile, "params", "--ros-args", "--params-file", file, "-p", "rate:=55.5")
	n, err := pnContext(t, domainParamsFile).NewNode("checker", "")
	if err != nil {
		t.Fatal(err)
	}
	v := getParams(t, n, "rate", "mode", "ids", "limit", "use_sim_time")
	if len(v) != 5 {
		t.Fatalf("get_parameters = %+v", v)
	}
	if v[0].DoubleValue != 55.5 {
		t.Errorf("rate = %v, want 55.5 from -p (over the file's 20.0)", v[0].DoubleValue)
	}
	if v[1].StringValue != "from_file" {
		t.Errorf("mode = %q, want from_file (exact key over /**)", v[1].StringValue)
	}
	if fmt.Sprint(v[2].IntegerArrayValue) != "[3 4 5]" {
		t.Errorf("ids = %v", v[2].IntegerArrayValue)
	}
	if v[3].IntegerValue != 10 {
		t.Errorf("limit = %d, want the default 10 (the file's key is another node)", v[3].IntegerValue)
	}
	if v[4].Type != 1 || v[4].BoolValue {
		t.Errorf("use_sim_time = %+v", v[4])
	}
}

func TestParams_RemoteSetReactsRejectsAndPublishesEvents(t *testing.T) {
	domainParamsRemote := testenv.Domain(t)
	startPeer(t, domainParamsRemote, "params")
	n, err := pnContext(t, domainParamsRemote).NewNode("setter", "")
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan string, 100)
	changedSub, err := ros.NewSubscription(n, "/param_node/changed", ros.QoSDefault.KeepLast(100), func(m *std_msgs_msg.String) {
		changed <- m.Data
	})
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan *rcl_interfaces_msg.ParameterEvent, 100)
	rosout := make(chan *rcl_interfaces_msg.Log, 1000)
	if _, err := ros.NewSubscription(n, "/rosout", ros.QoSRosout, func(m *rcl_interfaces_msg.Log) {
		if m.Name == "param_node" {
			rosout <- m
		}
	}); err != nil {
		t.Fatal(err)
	}
	eventsSub, err := ros.NewSubscription(n, "/parameter_events", ros.QoSParameterEvents, func(m *rcl_interfaces_msg.ParameterEvent) {
		if m.Node == "/param_node" {
			events <- m
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// The service being ready does not mean our subscriptions matched the
	// node's publishers; wait for that too, so no change is missed
	// (/parameter_events: our own node's publisher and param_node's).
	ctx := pnWait(t)
	_ = getParams(t, n, "rate")
	pnWaitFor(t, ctx, "publishers matched", func() bool {
		c, _ := changedSub.PublisherCount()
		e, _ := eventsSub.PublisherCount()
		return c >= 1 && e >= 2
	})

	set := func(p rcl_interfaces_msg.Parameter) rcl_interfaces_msg.SetParametersResult {
		r := pnCall(t, n,
			"/param_node/set_parameters", rcl_interfaces_srv.SetParameters, &rcl_interfaces_srv.SetParameters_Request{Parameters: []rcl_interfaces_msg.Parameter{p}})
		if len(r.Results) != 1 {
			t.Fatalf("set_parameters results = %+v", r.Results)
		}
		return r.Results[0]
	}
	if r := set(rcl_interfaces_msg.Parameter{Name: "rate", Value: rcl_interfaces_msg.ParameterValue{Type: 3, DoubleValue: 42}}); !r.Successful {
		t.Fatalf("set rate=42.0: %+v", r)
	}
	// The node reacts: it publishes the change.
	for got := ""; got != "rate=42.0"; {
		select {
		case got = <-changed:
		case <-ctx.Done():
			t.Fatal("the node did not report rate=42.0")
		}
	}
	// /parameter_events carries it.
	for found := false; !found; {
		select {
		case e := <-events:
			for _, p := range e.ChangedParameters {
				found = found || p.Name == "rate" && p.Value.DoubleValue == 42
			}
		case <-ctx.Done():
			t.Fatal("no /parameter_events message with rate=42.0")
		}
	}
	// Its log line reaches /rosout (INFO = 20, logger name = node name).
	for found := false; !found; {
		select {
		case m := <-rosout:
			found = m.Msg == "parameter rate changed to 42.0" && m.Level == 20
		case <-ctx.Done():
			t.Fatal("no /rosout record of the change")
		}
	}
	// A rejected set: successful=false with the validator's reason; the
	// value stays.
	r := set(rcl_interfaces_msg.Parameter{Name: "limit", Value: rcl_interfaces_msg.ParameterValue{Type: 2, IntegerValue: 500}})
	if r.Successful || r.Reason != "limit must not exceed 100" {
		t.Fatalf("set limit=500 = %+v, want the validator's rejection", r)
	}
	// Further rejections: wrong type, read-only, out of range, undeclared.
	for _, c := range []struct {
		p    rcl_interfaces_msg.Parameter
		want string
	}{
		{rcl_interfaces_msg.Parameter{Name: "rate", Value: rcl_interfaces_msg.ParameterValue{Type: 4, StringValue: "fast"}}, "type"},
		{rcl_interfaces_msg.Parameter{Name: "frame", Value: rcl_interfaces_msg.ParameterValue{Type: 4, StringValue: "odom"}}, "read-only"},
		{rcl_interfaces_msg.Parameter{Name: "rate", Value: rcl_interfaces_msg.ParameterValue{Type: 3, DoubleValue: 1000}}, "range"},
		{rcl_interfaces_msg.Parameter{Name: "nope", Value: rcl_interfaces_msg.ParameterValue{Type: 2, IntegerValue: 1}}, "not declared"},
	} {
		if r := set(c.p); r.Successful || !strings.Contains(r.Reason, c.want) {
			t.Errorf("set %s = %+v, want a failure mentioning %q", c.p.Name, r, c.want)
		}
	}
	v := getParams(t, n, "limit", "rate", "frame")
	if len(v) != 3 || v[0].IntegerValue != 10 || v[1].DoubleValue != 42 || v[2].StringValue != "map" {
		t.Fatalf("values after rejected sets = %+v", v)
	}
	list := pnCall(t, n,
		"/param_node/list_parameters", rcl_interfaces_srv.ListParameters, &rcl_interfaces_srv.ListParameters_Request{})
	if got := strings.Join(list.Result.Names, " "); got != "frame ids limit max_parameter_value_size mode rate start_type_description_service use_sim_time" {
		t.Fatalf("list_parameters = %q", got)
	}
}

func TestParams_BadInput_StartupErrors(t *testing.T) {
	domainParamsBad := testenv.Domain(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	malformed := write("malformed.yaml", "param_node:\n  ros__parameters:\n    rate: [1.0, 2.0\n")
	wrongType := write("wrongtype.yaml", "param_node:\n  ros__parameters:\n    rate: fast\n")
	badName := write("badname.yaml", "param_node:\n  ros__parameters:\n    \"bad name\": 1\n")
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"malformed YAML", []string{"--params-file", malformed}, []string{malformed, "line"}},
		{"wrong type in file", []string{"--params-file", wrongType}, []string{wrongType, `"rate"`, "string", "double", "/param_node"}},
		{"invalid name in file", []string{"--params-file", badName}, []string{badName, `"bad name"`}},
		{"wrong type from -p", []string{"-p", "limit:=1.5"}, []string{`"limit"`, "-p", "double", "integer"}},
		{"out of range from -p", []string{"-p", "rate:=500.0"}, []string{`"rate"`, "range"}},
		{"invalid name from -p", []string{"-p", "bad..name:=1"}, []string{"bad..name"}},
		{"missing file", []string{"--params-file", filepath.Join(dir, "none.yaml")}, []string{"none.yaml"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := runPeerFailing(t, domainParamsBad, append([]string{"params", "--ros-args"}, c.args...)...)
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output does not mention %q:\n%s", w, out)
				}
			}
		})
	}
}

// domainSimTime shares its id with TestParams_BadInput_StartupErrors, whose
// processes exit before creating any endpoint; the tests do not run in
// parallel.
func TestSimTime_TimerFollowsClockFromAnotherProcess(t *testing.T) {
	domainSimTime := testenv.Domain(t)
	startPeer(t, domainSimTime, "sim", "--ros-args", "-p", "use_sim_time:=true")
	n, err := pnContext(t, domainSimTime).NewNode("clock_source", "")
	if err != nil {
		t.Fatal(err)
	}
	ticks := make(chan float64, 100)
	sub, err := ros.NewSubscription(n, "/sim_node/tick", ros.QoSDefault.KeepLast(100), func(m *std_msgs_msg.Float64) { ticks <- m.Data })
	if err != nil {
		t.Fatal(err)
	}
	clock, err := ros.NewPublisher[rosgraph_msgs_msg.Clock](n, "/clock", ros.QoSClock)
	if err != nil {
		t.Fatal(err)
	}
	ctx := pnWait(t)
	pnWaitFor(t, ctx, "sim_node's /clock subscription and ~/tick publisher", func() bool {
		c, _ := clock.SubscriptionCount()
		p, _ := sub.PublisherCount()
		return c >= 1 && p >= 1
	})
	// Sim time runs from 1000 s in 100 ms steps; the node's 1 s timer must
	// tick with times from that range, not the wall clock.
	var got []float64
	for step := 0; len(got) < 2; step++ {
		if step > 200 {
			t.Fatalf("ticks by sim time 1020 s: %v", got)
		}
		sec := int32(1000 + step/10)
		if err := clock.Publish(&rosgraph_msgs_msg.Clock{Clock: builtin_interfaces_msg.Time{Sec: sec, Nanosec: uint32(step%10) * 1e8}}); err != nil {
			t.Fatal(err)
		}
		select {
		case v := <-ticks:
			got = append(got, v)
		case <-time.After(10 * time.Millisecond): // pacing only
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
	for _, v := range got {
		if v < 1000 || v > 1021 {
			t.Errorf("tick at %v s, outside the published sim time", v)
		}
	}
}
