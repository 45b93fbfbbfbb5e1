package urdf

import (
	"math"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

const arm = `<?xml version="1.0"?>
<robot name="arm">
  <material name="blue"><color rgba="0 0 1 1"/></material>
  <link name="base">
    <visual><origin xyz="0 0 0.05"/><geometry><box size="0.2 0.2 0.1"/></geometry><material name="blue"/></visual>
  </link>
  <link name="upper">
    <visual><geometry><cylinder radius="0.02" length="0.3"/></geometry>
      <material name="red"><color rgba="1 0 0 1"/></material></visual>
  </link>
  <link name="lower"><visual><geometry><sphere radius="0.03"/></geometry></visual></link>
  <link name="slider"/>
  <link name="finger"><visual><geometry><mesh filename="package://x/finger.stl" scale="2 2 2"/></geometry></visual></link>
  <link name="tool"/>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.1" rpy="0 0 1.5707963267948966"/>
    <axis xyz="0 0 2"/>
    <limit lower="-1" upper="1" effort="10" velocity="2"/>
  </joint>
  <joint name="elbow" type="continuous">
    <parent link="upper"/><child link="lower"/>
    <origin xyz="0 0 0.3"/>
    <axis xyz="0 1 0"/>
  </joint>
  <joint name="slide" type="prismatic">
    <parent link="lower"/><child link="slider"/>
    <axis xyz="1 0 0"/>
    <limit lower="0" upper="0.1" effort="5" velocity="0.1"/>
  </joint>
  <joint name="finger_joint" type="prismatic">
    <parent link="slider"/><child link="finger"/>
    <axis xyz="0 0 1"/>
    <limit upper="0.05" effort="1" velocity="1"/>
    <mimic joint="slide" multiplier="0.5" offset="0.01"/>
  </joint>
  <joint name="tool_joint" type="fixed">
    <parent link="finger"/><child link="tool"/>
    <origin xyz="0.1 0 0" rpy="3.141592653589793 0 0"/>
  </joint>
  <gazebo reference="base"><material>Gazebo/Blue</material></gazebo>
  <transmission name="t"><type>x</type></transmission>
</robot>
`

func TestParse_Arm(t *testing.T) {
	m, err := Parse([]byte(arm))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "arm" || m.Root != "base" || len(m.Links) != 6 || len(m.Joints) != 5 {
		t.Fatalf("model %q root %q, %d links, %d joints", m.Name, m.Root, len(m.Links), len(m.Joints))
	}
	sh, _ := m.Joint("shoulder")
	if sh.Type != Revolute || sh.Parent != "base" || sh.Child != "upper" || sh.Axis != (geom.Vec3{X: 0, Y: 0, Z: 1}) ||
		*sh.Limit != (Limit{-1, 1, 10, 2}) || sh.Origin.XYZ != (geom.Vec3{X: 0, Y: 0, Z: 0.1}) {
		t.Fatalf("shoulder %+v", sh)
	}
	el, _ := m.Joint("elbow")
	if el.Type != Continuous || el.Limit != nil {
		t.Fatalf("elbow %+v", el)
	}
	fj, _ := m.Joint("finger_joint")
	if fj.Mimic == nil || *fj.Mimic != (Mimic{"slide", 0.5, 0.01}) || fj.Limit.Lower != 0 {
		t.Fatalf("finger_joint %+v %+v", fj.Mimic, fj.Limit)
	}
	if got := m.MovingJoints(); strings.Join(got, ",") != "shoulder,elbow,slide" {
		t.Fatalf("moving joints %v", got)
	}
	base, _ := m.Link("base")
	if v := base.Visuals[0]; v.Geometry.Box == nil || *v.Geometry.Box != (geom.Vec3{X: 0.2, Y: 0.2, Z: 0.1}) ||
		v.Material == nil || v.Material.Color == nil || *v.Material.Color != [4]float64{0, 0, 1, 1} {
		t.Fatalf("base visual %+v", v)
	}
	up, _ := m.Link("upper")
	if c := up.Visuals[0].Geometry.Cylinder; c == nil || *c != (Cylinder{0.02, 0.3}) || up.Visuals[0].Material.Color[0] != 1 {
		t.Fatalf("upper visual %+v", up.Visuals[0])
	}
	fi, _ := m.Link("finger")
	if me := fi.Visuals[0].Geometry.Mesh; me == nil || me.Filename != "package://x/finger.stl" || me.Scale != (geom.Vec3{X: 2, Y: 2, Z: 2}) {
		t.Fatalf("finger visual %+v", fi.Visuals[0])
	}
	if p, ok := m.ParentJoint("tool"); !ok || p.Name != "tool_joint" {
		t.Fatal("parent of tool")
	}
	if _, ok := m.ParentJoint("base"); ok {
		t.Fatal("root has a parent")
	}
	if cs := m.ChildJoints("base"); len(cs) != 1 || cs[0].Name != "shoulder" {
		t.Fatalf("children of base %v", cs)
	}
	chain, err := m.Chain("tool")
	if err != nil || len(chain) != 5 || chain[0].Name != "shoulder" || chain[4].Name != "tool_joint" {
		t.Fatalf("chain %v %v", chain, err)
	}
}

// FK of the arm by hand: shoulder turns the arm about z, elbow bends about
// y, slide moves along x, the finger follows the slide at half plus 1 cm.
func TestFK_Arm(t *testing.T) {
	m, err := Parse([]byte(arm))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		q    map[string]float64
		link string
		want geom.Vec3
	}{
		{"zero upper", map[string]float64{"shoulder": 0}, "upper", geom.Vec3{X: 0, Y: 0, Z: 0.1}},
		{"zero lower", map[string]float64{"shoulder": 0, "elbow": 0}, "lower", geom.Vec3{X: 0, Y: 0, Z: 0.4}},
		// origin yaw 90° turns the slide's x into the base's y
		{"slide", map[string]float64{"shoulder": 0, "elbow": 0, "slide": 0.1}, "slider", geom.Vec3{X: 0, Y: 0.1, Z: 0.4}},
		// shoulder −90° cancels the origin's yaw
		{"slide turned back", map[string]float64{"shoulder": -math.Pi / 2, "elbow": 0, "slide": 0.1}, "slider", geom.Vec3{X: 0.1, Y: 0, Z: 0.4}},
		// elbow +90° about y turns x into −z
		{"elbow bent", map[string]float64{"shoulder": -math.Pi / 2, "elbow": math.Pi / 2, "slide": 0.1}, "slider", geom.Vec3{X: 0, Y: 0, Z: 0.3}},
		// finger = 0.5·0.1 + 0.01 = 0.06 along the slider's z
		{"mimic", map[string]float64{"shoulder": -math.Pi / 2, "elbow": 0, "slide": 0.1}, "finger", geom.Vec3{X: 0.1, Y: 0, Z: 0.46}},
		{"tool", map[string]float64{"shoulder": -math.Pi / 2, "elbow": 0, "slide": 0.1}, "tool", geom.Vec3{X: 0.2, Y: 0, Z: 0.46}},
		{"root", nil, "base", geom.Vec3{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tf, err := m.FK(c.link, c.q)
			if err != nil {
				t.Fatal(err)
			}
			vecNear(t, tf.Translation, c.want, 1e-12)
		})
	}
	tool, _ := m.FK("tool", map[string]float64{"shoulder": -math.Pi / 2, "elbow": 0, "slide": 0})
	// the tool is rolled 180°: its z points down
	vecNear(t, tool.Rotation.Rotate(geom.Vec3{X: 0, Y: 0, Z: 1}), geom.Vec3{X: 0, Y: 0, Z: -1}, 1e-12)

	if _, err := m.FK("lower", map[string]float64{"shoulder": 0}); err == nil || !strings.Contains(err.Error(), `joint "elbow"`) {
		t.Fatalf("missing position: %v", err)
	}
	if _, err := m.FK("upper", map[string]float64{"shoulder": math.NaN()}); err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Fatalf("NaN position: %v", err)
	}
	if _, err := m.FK("nope", nil); err == nil {
		t.Fatal("unknown link")
	}
	// a mimic joint without its leader has no position
	if p := m.Positions(map[string]float64{"elbow": 1}); len(p) != 1 {
		t.Fatalf("positions %v", p)
	}
}

