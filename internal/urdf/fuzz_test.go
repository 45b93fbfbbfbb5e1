package urdf

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: Parse never panics, and a model it accepts is a tree whose
// every link has a finite pose for any finite joint positions.
func FuzzParse(f *testing.F) {
	f.Add([]byte(arm))
	f.Add([]byte(`<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint></robot>`))
	f.Add([]byte(`<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="fixed"><parent link="b"/><child link="a"/></joint><joint name="k" type="fixed"><parent link="a"/><child link="b"/></joint></robot>`))
	if files, _ := filepath.Glob("../../urdf/*.urdf"); len(files) > 0 {
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			if m != nil {
				t.Fatal("model and error")
			}
			return
		}
		if _, ok := m.Link(m.Root); !ok {
			t.Fatalf("root %q is not a link", m.Root)
		}
		if _, ok := m.ParentJoint(m.Root); ok {
			t.Fatal("root has a parent")
		}
		q := map[string]float64{}
		for _, n := range m.MovingJoints() {
			q[n] = 0.5
		}
		for _, l := range m.Links {
			tf, err := m.FK(l.Name, q)
			if err != nil {
				t.Fatalf("FK of %q: %v", l.Name, err)
			}
			if !tf.Finite() {
				t.Fatalf("FK of %q is not finite: %+v", l.Name, tf)
			}
		}
	})
}
