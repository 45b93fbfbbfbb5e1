package rosbridge

import (
	"regexp"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/msgs"
)

func TestFullDefinition_Layout(t *testing.T) {
	reg := msgs.Registry()
	ti, err := reg.Message("geometry_msgs/msg/TwistStamped")
	if err != nil {
		t.Fatal(err)
	}
	sep := "\n" + strings.Repeat("=", 80) + "\nMSG: "
	want := ti.Definition +
		sep + "geometry_msgs/Twist\n" + mustDef(t, reg, "geometry_msgs/msg/Twist") +
		sep + "geometry_msgs/Vector3\n" + mustDef(t, reg, "geometry_msgs/msg/Vector3") +
		sep + "std_msgs/Header\n" + mustDef(t, reg, "std_msgs/msg/Header") +
		sep + "builtin_interfaces/Time\n" + mustDef(t, reg, "builtin_interfaces/msg/Time")
	if got := FullDefinition(reg, ti); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A type without dependencies is its definition alone.
	s, _ := reg.Message("std_msgs/msg/String")
	if got := FullDefinition(reg, s); got != s.Definition {
		t.Errorf("String: %q", got)
	}
}

func mustDef(t *testing.T, reg *rosidl.Registry, name string) string {
	t.Helper()
	ti, err := reg.Message(name)
	if err != nil {
		t.Fatal(err)
	}
	return ti.Definition
}

var primitives = map[string]bool{"bool": true, "byte": true, "char": true, "float32": true, "float64": true,
	"int8": true, "uint8": true, "int16": true, "uint16": true, "int32": true, "uint32": true, "int64": true,
	"uint64": true, "string": true, "wstring": true, "wchar": true}

var constLine = regexp.MustCompile(`^\S+\s+[A-Z][A-Z0-9_]*\s*=`)

var fieldLine = regexp.MustCompile(`^([A-Za-z0-9_/]+)(?:<=\d+)?(?:\[[^\]]*\])?\s+[a-z]`)

// Every schema of the registry is self-contained: each complex field type,
// resolved as @foxglove/rosmsg resolves it (qualified names exactly,
// short names in the package of the type that uses them), has exactly one
// MSG section, and there is no section nobody uses.
func TestFullDefinition_EveryRegistryTypeSelfContained(t *testing.T) {
	reg := msgs.Registry()
	n := 0
	for _, name := range reg.Names() {
		ti, err := reg.Message(name)
		if err != nil || ti.DDSName == "" {
			continue
		}
		n++
		full := FullDefinition(reg, ti)
		sections := strings.Split(full, "\n"+strings.Repeat("=", 80)+"\n")
		names := map[string]string{shortName(ti.Name): sections[0]}
		order := []string{shortName(ti.Name)}
		for _, s := range sections[1:] {
			head, body, _ := strings.Cut(s, "\n")
			sec, ok := strings.CutPrefix(head, "MSG: ")
			if !ok {
				t.Fatalf("%s: section starts with %q", name, head)
			}
			if _, dup := names[sec]; dup {
				t.Errorf("%s: section %s twice", name, sec)
			}
			names[sec] = body
			order = append(order, sec)
		}
		used := map[string]bool{shortName(ti.Name): true}
		for _, sec := range order {
			pkg, _, _ := strings.Cut(sec, "/")
			for _, line := range strings.Split(names[sec], "\n") {
				line = strings.TrimSpace(line)
				m := fieldLine.FindStringSubmatch(line)
				if m == nil || constLine.MatchString(line) {
					continue
				}
				typ := m[1]
				if primitives[typ] {
					continue
				}
				if !strings.Contains(typ, "/") {
					typ = pkg + "/" + typ
				}
				if _, ok := names[typ]; !ok {
					t.Errorf("%s: %s uses %s, which has no MSG section", name, sec, typ)
				}
				used[typ] = true
			}
		}
		for sec := range names {
			if !used[sec] {
				t.Errorf("%s: section %s is not used", name, sec)
			}
		}
	}
	if n < 100 {
		t.Fatalf("checked only %d types", n)
	}
}

func TestFieldsText_FromDescription(t *testing.T) {
	d := &rosidl.TypeDescription{Name: "x/msg/Y", Fields: []rosidl.FieldDescription{
		{Name: "a", TypeID: 11},
		{Name: "b", TypeID: 17 + 144},
		{Name: "c", TypeID: 1 + 48, Capacity: 3, NestedTypeName: "geometry_msgs/msg/Point"},
		{Name: "d", TypeID: 21, StringCapacity: 8},
		{Name: "e", TypeID: 3 + 96, Capacity: 4},
	}}
	want := "float64 a\nstring[] b\ngeometry_msgs/Point[3] c\nstring<=8 d\nuint8[<=4] e\n"
	if got := fieldsText(d); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSplitParamName(t *testing.T) {
	for in, want := range map[string][2]string{
		"/diffbot/robotControlMuxNode.teleoperation_idle_timer": {"/diffbot/robotControlMuxNode", "teleoperation_idle_timer"},
		"/n.qos_overrides./tf.publisher.depth":                  {"/n", "qos_overrides./tf.publisher.depth"},
	} {
		node, param, err := splitParamName(in)
		if err != nil || node != want[0] || param != want[1] {
			t.Errorf("%s: %q %q %v", in, node, param, err)
		}
	}
	for _, bad := range []string{"", "nodot", "/n.", ".x", "n.x"} {
		if _, _, err := splitParamName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