func TestParse_Errors(t *testing.T) {
	link := func(n string) string { return `<link name="` + n + `"/>` }
	joint := func(name, typ, parent, child, extra string) string {
		return `<joint name="` + name + `" type="` + typ + `"><parent link="` + parent + `"/><child link="` + child + `"/>` + extra + `</joint>`
	}
	robot := func(body ...string) string { return `<robot name="r">` + strings.Join(body, "") + `</robot>` }
	cases := []struct {
		name, doc, want string
	}{
		{"not xml", "hello <", "malformed XML"},
		{"empty", " \n", "the description is empty"},
		{"wrong root", `<sdf version="1.9"/>`, "root element must be <robot>"},
		{"no robot name", `<robot>` + link("a") + `</robot>`, "<robot> has no name"},
		{"no links", robot(), `robot "r" has no links`},
		{"link without name", robot(`<link/>`), "a <link> has no name"},
		{"duplicate link", robot(link("a"), link("a")), `link "a" is defined twice`},
		{"duplicate joint", robot(link("a"), link("b"), link("c"), joint("j", "fixed", "a", "b", ""), joint("j", "fixed", "a", "c", "")), `joint "j" is defined twice`},
		{"joint without name", robot(link("a"), `<joint type="fixed"/>`), "a <joint> has no name"},
		{"joint without type", robot(link("a"), `<joint name="j"/>`), `joint "j": no type`},
		{"unknown type", robot(link("a"), link("b"), joint("j", "hinge", "a", "b", "")), `unknown type "hinge"`},
		{"no parent", robot(link("a"), `<joint name="j" type="fixed"><child link="a"/></joint>`), "<parent link=...> is missing"},
		{"no child", robot(link("a"), `<joint name="j" type="fixed"><parent link="a"/></joint>`), "<child link=...> is missing"},
		{"unknown parent", robot(link("a"), joint("j", "fixed", "x", "a", "")), `joint "j": parent link "x" is not defined`},
		{"unknown child", robot(link("a"), joint("j", "fixed", "a", "y", "")), `joint "j": child link "y" is not defined`},
		{"self loop", robot(link("a"), joint("j", "fixed", "a", "a", "")), `connects link "a" to itself`},
		{"two parents", robot(link("a"), link("b"), link("c"), joint("j1", "fixed", "a", "c", ""), joint("j2", "fixed", "b", "c", "")), `link "c" has two parent joints, "j1" and "j2"`},
		{"two roots", robot(link("a"), link("b")), `2 root links ("a", "b")`},
		{"cycle without root", robot(link("a"), link("b"), joint("j1", "fixed", "a", "b", ""), joint("j2", "fixed", "b", "a", "")), "cycle (a → b → a): no root link"},
		{"cycle beside a root", robot(link("r"), link("a"), link("b"), joint("j1", "fixed", "a", "b", ""), joint("j2", "fixed", "b", "a", "")), `cycle (a → b → a), not connected to the root link "r"`},
		{"revolute without limit", robot(link("a"), link("b"), joint("j", "revolute", "a", "b", "")), "a revolute joint needs <limit"},
		{"prismatic without limit", robot(link("a"), link("b"), joint("j", "prismatic", "a", "b", "")), "a prismatic joint needs <limit"},
		{"limit without effort", robot(link("a"), link("b"), joint("j", "revolute", "a", "b", `<limit lower="0" upper="1" velocity="1"/>`)), "<limit> has no effort"},
		{"limit without velocity", robot(link("a"), link("b"), joint("j", "revolute", "a", "b", `<limit effort="1"/>`)), "<limit> has no velocity"},
		{"bad limit", robot(link("a"), link("b"), joint("j", "revolute", "a", "b", `<limit lower="x" effort="1" velocity="1"/>`)), `limit lower: "x" is not a number`},
		{"zero axis", robot(link("a"), link("b"), joint("j", "continuous", "a", "b", `<axis xyz="0 0 0"/>`)), `axis xyz "0 0 0" has no direction`},
		{"short axis", robot(link("a"), link("b"), joint("j", "continuous", "a", "b", `<axis xyz="0 1"/>`)), "want 3 numbers, got 2"},
		{"nan origin", robot(link("a"), link("b"), joint("j", "fixed", "a", "b", `<origin xyz="0 nan 0"/>`)), `origin xyz: "nan" is not finite`},
		{"inf rpy", robot(link("a"), link("b"), joint("j", "fixed", "a", "b", `<origin rpy="0 0 +Inf"/>`)), `origin rpy: "+Inf" is not finite`},
		{"mimic unknown", robot(link("a"), link("b"), joint("j", "continuous", "a", "b", `<mimic joint="k"/>`)), `mimics joint "k", which is not defined`},
		{"mimic itself", robot(link("a"), link("b"), joint("j", "continuous", "a", "b", `<mimic joint="j"/>`)), "mimics itself"},
		{"mimic fixed", robot(link("a"), link("b"), link("c"), joint("j", "continuous", "a", "b", `<mimic joint="k"/>`), joint("k", "fixed", "a", "c", "")), "both must be revolute, continuous or prismatic"},
		{"mimic no joint", robot(link("a"), link("b"), joint("j", "continuous", "a", "b", `<mimic/>`)), "<mimic> has no joint"},
		{"bad multiplier", robot(link("a"), link("b"), link("c"), joint("k", "continuous", "a", "c", ""), joint("j", "continuous", "a", "b", `<mimic joint="k" multiplier="two"/>`)), "mimic multiplier"},
		{"visual without geometry", robot(`<link name="a"><visual/></link>`), `link "a": visual 1: <geometry> is missing`},
		{"two shapes", robot(`<link name="a"><visual><geometry><box size="1 1 1"/><sphere radius="1"/></geometry></visual></link>`), "exactly one of box, cylinder, sphere and mesh, has 2"},
		{"no shape", robot(`<link name="a"><visual><geometry/></visual></link>`), "has 0"},
		{"box without size", robot(`<link name="a"><visual><geometry><box/></geometry></visual></link>`), "<box> has no size"},
		{"negative box", robot(`<link name="a"><visual><geometry><box size="1 -1 1"/></geometry></visual></link>`), "must not be negative"},
		{"cylinder without length", robot(`<link name="a"><visual><geometry><cylinder radius="1"/></geometry></visual></link>`), "cylinder length is missing"},
		{"mesh without file", robot(`<link name="a"><visual><geometry><mesh/></geometry></visual></link>`), "<mesh> has no filename"},
		{"bad colour", robot(`<link name="a"><visual><geometry><sphere radius="1"/></geometry><material name="m"><color rgba="1 0 0"/></material></visual></link>`), "want 4 numbers"},
		{"colour out of range", robot(`<material name="m"><color rgba="2 0 0 1"/></material>`, link("a")), "must lie in [0, 1]"},
		{"duplicate material", robot(`<material name="m"/><material name="m"/>`, link("a")), `material "m" is defined twice`},
		{"unnamed material", robot(`<material/>`, link("a")), "top-level <material> has no name"},
		{"trailing element", robot(link("a")) + `<robot name="x"/>`, "content after </robot>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.doc))
			if err == nil {
				t.Fatalf("no error for %s", c.doc)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want it to contain %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "urdf: ") {
				t.Fatalf("error %q lacks the urdf: prefix", err)
			}
		})
	}
}

func TestParse_Minimal(t *testing.T) {
	m, err := Parse([]byte(`<robot name="one"><link name="only"/></robot><!-- trailing comment -->`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Root != "only" || len(m.MovingJoints()) != 0 {
		t.Fatalf("%+v", m)
	}
}
