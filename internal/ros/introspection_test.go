package ros

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
	service_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/service_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// eventSink collects the SetBool events of one service.
type eventSink struct {
	mu  sync.Mutex
	got []*std_srvs_srv.SetBool_Event
}

func (s *eventSink) add(e *std_srvs_srv.SetBool_Event) {
	s.mu.Lock()
	s.got = append(s.got, e)
	s.mu.Unlock()
}

func (s *eventSink) take() []*std_srvs_srv.SetBool_Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.got
	s.got = nil
	return out
}

func (s *eventSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got)
}

// introspectionRig is a SetBool server and client in two Contexts and a
// subscriber of the events in a third.
type introspectionRig struct {
	srv    *Service
	cli    *Client[std_srvs_srv.SetBool_Request, std_srvs_srv.SetBool_Response]
	sn, cn *Node
	events *eventSink
	obs    *Node
}

func newIntrospectionRig(t *testing.T, domain uint32, serverArgs ...string) *introspectionRig {
	t.Helper()
	r := &introspectionRig{events: &eventSink{}}
	r.sn = mustNode(t, newTestContext(t, domain, serverArgs...), "server", "")
	r.cn = mustNode(t, newTestContext(t, domain), "caller", "")
	r.obs = mustNode(t, newTestContext(t, domain), "observer", "")
	var err error
	r.srv, err = NewService(r.sn, "/set", std_srvs_srv.SetBool, func(_ context.Context, req *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
		return &std_srvs_srv.SetBool_Response{Success: req.Data, Message: "set"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.cli, err = NewClient(r.cn, "/set", std_srvs_srv.SetBool); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSubscription(r.obs, "/set/_service_event", QoSServices, r.events.add); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	if err := r.cli.WaitForService(ctx); err != nil {
		t.Fatal(err)
	}
	return r
}

// call makes one call and waits until want events arrived (all of them,
// as the four events of a call come from two publishers).
func (r *introspectionRig) call(t *testing.T, data bool, want int) []*std_srvs_srv.SetBool_Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	resp, err := r.cli.Call(ctx, &std_srvs_srv.SetBool_Request{Data: data})
	if err != nil || resp.Success != data {
		t.Fatalf("call: %+v, %v", resp, err)
	}
	testenv.WaitFor(t, failAfter, "the events", func() bool { return r.events.count() >= want })
	return r.events.take()
}

// waitEventPublishers waits until the event topic has n publishers.
func (r *introspectionRig) waitEventPublishers(t *testing.T, n int) {
	t.Helper()
	waitGraph(t, r.obs.Context(), "event publishers", func() bool {
		return len(r.obs.Context().PublishersInfo("/set/_service_event")) == n
	})
}

// Server and client with contents: a call gives the four events of rcl, in
// the client's and the server's gid layouts, with the sequence number of
// the call, the request or the response, and the clock's stamp; with
// metadata the same without contents; switched off, none.
func TestIntrospectionEvents(t *testing.T) {
	domain := testenv.Domain(t)
	t.Parallel()
	r := newIntrospectionRig(t, domain)
	if err := r.srv.ConfigureIntrospection(nil, QoSServices, IntrospectionContents); err != nil {
		t.Fatal(err)
	}
	if err := r.cli.ConfigureIntrospection(r.cn.Clock(), QoSServices, IntrospectionContents); err != nil {
		t.Fatal(err)
	}
	r.waitEventPublishers(t, 2)
	for _, e := range r.obs.Context().PublishersInfo("/set/_service_event") {
		if e.TopicType != "std_srvs/srv/SetBool_Event" {
			t.Errorf("event publisher of type %s", e.TopicType)
		}
	}
	before := time.Now()
	evs := r.call(t, true, 4)
	byKind := map[uint8]*std_srvs_srv.SetBool_Event{}
	for _, e := range evs {
		byKind[e.Info.EventType] = e
	}
	if len(evs) != 4 || len(byKind) != 4 {
		t.Fatalf("events %+v", evs)
	}
	clientGID := [16]byte(r.cli.c.id)
	var serverGID [16]byte
	binary.LittleEndian.PutUint64(serverGID[:8], r.cli.c.handle)
	seq := byKind[service_msgs_msg.ServiceEventInfo_REQUEST_SENT].Info.SequenceNumber
	for kind, e := range byKind {
		wantGID := clientGID
		if kind == service_msgs_msg.ServiceEventInfo_REQUEST_RECEIVED || kind == service_msgs_msg.ServiceEventInfo_RESPONSE_SENT {
			wantGID = serverGID
			// The second half is the server's instance handle of the
			// client's request writer: process-local, but not zero.
			if binary.LittleEndian.Uint64(e.Info.ClientGid[8:]) == 0 {
				t.Errorf("event %d: no request writer handle in %v", kind, e.Info.ClientGid)
			}
			copy(wantGID[8:], e.Info.ClientGid[8:])
		}
		if e.Info.ClientGid != wantGID {
			t.Errorf("event %d: client_gid %v, want %v", kind, e.Info.ClientGid, wantGID)
		}
		if e.Info.SequenceNumber != seq || seq <= 0 {
			t.Errorf("event %d: sequence %d, want %d", kind, e.Info.SequenceNumber, seq)
		}
		stamp := time.Unix(int64(e.Info.Stamp.Sec), int64(e.Info.Stamp.Nanosec))
		if stamp.Before(before.Add(-time.Second)) || stamp.After(time.Now().Add(time.Second)) {
			t.Errorf("event %d: stamp %v not around now", kind, stamp)
		}
		request := kind == service_msgs_msg.ServiceEventInfo_REQUEST_SENT || kind == service_msgs_msg.ServiceEventInfo_REQUEST_RECEIVED
		if request && (len(e.Request) != 1 || !e.Request[0].Data || len(e.Response) != 0) {
			t.Errorf("event %d: request %+v response %+v", kind, e.Request, e.Response)
		}
		if !request && (len(e.Response) != 1 || !e.Response[0].Success || e.Response[0].Message != "set" || len(e.Request) != 0) {
			t.Errorf("event %d: request %+v response %+v", kind, e.Request, e.Response)
		}
	}

	// Metadata: the same events, empty sequences.
	if err := r.srv.ConfigureIntrospection(nil, QoSServices, IntrospectionMetadata); err != nil {
		t.Fatal(err)
	}
	if err := r.cli.ConfigureIntrospection(nil, QoSServices, IntrospectionMetadata); err != nil {
		t.Fatal(err)
	}
	evs = r.call(t, false, 4)
	for _, e := range evs {
		if len(e.Request) != 0 || len(e.Response) != 0 || e.Info.SequenceNumber <= seq {
			t.Errorf("metadata event %+v", e)
		}
	}

	// Off: the publishers go, calls publish nothing.
	if err := r.srv.ConfigureIntrospection(nil, QoSServices, IntrospectionOff); err != nil {
		t.Fatal(err)
	}
	if err := r.cli.ConfigureIntrospection(nil, QoSServices, IntrospectionOff); err != nil {
		t.Fatal(err)
	}
	r.waitEventPublishers(t, 0)
	r.call(t, true, 0)
	// A client-only introspection still shows the call (two events), so
	// nothing published meanwhile was missed by the observer.
	if err := r.cli.ConfigureIntrospection(nil, QoSServices, IntrospectionMetadata); err != nil {
		t.Fatal(err)
	}
	r.waitEventPublishers(t, 1)
	evs = r.call(t, true, 2)
	for _, e := range evs {
		if k := e.Info.EventType; k != service_msgs_msg.ServiceEventInfo_REQUEST_SENT && k != service_msgs_msg.ServiceEventInfo_RESPONSE_RECEIVED {
			t.Errorf("event of kind %d from a server switched off", k)
		}
	}
	if err := r.srv.ConfigureIntrospection(nil, QoSServices, IntrospectionState(7)); err == nil {
		t.Error("state 7 accepted")
	}
}

// The node-wide parameters switch the node's own services and clients,
// not its parameter services; bad values are refused with the demo's
// reasons.
func TestIntrospectionParameters(t *testing.T) {
	domain := testenv.Domain(t)
	t.Parallel()
	r := newIntrospectionRig(t, domain)
	if err := r.sn.DeclareIntrospectionParameters(); err != nil {
		t.Fatal(err)
	}
	if err := r.sn.DeclareIntrospectionParameters(); err == nil {
		t.Error("second DeclareIntrospectionParameters accepted")
	}
	if err := r.cn.DeclareIntrospectionParameters(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		value any
		want  string
	}{
		{"all", "service_configure_introspection must be one of 'disabled', 'metadata', or 'contents'"},
		{int64(1), "service_configure_introspection"},
	} {
		if err := r.sn.SetParameter(ServiceIntrospectionParam, tc.value); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("set %v: %v, want %q", tc.value, err, tc.want)
		}
	}
	if err := r.sn.SetParameter(ServiceIntrospectionParam, "contents"); err != nil {
		t.Fatal(err)
	}
	r.waitEventPublishers(t, 1)
	evs := r.call(t, true, 2)
	for _, e := range evs {
		if len(e.Request)+len(e.Response) != 1 {
			t.Errorf("contents event %+v", e)
		}
	}
	if err := r.cn.SetParameter(ClientIntrospectionParam, "metadata"); err != nil {
		t.Fatal(err)
	}
	r.waitEventPublishers(t, 2)
	// A client created later follows the node-wide state too.
	later, err := NewClient(r.cn, "/set", std_srvs_srv.SetBool)
	if err != nil {
		t.Fatal(err)
	}
	if got := later.c.intro.current(); got != IntrospectionMetadata {
		t.Errorf("later client: %v", got)
	}
	r.call(t, true, 4)
	// The parameter services stay silent.
	waitGraph(t, r.obs.Context(), "settled graph", func() bool { return true })
	for _, tn := range r.obs.Context().TopicNamesAndTypes() {
		if strings.HasSuffix(tn.Name, ServiceEventSuffix) && tn.Name != "/set"+ServiceEventSuffix {
			t.Errorf("infrastructure events on %s", tn.Name)
		}
	}
	if err := r.sn.SetParameter(ServiceIntrospectionParam, "disabled"); err != nil {
		t.Fatal(err)
	}
	if err := r.cn.SetParameter(ClientIntrospectionParam, "disabled"); err != nil {
		t.Fatal(err)
	}
	r.waitEventPublishers(t, 0)
}

// Speaking Humble there is no introspection: the API and the parameters
// refuse it with a clear error; an override at start fails the
// declaration.
func TestIntrospectionUnavailableWithHumble(t *testing.T) {
	domain := testenv.Domain(t)
	var log syncBuffer
	c := dialectContext(t, domain, "humble", &log)
	n := mustNode(t, c, "humble_server", "")
	srv, err := NewService(n, "/h", std_srvs_srv.Trigger, func(context.Context, *std_srvs_srv.Trigger_Request) (*std_srvs_srv.Trigger_Response, error) {
		return &std_srvs_srv.Trigger_Response{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.ConfigureIntrospection(nil, QoSServices, IntrospectionContents); !errors.Is(err, ErrIntrospectionUnavailable) {
		t.Errorf("ConfigureIntrospection = %v", err)
	}
	if err := srv.ConfigureIntrospection(nil, QoSServices, IntrospectionOff); err != nil {
		t.Errorf("switching off: %v", err)
	}
	if err := n.DeclareIntrospectionParameters(); err != nil {
		t.Fatal(err)
	}
	if err := n.SetParameter(ServiceIntrospectionParam, "metadata"); err == nil || !strings.Contains(err.Error(), "Humble") {
		t.Errorf("set metadata with Humble: %v", err)
	}
	c2, err := NewContext(ContextOptions{Args: []string{"--ros-args", "-p", "client_configure_introspection:=contents"},
		DomainID: &domain, Getenv: dialectEnv("humble"), NoSignals: true, LogOutput: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	n2 := mustNode(t, c2, "humble_client", "")
	if err := n2.DeclareIntrospectionParameters(); err == nil || !strings.Contains(err.Error(), "Humble") {
		t.Errorf("override contents with Humble: %v", err)
	}
}
