package velmanode

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// flatten turns nested YAML maps into dotted names.
func flatten(prefix string, m map[string]any, out map[string]any) {
	for k, v := range m {
		name := k
		if prefix != "" {
			name = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok {
			flatten(name, sub, out)
		} else {
			out[name] = v
		}
	}
}

// params/velma.yaml must name every parameter, and its values must be the
// code defaults.
func TestParamsFile_MatchesDefaults(t *testing.T) {
	raw, err := os.ReadFile("../../../params/velma.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]map[string]map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	flat := map[string]any{}
	flatten("", doc["/**"]["ros__parameters"], flat)
	p := DefaultParams()
	for name, v := range flat {
		if err := p.Set(name, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, name := range ParamNames() {
		if _, ok := flat[name]; !ok {
			t.Errorf("parameter %s missing from params/velma.yaml", name)
		}
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	d := DefaultParams()
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, d) {
		t.Fatalf("params/velma.yaml differs from DefaultParams:\n%+v\n%+v", p, d)
	}
}

func TestParams_Set_RejectsBadValues(t *testing.T) {
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"cs.jnt_damping", "x", "not a number"},
		{"ve_body.arm_damping", []any{1.0, 2.0}, "want 7"},
		{"cs.cart_stiffness", []any{1.0, 1.0, 1.0, 1.0, 1.0, "a"}, "element 5"},
		{"nope", 1.0, "unknown parameter"},
		{"effectors", "hw", "only \"sim\""},
		{"ve_body.safe_iterations", 1.5, "integer"},
	}
	for _, tc := range cases {
		p := DefaultParams()
		err := p.Set(tc.name, tc.v)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Set(%s, %v) = %v, want error containing %q", tc.name, tc.v, err, tc.want)
		}
	}
	p := DefaultParams()
	_ = p.Set("cs.jnt_damping", 5.0)
	if err := p.Validate(); err == nil {
		t.Error("jnt_damping 5 validated")
	}
	p = DefaultParams()
	_ = p.Set("period", 1.0)
	if err := p.Validate(); err == nil {
		t.Error("period 1 s validated")
	}
}
