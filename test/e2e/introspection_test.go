package e2e

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// eventBlock matches one event as `ros2 service echo` prints it: the
// event type by name, the stamp, the 16 bytes of client_gid one a line,
// the sequence number, then the request and response sequences.
func eventBlock(kind, request, response string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^info:\n  event_type: ` + kind + `\n  stamp:\n    sec: \d+\n    nanosec: \d+\n` +
		`  client_gid:\n(  - \d+\n){16}  sequence_number: \d+\n` +
		`request:` + request + `\nresponse:` + response + `\n---$`)
}

// fsmnodes service echo in another process prints the events of our
// server (contents) and client (metadata) as ros2 service echo does,
// finding the service type in the graph, and says when nobody publishes
// them.
func TestCLI_ServiceEchoPrintsIntrospectionEvents(t *testing.T) {
	bin := cliBins(t)
	domain := testenv.Domain(t)
	t.Parallel()
	c := pnContext(t, domain)
	n, err := c.NewNode("intro_server", "/intro")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ros.NewService(n, "set", std_srvs_srv.SetBool, func(_ context.Context, req *std_srvs_srv.SetBool_Request) (*std_srvs_srv.SetBool_Response, error) {
		return &std_srvs_srv.SetBool_Response{Success: req.Data, Message: "ok"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cli, err := ros.NewClient(n, "set", std_srvs_srv.SetBool)
	if err != nil {
		t.Fatal(err)
	}
	echo := cliStart(t, bin, domain, "fsmnodes", "service", "echo", "/intro/set")
	cliWaitOutput(t, echo, "the no-publisher note", func(out string) bool {
		return strings.Contains(out, "No publishers on topic '/intro/set/_service_event'; is service introspection on the client or server enabled?\n")
	})
	if err := srv.ConfigureIntrospection(nil, ros.QoSSystemDefault, ros.IntrospectionContents); err != nil {
		t.Fatal(err)
	}
	if err := cli.ConfigureIntrospection(nil, ros.QoSSystemDefault, ros.IntrospectionMetadata); err != nil {
		t.Fatal(err)
	}
	// Call until the echo shows a whole call (it may match the event
	// publishers after the first calls).
	want := []*regexp.Regexp{
		eventBlock("REQUEST_SENT", " \\[\\]", " \\[\\]"),
		eventBlock("REQUEST_RECEIVED", "\n- data: true", " \\[\\]"),
		eventBlock("RESPONSE_SENT", " \\[\\]", "\n- success: true\n  message: ok"),
		eventBlock("RESPONSE_RECEIVED", " \\[\\]", " \\[\\]"),
	}
	deadline := time.Now().Add(cliWait)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), cliWait)
		_, err := cli.Call(ctx, &std_srvs_srv.SetBool_Request{Data: true})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		out, _ := echo.output()
		all := true
		for _, re := range want {
			all = all && re.MatchString(out)
		}
		if all {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("service echo did not print the four events:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The events are a topic like any other: topic echo finds the event
	// type (std_srvs/srv/SetBool_Event) in the graph and prints one.
	topicEcho := cliStart(t, bin, domain, "fsmnodes", "topic", "echo", "--once", "/intro/set/_service_event")
	for done := false; !done; {
		ctx, cancel := context.WithTimeout(context.Background(), cliWait)
		_, err := cli.Call(ctx, &std_srvs_srv.SetBool_Request{Data: true})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-topicEcho.done:
			topicEcho.done <- err // for wait
			done = true
		case <-time.After(200 * time.Millisecond):
		}
	}
	if code := topicEcho.wait(t); code != 0 {
		t.Fatalf("topic echo --once exited %d", code)
	}
	if out, _ := topicEcho.output(); !regexp.MustCompile(`(?m)^info:\n  event_type: [0-3]\n`).MatchString(out) {
		t.Errorf("topic echo of the event topic:\n%s", out)
	}

	// Errors: an unknown service without TYPE, an unknown TYPE.
	_, errs, code := cliRun(t, bin, domain, "service", "echo", "/intro/nothing")
	if code != 1 || !strings.Contains(errs, "the service name '/intro/nothing' is invalid") {
		t.Errorf("unknown service: exit %d, %q", code, errs)
	}
	_, errs, code = cliRun(t, bin, domain, "service", "echo", "/intro/set", "std_srvs/srv/Nope")
	if code != 1 || !strings.Contains(errs, "the service type 'std_srvs/srv/Nope' is invalid") {
		t.Errorf("unknown type: exit %d, %q", code, errs)
	}
}
