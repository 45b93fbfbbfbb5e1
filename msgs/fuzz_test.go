package msgs_test

import (
	"bytes"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/cdr"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	action_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/action_msgs/srv"
	control_msgs_action "github.com/fsmnodes/fsmnodes/msgs/control_msgs/action"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	rcl_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// checkDecode decodes payload into a fresh message; if that succeeds, the
// re-encoded bytes must decode again and re-encode to the same bytes (the
// first re-encoding normalizes e.g. bools and big-endian input).
func checkDecode(t *testing.T, ti *rosidl.TypeInfo, payload []byte) {
	m := ti.New()
	if err := rosidl.Unmarshal(payload, m); err != nil {
		return
	}
	b1 := rosidl.Marshal(m, nil)
	m2 := ti.New()
	if err := rosidl.Unmarshal(b1, m2); err != nil {
		t.Fatalf("%s: re-encoded payload does not decode: %v\n% x", ti.Name, err, b1)
	}
	if b2 := rosidl.Marshal(m2, nil); !bytes.Equal(b1, b2) {
		t.Fatalf("%s: encoding not stable\n% x\n% x", ti.Name, b1, b2)
	}
	// The decoder must also survive the same bytes as big endian.
	be := append([]byte{0, 0, 0, 0}, payload[min(len(payload), cdr.HeaderSize):]...)
	_ = rosidl.Unmarshal(be, ti.New())
}

func FuzzDecodeJointState(f *testing.F) {
	f.Add(rosidl.Marshal(&sensor_msgs_msg.JointState{Name: []string{"a"}, Position: []float64{1}}, nil))
	f.Fuzz(func(t *testing.T, b []byte) { checkDecode(t, sensor_msgs_msg.JointState_TypeInfo, b) })
}

func FuzzDecodeOccupancyGrid(f *testing.F) {
	f.Add(rosidl.Marshal(&nav_msgs_msg.OccupancyGrid{Data: []int8{-1, 0, 100}}, nil))
	f.Fuzz(func(t *testing.T, b []byte) { checkDecode(t, nav_msgs_msg.OccupancyGrid_TypeInfo, b) })
}

func FuzzDecodeParameterEvent(f *testing.F) {
	f.Add(rosidl.Marshal(&rcl_interfaces_msg.ParameterEvent{Node: "/n", ChangedParameters: []rcl_interfaces_msg.Parameter{
		{Name: "p", Value: rcl_interfaces_msg.ParameterValue{Type: 9, StringArrayValue: []string{"x"}}}}}, nil))
	f.Fuzz(func(t *testing.T, b []byte) { checkDecode(t, rcl_interfaces_msg.ParameterEvent_TypeInfo, b) })
}

func FuzzDecodeParameterDescriptor(f *testing.F) {
	f.Add(rosidl.Marshal(&rcl_interfaces_msg.ParameterDescriptor{Name: "p",
		IntegerRange: []rcl_interfaces_msg.IntegerRange{{FromValue: -1, ToValue: 1, Step: 1}}}, nil))
	f.Fuzz(func(t *testing.T, b []byte) { checkDecode(t, rcl_interfaces_msg.ParameterDescriptor_TypeInfo, b) })
}

func FuzzDecodeFollowJointTrajectoryGoal(f *testing.F) {
	f.Add(rosidl.Marshal(control_msgs_action.NewFollowJointTrajectory_SendGoal_Request(), nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, control_msgs_action.FollowJointTrajectory_SendGoal_Request_TypeInfo, b)
	})
}

// checkWithinBound decodes payload as ti, a type with bounded strings and
// sequences; whatever decodes must re-encode within the type's
// MaxCDRSize, the bound the client library drops longer samples by before
// decoding them.
func checkWithinBound(t *testing.T, ti *rosidl.TypeInfo, payload []byte) {
	bound, ok := ti.Desc.MaxCDRSize()
	if !ok {
		t.Fatalf("%s has no bound", ti.Name)
	}
	m := ti.New()
	if err := rosidl.Unmarshal(payload, m); err != nil {
		return
	}
	e := cdr.NewEncoder(nil)
	m.MarshalCDR(e)
	if body := e.Len() - cdr.HeaderSize; body > bound {
		t.Fatalf("%s: a decoded message re-encodes to %d body bytes, above the bound %d", ti.Name, body, bound)
	}
}

func FuzzBoundedTypesStayWithinMaxCDRSize(f *testing.F) {
	types := []*rosidl.TypeInfo{
		geometry_msgs_msg.Twist_TypeInfo,
		action_msgs_srv.CancelGoal_Request_TypeInfo,
		rcl_interfaces_msg.FloatingPointRange_TypeInfo,
		std_srvs_srv.SetBool_Request_TypeInfo,
		control_msgs_action.FollowJointTrajectory_GetResult_Request_TypeInfo,
	}
	for i, ti := range types {
		f.Add(uint8(i), rosidl.Marshal(ti.New(), nil))
	}
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		checkWithinBound(t, types[int(which)%len(types)], b)
	})
}
