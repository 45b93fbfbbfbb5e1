package launch

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Every tag of the table: the leaves refuse children, unknown attributes
// are refused naming the allowed ones, and each dashed spelling loads
// exactly as the underscored one.
func TestActionTags_Table(t *testing.T) {
	bin := fakeBin(t, "talker")
	load := func(t *testing.T, xml string) (*Description, error) {
		t.Helper()
		dir := t.TempDir()
		f := filepath.Join(dir, "t.launch.xml")
		if err := os.WriteFile(f, []byte(xml), 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := Load(f, Options{BinDir: bin, ShareDir: dir, LookupEnv: env("PATH", os.Getenv("PATH"))})
		if err != nil {
			return nil, err
		}
		return d, nil
	}
	leaves := map[string]string{
		"let": `name="a" value="b"`, "push_ros_namespace": `namespace="n"`, "set_env": `name="A" value="1"`,
		"unset_env": `name="A"`, "set_remap": `from="a" to="b"`, "log": `message="hi"`,
	}
	for tag, attrs := range leaves {
		t.Run(tag+" takes no children", func(t *testing.T) {
			_, err := load(t, `<launch><`+tag+` `+attrs+`><arg name="x" default="1"/></`+tag+`></launch>`)
			if err == nil || !strings.Contains(err.Error(), "unknown tag <arg> inside <"+tag+"> (it takes no children)") {
				t.Fatalf("Load = %v", err)
			}
		})
	}
	for tag := range actionTags {
		t.Run(tag+" refuses an unknown attribute", func(t *testing.T) {
			_, err := load(t, `<launch><`+tag+` bogus="1"/></launch>`)
			if err == nil || !strings.Contains(err.Error(), `unknown attribute "bogus" on <`+tag+`>`) ||
				!strings.Contains(err.Error(), "if, unless)") {
				t.Fatalf("Load = %v", err)
			}
		})
	}
	body := func(sep string) string {
		r := strings.NewReplacer("_", sep)
		return `<launch><group><` + r.Replace("push_ros_namespace") + ` namespace="robot"/>` +
			`<` + r.Replace("set_env") + ` name="A" value="1"/><` + r.Replace("unset_env") + ` name="B"/>` +
			`<` + r.Replace("set_remap") + ` from="x" to="y"/>` +
			`<node pkg="fsmnodes" exec="talker" name="t"/></group></launch>`
	}
	under, err := load(t, body("_"))
	if err != nil {
		t.Fatal(err)
	}
	dashed, err := load(t, body("-"))
	if err != nil {
		t.Fatal(err)
	}
	if len(under.Processes) != 1 || len(dashed.Processes) != 1 {
		t.Fatalf("processes %d and %d, want one each", len(under.Processes), len(dashed.Processes))
	}
	under.Processes[0].File, dashed.Processes[0].File = "", "" // two temporary files
	if !reflect.DeepEqual(*under.Processes[0], *dashed.Processes[0]) {
		t.Fatalf("dashed tags load differently:\n%+v\n%+v", *under.Processes[0], *dashed.Processes[0])
	}
	if p := under.Processes[0]; p.Namespace != "/robot" || len(p.Remaps) != 1 || len(p.Env) != 1 || len(p.Unset) != 1 {
		t.Errorf("the tags did not apply: %+v", p)
	}
}
