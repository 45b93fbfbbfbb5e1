package ros

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	rcl_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/msg"
	rcl_interfaces_srv "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/srv"
	rosgraph_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rosgraph_msgs/msg"
)

// extTimeout only bounds waiting; no assertion depends on timing.
const extTimeout = 60 * time.Second

// extContext creates a spinning Context on domain; it is closed at the end
// of the test.
func extContext(t testing.TB, domain uint32, args ...string) *Context {
	t.Helper()
	t.Setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
	c, err := NewContext(ContextOptions{Args: args, DomainID: &domain, NoSignals: true, LogOutput: testenv.LogWriter{T: t}})
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

func extNode(t testing.TB, c *Context, name string) *Node {
	t.Helper()
	n, err := c.NewNode(name, "")
	if err != nil {
		t.Fatalf("NewNode(%s): %v", name, err)
	}
	return n
}

func waitCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), extTimeout)
	t.Cleanup(cancel)
	return ctx
}

func call[Req, Resp any](t *testing.T, n *Node, name string, srv rosidl.Service[Req, Resp], req *Req) *Resp {
	t.Helper()
	cli, err := NewClient(n, name, srv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := waitCtx(t)
	if err := cli.WaitForService(ctx); err != nil {
		t.Fatalf("WaitForService(%s): %v", name, err)
	}
	resp, err := cli.Call(ctx, req)
	if err != nil {
		t.Fatalf("Call(%s): %v", name, err)
	}
	return resp
}

func TestParams_OverridesFromFileAndCommandLine(t *testing.T) {
	domainParams := testenv.Domain(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "p.yaml")
	yaml := "/**:\n  ros__parameters:\n    rate: 5.0\n    name: from_wildcard\nparamNode:\n  ros__parameters:\n    name: from_file\n    ids: [4, 5]\n"
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	c := extContext(t, domainParams, "--ros-args", "--params-file", file, "-p", "rate:=7.5", "-p", "other:mode:=x")
	n := extNode(t, c, "paramNode")
	rate, err := DeclareParam(n, "rate", 1.0, ParamDescriptor{})
	if err != nil || rate != 7.5 {
		t.Fatalf("rate = %v, %v; want 7.5 from -p", rate, err)
	}
	name, err := DeclareParam(n, "name", "default", ParamDescriptor{})
	if err != nil || name != "from_file" {
		t.Fatalf("name = %q, %v; want from_file (exact node key over /**)", name, err)
	}
	ids, err := DeclareParam(n, "ids", []int64{}, ParamDescriptor{})
	if err != nil || len(ids) != 2 || ids[1] != 5 {
		t.Fatalf("ids = %v, %v", ids, err)
	}
	mode, err := DeclareParam(n, "mode", "default", ParamDescriptor{})
	if err != nil || mode != "default" {
		t.Fatalf("mode = %q, %v; a -p for node other must not apply", mode, err)
	}
	if d, err := DeclareDuration(n, "timeout", 1500*time.Millisecond, ParamDescriptor{}); err != nil || d != 1500*time.Millisecond {
		t.Fatalf("timeout = %v, %v", d, err)
	}
	if err := n.SetParameter("timeout", -1.0); err == nil {
		t.Fatal("negative duration accepted")
	}
	if err := n.SetParameter("timeout", 0.25); err != nil {
		t.Fatal(err)
	}
	if d, err := n.ParamDuration("timeout"); err != nil || d != 250*time.Millisecond {
		t.Fatalf("ParamDuration = %v, %v", d, err)
	}
	if err := n.SetParameter("timeout", 1e300); err != nil {
		t.Fatal(err)
	}
	if _, err := n.ParamDuration("timeout"); err == nil {
		t.Fatal("1e300 s converted to a duration")
	}
	if sim, err := n.ParamBool("use_sim_time"); err != nil || sim {
		t.Fatalf("use_sim_time = %v, %v", sim, err)
	}
	// Wrong type in the file: a declaration error naming file and parameter.
	if _, err := DeclareParam(n, "ids", "x", ParamDescriptor{}); err == nil {
		t.Fatal("redeclaring ids succeeded")
	}
	n2 := extNode(t, c, "paramNode2")
	if _, err := DeclareParam(n2, "rate", int64(1), ParamDescriptor{}); err == nil ||
		!strings.Contains(err.Error(), "-p") || !strings.Contains(err.Error(), `"rate"`) {
		t.Fatalf("integer rate with a double override = %v, want an error naming -p and rate", err)
	}
	_, err = n.DeclareParameter("name", 3, ParamDescriptor{})
	if !errors.Is(err, param.ErrAlreadyDeclared) {
		t.Fatalf("redeclare = %v", err)
	}
}

func TestParams_BadParamsFile_NodeCreationFails(t *testing.T) {
	domainParams := testenv.Domain(t)
	file := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(file, []byte("n:\n  ros__parameters:\n    x: [1, 'a']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := extContext(t, domainParams, "--ros-args", "--params-file", file)
	_, err := c.NewNode("n", "")
	if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), `"x"`) {
		t.Fatalf("NewNode with a bad params file = %v", err)
	}
}

func TestParams_ServicesEventsAndValidator(t *testing.T) {
	domainParams := testenv.Domain(t)
	srvCtx := extContext(t, domainParams)
	cliCtx := extContext(t, domainParams)
	n := extNode(t, srvCtx, "svc_node")
	other := extNode(t, cliCtx, "param_client")

	var mu sync.Mutex
	var events []*rcl_interfaces_msg.ParameterEvent
	gotEvent := make(chan struct{}, 16)
	if _, err := NewSubscription(other, "/parameter_events", QoSParameterEvents, func(m *rcl_interfaces_msg.ParameterEvent) {
		if m.Node != "/svc_node" {
			return
		}
		mu.Lock()
		events = append(events, m)
		mu.Unlock()
		gotEvent <- struct{}{}
	}); err != nil {
		t.Fatal(err)
	}

	if _, err := DeclareParam(n, "speed", 1.0, ParamDescriptor{
		Description: "m/s", FloatRange: &param.FloatRange{From: 0, To: 2},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := DeclareParam(n, "limits.low", int64(1), ParamDescriptor{}); err != nil {
		t.Fatal(err)
	}
	if _, err := DeclareParam(n, "frame", "map", ParamDescriptor{ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	n.OnSetParameters(func(ps []Parameter) error {
		for _, p := range ps {
			if p.Name == "limits.low" && p.Value.Integer() < 0 {
				return errors.New("limits.low must not be negative")
			}
		}
		return nil
	})
	changed := make(chan []Parameter, 4)
	n.OnParametersChanged(func(ps []Parameter) { changed <- ps })

	get := call(t, other,
		"/svc_node/get_parameters", rcl_interfaces_srv.GetParameters, &rcl_interfaces_srv.GetParameters_Request{Names: []string{"speed", "frame"}})
	if len(get.Values) != 2 || get.Values[0].DoubleValue != 1 || get.Values[1].StringValue != "map" {
		t.Fatalf("get_parameters = %+v", get.Values)
	}
	if get := call(t, other,
		"/svc_node/get_parameters", rcl_interfaces_srv.GetParameters, &rcl_interfaces_srv.GetParameters_Request{Names: []string{"speed", "nope"}}); len(get.Values) != 0 {
		t.Fatalf("get_parameters with an undeclared name = %+v, want empty", get.Values)
	}
	types := call(t, other,
		"/svc_node/get_parameter_types", rcl_interfaces_srv.GetParameterTypes, &rcl_interfaces_srv.GetParameterTypes_Request{Names: []string{"speed", "nope", "limits.low"}})
	if len(types.Types) != 3 || types.Types[0] != 3 || types.Types[1] != 0 || types.Types[2] != 2 {
		t.Fatalf("get_parameter_types = %v", types.Types)
	}
	list := call(t, other,
		"/svc_node/list_parameters", rcl_interfaces_srv.ListParameters, &rcl_interfaces_srv.ListParameters_Request{})
	if strings.Join(list.Result.Names, ",") != "frame,limits.low,max_parameter_value_size,speed,start_type_description_service,use_sim_time" || strings.Join(list.Result.Prefixes, ",") != "limits" {
		t.Fatalf("list_parameters = %+v", list.Result)
	}
	desc := call(t, other,
		"/svc_node/describe_parameters", rcl_interfaces_srv.DescribeParameters, &rcl_interfaces_srv.DescribeParameters_Request{Names: []string{"speed"}})
	if len(desc.Descriptors) != 1 || desc.Descriptors[0].Description != "m/s" || len(desc.Descriptors[0].FloatingPointRange) != 1 ||
		desc.Descriptors[0].FloatingPointRange[0].ToValue != 2 || desc.Descriptors[0].Type != 3 {
		t.Fatalf("describe_parameters = %+v", desc.Descriptors)
	}

	dbl := func(v float64) rcl_interfaces_msg.ParameterValue {
		return rcl_interfaces_msg.ParameterValue{Type: 3, DoubleValue: v}
	}
	set := call(t, other,
		"/svc_node/set_parameters", rcl_interfaces_srv.SetParameters, &rcl_interfaces_srv.SetParameters_Request{Parameters: []rcl_interfaces_msg.Parameter{
			{Name: "speed", Value: dbl(1.5)},
			{Name: "limits.low", Value: rcl_interfaces_msg.ParameterValue{Type: 2, IntegerValue: -1}},
			{Name: "frame", Value: rcl_interfaces_msg.ParameterValue{Type: 4, StringValue: "odom"}},
			{Name: "speed", Value: dbl(9)},
			{Name: "speed", Value: rcl_interfaces_msg.ParameterValue{Type: 42}},
			{Name: "bad name", Value: dbl(1)},
		}})
	if len(set.Results) != 6 {
		t.Fatalf("set_parameters results = %+v", set.Results)
	}
	if !set.Results[0].Successful {
		t.Errorf("speed=1.5 rejected: %s", set.Results[0].Reason)
	}
	if set.Results[1].Successful || set.Results[1].Reason != "limits.low must not be negative" {
		t.Errorf("validator result = %+v", set.Results[1])
	}
	for i, want := range []string{"", "", "read-only", "outside", "not a ParameterType", "invalid character"} {
		if want != "" && (set.Results[i].Successful || !strings.Contains(set.Results[i].Reason, want)) {
			t.Errorf("result %d = %+v, want failure mentioning %q", i, set.Results[i], want)
		}
	}
	select {
	case ps := <-changed:
		if len(ps) != 1 || ps[0].Name != "speed" || ps[0].Value.Double() != 1.5 {
			t.Fatalf("OnParametersChanged got %v", ps)
		}
	case <-waitCtx(t).Done():
		t.Fatal("OnParametersChanged not called")
	}
	if v, _ := n.ParamFloat64("speed"); v != 1.5 {
		t.Fatalf("speed = %v after remote set", v)
	}

	atomic := call(t, other,
		"/svc_node/set_parameters_atomically", rcl_interfaces_srv.SetParametersAtomically, &rcl_interfaces_srv.SetParametersAtomically_Request{Parameters: []rcl_interfaces_msg.Parameter{
			{Name: "speed", Value: dbl(0.5)},
			{Name: "frame", Value: rcl_interfaces_msg.ParameterValue{Type: 4, StringValue: "odom"}},
		}})
	if atomic.Result.Successful {
		t.Fatal("atomic set including a read-only parameter succeeded")
	}
	if v, _ := n.ParamFloat64("speed"); v != 1.5 {
		t.Fatalf("speed = %v after a failed atomic set", v)
	}

	// /parameter_events: the changed speed shows up with the node's name.
	ctx := waitCtx(t)
	for {
		mu.Lock()
		found := false
		for _, e := range events {
			for _, p := range e.ChangedParameters {
				if p.Name == "speed" && p.Value.DoubleValue == 1.5 {
					found = true
				}
			}
		}
		mu.Unlock()
		if found {
			break
		}
		select {
		case <-gotEvent:
		case <-ctx.Done():
			t.Fatalf("no parameter event for speed=1.5; got %d events", len(events))
		}
	}
}

func TestRosout_PublishesLogRecords(t *testing.T) {
	domainRosout := testenv.Domain(t)
	c := extContext(t, domainRosout, "--ros-args", "--log-level", "rosout_node:=debug")
	listener := extNode(t, extContext(t, domainRosout), "rosout_listener")
	got := make(chan *rcl_interfaces_msg.Log, 100)
	if _, err := NewSubscription(listener, "/rosout", QoSRosout, func(m *rcl_interfaces_msg.Log) {
		if m.Name == "rosout_node" {
			got <- m
		}
	}); err != nil {
		t.Fatal(err)
	}
	n := extNode(t, c, "rosout_node")
	// Transient-local: records logged before the listener matched are
	// delivered too, so no waiting for discovery is needed.
	n.Logger().Debugw("debug line", "k", 1)
	n.Logger().Warnf("warn %d", 2)
	want := map[string]uint8{"debug line k=1": 10, "warn 2": 30}
	ctx := waitCtx(t)
	for len(want) > 0 {
		select {
		case m := <-got:
			if lvl, ok := want[m.Msg]; ok {
				if m.Level != lvl {
					t.Errorf("%q level = %d, want %d", m.Msg, m.Level, lvl)
				}
				if m.Stamp.Sec == 0 {
					t.Errorf("%q has no stamp", m.Msg)
				}
				delete(want, m.Msg)
			}
		case <-ctx.Done():
			t.Fatalf("missing rosout records: %v", want)
		}
	}
}

func TestSimTime_ClockAndROSTimerFollowClockTopic(t *testing.T) {
	domainClock := testenv.Domain(t)
	c := extContext(t, domainClock, "--ros-args", "-p", "use_sim_time:=true")
	n := extNode(t, c, "sim_node")
	if !n.Clock().IsSimTime() {
		t.Fatal("use_sim_time:=true did not switch the clock")
	}
	if got := n.Clock().Now(); !got.Equal(time.Unix(0, 0)) {
		t.Fatalf("sim time before any /clock = %v, want 0", got)
	}
	ticks := make(chan time.Time, 100)
	if _, err := n.NewTimer(time.Second, func() { ticks <- n.Clock().Now() }); err != nil {
		t.Fatal(err)
	}
	pubNode := extNode(t, extContext(t, domainClock), "clock_pub")
	pub, err := NewPublisher[rosgraph_msgs_msg.Clock](pubNode, "/clock", QoSClock)
	if err != nil {
		t.Fatal(err)
	}
	// Publish sim time from 100 s in 100 ms steps until the timer ticked
	// three times (the first tick comes from the jump from 0 to 100 s, the
	// next ones at 101 s and 102 s). A wall-clock timer would not tick that
	// often before sim time 110 s, which is reached after about a second.
	ctx := waitCtx(t)
	var tickTimes []time.Time
	for step := 0; len(tickTimes) < 3; step++ {
		if step > 100 {
			t.Fatalf("only %d ticks by sim time 110 s", len(tickTimes))
		}
		simNow := time.Unix(100, 0).Add(time.Duration(step) * 100 * time.Millisecond)
		if err := pub.Publish(&rosgraph_msgs_msg.Clock{Clock: builtin_interfaces_msg.TimeOf(simNow)}); err != nil {
			t.Fatal(err)
		}
		select {
		case tt := <-ticks:
			tickTimes = append(tickTimes, tt)
		case <-time.After(10 * time.Millisecond): // pacing only
		case <-ctx.Done():
			t.Fatalf("timer did not tick on sim time (now %v)", n.Clock().Now())
		}
	}
	for _, tt := range tickTimes {
		if tt.Before(time.Unix(100, 0)) || tt.After(time.Unix(110, 0)) {
			t.Errorf("tick at %v, outside the published sim time", tt)
		}
	}
	// Switching use_sim_time off returns to the system clock.
	if err := n.SetParameter("use_sim_time", false); err != nil {
		t.Fatal(err)
	}
	if n.Clock().IsSimTime() || n.Clock().Now().Year() < 2020 {
		t.Fatalf("after use_sim_time=false: sim=%v now=%v", n.Clock().IsSimTime(), n.Clock().Now())
	}
}

// TestParams_ValueSizeBounded: a string above the node's
// max_parameter_value_size, and a string array whose strings add up to
// more, are refused by both set services with the reason and counted as
// requests_rejected; the stored value is untouched. One of exactly the
// limit is taken. The limit is the default, or what -p set at startup
// (lower, and higher than the services' 16 MiB request limit); the
// parameter is read-only. Before the bound a 16 MiB robot_description was
// stored and republished (issue 25).
func TestParams_ValueSizeBounded(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  []string
		limit int
	}{
		{"default", nil, DefaultMaxParameterValueSize},
		{"lowered", []string{"--ros-args", "-p", "max_parameter_value_size:=1000"}, 1000},
		{"raised", []string{"--ros-args", "-p", "max_parameter_value_size:=20000000"}, 20_000_000},
	} {
		t.Run(c.name, func(t *testing.T) { valueSizeBounded(t, c.args, c.limit) })
	}
}

func valueSizeBounded(t *testing.T, args []string, limit int) {
	domain := testenv.Domain(t)
	srvCtx := extContext(t, domain, args...)
	cliCtx := extContext(t, domain)
	n := extNode(t, srvCtx, "size_node")
	other := extNode(t, cliCtx, "size_client")
	if got, err := n.ParamInt64(MaxParameterValueSizeParam); err != nil || got != int64(limit) {
		t.Fatalf("%s = %d, %v; want %d", MaxParameterValueSizeParam, got, err, limit)
	}
	if _, err := DeclareParam(n, "text", "short", ParamDescriptor{}); err != nil {
		t.Fatal(err)
	}
	if _, err := DeclareParam(n, "names", []string{"a"}, ParamDescriptor{}); err != nil {
		t.Fatal(err)
	}
	str := func(s string) rcl_interfaces_msg.ParameterValue {
		return rcl_interfaces_msg.ParameterValue{Type: uint8(param.TypeString), StringValue: s}
	}
	big := strings.Repeat("x", limit+1)
	many := make([]string, 100)
	for i := range many {
		many[i] = strings.Repeat("y", limit/100) // and 4 bytes each: over
	}
	reason := fmt.Sprintf("the limit is %d (parameter max_parameter_value_size)", limit)
	// One value a request: a request is bounded too (16 MiB, or the limit
	// and 1 MiB when that is more), and three values of 20 MB are above it.
	set := func(p rcl_interfaces_msg.Parameter) rcl_interfaces_msg.SetParametersResult {
		r := call(t, other, "/size_node/set_parameters", rcl_interfaces_srv.SetParameters,
			&rcl_interfaces_srv.SetParameters_Request{Parameters: []rcl_interfaces_msg.Parameter{p}})
		if len(r.Results) != 1 {
			t.Fatalf("results %+v", r.Results)
		}
		return r.Results[0]
	}
	for i, p := range []rcl_interfaces_msg.Parameter{
		{Name: "text", Value: str(big)},
		{Name: "names", Value: rcl_interfaces_msg.ParameterValue{Type: uint8(param.TypeStringArray), StringArrayValue: many}},
	} {
		if r := set(p); r.Successful || !strings.Contains(r.Reason, "too large") || !strings.Contains(r.Reason, reason) {
			t.Errorf("value %d: %+v, want refused as too large, %q", i, r, reason)
		}
	}
	if r := set(rcl_interfaces_msg.Parameter{Name: "text", Value: str(big[:limit])}); !r.Successful {
		t.Errorf("a value of exactly the limit refused: %s", r.Reason)
	}
	atomic := call(t, other, "/size_node/set_parameters_atomically", rcl_interfaces_srv.SetParametersAtomically,
		&rcl_interfaces_srv.SetParametersAtomically_Request{Parameters: []rcl_interfaces_msg.Parameter{{Name: "text", Value: str(big)}}})
	if atomic.Result.Successful || !strings.Contains(atomic.Result.Reason, "too large") {
		t.Errorf("atomic: %+v, want refused as too large", atomic.Result)
	}
	if v, _ := n.ParamString("text"); len(v) != limit {
		t.Errorf("text is %d bytes, want the accepted %d", len(v), limit)
	}
	if c := n.Counter(CounterRequestsRejected).Load(); c != 3 {
		t.Errorf("requests_rejected = %d, want 3", c)
	}
	ro := set(rcl_interfaces_msg.Parameter{Name: MaxParameterValueSizeParam,
		Value: rcl_interfaces_msg.ParameterValue{Type: uint8(param.TypeInteger), IntegerValue: 1 << 30}})
	if ro.Successful || !strings.Contains(ro.Reason, "read-only") {
		t.Errorf("setting %s at run time: %+v, want refused as read-only", MaxParameterValueSizeParam, ro)
	}
}

// TestParams_ValueSizeLimitChecked: a limit outside 1..2^31-1, or not an
// integer, stops the node at creation with the reason.
func TestParams_ValueSizeLimitChecked(t *testing.T) {
	domain := testenv.Domain(t)
	for _, v := range []string{"0", "-5", "4294967296", "big"} {
		c := extContext(t, domain, "--ros-args", "-p", "max_parameter_value_size:="+v)
		n, err := c.NewNode("size_bad", "")
		if err == nil {
			n.Close()
			t.Errorf("max_parameter_value_size:=%s: the node was created", v)
			continue
		}
		if !strings.Contains(err.Error(), "max_parameter_value_size") {
			t.Errorf("max_parameter_value_size:=%s: %v, want the parameter named", v, err)
		}
		t.Logf("max_parameter_value_size:=%s: %v", v, err)
	}
}
