package rsmnode

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

func TestWaypointArray_RoundTrip(t *testing.T) {
	a := rsm.WaypointArray{Mode: rsm.Patrol, Reverse: true, Waypoints: []rsm.Waypoint{
		{Pose: rsm.Pose{Position: geom.Vec3{X: 1, Y: 2, Z: 3}, Orientation: geom.QuatFromYaw(0.5)}, Visited: true, Routine: "Reversing"},
		{Pose: rsm.Pose{Orientation: geom.Identity}, Unreachable: true},
	}}
	now := time.Unix(1700000000, 123456789)
	m := WaypointArrayToMsg(a, now)
	if m.Header.FrameId != "map" || m.WaypointsSize != 2 || m.Header.Stamp.Sec != 1700000000 || m.Header.Stamp.Nanosec != 123456789 {
		t.Errorf("header/size = %+v %d", m.Header, m.WaypointsSize)
	}
	if m.Mode != rsm_msgs_msg.WaypointArray_PATROL {
		t.Errorf("mode = %d", m.Mode)
	}
	if got := WaypointArrayFromMsg(&m); !reflect.DeepEqual(got, a) {
		t.Errorf("round trip = %+v\nwant %+v", got, a)
	}
}

func TestTwist_RoundTripAndNaNPreserved(t *testing.T) {
	in := geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 1, Y: math.NaN()}, Angular: geometry_msgs_msg.Vector3{Z: -2}}
	tw := TwistFromMsg(&in)
	if tw.Linear.X != 1 || !math.IsNaN(tw.Linear.Y) || tw.Angular.Z != -2 {
		t.Errorf("from = %+v", tw)
	}
	if tw.Validate() == nil {
		t.Error("NaN not detectable after conversion")
	}
	out := TwistToMsg(rsm.Twist{Linear: geom.Vec3{X: 0.5}, Angular: geom.Vec3{Z: 0.1}})
	if out.Linear.X != 0.5 || out.Angular.Z != 0.1 {
		t.Errorf("to = %+v", out)
	}
}

func TestOperationModeAndGoalStatus(t *testing.T) {
	m := rsm_msgs_msg.OperationMode{EmergencyStop: true, Mode: rsm_msgs_msg.OperationMode_TELEOPERATION}
	op := OperationModeFromMsg(&m)
	if op != (rsm.OperationMode{EmergencyStop: true, Mode: rsm.ModeTeleoperation}) {
		t.Errorf("op = %+v", op)
	}
	if back := OperationModeToMsg(op); back != m {
		t.Errorf("back = %+v", back)
	}
	gs := rsm.GoalStatus{Goal: rsm.Pose{Position: geom.Vec3{X: 4}, Orientation: geom.Identity}, Status: rsm.GoalFailed}
	gm := GoalStatusToMsg(gs)
	if gm.GoalStatus != rsm_msgs_msg.GoalStatus_FAILED || gm.Goal.Position.X != 4 {
		t.Errorf("goal status msg = %+v", gm)
	}
	if back := GoalStatusFromMsg(&gm); back != gs {
		t.Errorf("back = %+v", back)
	}
}

func TestTransformFromMsg(t *testing.T) {
	m := geometry_msgs_msg.TransformStamped{
		Header:       std_msgs_msg.Header{FrameId: "map"},
		ChildFrameId: "odom",
		Transform: geometry_msgs_msg.Transform{
			Translation: geometry_msgs_msg.Vector3{X: 1},
			Rotation:    geometry_msgs_msg.Quaternion{W: 1},
		},
	}
	m.Header.Stamp.Sec = 5
	tr := TransformFromMsg(&m, true)
	if tr.Parent != "map" || tr.Child != "odom" || tr.Translation.X != 1 || tr.Rotation.W != 1 || !tr.Static || tr.Stamp.Unix() != 5 {
		t.Errorf("transform = %+v", tr)
	}
}

func TestTimeToMsg_ZeroAndBeforeEpoch(t *testing.T) {
	if m := builtin_interfaces_msg.TimeOf(time.Time{}); m.Sec != 0 || m.Nanosec != 0 {
		t.Errorf("zero = %+v", m)
	}
	if m := builtin_interfaces_msg.TimeOf(time.Unix(-5, 0)); m.Sec != 0 {
		t.Errorf("before epoch = %+v", m)
	}
}
