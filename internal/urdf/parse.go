package urdf

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// The XML shapes of the elements Parse reads. Attributes are kept as
// strings (nil when absent) so that missing and malformed values get their
// own messages.
type xmlRobot struct {
	XMLName   xml.Name      `xml:"robot"`
	Name      *string       `xml:"name,attr"`
	Links     []xmlLink     `xml:"link"`
	Joints    []xmlJoint    `xml:"joint"`
	Materials []xmlMaterial `xml:"material"`
}

type xmlLink struct {
	Name    *string     `xml:"name,attr"`
	Visuals []xmlVisual `xml:"visual"`
}

type xmlVisual struct {
	Name     string       `xml:"name,attr"`
	Origin   *xmlOrigin   `xml:"origin"`
	Geometry *xmlGeometry `xml:"geometry"`
	Material *xmlMaterial `xml:"material"`
}

type xmlMaterial struct {
	Name  *string `xml:"name,attr"`
	Color *struct {
		RGBA *string `xml:"rgba,attr"`
	} `xml:"color"`
}

type xmlGeometry struct {
	Box *struct {
		Size *string `xml:"size,attr"`
	} `xml:"box"`
	Cylinder *struct {
		Radius *string `xml:"radius,attr"`
		Length *string `xml:"length,attr"`
	} `xml:"cylinder"`
	Sphere *struct {
		Radius *string `xml:"radius,attr"`
	} `xml:"sphere"`
	Mesh *struct {
		Filename *string `xml:"filename,attr"`
		Scale    *string `xml:"scale,attr"`
	} `xml:"mesh"`
}

type xmlOrigin struct {
	XYZ *string `xml:"xyz,attr"`
	RPY *string `xml:"rpy,attr"`
}

type xmlJoint struct {
	Name   *string    `xml:"name,attr"`
	Type   *string    `xml:"type,attr"`
	Origin *xmlOrigin `xml:"origin"`
	Parent *struct {
		Link *string `xml:"link,attr"`
	} `xml:"parent"`
	Child *struct {
		Link *string `xml:"link,attr"`
	} `xml:"child"`
	Axis *struct {
		XYZ *string `xml:"xyz,attr"`
	} `xml:"axis"`
	Limit *struct {
		Lower    *string `xml:"lower,attr"`
		Upper    *string `xml:"upper,attr"`
		Effort   *string `xml:"effort,attr"`
		Velocity *string `xml:"velocity,attr"`
	} `xml:"limit"`
	Mimic *struct {
		Joint      *string `xml:"joint,attr"`
		Multiplier *string `xml:"multiplier,attr"`
		Offset     *string `xml:"offset,attr"`
	} `xml:"mimic"`
}

// Parse reads and validates a URDF document.
func Parse(data []byte) (*Model, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("urdf: the description is empty")
	}
	var r xmlRobot
	dec := xml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&r); err != nil {
		var se *xml.SyntaxError
		var ue xml.UnmarshalError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("urdf: malformed XML at line %d: %s", se.Line, se.Msg)
		case errors.As(err, &ue) && strings.Contains(string(ue), "expected element type <robot>"):
			return nil, fmt.Errorf("urdf: the root element must be <robot> (%s)", ue)
		}
		return nil, fmt.Errorf("urdf: %w", err)
	}
	// Anything but whitespace and comments after </robot> is an error, as
	// for any XML document.
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch t := tok.(type) {
		case xml.CharData:
			if len(bytes.TrimSpace(t)) == 0 {
				continue
			}
		case xml.Comment, xml.ProcInst:
			continue
		}
		return nil, errors.New("urdf: content after </robot>")
	}
	return build(&r)
}

func build(r *xmlRobot) (*Model, error) {
	if r.Name == nil || strings.TrimSpace(*r.Name) == "" {
		return nil, errors.New("urdf: <robot> has no name attribute")
	}
	m := &Model{Name: *r.Name, links: map[string]int{}, joints: map[string]int{},
		parentOf: map[string]int{}, children: map[string][]int{}}

	materials := map[string]*Material{}
	for i := range r.Materials {
		mat, err := parseMaterial(&r.Materials[i], nil)
		if err != nil {
			return nil, fmt.Errorf("urdf: top-level %w", err)
		}
		if mat.Name == "" {
			return nil, errors.New("urdf: a top-level <material> has no name")
		}
		if _, dup := materials[mat.Name]; dup {
			return nil, fmt.Errorf("urdf: material %q is defined twice", mat.Name)
		}
		materials[mat.Name] = mat
	}

	for i := range r.Links {
		l, err := parseLink(&r.Links[i], materials)
		if err != nil {
			return nil, err
		}
		if _, dup := m.links[l.Name]; dup {
			return nil, fmt.Errorf("urdf: link %q is defined twice", l.Name)
		}
		m.links[l.Name] = len(m.Links)
		m.Links = append(m.Links, l)
	}
	if len(m.Links) == 0 {
		return nil, fmt.Errorf("urdf: robot %q has no links", m.Name)
	}
	for i := range r.Joints {
		j, err := parseJoint(&r.Joints[i])
		if err != nil {
			return nil, err
		}
		if _, dup := m.joints[j.Name]; dup {
			return nil, fmt.Errorf("urdf: joint %q is defined twice", j.Name)
		}
		m.joints[j.Name] = len(m.Joints)
		m.Joints = append(m.Joints, j)
	}
	if err := m.buildTree(); err != nil {
		return nil, err
	}
	return m, nil
}

