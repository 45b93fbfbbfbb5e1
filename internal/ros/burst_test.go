package ros

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
	rcl_interfaces_srv "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/srv"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// burstCallers and burstContexts shape the burst tests: this many clients,
// spread over this many client contexts (participants), each sending one
// request at the same moment.
const (
	burstCallers  = 1000
	burstContexts = 4
	// burstCallTimeout is a failure bound only.
	burstCallTimeout = 60 * time.Second
)

// burstResult is what a burst of calls gave.
type burstResult struct {
	answered  int
	errs      map[string]int
	latencies []time.Duration
}

// percentile returns the p-th percentile (0..100) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}

func (r burstResult) String() string {
	sort.Slice(r.latencies, func(i, j int) bool { return r.latencies[i] < r.latencies[j] })
	return fmt.Sprintf("%d of %d answered; latency p50 %v, p99 %v, max %v; errors %v", r.answered, burstCallers,
		percentile(r.latencies, 50).Round(time.Microsecond), percentile(r.latencies, 99).Round(time.Microsecond),
		percentile(r.latencies, 100).Round(time.Microsecond), r.errs)
}

// fireBurst starts every call at the same moment (calls[i] is called once,
// each on its own goroutine) and collects the outcome.
func fireBurst(calls []func(context.Context) error) burstResult {
	var mu sync.Mutex
	res := burstResult{errs: map[string]int{}}
	start := make(chan struct{})
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), burstCallTimeout)
	defer cancel()
	for _, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			t0 := time.Now()
			err := call(ctx)
			d := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.errs[err.Error()]++
				return
			}
			res.answered++
			res.latencies = append(res.latencies, d)
		}()
	}
	close(start)
	wg.Wait()
	return res
}

