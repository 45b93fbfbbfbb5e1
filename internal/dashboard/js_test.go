package dashboard

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/cdr"
	"github.com/fsmnodes/fsmnodes/internal/hexapod"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	rcl_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
	tf2_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/tf2_msgs/msg"
	unique_identifier_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/unique_identifier_msgs/msg"
	velma_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/velma_msgs/msg"
)

// fixture is one CDR payload produced by the Go encoder, with the schema the
// bridge would advertise for it and the value the JavaScript decoder must
// produce (ROS field names; int64 outside the safe range and non-finite
// floats wrapped, see jsValue).
type fixture struct {
	Name       string `json:"name"`
	SchemaName string `json:"schemaName"`
	Schema     string `json:"schema"`
	CDR        string `json:"cdr"` // hex
	Value      any    `json:"value"`
	// RoundTrip is false for payloads the JS encoder must not reproduce
	// byte for byte (big-endian input).
	RoundTrip bool `json:"roundTrip"`
}

const separator = "================================================================================"

// concatSchema returns the ros2msg schema of t as the bridge advertises it:
// t's definition, then each referenced type after a separator and a
// "MSG: name" line. shortNames writes "pkg/Name" instead of "pkg/msg/Name",
// the form ROS 1 tools and foxglove_bridge use; the parser takes both.
func concatSchema(t *testing.T, ti *rosidl.TypeInfo, shortNames bool) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(ti.Definition)
	if ti.Desc == nil {
		t.Fatalf("%s has no type description", ti.Name)
	}
	for _, r := range ti.Desc.Referenced() {
		if r.Source == "" && len(r.Fields) > 0 {
			t.Fatalf("%s references %s, which has no source text", ti.Name, r.Name)
		}
		name := r.Name
		if shortNames {
			parts := strings.Split(name, "/")
			name = parts[0] + "/" + parts[len(parts)-1]
		}
		b.WriteString("\n" + separator + "\nMSG: " + name + "\n" + r.Source)
	}
	return b.String()
}

// jsValue converts a generated message (or field value) to what the JS
// decoder returns, in JSON: structs become objects keyed by ROS names,
// byte slices and arrays become number arrays, int64/uint64 outside
// ±(2^53-1) become {"$int": "decimal"}, NaN and ±Inf become {"$float": "NaN"}.
func jsValue(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer:
		return jsValue(v.Elem())
	case reflect.Struct:
		out := map[string]any{}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			name := sf.Tag.Get("ros")
			if name == "" || name == "-" {
				continue
			}
			out[name] = jsValue(v.Field(i))
		}
		return out
	case reflect.Slice, reflect.Array:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = jsValue(v.Index(i))
		}
		return out
	case reflect.Bool:
		return v.Bool()
	case reflect.String:
		return v.String()
	case reflect.Int8, reflect.Int16, reflect.Int32:
		return v.Int()
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return v.Uint()
	case reflect.Int64, reflect.Int:
		n := v.Int()
		if n > 1<<53-1 || n < -(1<<53-1) {
			return map[string]string{"$int": strconv.FormatInt(n, 10)}
		}
		return n
	case reflect.Uint64:
		n := v.Uint()
		if n > 1<<53-1 {
			return map[string]string{"$int": strconv.FormatUint(n, 10)}
		}
		return n
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		switch {
		case math.IsNaN(f):
			return map[string]string{"$float": "NaN"}
		case math.IsInf(f, 1):
			return map[string]string{"$float": "+Inf"}
		case math.IsInf(f, -1):
			return map[string]string{"$float": "-Inf"}
		}
		return f
	}
	panic("jsValue: unhandled kind " + v.Kind().String())
}

func msgFixture(t *testing.T, name string, m rosidl.Message, short bool) fixture {
	t.Helper()
	ti := m.ROSType()
	return fixture{
		Name:       name,
		SchemaName: ti.Name,
		Schema:     concatSchema(t, ti, short),
		CDR:        hex.EncodeToString(rosidl.Marshal(m, nil)),
		Value:      jsValue(reflect.ValueOf(m)),
		RoundTrip:  true,
	}
}

