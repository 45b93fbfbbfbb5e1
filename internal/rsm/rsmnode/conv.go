// Package rsmnode adapts the Robot Statemachine (internal/rsm) to ROS 2: it
// converts between rsm types and the generated messages, and wires the
// mux, the state machine and the data store to topics, services and
// clients of internal/ros. The mains in nodes/* only parse flags and call
// the Run functions here.
package rsmnode

import (
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
	"github.com/fsmnodes/fsmnodes/internal/rsm/tf"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
)

// MapFrame is the frame of waypoints, goals and the robot pose.
const MapFrame = "map"

func vec3FromPoint(p geometry_msgs_msg.Point) geom.Vec3 { return geom.Vec3{X: p.X, Y: p.Y, Z: p.Z} }
func vec3FromVector(v geometry_msgs_msg.Vector3) geom.Vec3 {
	return geom.Vec3{X: v.X, Y: v.Y, Z: v.Z}
}
func quatFromMsg(q geometry_msgs_msg.Quaternion) geom.Quat {
	return geom.Quat{X: q.X, Y: q.Y, Z: q.Z, W: q.W}
}
func quatToMsg(q geom.Quat) geometry_msgs_msg.Quaternion {
	return geometry_msgs_msg.Quaternion{X: q.X, Y: q.Y, Z: q.Z, W: q.W}
}
func vectorToMsg(v geom.Vec3) geometry_msgs_msg.Vector3 {
	return geometry_msgs_msg.Vector3{X: v.X, Y: v.Y, Z: v.Z}
}

// PoseFromMsg converts a geometry_msgs/Pose.
func PoseFromMsg(p *geometry_msgs_msg.Pose) rsm.Pose {
	return rsm.Pose{Position: vec3FromPoint(p.Position), Orientation: quatFromMsg(p.Orientation)}
}

// PoseToMsg converts to a geometry_msgs/Pose.
func PoseToMsg(p rsm.Pose) geometry_msgs_msg.Pose {
	return geometry_msgs_msg.Pose{
		Position:    geometry_msgs_msg.Point{X: p.Position.X, Y: p.Position.Y, Z: p.Position.Z},
		Orientation: quatToMsg(p.Orientation),
	}
}

// PosesFromMsg converts the poses of a geometry_msgs/PoseArray.
func PosesFromMsg(ps []geometry_msgs_msg.Pose) []rsm.Pose {
	out := make([]rsm.Pose, len(ps))
	for i := range ps {
		out[i] = PoseFromMsg(&ps[i])
	}
	return out
}

// TwistFromMsg converts a geometry_msgs/Twist.
func TwistFromMsg(t *geometry_msgs_msg.Twist) rsm.Twist {
	return rsm.Twist{Linear: vec3FromVector(t.Linear), Angular: vec3FromVector(t.Angular)}
}

// TwistToMsg converts to a geometry_msgs/Twist.
func TwistToMsg(t rsm.Twist) geometry_msgs_msg.Twist {
	return geometry_msgs_msg.Twist{Linear: vectorToMsg(t.Linear), Angular: vectorToMsg(t.Angular)}
}

// OperationModeFromMsg converts an rsm_msgs/OperationMode (the mode is not
// checked here; rsm rejects unknown modes).
func OperationModeFromMsg(m *rsm_msgs_msg.OperationMode) rsm.OperationMode {
	return rsm.OperationMode{EmergencyStop: m.EmergencyStop, Mode: rsm.Mode(m.Mode)}
}

// OperationModeToMsg converts to an rsm_msgs/OperationMode.
func OperationModeToMsg(m rsm.OperationMode) rsm_msgs_msg.OperationMode {
	return rsm_msgs_msg.OperationMode{EmergencyStop: m.EmergencyStop, Mode: uint8(m.Mode)}
}

// WaypointFromMsg converts an rsm_msgs/Waypoint.
func WaypointFromMsg(w *rsm_msgs_msg.Waypoint) rsm.Waypoint {
	return rsm.Waypoint{Pose: PoseFromMsg(&w.Pose), Visited: w.Visited, Unreachable: w.Unreachable, Routine: w.Routine}
}

// WaypointToMsg converts to an rsm_msgs/Waypoint.
func WaypointToMsg(w rsm.Waypoint) rsm_msgs_msg.Waypoint {
	return rsm_msgs_msg.Waypoint{Pose: PoseToMsg(w.Pose), Visited: w.Visited, Unreachable: w.Unreachable, Routine: w.Routine}
}

// WaypointArrayToMsg converts to an rsm_msgs/WaypointArray in frame "map",
// stamped now, with waypoints_size = len(waypoints).
func WaypointArrayToMsg(a rsm.WaypointArray, now time.Time) rsm_msgs_msg.WaypointArray {
	m := rsm_msgs_msg.WaypointArray{Mode: uint8(a.Mode), Reverse: a.Reverse,
		Waypoints: make([]rsm_msgs_msg.Waypoint, len(a.Waypoints)), WaypointsSize: int32(len(a.Waypoints))}
	m.Header.FrameId = MapFrame
	m.Header.Stamp = builtin_interfaces_msg.TimeOf(now)
	for i, w := range a.Waypoints {
		m.Waypoints[i] = WaypointToMsg(w)
	}
	return m
}

// WaypointArrayFromMsg converts an rsm_msgs/WaypointArray (header, ns and
// waypoints_size are dropped).
func WaypointArrayFromMsg(m *rsm_msgs_msg.WaypointArray) rsm.WaypointArray {
	a := rsm.WaypointArray{Mode: rsm.WaypointMode(m.Mode), Reverse: m.Reverse}
	for i := range m.Waypoints {
		a.Waypoints = append(a.Waypoints, WaypointFromMsg(&m.Waypoints[i]))
	}
	return a
}

// GoalStatusToMsg converts to an rsm_msgs/GoalStatus.
func GoalStatusToMsg(s rsm.GoalStatus) rsm_msgs_msg.GoalStatus {
	return rsm_msgs_msg.GoalStatus{Goal: PoseToMsg(s.Goal), GoalStatus: uint8(s.Status)}
}

// GoalStatusFromMsg converts an rsm_msgs/GoalStatus.
func GoalStatusFromMsg(m *rsm_msgs_msg.GoalStatus) rsm.GoalStatus {
	return rsm.GoalStatus{Goal: PoseFromMsg(&m.Goal), Status: rsm.GoalState(m.GoalStatus)}
}

// TransformFromMsg converts a geometry_msgs/TransformStamped for the TF
// buffer (header.frame_id is the parent).
func TransformFromMsg(m *geometry_msgs_msg.TransformStamped, static bool) tf.Transform {
	return tf.Transform{
		Parent: m.Header.FrameId, Child: m.ChildFrameId,
		Translation: vec3FromVector(m.Transform.Translation),
		Rotation:    quatFromMsg(m.Transform.Rotation),
		Stamp:       m.Header.Stamp.AsTime(),
		Static:      static,
	}
}
