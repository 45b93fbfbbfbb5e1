package viznode

import (
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/viz"
	visualization_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/visualization_msgs/msg"
)

// TestConstantsMatchTheMessage pins viz's kinds and actions to the
// visualization_msgs/Marker constants they stand for.
func TestConstantsMatchTheMessage(t *testing.T) {
	pairs := []struct {
		ours, msg int32
		name      string
	}{
		{int32(viz.Arrow), visualization_msgs_msg.Marker_ARROW, "ARROW"},
		{int32(viz.Cube), visualization_msgs_msg.Marker_CUBE, "CUBE"},
		{int32(viz.Sphere), visualization_msgs_msg.Marker_SPHERE, "SPHERE"},
		{int32(viz.Cylinder), visualization_msgs_msg.Marker_CYLINDER, "CYLINDER"},
		{int32(viz.LineStrip), visualization_msgs_msg.Marker_LINE_STRIP, "LINE_STRIP"},
		{int32(viz.LineList), visualization_msgs_msg.Marker_LINE_LIST, "LINE_LIST"},
		{int32(viz.CubeList), visualization_msgs_msg.Marker_CUBE_LIST, "CUBE_LIST"},
		{int32(viz.SphereList), visualization_msgs_msg.Marker_SPHERE_LIST, "SPHERE_LIST"},
		{int32(viz.Points), visualization_msgs_msg.Marker_POINTS, "POINTS"},
		{int32(viz.TextViewFacing), visualization_msgs_msg.Marker_TEXT_VIEW_FACING, "TEXT_VIEW_FACING"},
		{int32(viz.Add), visualization_msgs_msg.Marker_ADD, "ADD"},
		{int32(viz.Delete), visualization_msgs_msg.Marker_DELETE, "DELETE"},
		{int32(viz.DeleteAll), visualization_msgs_msg.Marker_DELETEALL, "DELETEALL"},
	}
	for _, p := range pairs {
		if p.ours != p.msg {
			t.Errorf("%s: viz %d, message %d", p.name, p.ours, p.msg)
		}
	}
}

func TestMarkerArray(t *testing.T) {
	in := []viz.Marker{
		viz.ClearAll("map"),
		{Frame: "map", Namespace: "ns", ID: 7, Kind: viz.Points, Position: geom.Vec3{X: 1, Y: 2, Z: 3},
			Orientation: geom.Quat{X: 0.5, Y: 0.5, Z: 0.5, W: 0.5}, Scale: geom.Vec3{X: 0.1, Y: 0.2, Z: 0.3},
			Color: viz.Color{R: 0.25, G: 0.5, B: 0.75, A: 1}, Points: []geom.Vec3{{X: 4}, {Y: 5}}, Text: "hi"},
	}
	out := MarkerArray(in)
	if len(out.Markers) != 2 {
		t.Fatalf("%d markers", len(out.Markers))
	}
	clear := out.Markers[0]
	if clear.Action != visualization_msgs_msg.Marker_DELETEALL || clear.Header.FrameId != "map" || clear.Pose.Orientation.W != 1 {
		t.Errorf("DELETEALL marker %+v", clear)
	}
	m := out.Markers[1]
	if m.Header.FrameId != "map" || m.Header.Stamp.Sec != 0 || m.Header.Stamp.Nanosec != 0 || m.Ns != "ns" || m.Id != 7 ||
		m.Type != visualization_msgs_msg.Marker_POINTS || m.Action != visualization_msgs_msg.Marker_ADD {
		t.Errorf("header, ns, id, type or action: %+v", m)
	}
	if p := m.Pose; p.Position.X != 1 || p.Position.Y != 2 || p.Position.Z != 3 ||
		p.Orientation.X != 0.5 || p.Orientation.Y != 0.5 || p.Orientation.Z != 0.5 || p.Orientation.W != 0.5 {
		t.Errorf("pose %+v", p)
	}
	if m.Scale.X != 0.1 || m.Scale.Y != 0.2 || m.Scale.Z != 0.3 || m.Color.R != 0.25 || m.Color.G != 0.5 || m.Color.B != 0.75 || m.Color.A != 1 {
		t.Errorf("scale %+v colour %+v", m.Scale, m.Color)
	}
	if len(m.Points) != 2 || m.Points[0].X != 4 || m.Points[1].Y != 5 || m.Text != "hi" {
		t.Errorf("points %+v text %q", m.Points, m.Text)
	}
	if m.Lifetime.Sec != 0 || m.Lifetime.Nanosec != 0 || m.FrameLocked {
		t.Errorf("lifetime %+v frame_locked %v: want forever, not locked", m.Lifetime, m.FrameLocked)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
}
