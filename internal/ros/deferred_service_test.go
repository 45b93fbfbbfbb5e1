package ros

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// A deferred service answers after its handler returned, from another
// goroutine: meanwhile the node's callback goroutine serves other
// requests; a second reply to the same request is ignored, and a nil one
// sends nothing (the caller times out).
func TestDeferredService(t *testing.T) {
	domain := testenv.Domain(t)
	sn := mustNode(t, newTestContext(t, domain), "server", "")
	cn := mustNode(t, newTestContext(t, domain), "caller", "")
	type pending struct {
		data  bool
		reply func(*std_srvs_srv.SetBool_Response)
	}
	waiting := make(chan pending, 4)
	srv, err := NewDeferredService(sn, "/later", std_srvs_srv.SetBool, func(_ context.Context, req *std_srvs_srv.SetBool_Request, reply func(*std_srvs_srv.SetBool_Response)) {
		waiting <- pending{req.Data, reply}
	})
	if err != nil {
		t.Fatal(err)
	}
	// its events, kept (transient local) so that the observer misses none
	events := &eventSink{}
	kept := QoSLatched.KeepLast(100)
	if err := srv.ConfigureIntrospection(nil, kept, IntrospectionContents); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSubscription(mustNode(t, newTestContext(t, domain), "observer", ""), "/later/_service_event", kept, events.add); err != nil {
		t.Fatal(err)
	}
	if _, err := NewService(sn, "/now", std_srvs_srv.Trigger, func(context.Context, *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
		return &std_srvs_srv.Trigger_Response{Success: true, Message: "now"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	later, err := NewClient(cn, "/later", std_srvs_srv.SetBool)
	if err != nil {
		t.Fatal(err)
	}
	now, err := NewClient(cn, "/now", std_srvs_srv.Trigger)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	for _, w := range []interface{ WaitForService(context.Context) error }{later, now} {
		if err := w.WaitForService(ctx); err != nil {
			t.Fatal(err)
		}
	}

	type result struct {
		resp *std_srvs_srv.SetBool_Response
		err  error
	}
	call := func(ctx context.Context, data bool) chan result {
		ch := make(chan result, 1)
		go func() {
			r, err := later.Call(ctx, &std_srvs_srv.SetBool_Request{Data: data})
			ch <- result{r, err}
		}()
		return ch
	}
	first := call(ctx, true)
	p := <-waiting // the handler has returned; the call waits
	if resp, err := now.Call(ctx, &std_srvs_srv.Trigger_Request{}); err != nil || resp.Message != "now" {
		t.Fatalf("another service while a reply is pending: %v %+v", err, resp)
	}
	select {
	case r := <-first:
		t.Fatalf("answered before reply: %+v %v", r.resp, r.err)
	default:
	}
	go p.reply(&std_srvs_srv.SetBool_Response{Success: p.data, Message: "first"})
	if r := <-first; r.err != nil || !r.resp.Success || r.resp.Message != "first" {
		t.Fatalf("deferred answer: %+v %v", r.resp, r.err)
	}
	p.reply(&std_srvs_srv.SetBool_Response{Message: "again"}) // ignored

	second := call(ctx, false)
	p = <-waiting
	p.reply(&std_srvs_srv.SetBool_Response{Success: p.data, Message: "second"})
	if r := <-second; r.err != nil || r.resp.Success || r.resp.Message != "second" {
		t.Fatalf("second call got %+v %v", r.resp, r.err)
	}
	// The events come in the order they were sent: a repeated first reply
	// would have been sent before the second one.
	var seen []*std_srvs_srv.SetBool_Event
	testenv.WaitFor(t, failAfter, "the second call's RESPONSE_SENT", func() bool {
		seen = append(seen, events.take()...)
		last := seen[max(0, len(seen)-1):]
		return len(last) == 1 && len(last[0].Response) == 1 && last[0].Response[0].Message == "second"
	})
	var kinds []uint8
	for _, e := range seen {
		kinds = append(kinds, e.Info.EventType)
	}
	if fmt.Sprint(kinds) != "[1 2 1 2]" {
		t.Errorf("event types %v, want REQUEST_RECEIVED, RESPONSE_SENT twice (one response per request)", kinds)
	}

	short, cancelShort := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancelShort()
	third := call(short, true)
	p = <-waiting
	p.reply(nil)
	if r := <-third; r.err == nil {
		t.Fatalf("a nil reply answered: %+v", r.resp)
	}
}
