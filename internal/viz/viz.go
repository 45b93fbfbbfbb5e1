// Package viz describes RViz markers as plain Go values, so behaviour
// packages can say what they want drawn (and test it) without importing any
// ROS message type. internal/viz/viznode converts them to
// visualization_msgs/Marker and MarkerArray.
package viz

import "github.com/fsmnodes/fsmnodes/internal/geom"

// Kind is the marker type; the values are visualization_msgs/Marker's.
type Kind int32

// Marker types used by fsmnodes (visualization_msgs/Marker constants).
const (
	Arrow          Kind = 0
	Cube           Kind = 1
	Sphere         Kind = 2
	Cylinder       Kind = 3
	LineStrip      Kind = 4
	LineList       Kind = 5
	CubeList       Kind = 6
	SphereList     Kind = 7
	Points         Kind = 8
	TextViewFacing Kind = 9
)

// Action is what the receiver does with a marker; the values are
// visualization_msgs/Marker's.
type Action int32

// Marker actions.
const (
	Add       Action = 0 // add or modify the marker (ns, id)
	Delete    Action = 2 // delete the marker (ns, id)
	DeleteAll Action = 3 // delete every marker the display holds
)

// Color is an RGBA colour, each component in [0, 1].
type Color struct{ R, G, B, A float32 }

// Marker is one visualization_msgs/Marker. Lifetime is always 0 (the
// marker stays until replaced or deleted) and the header stamp is 0, so
// RViz uses the newest transform of Frame: right for markers that are
// published once and kept (transient local).
type Marker struct {
	Frame       string
	Namespace   string
	ID          int32
	Kind        Kind
	Action      Action
	Position    geom.Vec3
	Orientation geom.Quat
	Scale       geom.Vec3
	Color       Color
	// Points are the points of Points, LineStrip, LineList, CubeList and
	// SphereList markers.
	Points []geom.Vec3
	// Text is the text of a TextViewFacing marker.
	Text string
}

// ClearAll returns the DELETEALL marker that starts an array replacing
// everything a display showed before, so that markers for things that are
// gone disappear.
func ClearAll(frame string) Marker {
	return Marker{Frame: frame, Action: DeleteAll, Orientation: geom.Identity}
}
