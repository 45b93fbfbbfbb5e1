package msgs_test

import (
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/msgs"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// Every service (an action's internal ones too) has its introspection
// event type pkg/srv/X_Event: found by name, as rosidl_runtime_py finds
// it, but not listed (`ros2 interface list` does not list it either), with
// the fields, DDS name and description Jazzy gives it.
func TestServiceEventTypes(t *testing.T) {
	reg := msgs.Registry()
	services := 0
	for _, name := range reg.Names() {
		s, err := reg.Service(name)
		if err != nil {
			continue
		}
		services++
		ev := s.Event
		if ev == nil {
			t.Errorf("%s: no event type", name)
			continue
		}
		if strings.HasSuffix(name, "_Event") {
			t.Errorf("event type %s listed among the names", name)
		}
		if got, err := reg.Message(name + "_Event"); err != nil || got != ev {
			t.Errorf("Message(%q) = %v, %v", name+"_Event", got, err)
		}
		pkg, rest, _ := strings.Cut(name, "/")
		sub, base, _ := strings.Cut(rest, "/")
		if want := pkg + "::" + sub + "::dds_::" + base + "_Event_"; ev.Name != name+"_Event" || ev.DDSName != want {
			t.Errorf("%s: event %s, DDS name %s, want %s", name, ev.Name, ev.DDSName, want)
		}
		if ev.Desc == nil || ev.Desc.TypeHash() != ev.Hash {
			t.Errorf("%s: event description missing or its hash differs", name)
		}
		if len(ev.Desc.Fields) != 3 || ev.Desc.Fields[0].NestedTypeName != "service_msgs/msg/ServiceEventInfo" ||
			ev.Desc.Fields[1].NestedTypeName != s.Request.Name || ev.Desc.Fields[2].NestedTypeName != s.Response.Name {
			t.Errorf("%s: event fields %+v", name, ev.Desc.Fields)
		}
	}
	if services < 20 {
		t.Errorf("only %d services", services)
	}
	// The typed event: at most one request and one response.
	ev := std_srvs_srv.NewSetBool_Event()
	ev.Request = make([]std_srvs_srv.SetBool_Request, 2)
	if ev.Validate() == nil {
		t.Error("an event with two requests passed Validate")
	}
	if _, err := reg.Message("std_srvs/srv/Nothing_Event"); err == nil {
		t.Error("the event of an unknown service was found")
	}
}
