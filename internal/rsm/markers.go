package rsm

import (
	"strconv"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/viz"
)

// Marker namespaces of WaypointMarkers.
const (
	WaypointArrowNS = "waypoints"
	WaypointTextNS  = "waypoint_numbers"
)

// Waypoint marker colours, as the original's RViz plugin colours its
// waypoint flags: blue pending, green visited, red unreachable.
var (
	WaypointPendingColor     = viz.Color{R: 0.1, G: 0.35, B: 1, A: 1}
	WaypointVisitedColor     = viz.Color{R: 0.1, G: 0.8, B: 0.1, A: 1}
	WaypointUnreachableColor = viz.Color{R: 0.9, G: 0.1, B: 0.1, A: 1}
	waypointTextColor        = viz.Color{R: 1, G: 1, B: 1, A: 1}
)

// WaypointColor is the colour of a waypoint's marker: unreachable wins over
// visited, which wins over pending.
func WaypointColor(w Waypoint) viz.Color {
	switch {
	case w.Unreachable:
		return WaypointUnreachableColor
	case w.Visited:
		return WaypointVisitedColor
	}
	return WaypointPendingColor
}

// WaypointMarkers draws the waypoints for RViz (rsm/waypoint_markers): a
// DELETEALL first, so removed waypoints disappear, then per waypoint i an
// arrow at its pose (namespace "waypoints", id i) coloured by
// WaypointColor, and above it its number i — the position the waypoint
// services take — with its routine on a second line if it has one
// (namespace "waypoint_numbers", id i). Everything is in frame.
func WaypointMarkers(frame string, arr WaypointArray) []viz.Marker {
	out := make([]viz.Marker, 0, 1+2*len(arr.Waypoints))
	out = append(out, viz.ClearAll(frame))
	for i, w := range arr.Waypoints {
		q := w.Pose.Orientation.Normalized()
		color := WaypointColor(w)
		out = append(out, viz.Marker{
			Frame: frame, Namespace: WaypointArrowNS, ID: int32(i), Kind: viz.Arrow,
			Position:    geom.Vec3{X: w.Pose.Position.X, Y: w.Pose.Position.Y, Z: w.Pose.Position.Z},
			Orientation: geom.Quat{X: q.X, Y: q.Y, Z: q.Z, W: q.W},
			Scale:       geom.Vec3{X: 0.5, Y: 0.1, Z: 0.1}, // length, shaft and head width
			Color:       color,
		})
		text := strconv.Itoa(i)
		if w.Routine != "" {
			text += "\n" + w.Routine
		}
		out = append(out, viz.Marker{
			Frame: frame, Namespace: WaypointTextNS, ID: int32(i), Kind: viz.TextViewFacing,
			Position:    geom.Vec3{X: w.Pose.Position.X, Y: w.Pose.Position.Y, Z: w.Pose.Position.Z + 0.35},
			Orientation: geom.Identity,
			Scale:       geom.Vec3{Z: 0.3}, // text height
			Color:       waypointTextColor,
			Text:        text,
		})
	}
	return out
}
