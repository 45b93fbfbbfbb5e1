// Package viznode converts the plain markers of internal/viz to
// visualization_msgs/Marker and MarkerArray messages for the node adapters.
package viznode

import (
	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/viz"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	visualization_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/visualization_msgs/msg"
)

// Marker converts one marker. The header stamp is zero (use the newest
// transform) and the lifetime zero (forever).
func Marker(m viz.Marker) visualization_msgs_msg.Marker {
	out := visualization_msgs_msg.Marker{
		Header: std_msgs_msg.Header{FrameId: m.Frame},
		Ns:     m.Namespace,
		Id:     m.ID,
		Type:   int32(m.Kind),
		Action: int32(m.Action),
		Pose: geometry_msgs_msg.Pose{
			Position:    point(m.Position),
			Orientation: geometry_msgs_msg.Quaternion{X: m.Orientation.X, Y: m.Orientation.Y, Z: m.Orientation.Z, W: m.Orientation.W},
		},
		Scale: geometry_msgs_msg.Vector3{X: m.Scale.X, Y: m.Scale.Y, Z: m.Scale.Z},
		Color: std_msgs_msg.ColorRGBA{R: m.Color.R, G: m.Color.G, B: m.Color.B, A: m.Color.A},
		Text:  m.Text,
	}
	if len(m.Points) > 0 {
		out.Points = make([]geometry_msgs_msg.Point, len(m.Points))
		for i, p := range m.Points {
			out.Points[i] = point(p)
		}
	}
	return out
}

// MarkerArray converts a list of markers in order.
func MarkerArray(ms []viz.Marker) *visualization_msgs_msg.MarkerArray {
	out := &visualization_msgs_msg.MarkerArray{Markers: make([]visualization_msgs_msg.Marker, len(ms))}
	for i, m := range ms {
		out.Markers[i] = Marker(m)
	}
	return out
}

func point(v geom.Vec3) geometry_msgs_msg.Point {
	return geometry_msgs_msg.Point{X: v.X, Y: v.Y, Z: v.Z}
}
