package rosbridge

import (
	"context"
	"encoding/binary"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fsmnodes/fsmnodes/internal/foxglove"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/msgs"
	example_interfaces_action "github.com/fsmnodes/fsmnodes/msgs/example_interfaces/action"
	unique_identifier_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/unique_identifier_msgs/msg"
)

type fibGoal = ros.ServerGoal[example_interfaces_action.Fibonacci_Goal, example_interfaces_action.Fibonacci_Feedback]

// goalEnd is how a goal of the test's action server ended.
type goalEnd struct {
	order    int32 // the goal's order tells the goals apart
	canceled bool  // by a cancel request (not the node closing)
}

// TestGoalsOfLostClientsCanceled: a goal a WebSocket client sends through
// the bridge (the action's _action/send_goal service, as the dashboard's
// Velma form does) is canceled by the bridge when that client is lost
// (it answers no ping for client_timeout: its link dropped) or
// disconnects; a goal of a client that is heard runs on.
func TestGoalsOfLostClientsCanceled(t *testing.T) {
	domain := testenv.Domain(t)
	peer := newContext(t, domain)
	running := make(chan int32, 10)
	ended := make(chan goalEnd, 10)
	if _, err := ros.NewActionServer(newNode(t, peer, "worker", ""), "/slow", example_interfaces_action.Fibonacci,
		func(ctx context.Context, g *fibGoal) (*example_interfaces_action.Fibonacci_Result, error) {
			running <- g.Goal().Order
			<-ctx.Done()
			ended <- goalEnd{g.Goal().Order, g.CancelRequested()}
			return nil, ros.ErrGoalCanceled
		}, ros.ActionServerOptions[example_interfaces_action.Fibonacci_Goal]{}); err != nil {
		t.Fatal(err)
	}

	rc := newContext(t, domain)
	b, err := New(newNode(t, rc, NodeName, ""), Config{Registry: msgs.Registry(), IncludeHidden: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := foxglove.New(b, foxglove.Options{Capabilities: AllCapabilities, SupportedEncodings: []string{Encoding},
		ClientTimeout: 500 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.Start(ctx, srv); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		cancel()
		hs.Close()
		srv.Close()
		b.Close()
	})
	testenv.WaitFor(t, wait, "/slow/_action/send_goal offered", func() bool {
		_, ok := service(srv, "/slow/_action/send_goal")
		return ok
	})
	sv, _ := service(srv, "/slow/_action/send_goal")

	// send connects a client and sends a goal of order through the
	// bridge; it reads (answering pings) until the goal is accepted.
	send := func(order int32) *websocket.Conn {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), &websocket.DialOptions{Subprotocols: []string{foxglove.Subprotocol}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.CloseNow() })
		conn.SetReadLimit(64 << 20)
		var id [16]byte
		id[0], id[15] = byte(order), 0xaa
		req := rosidl.Marshal(&example_interfaces_action.Fibonacci_SendGoal_Request{
			GoalId: unique_identifier_msgs_msg.UUID{Uuid: id}, Goal: example_interfaces_action.Fibonacci_Goal{Order: order}}, nil)
		frame := []byte{foxglove.OpServiceCallRequest}
		frame = binary.LittleEndian.AppendUint32(frame, sv.ID)
		frame = binary.LittleEndian.AppendUint32(frame, uint32(order)) // call id
		frame = binary.LittleEndian.AppendUint32(frame, uint32(len(Encoding)))
		frame = append(append(frame, Encoding...), req...)
		if err := conn.Write(ctx, websocket.MessageBinary, frame); err != nil {
			t.Fatal(err)
		}
		for {
			typ, data, err := conn.Read(ctx)
			if err != nil {
				t.Fatalf("goal %d: no answer to send_goal: %v", order, err)
			}
			if typ == websocket.MessageText && strings.Contains(string(data), "serviceCallFailure") {
				t.Fatalf("goal %d: %s", order, data)
			}
			if typ != websocket.MessageBinary || len(data) < 1 || data[0] != foxglove.OpServiceCallResponse {
				continue
			}
			// op, service id, call id, encoding length, encoding, then
			// the CDR response: its first field is accepted.
			resp := data[13+len(Encoding):]
			if len(resp) < 5 || resp[4] != 1 {
				t.Fatalf("goal %d not accepted: % x", order, resp)
			}
			break
		}
		select {
		case o := <-running:
			if o != order {
				t.Fatalf("goal %d runs, want %d", o, order)
			}
		case <-time.After(wait):
			t.Fatalf("goal %d accepted but not running", order)
		}
		return conn
	}
	expectEnd := func(order int32, why string) {
		t.Helper()
		select {
		case e := <-ended:
			if e.order != order || !e.canceled {
				t.Fatalf("%s: goal %d ended (canceled %v), want goal %d canceled", why, e.order, e.canceled, order)
			}
		case <-time.After(wait):
			t.Fatalf("%s: goal %d was not canceled", why, order)
		}
	}

	// Lost: the client reads nothing more, so answers no ping.
	send(1)
	expectEnd(1, "client lost")

	// Heard: a client that keeps reading keeps its goal, for several
	// client timeouts; it disconnects: its goal is canceled.
	heard := send(2)
	readCtx, stopReading := context.WithCancel(context.Background())
	defer stopReading()
	go func() {
		for {
			if _, _, err := heard.Read(readCtx); err != nil {
				return
			}
		}
	}()
	select {
	case e := <-ended:
		t.Fatalf("goal %d of a client that is heard ended (canceled %v)", e.order, e.canceled)
	case <-time.After(2 * time.Second):
	}
	heard.Close(websocket.StatusNormalClosure, "")
	expectEnd(2, "client disconnected")
	if st := srv.Stats(); st.ClientsLost != 1 {
		t.Errorf("clients lost %d, want 1", st.ClientsLost)
	}
}
