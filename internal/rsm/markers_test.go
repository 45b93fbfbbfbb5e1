package rsm

import (
	"math"
	"reflect"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/viz"
)

func TestWaypointMarkers(t *testing.T) {
	at := func(x, y float64) Pose {
		return Pose{Position: geom.Vec3{X: x, Y: y}, Orientation: geom.QuatFromYaw(math.Pi / 2)}
	}
	cases := map[string]struct {
		arr    WaypointArray
		colors []viz.Color
		texts  []string
	}{
		"no waypoints: only the DELETEALL": {arr: WaypointArray{}},
		"pending, visited, unreachable": {
			arr:    WaypointArray{Waypoints: []Waypoint{{Pose: at(1, 2)}, {Pose: at(3, 4), Visited: true}, {Pose: at(5, 6), Unreachable: true}}},
			colors: []viz.Color{WaypointPendingColor, WaypointVisitedColor, WaypointUnreachableColor},
			texts:  []string{"0", "1", "2"},
		},
		"unreachable wins over visited": {
			arr:    WaypointArray{Waypoints: []Waypoint{{Pose: at(0, 0), Visited: true, Unreachable: true}}},
			colors: []viz.Color{WaypointUnreachableColor},
			texts:  []string{"0"},
		},
		"the routine is shown under the number": {
			arr:    WaypointArray{Waypoints: []Waypoint{{Pose: at(0, 0)}, {Pose: at(1, 0), Routine: "Reversing"}}},
			colors: []viz.Color{WaypointPendingColor, WaypointPendingColor},
			texts:  []string{"0", "1\nReversing"},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			ms := WaypointMarkers("map", c.arr)
			if len(ms) != 1+2*len(c.arr.Waypoints) {
				t.Fatalf("%d markers for %d waypoints", len(ms), len(c.arr.Waypoints))
			}
			if ms[0].Action != viz.DeleteAll || ms[0].Frame != "map" {
				t.Fatalf("first marker %+v, want DELETEALL", ms[0])
			}
			for i, w := range c.arr.Waypoints {
				arrow, text := ms[1+2*i], ms[2+2*i]
				if arrow.Kind != viz.Arrow || arrow.Action != viz.Add || arrow.Namespace != WaypointArrowNS || arrow.ID != int32(i) {
					t.Errorf("waypoint %d arrow %+v", i, arrow)
				}
				if arrow.Color != c.colors[i] {
					t.Errorf("waypoint %d colour %+v, want %+v", i, arrow.Color, c.colors[i])
				}
				p := w.Pose
				if arrow.Position != (geom.Vec3{X: p.Position.X, Y: p.Position.Y, Z: p.Position.Z}) ||
					arrow.Orientation != (geom.Quat{X: p.Orientation.X, Y: p.Orientation.Y, Z: p.Orientation.Z, W: p.Orientation.W}) {
					t.Errorf("waypoint %d arrow pose %+v %+v, want %+v", i, arrow.Position, arrow.Orientation, p)
				}
				if arrow.Scale.X <= 0 || arrow.Scale.Y <= 0 || arrow.Scale.Z <= 0 {
					t.Errorf("arrow scale %+v", arrow.Scale)
				}
				if text.Kind != viz.TextViewFacing || text.Namespace != WaypointTextNS || text.ID != int32(i) || text.Text != c.texts[i] {
					t.Errorf("waypoint %d text %+v, want %q", i, text, c.texts[i])
				}
				if text.Position.Z <= p.Position.Z || text.Position.X != p.Position.X || text.Scale.Z <= 0 || text.Color.A != 1 {
					t.Errorf("waypoint %d text placed at %+v scale %+v", i, text.Position, text.Scale)
				}
				for _, m := range []viz.Marker{arrow, text} {
					if m.Frame != "map" {
						t.Errorf("frame %q", m.Frame)
					}
				}
			}
		})
	}
}

func TestWaypointMarkers_OrientationNormalized(t *testing.T) {
	ms := WaypointMarkers("map", WaypointArray{Waypoints: []Waypoint{
		{Pose: Pose{}}, // zero quaternion: RViz would not draw it
		{Pose: Pose{Orientation: geom.Quat{Z: 2, W: 0}}}, // not unit length
	}})
	if q := ms[1].Orientation; q != geom.Identity {
		t.Errorf("zero quaternion drawn as %+v, want identity", q)
	}
	if q := ms[3].Orientation; !reflect.DeepEqual(q, geom.Quat{Z: 1}) {
		t.Errorf("quaternion (0,0,2,0) drawn as %+v, want (0,0,1,0)", q)
	}
}
