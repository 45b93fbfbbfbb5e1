package lifecycle_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/lifecycle"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	lifecycle_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/lifecycle_msgs/msg"
	lifecycle_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/lifecycle_msgs/srv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// TestMain: the DDS tests mostly wait; each has its own domain.
func TestMain(m *testing.M) {
	testenv.DefaultParallel(4)
	os.Exit(testenv.Main(m))
}

// testEnv keeps the traffic on this machine and names the distro, so a
// Context does not first wait to learn its peers' dialect.
func testEnv(k string) string {
	switch k {
	case "ROS_AUTOMATIC_DISCOVERY_RANGE":
		return "LOCALHOST"
	case "ROS_DISTRO":
		return "jazzy"
	}
	return ""
}

const failAfter = 20 * time.Second

// newContext returns a spinning Context on domain, closed at the end.
func newContext(t *testing.T, domain uint32, args ...string) *ros.Context {
	t.Helper()
	c, err := ros.NewContext(ros.ContextOptions{Args: args, DomainID: &domain, Getenv: testEnv, NoSignals: true, LogOutput: testenv.LogWriter{T: t}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Spin(ctx) }()
	t.Cleanup(func() { cancel(); <-done; c.Close() })
	return c
}

// TestNode_ServicesEventsAndManagedPublisher drives a managed node over
// DDS from another Context: every lifecycle service, change_state by label
// and by id, refused and failing transitions, the error path, the
// transition events, and a managed publisher that is silent unless active.
func TestNode_ServicesEventsAndManagedPublisher(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	server := newContext(t, domain)
	n, err := server.NewNode("device", "/lc")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := lifecycle.New(n)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var calls []string
	next := map[string]lifecycle.Result{} // callback → result to return once
	cb := func(name string) func(lifecycle.State) lifecycle.Result {
		return func(prev lifecycle.State) lifecycle.Result {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, name+"<"+prev.Label)
			if r, ok := next[name]; ok {
				delete(next, name)
				return r
			}
			return lifecycle.Success
		}
	}
	ln.OnConfigure(cb("configure"))
	ln.OnActivate(cb("activate"))
	ln.OnDeactivate(cb("deactivate"))
	ln.OnCleanup(cb("cleanup"))
	ln.OnShutdown(cb("shutdown"))
	ln.OnError(cb("error"))
	pub, err := lifecycle.NewPublisher[std_msgs_msg.String](ln, "chatter", ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}

	client := newContext(t, domain)
	cn, err := client.NewNode("manager", "/lc")
	if err != nil {
		t.Fatal(err)
	}
	var evMu sync.Mutex
	var events []string
	if _, err := ros.NewSubscription(cn, "/lc/device/transition_event", lifecycle.QoSTransitionEvent, func(m *lifecycle_msgs_msg.TransitionEvent) {
		evMu.Lock()
		events = append(events, fmt.Sprintf("%s->%s", m.StartState.Label, m.GoalState.Label))
		evMu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	var heard sync.Map
	if _, err := ros.NewSubscription(cn, "/lc/chatter", ros.QoSDefault, func(m *std_msgs_msg.String) { heard.Store(m.Data, true) }); err != nil {
		t.Fatal(err)
	}
	change, _ := ros.NewClient(cn, "/lc/device/change_state", lifecycle_msgs_srv.ChangeState)
	get, _ := ros.NewClient(cn, "/lc/device/get_state", lifecycle_msgs_srv.GetState)
	states, _ := ros.NewClient(cn, "/lc/device/get_available_states", lifecycle_msgs_srv.GetAvailableStates)
	avail, _ := ros.NewClient(cn, "/lc/device/get_available_transitions", lifecycle_msgs_srv.GetAvailableTransitions)
	graph, _ := ros.NewClient(cn, "/lc/device/get_transition_graph", lifecycle_msgs_srv.GetAvailableTransitions)
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	for _, w := range []interface{ WaitForService(context.Context) error }{change, get, states, avail, graph} {
		if err := w.WaitForService(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := client.WaitForGraph(ctx, func() bool {
		c1, _ := pub.SubscriptionCount()
		return c1 > 0
	}); err != nil {
		t.Fatal(err)
	}

	state := func() string {
		t.Helper()
		r, err := get.Call(ctx, &lifecycle_msgs_srv.GetState_Request{})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%s [%d]", r.CurrentState.Label, r.CurrentState.Id)
	}
	set := func(id uint8, label string) bool {
		t.Helper()
		r, err := change.Call(ctx, &lifecycle_msgs_srv.ChangeState_Request{Transition: lifecycle_msgs_msg.Transition{Id: id, Label: label}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Success
	}
	available := func(c *ros.Client[lifecycle_msgs_srv.GetAvailableTransitions_Request, lifecycle_msgs_srv.GetAvailableTransitions_Response]) []string {
		t.Helper()
		r, err := c.Call(ctx, &lifecycle_msgs_srv.GetAvailableTransitions_Request{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range r.AvailableTransitions {
			out = append(out, fmt.Sprintf("%s[%d] %s->%s", d.Transition.Label, d.Transition.Id, d.StartState.Label, d.GoalState.Label))
		}
		return out
	}
	publish := func(s string) { _ = pub.Publish(&std_msgs_msg.String{Data: s}) }

	if got := state(); got != "unconfigured [1]" {
		t.Fatalf("initial state %s", got)
	}
	rs, err := states.Call(ctx, &lifecycle_msgs_srv.GetAvailableStates_Request{})
	if err != nil || len(rs.AvailableStates) != 11 || rs.AvailableStates[0].Label != "unknown" || rs.AvailableStates[10].Label != "errorprocessing" {
		t.Fatalf("available states %+v %v", rs, err)
	}
	if g := available(graph); len(g) != 25 || g[0] != "configure[1] unconfigured->configuring" {
		t.Fatalf("graph %q", g)
	}
	if got, want := available(avail), []string{"configure[1] unconfigured->configuring", "shutdown[5] unconfigured->shuttingdown"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("available transitions %q, want %q", got, want)
	}
	publish("unconfigured")
	steps := []struct {
		id      uint8
		label   string
		ok      bool
		want    string
		publish string // published after the step; heard only when active
	}{
		{3, "", false, "unconfigured [1]", ""},          // activate: not from unconfigured
		{0, "activate", false, "unconfigured [1]", ""},  // by label: not from unconfigured
		{0, "bogus", false, "unconfigured [1]", ""},     // unknown label
		{99, "", false, "unconfigured [1]", ""},         // unknown id
		{1, "", true, "inactive [2]", "inactive"},       // configure by id
		{0, "activate", true, "active [3]", "active"},   // by label (the id is ignored)
		{4, "", true, "inactive [2]", "inactive-again"}, // deactivate
		{2, "", true, "unconfigured [1]", ""},           // cleanup
		{1, "configure", true, "inactive [2]", ""},      // label and id agree
		{6, "", true, "finalized [4]", "finalized"},     // inactive shutdown
		{1, "configure", false, "finalized [4]", ""},    // nothing from finalized
	}
	for i, s := range steps {
		if got := set(s.id, s.label); got != s.ok {
			t.Fatalf("step %d (%d %q): success %v, want %v", i, s.id, s.label, got, s.ok)
		}
		if got := state(); got != s.want {
			t.Fatalf("step %d (%d %q): state %s, want %s", i, s.id, s.label, got, s.want)
		}
		if s.publish != "" {
			publish(s.publish)
		}
	}
	testenv.WaitFor(t, failAfter, "the message published while active", func() bool { _, ok := heard.Load("active"); return ok })
	for _, m := range []string{"unconfigured", "inactive", "inactive-again", "finalized"} {
		if _, ok := heard.Load(m); ok {
			t.Errorf("the managed publisher sent %q while not active", m)
		}
	}
	if got := pub.Skipped(); got != 4 {
		t.Errorf("skipped %d publications, want 4", got)
	}
	wantEvents := []string{
		"unconfigured->configuring", "configuring->inactive",
		"inactive->activating", "activating->active",
		"active->deactivating", "deactivating->inactive",
		"inactive->cleaningup", "cleaningup->unconfigured",
		"unconfigured->configuring", "configuring->inactive",
		"inactive->shuttingdown", "shuttingdown->finalized",
	}
	testenv.WaitFor(t, failAfter, "the transition events", func() bool {
		evMu.Lock()
		defer evMu.Unlock()
		return len(events) >= len(wantEvents)
	})
	evMu.Lock()
	if !reflect.DeepEqual(events, wantEvents) {
		t.Errorf("events %q\nwant %q", events, wantEvents)
	}
	evMu.Unlock()
	mu.Lock()
	wantCalls := []string{"configure<unconfigured", "activate<inactive", "deactivate<active", "cleanup<inactive",
		"configure<unconfigured", "shutdown<inactive"}
	if !reflect.DeepEqual(calls, wantCalls) {
		t.Errorf("callbacks %q\nwant %q", calls, wantCalls)
	}
	mu.Unlock()
}

// TestNode_FailureAndErrorPaths: a failing callback returns to the start
// state, an erroring one goes through on_error (success: unconfigured;
// failure: finalized); change_state answers false for both.
func TestNode_FailureAndErrorPaths(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	server := newContext(t, domain)
	n, err := server.NewNode("flaky", "")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := lifecycle.New(n)
	if err != nil {
		t.Fatal(err)
	}
	var configure, onError lifecycle.Result
	ln.OnConfigure(func(lifecycle.State) lifecycle.Result { return configure })
	ln.OnActivate(func(lifecycle.State) lifecycle.Result { panic("activation exploded") })
	ln.OnError(func(lifecycle.State) lifecycle.Result { return onError })

	client := newContext(t, domain)
	cn, err := client.NewNode("manager", "")
	if err != nil {
		t.Fatal(err)
	}
	change, _ := ros.NewClient(cn, "/flaky/change_state", lifecycle_msgs_srv.ChangeState)
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	if err := change.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		label            string
		configure, onErr lifecycle.Result
		ok               bool
		want             lifecycle.StateID
	}{
		{"configure", lifecycle.Failure, lifecycle.Success, false, lifecycle.StateUnconfigured},
		{"configure", lifecycle.Error, lifecycle.Success, false, lifecycle.StateUnconfigured},
		{"configure", lifecycle.Success, lifecycle.Success, true, lifecycle.StateInactive},
		{"activate", lifecycle.Success, lifecycle.Success, false, lifecycle.StateUnconfigured}, // panic = error, on_error succeeds
		{"configure", lifecycle.Success, lifecycle.Success, true, lifecycle.StateInactive},
		{"activate", lifecycle.Success, lifecycle.Failure, false, lifecycle.StateFinalized}, // on_error fails
	} {
		configure, onError = c.configure, c.onErr // no callback runs between calls
		r, err := change.Call(ctx, &lifecycle_msgs_srv.ChangeState_Request{Transition: lifecycle_msgs_msg.Transition{Label: c.label}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Success != c.ok || ln.State().ID != c.want {
			t.Fatalf("step %d %s: success %v, state %v; want %v, %d", i, c.label, r.Success, ln.State(), c.ok, c.want)
		}
	}
	if ln.Active() {
		t.Fatal("finalized node is active")
	}
}

// TestNode_AutostartAndFinish: Start configures and activates (or, with
// autostart false, does nothing); Finish shuts down from any primary
// state and leaves a finalized node alone.
func TestNode_AutostartAndFinish(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	for _, c := range []struct {
		args  []string
		after lifecycle.StateID
		calls string
	}{
		{nil, lifecycle.StateActive, "configure activate shutdown<active"},
		{[]string{"--ros-args", "-p", "autostart:=false"}, lifecycle.StateUnconfigured, "shutdown<unconfigured"},
	} {
		ctx := newContext(t, domain, c.args...)
		n, err := ctx.NewNode("auto", "")
		if err != nil {
			t.Fatal(err)
		}
		ln, err := lifecycle.New(n)
		if err != nil {
			t.Fatal(err)
		}
		calls := ""
		add := func(s string) { calls += map[bool]string{true: " ", false: ""}[calls != ""] + s }
		ln.OnConfigure(func(lifecycle.State) lifecycle.Result { add("configure"); return lifecycle.Success })
		ln.OnActivate(func(lifecycle.State) lifecycle.Result { add("activate"); return lifecycle.Success })
		ln.OnShutdown(func(p lifecycle.State) lifecycle.Result { add("shutdown<" + p.Label); return lifecycle.Success })
		if err := ln.Start(); err != nil {
			t.Fatal(err)
		}
		if ln.State().ID != c.after {
			t.Fatalf("%v: after Start %v", c.args, ln.State())
		}
		if err := ln.Finish(); err != nil {
			t.Fatal(err)
		}
		if err := ln.Finish(); err != nil || ln.State().ID != lifecycle.StateFinalized {
			t.Fatalf("second Finish: %v, %v", err, ln.State())
		}
		if calls != c.calls {
			t.Fatalf("%v: callbacks %q, want %q", c.args, calls, c.calls)
		}
		// autostart is read-only
		if err := n.SetParameter(lifecycle.ParamAutostart, true); err == nil {
			t.Fatal("autostart was set at run time")
		}
	}
}

// TestStart_FailingConfigureIsAnError: with autostart, a configure that
// fails ends the setup with an error, as a node that cannot open its
// device did before it was managed.
func TestStart_FailingConfigureIsAnError(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	c := newContext(t, domain)
	n, err := c.NewNode("broken", "")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := lifecycle.New(n)
	if err != nil {
		t.Fatal(err)
	}
	ln.OnConfigure(func(lifecycle.State) lifecycle.Result { return lifecycle.Failure })
	if err := ln.Start(); err == nil || ln.State().ID != lifecycle.StateUnconfigured {
		t.Fatalf("Start: %v, state %v; want an error, unconfigured", err, ln.State())
	}
}
