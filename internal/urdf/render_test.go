package urdf_test

// A small orthographic renderer of URDF visuals, for the pictures of the
// robots in docs/img (urdf-*.svg): every box, cylinder and sphere is drawn
// as the outline of its projection, far parts first.
// `go test ./internal/urdf -run TestRobotPictures -update` rewrites them.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/hexapod"
	"github.com/fsmnodes/fsmnodes/internal/urdf"
	velmanode "github.com/fsmnodes/fsmnodes/internal/velma/velmanode"
)

type part struct {
	poly  [][2]float64 // screen points (x right, y down), convex
	depth float64
	fill  string
}

// view maps a world point to screen coordinates and depth: the robot seen
// from the front left, from above.
func view(p geom.Vec3) (x, y, depth float64) {
	az, el := -35*math.Pi/180, 25*math.Pi/180
	sa, ca := math.Sincos(az)
	// turn about z, then look along +x tilted down by el
	vx := ca*p.X - sa*p.Y
	vy := sa*p.X + ca*p.Y
	// the camera looks along (cos el, 0, −sin el); its up is (sin el, 0, cos el)
	se, ce := math.Sincos(el)
	return vy, -(ce*p.Z + se*vx), ce*vx - se*p.Z
}

// shapePoints samples the surface of a visual in its own frame.
func shapePoints(g urdf.Geometry) []geom.Vec3 {
	var pts []geom.Vec3
	switch {
	case g.Box != nil:
		b := g.Box.Scale(0.5)
		for _, sx := range []float64{-1, 1} {
			for _, sy := range []float64{-1, 1} {
				for _, sz := range []float64{-1, 1} {
					pts = append(pts, geom.Vec3{X: sx * b.X, Y: sy * b.Y, Z: sz * b.Z})
				}
			}
		}
	case g.Cylinder != nil:
		for k := range 24 {
			s, c := math.Sincos(float64(k) * math.Pi / 12)
			for _, z := range []float64{-0.5, 0.5} {
				pts = append(pts, geom.Vec3{X: g.Cylinder.Radius * c, Y: g.Cylinder.Radius * s, Z: z * g.Cylinder.Length})
			}
		}
	case g.Sphere != nil:
		for k := range 24 {
			s, c := math.Sincos(float64(k) * math.Pi / 12)
			r := *g.Sphere
			pts = append(pts, geom.Vec3{X: r * c, Y: r * s}, geom.Vec3{Y: r * c, Z: r * s}, geom.Vec3{X: r * c, Z: r * s})
		}
	}
	return pts
}

// hull is Andrew's monotone chain.
func hull(ps [][2]float64) [][2]float64 {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i][0] != ps[j][0] {
			return ps[i][0] < ps[j][0]
		}
		return ps[i][1] < ps[j][1]
	})
	cross := func(o, a, b [2]float64) float64 {
		return (a[0]-o[0])*(b[1]-o[1]) - (a[1]-o[1])*(b[0]-o[0])
	}
	var h [][2]float64
	for pass := 0; pass < 2; pass++ {
		start := len(h)
		for _, p := range ps {
			for len(h) >= start+2 && cross(h[len(h)-2], h[len(h)-1], p) <= 0 {
				h = h[:len(h)-1]
			}
			h = append(h, p)
		}
		h = h[:len(h)-1]
		for i, j := 0, len(ps)-1; i < j; i, j = i+1, j-1 {
			ps[i], ps[j] = ps[j], ps[i]
		}
	}
	return h
}

func render(t *testing.T, m *urdf.Model, q map[string]float64, title string) string {
	t.Helper()
	var parts []part
	for _, l := range m.Links {
		tf, err := m.FK(l.Name, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range l.Visuals {
			vt := tf.Mul(v.Origin.Transform())
			var pts [][2]float64
			depth := 0.0
			for _, p := range shapePoints(v.Geometry) {
				x, y, d := view(vt.Apply(p))
				pts = append(pts, [2]float64{x, y})
				depth += d
			}
			if len(pts) == 0 {
				continue
			}
			fill := "#888888"
			if v.Material != nil && v.Material.Color != nil {
				c := v.Material.Color
				fill = fmt.Sprintf("#%02x%02x%02x", int(c[0]*255), int(c[1]*255), int(c[2]*255))
			}
			parts = append(parts, part{poly: hull(pts), depth: depth / float64(len(pts)), fill: fill})
		}
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].depth > parts[j].depth })
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range parts {
		for _, v := range p.poly {
			minX, maxX = math.Min(minX, v[0]), math.Max(maxX, v[0])
			minY, maxY = math.Min(minY, v[1]), math.Max(maxY, v[1])
		}
	}
	const width = 480.0
	scale := (width - 40) / math.Max(maxX-minX, maxY-minY)
	height := (maxY-minY)*scale + 60
	var b strings.Builder
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n", width, height, width, height)
	fmt.Fprintf(&b, "<rect width=\"100%%\" height=\"100%%\" fill=\"#f4f4f2\"/>\n")
	fmt.Fprintf(&b, "<text x=\"12\" y=\"22\" font-family=\"sans-serif\" font-size=\"14\" fill=\"#333\">%s</text>\n", title)
	offX := (width - (maxX-minX)*scale) / 2
	for _, p := range parts {
		var pts []string
		for _, v := range p.poly {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", offX+(v[0]-minX)*scale, 40+(v[1]-minY)*scale))
		}
		fmt.Fprintf(&b, "<polygon points=\"%s\" fill=\"%s\" stroke=\"#222\" stroke-width=\"0.8\" stroke-linejoin=\"round\"/>\n", strings.Join(pts, " "), p.fill)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func TestRobotPictures(t *testing.T) {
	g := hexapod.DefaultGeometry()
	var feet hexapod.Feet
	for i := range feet {
		feet[i] = g.Neutral(i, -g.WalkingHeight)
	}
	var j hexapod.Joints
	if err := g.SolveIK(&feet, hexapod.Pose{}, &j); err != nil {
		t.Fatal(err)
	}
	hq := map[string]float64{}
	for k, n := range hexapod.JointNames() {
		hq[n] = j[k]
	}
	// Velma's initial pose (velma_bridge's simulator starts there)
	vq := map[string]float64{}
	initial := []float64{0, -0.3, -1.8, 1.25, 0.85, 0, -0.5, 0, 0.3, 1.8, -1.25, -0.85, 0, 0.5, 0, 0, 0}
	for k, n := range velmanode.JointStateNames {
		vq[n] = initial[k]
	}
	pics := []struct {
		file, urdf, title string
		q                 map[string]float64
	}{
		{"urdf-hexapod.svg", "hexapod.urdf", "urdf/hexapod.urdf, standing (IK of the neutral stance)", hq},
		{"urdf-velma.svg", "velma.urdf", "urdf/velma.urdf, initial pose", vq},
		{"urdf-diffbot.svg", "diffbot.urdf", "urdf/diffbot.urdf", map[string]float64{"wheel_left_joint": 0, "wheel_right_joint": 0}},
	}
	for _, p := range pics {
		m, _ := load(t, p.urdf)
		svg := render(t, m, p.q, p.title)
		path := filepath.Join("../../docs/img", p.file)
		if *update {
			if err := os.WriteFile(path, []byte(svg), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != svg {
			t.Errorf("%s is stale: go test ./internal/urdf -run TestRobotPictures -update", path)
		}
	}
}