func pose(x, y, yaw float64) geometry_msgs_msg.Pose {
	return geometry_msgs_msg.Pose{
		Position:    geometry_msgs_msg.Point{X: x, Y: y},
		Orientation: geometry_msgs_msg.Quaternion{Z: math.Sin(yaw / 2), W: math.Cos(yaw / 2)},
	}
}

// fixtures builds the payloads the JS codec is tested against: every shape
// the dashboard meets (nested types, arrays of messages, typed arrays, fixed
// arrays, strings and string arrays, int64, empty messages, service
// halves) and a hand-written schema for the primitives no generated type
// here has (wstring, bounded strings, char).
func fixtures(t *testing.T) []fixture {
	stamp := builtin_interfaces_msg.Time{Sec: 1700000000, Nanosec: 123456789}
	var fx []fixture
	add := func(name string, m rosidl.Message) {
		fx = append(fx, msgFixture(t, name, m, len(fx)%2 == 0))
	}
	add("String", &std_msgs_msg.String{Data: "hello, wörld ✓"})
	add("empty String", &std_msgs_msg.String{})
	add("Twist", &geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 0.3}, Angular: geometry_msgs_msg.Vector3{Z: -0.25}})
	add("PoseStamped", &geometry_msgs_msg.PoseStamped{Header: std_msgs_msg.Header{Stamp: stamp, FrameId: "map"}, Pose: pose(2, 0.5, 1)})
	add("WaypointArray", &rsm_msgs_msg.WaypointArray{
		Header: std_msgs_msg.Header{FrameId: "map"}, Mode: rsm_msgs_msg.WaypointArray_PATROL, Reverse: true,
		Waypoints: []rsm_msgs_msg.Waypoint{
			{Pose: pose(1, 2, 0), Visited: true},
			{Pose: pose(-3.5, 4.25, 3), Unreachable: true, Routine: "Reversing"},
			{Pose: pose(0, 0, 0)},
		},
		WaypointsSize: 3,
	})
	add("OccupancyGrid", &nav_msgs_msg.OccupancyGrid{
		Header: std_msgs_msg.Header{Stamp: stamp, FrameId: "map"},
		Info: nav_msgs_msg.MapMetaData{MapLoadTime: stamp, Resolution: 0.1, Width: 4, Height: 3,
			Origin: pose(-1, -1, 0)},
		Data: []int8{-1, -1, 0, 0, 100, 50, 0, -1, 0, 0, 0, 100},
	})
	add("LaserScan", &sensor_msgs_msg.LaserScan{
		Header:   std_msgs_msg.Header{Stamp: stamp, FrameId: "base_scan"},
		AngleMin: -math.Pi, AngleMax: math.Pi, AngleIncrement: math.Pi / 2, RangeMin: 0.1, RangeMax: 10,
		Ranges:      []float32{1.5, float32(math.Inf(1)), 0.25, float32(math.NaN()), 3},
		Intensities: nil,
	})
	add("JointState", &sensor_msgs_msg.JointState{
		Header:   std_msgs_msg.Header{Stamp: stamp},
		Name:     []string{"COXA_RR", "FEMUR_RR", "TIBIA_RR"},
		Position: []float64{0.1, -0.5, 1.25},
		Velocity: []float64{},
		Effort:   []float64{0, 1e-9, -3},
	})
	add("TFMessage", &tf2_msgs_msg.TFMessage{Transforms: []geometry_msgs_msg.TransformStamped{
		{Header: std_msgs_msg.Header{Stamp: stamp, FrameId: "map"}, ChildFrameId: "odom",
			Transform: geometry_msgs_msg.Transform{Rotation: geometry_msgs_msg.Quaternion{W: 1}}},
		{Header: std_msgs_msg.Header{Stamp: stamp, FrameId: "odom"}, ChildFrameId: "base_footprint",
			Transform: geometry_msgs_msg.Transform{Translation: geometry_msgs_msg.Vector3{X: 1, Y: 2}, Rotation: geometry_msgs_msg.Quaternion{Z: 0.6, W: 0.8}}},
	}})
	add("Odometry (fixed float64[36])", &nav_msgs_msg.Odometry{
		Header: std_msgs_msg.Header{FrameId: "odom"}, ChildFrameId: "base_footprint",
		Pose: geometry_msgs_msg.PoseWithCovariance{Pose: pose(1, 1, 0.5), Covariance: [36]float64{0: 0.01, 7: 0.02, 35: 0.5}},
	})
	add("Log", &rcl_interfaces_msg.Log{Stamp: stamp, Level: rcl_interfaces_msg.Log_WARN, Name: "diffbot.rsmNode",
		Msg: "robot appears to be stuck", File: "state.go", Function: "tick", Line: 412})
	add("ParameterValue (int64, byte[], bool[], arrays)", &rcl_interfaces_msg.ParameterValue{
		Type: 9, BoolValue: true, IntegerValue: math.MaxInt64, DoubleValue: -0.5, StringValue: "x",
		ByteArrayValue: []byte{0, 1, 255}, BoolArrayValue: []bool{true, false, true},
		IntegerArrayValue: []int64{-1, 1 << 60, 42}, DoubleArrayValue: []float64{1.5},
		StringArrayValue: []string{"a", "", "ccc"},
	})
	add("UUID (uint8[16])", &unique_identifier_msgs_msg.UUID{Uuid: [16]uint8{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 255}})
	add("OperationMode", &rsm_msgs_msg.OperationMode{EmergencyStop: true, Mode: rsm_msgs_msg.OperationMode_TELEOPERATION})
	add("AddWaypoint_Request (int64 -1)", &rsm_msgs_srv.AddWaypoint_Request{
		Waypoint: rsm_msgs_msg.Waypoint{Pose: pose(2, 0.5, 0), Routine: "Reversing"}, Position: -1})
	add("Trigger_Request (empty)", &std_srvs_srv.Trigger_Request{})
	add("Trigger_Response", &std_srvs_srv.Trigger_Response{Success: true, Message: "Waypoints reset"})
	add("SetBool_Request", &std_srvs_srv.SetBool_Request{Data: true})
	add("velma Status", &velma_msgs_msg.Status{})
	// What the teleoperation pad sends a stamped receiver (jstest/cmdvel.test.js).
	add("TwistStamped", &geometry_msgs_msg.TwistStamped{
		Header: std_msgs_msg.Header{Stamp: builtin_interfaces_msg.Time{Sec: 1700000000, Nanosec: 123000000}, FrameId: "base_link"},
		Twist:  geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 0.3}, Angular: geometry_msgs_msg.Vector3{Z: -0.25}}})

	// A hand-written schema for primitives no generated type here uses.
	e := cdr.NewEncoder(nil)
	e.Uint8('x')             // char c
	e.WString("Zürich ✓")    // wstring w
	e.Int16(-300)            // int16 s
	e.String("abc")          // string<=5 b
	e.Uint64(math.MaxUint64) // uint64 u
	e.Float32(0.5)           // float32[2] f
	e.Float32(-2)
	e.Uint32(2) // bool[] flags
	e.Bool(false)
	e.Bool(true)
	e.Uint32(1) // int16[<=3] small
	e.Int16(7)
	e.Uint32(2) // string[] names
	e.String("left")
	e.String("")
	fx = append(fx, fixture{
		Name:       "hand-written primitives",
		SchemaName: "fsmnodes_test/msg/Primitives",
		Schema: "# comment line\nchar c\nwstring w   # trailing comment\nint16 s\nstring<=5 b\nuint64 u\n" +
			"float32[2] f\nbool[] flags\nint16[<=3] small\nstring[] names\n" +
			"int32 ANSWER=42\nstring GREETING=\"hi # not a comment\"\n",
		CDR: hex.EncodeToString(e.Bytes()),
		Value: map[string]any{
			"c": 'x', "w": "Zürich ✓", "s": -300, "b": "abc",
			"u": map[string]string{"$int": strconv.FormatUint(math.MaxUint64, 10)},
			"f": []float64{0.5, -2}, "flags": []bool{false, true}, "small": []int{7},
			"names": []string{"left", ""},
		},
		RoundTrip: true,
	})

	// Big-endian input (CDR_BE): decoded, not reproduced.
	be := cdr.NewBigEndianEncoder(nil)
	(&sensor_msgs_msg.JointState{Name: []string{"a"}, Position: []float64{1.5, -2}}).MarshalCDR(be)
	js := msgFixture(t, "JointState big endian", &sensor_msgs_msg.JointState{Name: []string{"a"}, Position: []float64{1.5, -2}}, true)
	js.CDR = hex.EncodeToString(be.Bytes())
	js.RoundTrip = false
	fx = append(fx, js)
	return fx
}

