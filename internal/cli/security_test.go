package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecurityVerbs runs the keystore verbs without DDS: a keystore, two
// enclaves, the list, permissions from a policy, and the refusals (a
// relative enclave name, an enclave outside the policy, a bad policy, a
// second create_keystore, a missing argument).
func TestSecurityVerbs(t *testing.T) {
	ks := filepath.Join(t.TempDir(), "ks")
	for _, args := range [][]string{
		{"security", "create_keystore", ks},
		{"security", "create_enclave", ks, "/robot/base"},
		{"security", "create_enclave", ks, "/operator"},
	} {
		if _, errs, code := run(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
	out, errs, code := run(t, "security", "list_enclaves", ks)
	if code != 0 || out != "/operator\n/robot/base\n" {
		t.Errorf("list_enclaves: exit %d %q %s", code, out, errs)
	}
	policy := filepath.Join(t.TempDir(), "policy.xml")
	os.WriteFile(policy, []byte(`<policy version="0.2.0"><enclaves><enclave path="/operator"><profiles>
<profile ns="/" node="op"><topics subscribe="ALLOW"><topic>odom</topic></topics></profile>
</profiles></enclave></enclaves></policy>`), 0o644)
	if _, errs, code := run(t, "security", "create_permission", ks, "/operator", policy); code != 0 {
		t.Fatalf("create_permission: exit %d: %s", code, errs)
	}
	b, _ := os.ReadFile(filepath.Join(ks, "enclaves", "operator", "permissions.xml"))
	if !strings.Contains(string(b), "<topic>rt/odom</topic>") || strings.Contains(string(b), "rt/*") {
		t.Errorf("permissions from the policy:\n%s", b)
	}
	bad := filepath.Join(t.TempDir(), "bad.xml")
	os.WriteFile(bad, []byte(`<policy version="0.2.0"><enclaves><enclave path="/operator"><profiles>
<profile ns="/" node="op"><topics publish="MAYBE"><topic>x</topic></topics></profile></profiles></enclave></enclaves></policy>`), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"security", "create_enclave", ks, "relative"}, "absolute"},
		{[]string{"security", "create_permission", ks, "/robot/base", policy}, `no enclave "/robot/base"`},
		{[]string{"security", "create_permission", ks, "/operator", bad}, "qualifier"},
		{[]string{"security", "create_keystore", ks}, "already exists"},
		{[]string{"security", "create_enclave", filepath.Join(t.TempDir(), "none"), "/a"}, "not a valid keystore"},
		{[]string{"security", "create_enclave", ks}, "usage"},
	} {
		_, errs, code := run(t, tc.args...)
		if code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errs, tc.want)
		}
	}
}
