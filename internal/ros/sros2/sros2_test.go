package sros2

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
)

// newKeystore creates a keystore with enclaves in a temporary directory.
func newKeystore(t *testing.T, domain uint32, enclaves ...string) *Keystore {
	t.Helper()
	k := &Keystore{Root: filepath.Join(t.TempDir(), "ks"), DomainID: domain}
	if err := k.Create(); err != nil {
		t.Fatal(err)
	}
	for _, e := range enclaves {
		if err := k.CreateEnclave(e); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

// TestKeystoreLayout: the files and links `ros2 security` makes, the
// enclave files rcl looks for, signatures that openssl verifies against
// the keystore's CA, a certificate chain Go verifies, and documents that
// parse back with the domain.
func TestKeystoreLayout(t *testing.T) {
	k := newKeystore(t, 42, "/robot/base", "/operator")
	for _, p := range []string{"public/ca.cert.pem", "public/identity_ca.cert.pem", "public/permissions_ca.cert.pem",
		"private/ca.key.pem", "private/identity_ca.key.pem", "private/permissions_ca.key.pem",
		"enclaves/governance.xml", "enclaves/governance.p7s"} {
		if !regular(filepath.Join(k.Root, p)) {
			t.Errorf("%s missing", p)
		}
	}
	if fi, err := os.Stat(filepath.Join(k.Root, "private")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("private/ mode %v, %v", fi.Mode(), err)
	}
	if !k.Valid() {
		t.Fatal("not Valid")
	}
	if err := k.Create(); err == nil {
		t.Error("creating over a valid keystore succeeded")
	}
	got, err := k.Enclaves()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/operator", "/robot/base"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Enclaves = %v, want %v", got, want)
	}
	ca := filepath.Join(k.Root, "public", "permissions_ca.cert.pem")
	for _, e := range got {
		dir := k.EnclaveDir(e)
		if _, err := ros.EnclaveFiles(dir); err != nil {
			t.Errorf("%s: %v", e, err)
		}
		content, err := Verify(ca, filepath.Join(dir, "permissions.p7s"))
		if err != nil {
			t.Fatal(err)
		}
		perm, err := ParsePermissions(content)
		if err != nil {
			t.Fatal(err)
		}
		g := perm.Grants[0]
		if g.SubjectName != "CN="+e || g.Name != e {
			t.Errorf("%s: grant %q subject %q", e, g.Name, g.SubjectName)
		}
		if !g.Allows(42, "rt/cmd_vel", true) || !g.Allows(42, "ros_discovery_info", false) || g.Allows(7, "rt/cmd_vel", true) {
			t.Errorf("%s: default grant allows wrongly: %+v", e, g)
		}
		certPEM, _ := os.ReadFile(filepath.Join(dir, "cert.pem"))
		cert, err := parseCert(certPEM)
		if err != nil {
			t.Fatal(err)
		}
		if cert.Subject.CommonName != e || cert.IsCA {
			t.Errorf("%s: certificate subject %q CA %v", e, cert.Subject.CommonName, cert.IsCA)
		}
		caCert, _, err := loadCA(filepath.Join(k.Root, "public", "identity_ca.cert.pem"), filepath.Join(k.Root, "private", "identity_ca.key.pem"))
		if err != nil {
			t.Fatal(err)
		}
		if err := cert.CheckSignatureFrom(caCert); err != nil {
			t.Errorf("%s: certificate not signed by the identity CA: %v", e, err)
		}
	}
	gov, err := Verify(ca, filepath.Join(k.Root, "enclaves", "governance.p7s"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := ParseGovernance(gov)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Covers(42) || g.Covers(0) || g.Rules[0].AllowUnauthenticated || !g.Rules[0].EnableJoinAccessControl {
		t.Errorf("governance %+v", g.Rules)
	}
}

// TestTamperedPermissionsDoNotVerify: one changed byte of the signed
// content breaks the signature.
func TestTamperedPermissionsDoNotVerify(t *testing.T) {
	k := newKeystore(t, 3, "/a")
	p := filepath.Join(k.EnclaveDir("/a"), "permissions.p7s")
	b, _ := os.ReadFile(p)
	bad := strings.Replace(string(b), "<default>DENY</default>", "<default>ALLOW</default>", 1)
	if bad == string(b) {
		t.Fatal("nothing to tamper with")
	}
	os.WriteFile(p, []byte(bad), 0o644)
	if _, err := Verify(filepath.Join(k.Root, "public", "permissions_ca.cert.pem"), p); err == nil {
		t.Error("a tampered permissions.p7s verified")
	}
}

const observer = `<?xml version="1.0" encoding="UTF-8"?>
<policy version="0.2.0">
  <enclaves>
    <enclave path="/observer">
      <profiles>
        <profile ns="/robot" node="viewer">
          <topics subscribe="ALLOW"><topic>odom</topic><topic>/tf</topic></topics>
          <topics publish="ALLOW"><topic>~/status</topic></topics>
          <topics publish="DENY"><topic>cmd_vel</topic></topics>
          <services request="ALLOW"><service>get_state</service></services>
          <actions call="ALLOW"><action>/navigate_to_pose</action></actions>
        </profile>
      </profiles>
    </enclave>
  </enclaves>
</policy>`

// TestPolicyToPermissions covers the name resolution (relative, private,
// absolute) and every rule kind of sros2's template.
func TestPolicyToPermissions(t *testing.T) {
	p, err := ParsePolicy([]byte(observer))
	if err != nil {
		t.Fatal(err)
	}
	nb := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	doc, err := p.PermissionsXML("/observer", 9, nb, nb.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	perm, err := ParsePermissions(doc)
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	g := perm.Grants[0]
	if g.NotBefore != "2026-01-02T03:04:05" || g.NotAfter != "2026-01-02T04:04:05" || g.Default != "DENY" {
		t.Errorf("grant %+v", g)
	}
	for _, tc := range []struct {
		topic   string
		publish bool
		want    bool
	}{
		{"rt/robot/odom", false, true},
		{"rt/tf", false, true},
		{"rt/robot/viewer/status", true, true},
		{"rt/robot/cmd_vel", true, false},
		{"rt/robot/odom", true, false},
		{"rq/robot/get_stateRequest", true, true},
		{"rr/robot/get_stateReply", false, true},
		{"rq/robot/get_stateRequest", false, false},
		{"rq/navigate_to_pose/_action/send_goalRequest", true, true},
		{"rt/navigate_to_pose/_action/feedback", false, true},
		{"rt/navigate_to_pose/_action/feedback", true, false},
		{"ros_discovery_info", true, true},
		{"ros_discovery_info", false, true},
		{"fsmnodes_heartbeat", true, true},
		{"fsmnodes_heartbeat", false, true},
	} {
		if got := g.Allows(9, tc.topic, tc.publish); got != tc.want {
			t.Errorf("Allows(%s, publish %v) = %v, want %v", tc.topic, tc.publish, got, tc.want)
		}
	}
	if len(g.DenyRules) != 1 || !reflect.DeepEqual(g.DenyRules[0].Publish, []string{"rt/robot/cmd_vel"}) {
		t.Errorf("deny rules %+v", g.DenyRules)
	}
	if _, err := p.PermissionsXML("/nope", 9, nb, nb); err == nil {
		t.Error("an enclave not in the policy made permissions")
	}
}

func TestParsePolicyRefuses(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`<policy><enclaves/></policy>`, "version"},
		{`<policy version="0.2.0"><enclaves><enclave path="rel"/></enclaves></policy>`, "absolute"},
		{`<policy version="0.2.0"><enclaves><enclave path="/a"><profiles><profile ns="/" node="n"><topics publish="YES"><topic>x</topic></topics></profile></profiles></enclave></enclaves></policy>`, "qualifier"},
		{`<policy version="0.2.0"><enclaves><enclave path="/a"><profiles><profile ns="/"><topics publish="ALLOW"><topic>x</topic></topics></profile></profiles></enclave></enclaves></policy>`, "ns and node"},
		{`<policy version="0.2.0"><enclaves><enclave path="/a"><profiles><profile ns="/" node="n"><topics publish="ALLOW"><topic> </topic></topics></profile></profiles></enclave></enclaves></policy>`, "empty topic"},
		{`<policy version="0.2.0"`, "policy:"},
	} {
		if _, err := ParsePolicy([]byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePolicy(%.40q) = %v, want %q", tc.doc, err, tc.want)
		}
	}
}

func TestValidateEnclaveName(t *testing.T) {
	for name, ok := range map[string]bool{"/": true, "/a": true, "/a/b_c": true, "a": false, "/a/": false, "//a": false, "/1a": false, "/a-b": false} {
		if err := ValidateEnclaveName(name); (err == nil) != ok {
			t.Errorf("ValidateEnclaveName(%q) = %v", name, err)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pat, name string
		want      bool
	}{
		{"rt/*", "rt/a/b", true}, {"rt/*", "rq/a", false}, {"rq/*Request", "rq/a/bRequest", true},
		{"rq/*Request", "rq/a/bReply", false}, {"a?c", "abc", true}, {"a?c", "ac", false}, {"*", "", true},
		{"rt/*/_action/status", "rt/x/y/_action/status", true}, {"exact", "exact", true}, {"exact", "exactly", false},
	} {
		if got := globMatch(tc.pat, tc.name); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v", tc.pat, tc.name, got)
		}
	}
}

// TestKeystoreDomainBeyondGovernance: domains 231 and 232 are ROS 2
// domains, but no DDS Security governance can name them (Cyclone refused
// the participants of such a keystore with "Can not parse governance
// file"): create_keystore says so and writes nothing; 230 is fine.
func TestKeystoreDomainBeyondGovernance(t *testing.T) {
	newKeystore(t, MaxSecureDomainID)
	for _, d := range []uint32{231, 232} {
		k := &Keystore{Root: filepath.Join(t.TempDir(), "ks"), DomainID: d}
		err := k.Create()
		if err == nil || !strings.Contains(err.Error(), "0..230") {
			t.Errorf("domain %d: %v, want refused naming 0..230", d, err)
		}
		if _, serr := os.Stat(k.Root); serr == nil {
			t.Errorf("domain %d: the refused keystore left %s", d, k.Root)
		}
	}
}