// writeFixtures writes the fixtures as JSON into dir and returns the path.
func writeFixtures(t *testing.T, dir string) string {
	t.Helper()
	b, err := json.MarshalIndent(fixtures(t), "", " ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "cdr-fixtures.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	legs, err := json.Marshal(legFixtures())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hexapod-fk.json"), legs, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// legFixture is one leg pose computed by the hexapod's own forward
// kinematics, which the dashboard's drawing must reproduce.
type legFixture struct {
	Leg    int        `json:"leg"`
	Angles [3]float64 `json:"angles"` // coxa, femur, tibia
	Foot   [3]float64 `json:"foot"`   // body frame
}

// legFixtures samples hexapod.Geometry.LegFK with the default geometry
// over every leg and a spread of joint angles.
func legFixtures() []legFixture {
	g := hexapod.DefaultGeometry()
	var out []legFixture
	for leg := 0; leg < hexapod.NumLegs; leg++ {
		for _, a := range [][3]float64{{0, 0, 0}, {0.3, 0.5, -2}, {-0.4, -0.2, -1.2}, {0.1, 1.2, -2.6}} {
			p := g.LegFK(leg, hexapod.LegAngles{Coxa: a[0], Femur: a[1], Tibia: a[2]}, hexapod.Pose{})
			out = append(out, legFixture{Leg: leg, Angles: a, Foot: [3]float64{p.X, p.Y, p.Z}})
		}
	}
	return out
}

// requireTool finds a tool the tests need. Without it the test is skipped
// with the reason, except under CI (CI set), where .ci/run installs it and
// its absence is a failure.
func requireTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not found; CI installs it (Debian package %s, see .ci/run)", name, pkg)
	}
	t.Skipf("SKIPPED: %s not found (install the Debian package %s): %v", name, pkg, err)
	return ""
}

// TestJavaScript runs the dashboard's JavaScript unit tests (jstest/*.test.js)
// with Node's built-in test runner, against CDR fixtures produced by the Go
// encoder.
func TestJavaScript(t *testing.T) {
	node := requireTool(t, "node", "nodejs")
	fx := writeFixtures(t, t.TempDir())
	files, err := filepath.Glob("jstest/*.test.js")
	if err != nil || len(files) == 0 {
		t.Fatalf("no JavaScript tests found: %v", err)
	}
	sort.Strings(files)
	cmd := exec.Command(node, append([]string{"--test"}, files...)...)
	cmd.Env = append(os.Environ(), "DASHBOARD_CDR_FIXTURES="+fx,
		"DASHBOARD_HEXAPOD_FK="+filepath.Join(filepath.Dir(fx), "hexapod-fk.json"))
	out, err := cmd.CombinedOutput()
	t.Logf("node --test output:\n%s", out)
	if err != nil {
		t.Fatalf("node --test: %v", err)
	}
}
