package velmanode

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
	velma_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/velma_msgs/msg"
)

// latest keeps the last value seen on a topic.
type latest[T any] struct {
	mu  sync.Mutex
	v   T
	n   int
	all []T
}

func (l *latest[T]) set(v T) {
	l.mu.Lock()
	l.v, l.n = v, l.n+1
	l.all = append(l.all, v)
	l.mu.Unlock()
}

// history returns a copy of every value set so far.
func (l *latest[T]) history() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]T(nil), l.all...)
}

func (l *latest[T]) get() (T, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.v, l.n
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func newCtx(t *testing.T, domain uint32) *ros.Context {
	t.Helper()
	c, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true, LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// The bridge over DDS (a domain of its own): states, joint states, status and
// the Trigger services driving the robot from start-up to relax.
func TestBridge_OverDDS_StartUpMotorsRelax(t *testing.T) {
	domain := testenv.Domain(t)
	t.Parallel() // own ROS_DOMAIN_ID
	if testing.Short() {
		t.Skip("DDS test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()

	srvCtx := newCtx(t, domain)
	n, err := srvCtx.NewNode(NodeName, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBridge(n)
	if err != nil {
		t.Fatal(err)
	}
	cliCtx := newCtx(t, domain)
	cn, err := cliCtx.NewNode("velma_test_client", "")
	if err != nil {
		t.Fatal(err)
	}
	var body, cs latest[string]
	var js latest[int]
	var st latest[*velma_msgs_msg.Status]
	subs := []error{}
	_, err = ros.NewSubscription(cn, "/velma_core/ve_body/state", ros.QoSLatched, func(m *std_msgs_msg.String) { body.set(m.Data) })
	subs = append(subs, err)
	_, err = ros.NewSubscription(cn, "/velma_core/cs/state", ros.QoSLatched, func(m *std_msgs_msg.String) { cs.set(m.Data) })
	subs = append(subs, err)
	_, err = ros.NewSubscription(cn, "/joint_states", ros.QoSDefault, func(m *sensor_msgs_msg.JointState) { js.set(len(m.Name)) })
	subs = append(subs, err)
	_, err = ros.NewSubscription(cn, "/velma_core/status", ros.QoSDefault, func(m *velma_msgs_msg.Status) { st.set(m) })
	subs = append(subs, err)
	for _, e := range subs {
		if e != nil {
			t.Fatal(e)
		}
	}
	call := func(name string) *std_srvs_srv.Trigger_Response {
		t.Helper()
		cli, err := ros.NewClient(cn, name, std_srvs_srv.Trigger)
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		if err := cli.WaitForService(ctx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		resp, err := cli.Call(ctx, &std_srvs_srv.Trigger_Request{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return resp
	}

	loopDone := make(chan error, 1)
	loopCtx, stopLoop := context.WithCancel(ctx)
	go func() { loopDone <- b.Run(loopCtx) }()
	defer func() { stopLoop(); <-loopDone }()
	go func() { _ = srvCtx.Spin(ctx) }()
	go func() { _ = cliCtx.Spin(ctx) }()

	waitFor(t, ctx, "cs safe", func() bool { v, _ := cs.get(); return v == "safe" })
	waitFor(t, ctx, "ve_body transp", func() bool { v, _ := body.get(); return v == "transp" })
	if r := call("/velma_core/relax"); r.Success {
		t.Fatalf("relax accepted before motors are ready: %q", r.Message)
	}
	if r := call("/velma_core/motors/hp/home"); r.Success {
		t.Fatalf("homing accepted before enable: %q", r.Message)
	}
	if r := call("/velma_core/motors/enable"); !r.Success {
		t.Fatalf("enable: %q", r.Message)
	}
	waitFor(t, ctx, "motors enabled", func() bool {
		s, _ := st.get()
		return s != nil && s.Motors[1].Enabled && s.Motors[2].Enabled
	})
	for _, name := range []string{"/velma_core/motors/hp/home", "/velma_core/motors/ht/home"} {
		if r := call(name); !r.Success {
			t.Fatalf("%s: %q", name, r.Message)
		}
	}
	waitFor(t, ctx, "motors ready", func() bool { s, _ := st.get(); return s != nil && s.MotorsReady })
	if r := call("/velma_core/relax"); !r.Success {
		t.Fatalf("relax: %q", r.Message)
	}
	waitFor(t, ctx, "cs relax", func() bool { v, _ := cs.get(); return v == "relax" })
	if n, _ := js.get(); n != 17 {
		t.Fatalf("joint_states has %d joints, want 17", n)
	}
	waitFor(t, ctx, "status shows relax", func() bool { s, _ := st.get(); return s.CsState == "relax" })
	if s, _ := st.get(); s.VeBodyState != "transp" || s.Header.FrameId != "torso_base" || s.SubsystemState != velma_msgs_msg.Status_STATE_RELAX {
		t.Fatalf("status %s/%s (%d) frame %q", s.VeBodyState, s.CsState, s.SubsystemState, s.Header.FrameId)
	}
	// ve_body state reports stay well below the loop rate
	body.mu.Lock()
	nb := len(body.all)
	body.mu.Unlock()
	if nb > 10 {
		t.Fatalf("%d ve_body state messages for a handful of changes", nb)
	}
}
