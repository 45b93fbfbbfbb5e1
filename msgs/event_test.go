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
	// Jazzy's hashes, from the type_hashes of the installed Jazzy packages
	// (share/<pkg>/srv/<Name>.json).
	for name, want := range map[string]string{
		"std_srvs/srv/SetBool_Event":                         "RIHS01_3c4c20015afb4303eafd347b1d6a786f171a89c814726961a9593ef10df878cf",
		"std_srvs/srv/Trigger_Event":                         "RIHS01_ec4a1d26b0575e61906890342aba9523a2360e9845857c5590fa6e23bc39e1c2",
		"example_interfaces/srv/AddTwoInts_Event":            "RIHS01_32c1d140259c71e5c355115942bcb31df98b4330e4d906b1b75ccb1c9b3ce6c8",
		"rcl_interfaces/srv/GetParameters_Event":             "RIHS01_84eeb9247b09067c35bd8750d5c8555b700e394a616737c4624f15ae02e64c4d",
		"lifecycle_msgs/srv/ChangeState_Event":               "RIHS01_bf7f355aca8762a7a51df02eaf4a51024255d15b31b1b68bf0a099673c2709bc",
		"example_interfaces/action/Fibonacci_SendGoal_Event": "RIHS01_d5e5b312dbf847307b0e876c2ecc9d80258e95b0d17f8f7bfc581c4a29c83484",
	} {
		ti, err := reg.Message(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if ti.Hash != want {
			t.Errorf("%s: hash %s, want Jazzy's %s", name, ti.Hash, want)
		}
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