// burstClients creates n clients of service name over k contexts on
// domain (several nodes per context) and waits until every one sees the
// service.
func burstClients[Req, Resp any](t *testing.T, domain uint32, name string, srv rosidl.Service[Req, Resp], n, k int) []*Client[Req, Resp] {
	t.Helper()
	var clients []*Client[Req, Resp]
	for c := 0; c < k; c++ {
		rc := newTestContext(t, domain)
		var node *Node
		for i := c; i < n; i += k {
			if node == nil || len(clients)%50 == 0 {
				node = mustNode(t, rc, fmt.Sprintf("caller_%d_%d", c, i), "/burst")
			}
			cli, err := NewClient(node, name, srv)
			if err != nil {
				t.Fatal(err)
			}
			clients = append(clients, cli)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*failAfter)
	defer cancel()
	for _, cli := range clients {
		if err := cli.WaitForService(ctx); err != nil {
			t.Fatalf("client %s: %v", cli.Name(), err)
		}
	}
	return clients
}

// A burst of 1,000 concurrent requests from 1,000 clients in four other
// participants is answered completely. (Before the request queue stopped
// dropping, the service kept the last 10 requests of each batch of up to 64
// the DDS layer handed over, and most calls timed out.) Nothing is counted
// as dropped either.
func TestServiceBurstFromManyClientsIsAnswered(t *testing.T) {
	if testing.Short() {
		t.Skip("burst of 1,000 calls: skipped with -short")
	}
	domain := testenv.Domain(t)
	server := mustNode(t, newTestContext(t, domain), "estop", "/burst")
	srv, err := NewService(server, "~/set", std_srvs_srv.SetBool, func(_ context.Context, req *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
		return &std_srvs_srv.SetBool_Response{Success: true, Message: fmt.Sprint(req.Data)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	clients := burstClients(t, domain, "/burst/estop/set", std_srvs_srv.SetBool, burstCallers, burstContexts)
	calls := make([]func(context.Context) error, len(clients))
	for i, cli := range clients {
		calls[i] = func(ctx context.Context) error {
			resp, err := cli.Call(ctx, &std_srvs_srv.SetBool_Request{Data: i%2 == 0})
			if err == nil && resp.Message != fmt.Sprint(i%2 == 0) {
				err = fmt.Errorf("answer %q to request %v", resp.Message, i%2 == 0)
			}
			return err
		}
	}
	res := fireBurst(calls)
	t.Logf("SetBool burst: %v", res)
	if res.answered != burstCallers {
		t.Errorf("%d of %d concurrent requests answered (dropped %d, unanswered %d)", res.answered, burstCallers, srv.Dropped(), srv.Unanswered())
	}
	if srv.Dropped() != 0 || server.Counter(CounterRequestsDropped).Load() != 0 {
		t.Errorf("requests dropped: %d (counter %d)", srv.Dropped(), server.Counter(CounterRequestsDropped).Load())
	}
}

// The parameter services take the same path: 1,000 concurrent
// get_parameters calls are all answered.
func TestParameterServiceBurstIsAnswered(t *testing.T) {
	if testing.Short() {
		t.Skip("burst of 1,000 calls: skipped with -short")
	}
	domain := testenv.Domain(t)
	server := mustNode(t, newTestContext(t, domain), "tuned", "/burst")
	if _, err := server.DeclareParameter("gain", 2.5, ParamDescriptor{}); err != nil {
		t.Fatal(err)
	}
	clients := burstClients(t, domain, "/burst/tuned/get_parameters", rcl_interfaces_srv.GetParameters, burstCallers, burstContexts)
	calls := make([]func(context.Context) error, len(clients))
	for i, cli := range clients {
		calls[i] = func(ctx context.Context) error {
			resp, err := cli.Call(ctx, &rcl_interfaces_srv.GetParameters_Request{Names: []string{"gain"}})
			if err == nil && (len(resp.Values) != 1 || resp.Values[0].DoubleValue != 2.5) {
				err = fmt.Errorf("answer %+v", resp.Values)
			}
			return err
		}
	}
	res := fireBurst(calls)
	t.Logf("get_parameters burst: %v", res)
	if res.answered != burstCallers {
		t.Errorf("%d of %d concurrent get_parameters requests answered", res.answered, burstCallers)
	}
}

// One client with 1,000 calls in flight at once: every call is answered.
func TestServiceBurstFromOneClientIsAnswered(t *testing.T) {
	if testing.Short() {
		t.Skip("burst of 1,000 calls: skipped with -short")
	}
	domain := testenv.Domain(t)
	server := mustNode(t, newTestContext(t, domain), "estop", "/burst")
	if _, err := NewService(server, "~/set", std_srvs_srv.SetBool, func(_ context.Context, req *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
		return &std_srvs_srv.SetBool_Response{Success: true, Message: fmt.Sprint(req.Data)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	cli := burstClients(t, domain, "/burst/estop/set", std_srvs_srv.SetBool, 1, 1)[0]
	calls := make([]func(context.Context) error, burstCallers)
	for i := range calls {
		calls[i] = func(ctx context.Context) error {
			resp, err := cli.Call(ctx, &std_srvs_srv.SetBool_Request{Data: i%2 == 0})
			if err == nil && resp.Message != fmt.Sprint(i%2 == 0) {
				err = fmt.Errorf("answer %q to request %v", resp.Message, i%2 == 0)
			}
			return err
		}
	}
	res := fireBurst(calls)
	t.Logf("one-client burst: %v", res)
	if res.answered != burstCallers {
		t.Errorf("%d of %d concurrent requests of one client answered", res.answered, burstCallers)
	}
}

// Actions take the same path for their three services: 1,000 goals sent at
// once by ten clients are all accepted, then all canceled, and every
// get_result is answered (each goal runs until canceled, so all 1,000 are
// active together).
func TestActionBurstIsAnswered(t *testing.T) {
	if testing.Short() {
		t.Skip("burst of 1,000 goals: skipped with -short")
	}
	const clients, perClient = 10, burstCallers / 10
	domain := testenv.Domain(t)
	sn := mustNode(t, newTestContext(t, domain), "navigator", "/burst")
	if _, err := NewActionServer(sn, "navigate_to_pose", nav2_msgs_action.NavigateToPose,
		func(ctx context.Context, g *ServerGoal[navGoal, navFeedback]) (*navResult, error) {
			<-ctx.Done()
			return &navResult{ErrorMsg: g.Goal().BehaviorTree}, ErrGoalCanceled
		}, ActionServerOptions[navGoal]{}); err != nil {
		t.Fatal(err)
	}
	var acs []*ActionClient[navGoal, navResult, navFeedback]
	for c := 0; c < 2; c++ {
		rc := newTestContext(t, domain)
		for i := 0; i < clients/2; i++ {
			cli, err := NewActionClient(mustNode(t, rc, fmt.Sprintf("driver_%d_%d", c, i), "/burst"),
				"/burst/navigate_to_pose", nav2_msgs_action.NavigateToPose)
			if err != nil {
				t.Fatal(err)
			}
			acs = append(acs, cli)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*failAfter)
	defer cancel()
	for _, cli := range acs {
		if err := cli.WaitForServer(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var calls []func(context.Context) error
	for _, cli := range acs {
		for i := 0; i < perClient; i++ {
			calls = append(calls, func(ctx context.Context) error {
				name := fmt.Sprint("goal ", i)
				g, err := cli.SendGoal(ctx, &navGoal{BehaviorTree: name}, nil)
				if err != nil {
					return err
				}
				if err := g.Cancel(ctx); err != nil {
					return err
				}
				res, st, err := g.Result(ctx)
				if err == nil && (st != action.StatusCanceled || res.ErrorMsg != name) {
					err = fmt.Errorf("result %+v with status %v", res, st)
				}
				return err
			})
		}
	}
	res := fireBurst(calls)
	t.Logf("action burst (send_goal, cancel_goal, get_result per goal): %v", res)
	if res.answered != burstCallers {
		t.Errorf("%d of %d goals went through send_goal, cancel_goal and get_result", res.answered, burstCallers)
	}
	if d := sn.Counter(CounterRequestsDropped).Load(); d != 0 {
		t.Errorf("requests_dropped = %d", d)
	}
}

// A response waits for its client's reply reader when the server has not
// matched it yet (server-side discovery lagging behind a burst of new
// clients), instead of being dropped after 100 ms as rmw_cyclonedds does.
// The client here is made of raw DDS endpoints so that its reply reader can
// appear a moment after its request.
func TestServiceResponseWaitsForLateReplyReader(t *testing.T) {
	t.Parallel()
	domain := testenv.Domain(t)
	c1 := newTestContext(t, domain)
	c2 := newTestContext(t, domain)
	server := mustNode(t, c1, "server", "/late")
	srv, err := NewService(server, "~/set", std_srvs_srv.SetBool, func(_ context.Context, req *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
		return &std_srvs_srv.SetBool_Response{Success: req.Data, Message: "late but answered"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st := std_srvs_srv.SetBool_ServiceType
	part := c2.Participant()
	reqTopic, err := part.Topic("rq/late/server/setRequest", st.Request.DDSName)
	if err != nil {
		t.Fatal(err)
	}
	repTopic, err := part.Topic("rr/late/server/setReply", st.Response.DDSName)
	if err != nil {
		t.Fatal(err)
	}
	ud := []byte("clientid=01.0f.aa.bb.cc.dd.ee.ff.00.00.00.00.00.00.00.01;")
	wq, err := QoSServices.ddsQoS(ud, false)
	if err != nil {
		t.Fatal(err)
	}
	w, err := part.NewWriter(reqTopic, wq)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	waitGraph(t, c1, "the raw request writer", func() bool {
		eps, _ := srv.reqReader.MatchedWriters()
		return len(eps) == 1
	})
	h := requestHeader{GUID: 42, Seq: 7}
	if err := w.Write(encodeWithHeader(h, &std_srvs_srv.SetBool_Request{Data: true}, nil)); err != nil {
		t.Fatal(err)
	}
	// The request is handled with no reply reader around; the response
	// must wait for one rather than be dropped.
	testenv.WaitFor(t, failAfter, "the response to wait", func() bool {
		srv.pendMu.Lock()
		defer srv.pendMu.Unlock()
		return len(srv.pending) == 1
	})
	time.Sleep(200 * time.Millisecond) // longer than rmw_cyclonedds' 100 ms
	got := make(chan *std_srvs_srv.SetBool_Response, 1)
	rq, err := QoSServices.ddsQoS(ud, false)
	if err != nil {
		t.Fatal(err)
	}
	r, err := part.NewReader(repTopic, rq, func(batch []dds.Sample) {
		for _, smp := range batch {
			var resp std_srvs_srv.SetBool_Response
			if hh, err := decodeWithHeader(smp.Data, &resp); err == nil && hh == h {
				got <- &resp
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	select {
	case resp := <-got:
		if !resp.Success || resp.Message != "late but answered" {
			t.Errorf("response %+v", resp)
		}
	case <-time.After(failAfter):
		t.Fatalf("no response once the reply reader appeared (unanswered %d)", srv.Unanswered())
	}
	if srv.Unanswered() != 0 {
		t.Errorf("Unanswered = %d", srv.Unanswered())
	}
}