// buildTree checks that the joints connect the links into one tree and
// indexes it.
func (m *Model) buildTree() error {
	for i := range m.Joints {
		j := &m.Joints[i]
		if _, ok := m.links[j.Parent]; !ok {
			return fmt.Errorf("urdf: joint %q: parent link %q is not defined", j.Name, j.Parent)
		}
		if _, ok := m.links[j.Child]; !ok {
			return fmt.Errorf("urdf: joint %q: child link %q is not defined", j.Name, j.Child)
		}
		if j.Parent == j.Child {
			return fmt.Errorf("urdf: joint %q connects link %q to itself", j.Name, j.Child)
		}
		if k, ok := m.parentOf[j.Child]; ok {
			return fmt.Errorf("urdf: link %q has two parent joints, %q and %q", j.Child, m.Joints[k].Name, j.Name)
		}
		m.parentOf[j.Child] = i
		m.children[j.Parent] = append(m.children[j.Parent], i)
		if j.Mimic != nil {
			if j.Mimic.Joint == j.Name {
				return fmt.Errorf("urdf: joint %q mimics itself", j.Name)
			}
		}
	}
	for i := range m.Joints {
		j := &m.Joints[i]
		if j.Mimic == nil {
			continue
		}
		t, ok := m.joints[j.Mimic.Joint]
		if !ok {
			return fmt.Errorf("urdf: joint %q mimics joint %q, which is not defined", j.Name, j.Mimic.Joint)
		}
		if !j.Type.Moving() || !m.Joints[t].Type.Moving() {
			return fmt.Errorf("urdf: joint %q (%v) mimics joint %q (%v): both must be revolute, continuous or prismatic",
				j.Name, j.Type, j.Mimic.Joint, m.Joints[t].Type)
		}
	}
	var roots []string
	for _, l := range m.Links {
		if _, ok := m.parentOf[l.Name]; !ok {
			roots = append(roots, l.Name)
		}
	}
	switch {
	case len(roots) == 0:
		// every link has a parent, so following parents from any link loops
		return fmt.Errorf("urdf: the joints form a cycle (%s): no root link", m.cycleFrom(m.Links[0].Name))
	case len(roots) > 1:
		return fmt.Errorf("urdf: %d root links (%s): the links must form one tree connected by joints",
			len(roots), strings.Join(quoteAll(roots), ", "))
	}
	m.Root = roots[0]
	// With one root and one parent per link, a link that cannot reach the
	// root lies on a cycle.
	reached := map[string]bool{}
	var walk func(string)
	walk = func(l string) {
		reached[l] = true
		for _, i := range m.children[l] {
			if c := m.Joints[i].Child; !reached[c] {
				walk(c)
			}
		}
	}
	walk(m.Root)
	for _, l := range m.Links {
		if !reached[l.Name] {
			return fmt.Errorf("urdf: the joints form a cycle (%s), not connected to the root link %q", m.cycleFrom(l.Name), m.Root)
		}
	}
	return nil
}

