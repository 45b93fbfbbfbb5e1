package ros

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// TestCallWaitsOnItsOwnGoroutine: while a service answers within
// directWait, a call waits for its reply on its own goroutine (waitDirect);
// once one answer takes longer, calls wait on the receive goroutine's
// hand-over instead, until answers are fast again. Every answer, also of
// calls made at once from several goroutines, reaches its own call.
func TestCallWaitsOnItsOwnGoroutine(t *testing.T) {
	domain := testenv.Domain(t)
	server := mustNode(t, newTestContext(t, domain), "server", "/direct")
	var delay atomic.Int64
	if _, err := NewService(server, "echo", std_srvs_srv.SetBool, func(_ context.Context, req *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
		time.Sleep(time.Duration(delay.Load()))
		return &std_srvs_srv.SetBool_Response{Success: req.Data, Message: fmt.Sprint(req.Data)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	cli, err := NewClient(mustNode(t, newTestContext(t, domain), "client", "/direct"), "/direct/echo", std_srvs_srv.SetBool)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cli.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	call := func(i int) {
		t.Helper()
		resp, err := cli.Call(ctx, &std_srvs_srv.SetBool_Request{Data: i%2 == 0})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if resp.Success != (i%2 == 0) || resp.Message != fmt.Sprint(i%2 == 0) {
			t.Fatalf("call %d: answer %+v, not its own", i, resp)
		}
	}
	// A window far longer than a round trip, even on a loaded machine,
	// and a slow service three times as long.
	c := cli.c
	c.directWait = 100 * time.Millisecond

	// Fast answers.
	const n = 200
	for i := range n {
		call(i)
	}
	if d := c.directAnswers.Load(); d < n/2 {
		t.Errorf("%d of %d calls to a fast service were answered on their own goroutine, want most", d, n)
	}

	// Slow answers: after the first, no call waits on its own goroutine.
	delay.Store(int64(3 * c.directWait))
	call(0)
	before := c.directAnswers.Load()
	for i := range 5 {
		call(i)
	}
	if d := c.directAnswers.Load() - before; d != 0 {
		t.Errorf("%d of 5 calls to a slow service waited on their own goroutine", d)
	}

	// Fast again: the first call measures it, the next ones wait directly.
	delay.Store(0)
	call(0)
	before = c.directAnswers.Load()
	for i := range n {
		call(i)
	}
	if d := c.directAnswers.Load() - before; d < n/2 {
		t.Errorf("fast again: %d of %d calls answered on their own goroutine, want most", d, n)
	}

	// Calls from several goroutines at once: one waits in TakeWait, the
	// others on the hand-over; each gets its own answer.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				want := (g+i)%2 == 0
				resp, err := cli.Call(ctx, &std_srvs_srv.SetBool_Request{Data: want})
				if err == nil && (resp.Success != want || resp.Message != fmt.Sprint(want)) {
					err = fmt.Errorf("answer %+v to %v", resp, want)
				}
				if err != nil {
					errs <- fmt.Errorf("goroutine %d, call %d: %w", g, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
