package velmanode

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	rcl_interfaces_srv "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/srv"
	velma_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/velma_msgs/msg"
)

// stormClients and stormFor shape the service storm of
// TestProcesses_BridgeLoopUnderServiceStorm (issue 25: 200 clients, about
// 5,000 calls/s).
const (
	stormClients = 200
	stormFor     = 5 * time.Second
)

// The velma_bridge executable's 500 Hz loop, under the normal scheduler
// and under SCHED_FIFO (rt.priority 20, as velma.launch.xml runs it),
// while 200 clients call one of its services as fast as they are answered: the overruns of a quiet
// stretch and of the storm (from ~/status: iteration and overrun counts)
// and the calls answered are logged, figures and not results; the loop
// must keep iterating and the bridge answer after the storm.
func TestProcesses_BridgeLoopUnderServiceStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process DDS test")
	}
	testenv.Heavy(t)
	// One after the other: each storm loads the machine.
	for _, prio := range []string{"0", "20"} {
		t.Run("rt.priority "+prio, func(t *testing.T) { storm(t, prio) })
	}
}

func storm(t *testing.T, prio string) {
	domain := testenv.Domain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	bin := testenv.Executable(t, "nodes/velma_bridge")
	testenv.Start(t, "velma_bridge", testenv.Env(domain), bin, "--ros-args", "--params-file", "../../../params/velma.yaml", "-p", "rt.priority:="+prio)

	rc := newCtx(t, domain)
	n, err := rc.NewNode("velma_storm", "")
	if err != nil {
		t.Fatal(err)
	}
	type counts struct{ it, over uint64 }
	var last atomic.Pointer[counts]
	if _, err := ros.NewSubscription(n, "/velma_core/status", ros.QoSDefault, func(m *velma_msgs_msg.Status) {
		last.Store(&counts{m.Iteration, m.Overruns})
	}); err != nil {
		t.Fatal(err)
	}
	clients := make([]*ros.Client[rcl_interfaces_srv.ListParameters_Request, rcl_interfaces_srv.ListParameters_Response], stormClients)
	for i := range clients {
		if clients[i], err = ros.NewClient(n, "/velma_core/list_parameters", rcl_interfaces_srv.ListParameters); err != nil {
			t.Fatal(err)
		}
	}
	go func() { _ = rc.Spin(ctx) }()
	for _, c := range clients {
		if err := c.WaitForService(ctx); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, ctx, "the loop's status", func() bool { return last.Load() != nil })
	window := func(d time.Duration) (counts, float64) {
		a := *last.Load()
		time.Sleep(d)
		b := *last.Load()
		w := counts{b.it - a.it, b.over - a.over}
		if w.it == 0 {
			return w, 0
		}
		return w, 100 * float64(w.over) / float64(w.it)
	}
	quiet, quietPct := window(stormFor)

	var answered atomic.Int64
	stormCtx, stop := context.WithTimeout(ctx, stormFor)
	var wg sync.WaitGroup
	start := *last.Load()
	began := time.Now()
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for stormCtx.Err() == nil {
				if _, err := c.Call(stormCtx, &rcl_interfaces_srv.ListParameters_Request{}); err == nil {
					answered.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(began)
	stop()
	end := *last.Load()
	storm := counts{end.it - start.it, end.over - start.over}
	stormPct := 0.0
	if storm.it > 0 {
		stormPct = 100 * float64(storm.over) / float64(storm.it)
	}
	t.Logf("FIGURE velma_bridge loop, rt.priority %s: quiet %d iterations in %v, %d overruns (%.1f %%); storm of %d clients, %d calls answered (%.0f/s): %d iterations, %d overruns (%.1f %%)",
		prio, quiet.it, stormFor, quiet.over, quietPct, stormClients, answered.Load(), float64(answered.Load())/took.Seconds(), storm.it, storm.over, stormPct)
	if storm.it == 0 {
		t.Fatal("the loop reported no iteration during the storm")
	}
	r, err := clients[0].Call(ctx, &rcl_interfaces_srv.ListParameters_Request{})
	if err != nil || len(r.Result.Names) == 0 {
		t.Fatalf("list_parameters after the storm: %+v %v", r, err)
	}
}