// cycleFrom follows parent joints from link until a link repeats and
// describes the loop ("a → b → a"). Only called when link lies on or leads
// to a cycle.
func (m *Model) cycleFrom(link string) string {
	seen := map[string]int{}
	var path []string
	for l := link; ; {
		if k, ok := seen[l]; ok {
			loop := append(path[k:], l)
			// parents were followed, so reverse to read parent → child
			for i, j := 0, len(loop)-1; i < j; i, j = i+1, j-1 {
				loop[i], loop[j] = loop[j], loop[i]
			}
			return strings.Join(loop, " → ")
		}
		seen[l] = len(path)
		path = append(path, l)
		i, ok := m.parentOf[l]
		if !ok {
			return link // unreachable for a cycle; keep the message sane
		}
		l = m.Joints[i].Parent
	}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

func parseLink(x *xmlLink, materials map[string]*Material) (Link, error) {
	if x.Name == nil || *x.Name == "" {
		return Link{}, errors.New("urdf: a <link> has no name attribute")
	}
	l := Link{Name: *x.Name}
	for i := range x.Visuals {
		v, err := parseVisual(&x.Visuals[i], materials)
		if err != nil {
			return Link{}, fmt.Errorf("urdf: link %q: visual %d: %w", l.Name, i+1, err)
		}
		l.Visuals = append(l.Visuals, v)
	}
	return l, nil
}

func parseVisual(x *xmlVisual, materials map[string]*Material) (Visual, error) {
	v := Visual{Name: x.Name}
	var err error
	if v.Origin, err = parseOrigin(x.Origin); err != nil {
		return v, err
	}
	if x.Geometry == nil {
		return v, errors.New("<geometry> is missing")
	}
	if v.Geometry, err = parseGeometry(x.Geometry); err != nil {
		return v, err
	}
	if x.Material != nil {
		if v.Material, err = parseMaterial(x.Material, materials); err != nil {
			return v, err
		}
	}
	return v, nil
}

func parseMaterial(x *xmlMaterial, named map[string]*Material) (*Material, error) {
	mat := &Material{}
	if x.Name != nil {
		mat.Name = *x.Name
	}
	if x.Color != nil {
		if x.Color.RGBA == nil {
			return nil, fmt.Errorf("material %q: <color> has no rgba attribute", mat.Name)
		}
		c, err := floats(*x.Color.RGBA, 4)
		if err != nil {
			return nil, fmt.Errorf("material %q: color rgba: %w", mat.Name, err)
		}
		for _, f := range c {
			if f < 0 || f > 1 {
				return nil, fmt.Errorf("material %q: color rgba %q: components must lie in [0, 1]", mat.Name, *x.Color.RGBA)
			}
		}
		mat.Color = &[4]float64{c[0], c[1], c[2], c[3]}
	} else if def, ok := named[mat.Name]; ok {
		mat.Color = def.Color
	}
	return mat, nil
}

func parseGeometry(x *xmlGeometry) (Geometry, error) {
	var g Geometry
	n := 0
	if x.Box != nil {
		n++
		if x.Box.Size == nil {
			return g, errors.New("<box> has no size attribute")
		}
		s, err := floats(*x.Box.Size, 3)
		if err != nil {
			return g, fmt.Errorf("box size: %w", err)
		}
		g.Box = &geom.Vec3{X: s[0], Y: s[1], Z: s[2]}
	}
	if x.Cylinder != nil {
		n++
		r, err := attrFloat(x.Cylinder.Radius, "cylinder radius")
		if err != nil {
			return g, err
		}
		l, err := attrFloat(x.Cylinder.Length, "cylinder length")
		if err != nil {
			return g, err
		}
		g.Cylinder = &Cylinder{Radius: r, Length: l}
	}
	if x.Sphere != nil {
		n++
		r, err := attrFloat(x.Sphere.Radius, "sphere radius")
		if err != nil {
			return g, err
		}
		g.Sphere = &r
	}
	if x.Mesh != nil {
		n++
		if x.Mesh.Filename == nil || *x.Mesh.Filename == "" {
			return g, errors.New("<mesh> has no filename attribute")
		}
		m := &Mesh{Filename: *x.Mesh.Filename, Scale: geom.Vec3{X: 1, Y: 1, Z: 1}}
		if x.Mesh.Scale != nil {
			s, err := floats(*x.Mesh.Scale, 3)
			if err != nil {
				return g, fmt.Errorf("mesh scale: %w", err)
			}
			m.Scale = geom.Vec3{X: s[0], Y: s[1], Z: s[2]}
		}
		g.Mesh = m
	}
	if n != 1 {
		return g, fmt.Errorf("<geometry> must hold exactly one of box, cylinder, sphere and mesh, has %d", n)
	}
	for _, v := range []*float64{g.Sphere} {
		if v != nil && *v < 0 {
			return g, errors.New("sizes must not be negative")
		}
	}
	if (g.Box != nil && (g.Box.X < 0 || g.Box.Y < 0 || g.Box.Z < 0)) ||
		(g.Cylinder != nil && (g.Cylinder.Radius < 0 || g.Cylinder.Length < 0)) {
		return g, errors.New("sizes must not be negative")
	}
	return g, nil
}

func parseJoint(x *xmlJoint) (Joint, error) {
	if x.Name == nil || *x.Name == "" {
		return Joint{}, errors.New("urdf: a <joint> has no name attribute")
	}
	j := Joint{Name: *x.Name, Axis: geom.Vec3{X: 1, Y: 0, Z: 0}}
	fail := func(format string, a ...any) (Joint, error) {
		return Joint{}, fmt.Errorf("urdf: joint %q: %s", j.Name, fmt.Sprintf(format, a...))
	}
	if x.Type == nil {
		return fail("no type attribute")
	}
	switch *x.Type {
	case "fixed":
		j.Type = Fixed
	case "revolute":
		j.Type = Revolute
	case "continuous":
		j.Type = Continuous
	case "prismatic":
		j.Type = Prismatic
	case "floating":
		j.Type = Floating
	case "planar":
		j.Type = Planar
	default:
		return fail("unknown type %q (want revolute, continuous, prismatic, fixed, floating or planar)", *x.Type)
	}
	if x.Parent == nil || x.Parent.Link == nil || *x.Parent.Link == "" {
		return fail("<parent link=...> is missing")
	}
	if x.Child == nil || x.Child.Link == nil || *x.Child.Link == "" {
		return fail("<child link=...> is missing")
	}
	j.Parent, j.Child = *x.Parent.Link, *x.Child.Link
	var err error
	if j.Origin, err = parseOrigin(x.Origin); err != nil {
		return fail("%v", err)
	}
	if x.Axis != nil && x.Axis.XYZ != nil {
		a, err := floats(*x.Axis.XYZ, 3)
		if err != nil {
			return fail("axis xyz: %v", err)
		}
		ax := geom.Vec3{X: a[0], Y: a[1], Z: a[2]}
		n := ax.Norm()
		if n < 1e-12 || !finite(n) {
			return fail("axis xyz %q has no direction", *x.Axis.XYZ)
		}
		j.Axis = ax.Scale(1 / n)
	}
	if x.Limit != nil {
		l := &Limit{}
		for _, f := range []struct {
			name string
			s    *string
			dst  *float64
			req  bool
		}{
			{"lower", x.Limit.Lower, &l.Lower, false},
			{"upper", x.Limit.Upper, &l.Upper, false},
			{"effort", x.Limit.Effort, &l.Effort, true},
			{"velocity", x.Limit.Velocity, &l.Velocity, true},
		} {
			if f.s == nil {
				if f.req {
					return fail("<limit> has no %s attribute", f.name)
				}
				continue
			}
			if *f.dst, err = number(*f.s); err != nil {
				return fail("limit %s: %v", f.name, err)
			}
		}
		j.Limit = l
	}
	if (j.Type == Revolute || j.Type == Prismatic) && j.Limit == nil {
		return fail("a %v joint needs <limit lower upper effort velocity>", j.Type)
	}
	if x.Mimic != nil {
		if x.Mimic.Joint == nil || *x.Mimic.Joint == "" {
			return fail("<mimic> has no joint attribute")
		}
		mm := &Mimic{Joint: *x.Mimic.Joint, Multiplier: 1}
		if x.Mimic.Multiplier != nil {
			if mm.Multiplier, err = number(*x.Mimic.Multiplier); err != nil {
				return fail("mimic multiplier: %v", err)
			}
		}
		if x.Mimic.Offset != nil {
			if mm.Offset, err = number(*x.Mimic.Offset); err != nil {
				return fail("mimic offset: %v", err)
			}
		}
		j.Mimic = mm
	}
	return j, nil
}

func parseOrigin(x *xmlOrigin) (Origin, error) {
	var o Origin
	if x == nil {
		return o, nil
	}
	if x.XYZ != nil {
		v, err := floats(*x.XYZ, 3)
		if err != nil {
			return o, fmt.Errorf("origin xyz: %w", err)
		}
		o.XYZ = geom.Vec3{X: v[0], Y: v[1], Z: v[2]}
	}
	if x.RPY != nil {
		v, err := floats(*x.RPY, 3)
		if err != nil {
			return o, fmt.Errorf("origin rpy: %w", err)
		}
		o.RPY = geom.Vec3{X: v[0], Y: v[1], Z: v[2]}
	}
	return o, nil
}

func attrFloat(s *string, what string) (float64, error) {
	if s == nil {
		return 0, fmt.Errorf("%s is missing", what)
	}
	v, err := number(*s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}

// floats reads exactly n whitespace-separated finite numbers.
func floats(s string, n int) ([]float64, error) {
	fields := strings.Fields(s)
	if len(fields) != n {
		return nil, fmt.Errorf("%q: want %d numbers, got %d", s, n, len(fields))
	}
	out := make([]float64, n)
	for i, f := range fields {
		v, err := number(f)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// number reads one finite number.
func number(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not finite", s)
	}
	return v, nil
}
