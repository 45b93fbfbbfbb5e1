package rosidl_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/msgs"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// TestRuntimeHashesMatchGenerated recomputes, from the runtime type
// descriptions, the hash of every message, service and action type of the
// generated registry and compares it with the hash msggen computed from the
// parsed definitions. Equality proves the descriptions (fields, links,
// transitive references) are complete and correct.
func TestRuntimeHashesMatchGenerated(t *testing.T) {
	r := msgs.Registry()
	var nMsg, nSrv, nAct int
	for _, name := range r.Names() {
		base := name[strings.LastIndexByte(name, '/')+1:]
		switch {
		case strings.Contains(name, "/action/") && !strings.Contains(base, "_"):
			a, err := r.Action(name)
			if err != nil {
				t.Fatal(err)
			}
			nAct++
			checkDesc(t, name, a.Desc, a.Hash)
		case strings.Contains(name, "/srv/") && !strings.Contains(base, "_") ||
			strings.HasSuffix(name, "_SendGoal") || strings.HasSuffix(name, "_GetResult"):
			s, err := r.Service(name)
			if err != nil {
				t.Fatal(err)
			}
			nSrv++
			checkDesc(t, name, s.Desc, s.Hash)
			for _, half := range []*rosidl.TypeInfo{s.Request, s.Response} {
				if half.ServiceDesc != s.Desc {
					t.Errorf("%s: ServiceDesc is not the service's description", half.Name)
				}
			}
		default:
			m, err := r.Message(name)
			if err != nil {
				t.Fatal(err)
			}
			nMsg++
			checkDesc(t, name, m.Desc, m.Hash)
		}
	}
	t.Logf("checked %d messages, %d services, %d actions", nMsg, nSrv, nAct)
	if nMsg < 100 || nSrv < 10 || nAct < 3 {
		t.Errorf("registry unexpectedly small: %d messages, %d services, %d actions", nMsg, nSrv, nAct)
	}
}

func checkDesc(t *testing.T, name string, d *rosidl.TypeDescription, hash string) {
	t.Helper()
	if hash == "" {
		t.Errorf("%s: no generated hash", name)
		return
	}
	if d == nil {
		t.Errorf("%s: no description", name)
		return
	}
	if d.Name != name {
		t.Errorf("%s: description named %s", name, d.Name)
	}
	if got := d.TypeHash(); got != hash {
		t.Errorf("%s: runtime hash %s, generated %s\n%s", name, got, hash, d.HashJSON())
	}
}

// TestStringDescription checks the REP-2011 check value by hand.
func TestStringDescription(t *testing.T) {
	d := std_msgs_msg.String_TypeInfo.Desc
	const want = `{"type_description": {"type_name": "std_msgs/msg/String", "fields": [{"name": "data", "type": {"type_id": 17, "capacity": 0, "string_capacity": 0, "nested_type_name": ""}}]}, "referenced_type_descriptions": []}`
	if got := d.HashJSON(); got != want {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}
	if got, want := d.TypeHash(), "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"; got != want {
		t.Errorf("hash %s, want %s", got, want)
	}
	src := d.Sources()
	if len(src) != 1 || src[0] != (rosidl.TypeSource{TypeName: "std_msgs/msg/String", Encoding: "msg", RawFileContents: "string data\n"}) {
		t.Errorf("sources %+v", src)
	}
}

// TestHandBuiltDescription hashes a small two-type description built by
// hand, independent of the generator: bounded and array fields, a nested
// type referenced twice, default values (which the hash ignores) and a
// non-ASCII name (escaped as json.dumps does).
func TestHandBuiltDescription(t *testing.T) {
	inner := &rosidl.TypeDescription{Name: "p/msg/In", Fields: []rosidl.FieldDescription{{Name: "x", TypeID: 11, DefaultValue: "1.0"}}}
	outer := &rosidl.TypeDescription{Name: "p/msg/Out", Fields: []rosidl.FieldDescription{
		{Name: "a", TypeID: 1, NestedTypeName: "p/msg/In"},
		{Name: "b", TypeID: 97, Capacity: 3, NestedTypeName: "p/msg/In"},
		{Name: "s", TypeID: 21 + 144, StringCapacity: 5},
		{Name: "é", TypeID: 2 + 48, Capacity: 4},
	}, Refs: []*rosidl.TypeDescription{inner, inner, nil}}
	const want = `{"type_description": {"type_name": "p/msg/Out", "fields": [` +
		`{"name": "a", "type": {"type_id": 1, "capacity": 0, "string_capacity": 0, "nested_type_name": "p/msg/In"}}, ` +
		`{"name": "b", "type": {"type_id": 97, "capacity": 3, "string_capacity": 0, "nested_type_name": "p/msg/In"}}, ` +
		`{"name": "s", "type": {"type_id": 165, "capacity": 0, "string_capacity": 5, "nested_type_name": ""}}, ` +
		`{"name": "\u00e9", "type": {"type_id": 50, "capacity": 4, "string_capacity": 0, "nested_type_name": ""}}]}, ` +
		`"referenced_type_descriptions": [{"type_name": "p/msg/In", "fields": [{"name": "x", "type": {"type_id": 11, "capacity": 0, "string_capacity": 0, "nested_type_name": ""}}]}]}`
	if got := outer.HashJSON(); got != want {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}
	// want is byte for byte what Python json.dumps prints for this dict.
	if got := outer.TypeHash(); got != "RIHS01_"+sha256Hex(want) {
		t.Errorf("hash %s", got)
	}
	src := outer.Sources()
	if len(src) != 2 || src[0].TypeName != "p/msg/Out" || src[1].TypeName != "p/msg/In" || src[1].Encoding != "implicit" {
		t.Errorf("sources %+v", src)
	}
}

// TestServiceSources checks the source list of a service: the .srv text
// first, then the referenced types sorted by name, derived ones implicit.
func TestServiceSources(t *testing.T) {
	d := std_srvs_srv.SetBool_ServiceType.Desc
	var got []string
	for _, s := range d.Sources() {
		got = append(got, s.TypeName+":"+s.Encoding)
	}
	want := []string{
		"std_srvs/srv/SetBool:srv",
		"builtin_interfaces/msg/Time:msg",
		"service_msgs/msg/ServiceEventInfo:msg",
		"std_srvs/srv/SetBool_Event:implicit",
		"std_srvs/srv/SetBool_Request:implicit",
		"std_srvs/srv/SetBool_Response:implicit",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("sources\n got %v\nwant %v", got, want)
	}
	if src := d.Sources()[0].RawFileContents; src != std_srvs_srv.SetBool_ServiceType.Definition {
		t.Errorf("srv source %q", src)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
