package cli

import (
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/msgyaml"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// An event prints as ros2 service echo prints it: the event type by name
// (an unknown number stays a number), the rest as topic echo would.
func TestEventYAML(t *testing.T) {
	for kind, name := range map[uint8]string{0: "REQUEST_SENT", 1: "REQUEST_RECEIVED", 2: "RESPONSE_SENT", 3: "RESPONSE_RECEIVED", 7: "7"} {
		ev := std_srvs_srv.NewSetBool_Event()
		ev.Info.EventType = kind
		ev.Info.Stamp.Sec, ev.Info.Stamp.Nanosec = 12, 34
		ev.Info.ClientGid[0], ev.Info.ClientGid[15] = 1, 255
		ev.Info.SequenceNumber = 5
		ev.Request = []std_srvs_srv.SetBool_Request{{Data: true}}
		got, err := eventYAML(ev, msgyaml.EchoOptions{TruncateLength: 128})
		if err != nil {
			t.Fatal(err)
		}
		want := "info:\n  event_type: " + name + "\n  stamp:\n    sec: 12\n    nanosec: 34\n  client_gid:\n  - 1\n" +
			strings.Repeat("  - 0\n", 14) + "  - 255\n  sequence_number: 5\nrequest:\n- data: true\nresponse: []\n---\n"
		if got != want {
			t.Errorf("event %d:\n%s\nwant\n%s", kind, got, want)
		}
	}
}

func TestServiceEchoUsage(t *testing.T) {
	for _, args := range [][]string{{"service", "echo"}, {"service", "echo", "/a", "b", "c"}, {"service", "echo", "/a", "-l", "x"}} {
		if _, errs, code := run(t, args...); code != 2 || errs == "" {
			t.Errorf("%q: exit %d, %q", args, code, errs)
		}
	}
	if _, errs, code := run(t, "service", "echo", "/a", "std_srvs/srv/Nope"); code != 1 ||
		!strings.Contains(errs, "the service type 'std_srvs/srv/Nope' is invalid") {
		t.Errorf("unknown type: exit %d, %q", code, errs)
	}
}
