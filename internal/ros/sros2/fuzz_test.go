package sros2

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

// signedSeed wraps doc the way openssl smime -sign -text lays out a
// detached signature (the signature part is junk: parsing never checks it).
func signedSeed(doc []byte) []byte {
	var b bytes.Buffer
	b.WriteString("MIME-Version: 1.0\nContent-Type: multipart/signed; protocol=\"application/x-pkcs7-signature\"; micalg=\"sha-256\"; boundary=\"----X\"\n\n")
	b.WriteString("This is an S/MIME signed message\n\n------X\nContent-Type: text/plain\r\n\r\n")
	b.Write(doc)
	b.WriteString("\n------X\nContent-Type: application/x-pkcs7-signature; name=\"smime.p7s\"\n\nMIIB\n\n------X--\n")
	return b.Bytes()
}

// FuzzParsePolicy: no input panics, and a policy that parses writes back
// to one that parses the same, and makes permissions that parse.
func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte(observer))
	def, _ := DefaultPolicy("/a/b").Marshal()
	f.Add(def)
	f.Add([]byte(`<policy version="0.2.0"><enclaves><enclave path="/"><profiles><profile ns="/x/" node="n"><actions execute="DENY"><action>~a</action></actions></profile></profiles></enclave></enclaves></policy>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePolicy(b)
		if err != nil {
			return
		}
		out, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		q, err := ParsePolicy(out)
		if err != nil {
			t.Fatalf("a parsed policy wrote back to one that does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(p.Enclaves, q.Enclaves) {
			t.Fatalf("round trip changed the enclaves:\n%+v\n%+v", p.Enclaves, q.Enclaves)
		}
		for _, e := range p.Enclaves {
			doc, err := p.PermissionsXML(e.Path, 1, time.Unix(0, 0), time.Unix(1, 0))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ParsePermissions(doc); err != nil {
				t.Fatalf("permissions of %s do not parse: %v\n%s", e.Path, err, doc)
			}
		}
	})
}

// FuzzParsePermissions: no input panics, signed or not; Allows never
// panics on what parses.
func FuzzParsePermissions(f *testing.F) {
	p, _ := ParsePolicy([]byte(observer))
	doc, _ := p.PermissionsXML("/observer", 5, time.Unix(0, 0), time.Unix(1e9, 0))
	f.Add(doc)
	f.Add(signedSeed(doc))
	f.Add([]byte("MIME-Version: 1.0\nContent-Type: text/plain\n\n<dds/>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		perm, err := ParsePermissions(b)
		if err != nil {
			return
		}
		for i := range perm.Grants {
			perm.Grants[i].Allows(5, "rt/robot/cmd_vel", true)
			perm.Grants[i].Allows(5, "ros_discovery_info", false)
		}
	})
}

// FuzzParseGovernance: no input panics, signed or not.
func FuzzParseGovernance(f *testing.F) {
	f.Add(GovernanceXML(7))
	f.Add(signedSeed(GovernanceXML(0)))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ParseGovernance(b)
		if err != nil {
			return
		}
		g.Covers(7)
	})
}

// FuzzEnclaveName: a name ValidateEnclaveName accepts always lies under
// the keystore's enclaves/ directory (no "..", no escape), and one it
// refuses is not created by CreateEnclave's path logic.
func FuzzEnclaveName(f *testing.F) {
	for _, s := range []string{"/", "/a", "/robot/base_1", "/../x", "a/b", "//", "/a/../../b", "/a/./b", "/\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidateEnclaveName(name) != nil {
			return
		}
		k := &Keystore{Root: "/ks"}
		dir := k.EnclaveDir(name)
		if dir != "/ks/enclaves" && !strings.HasPrefix(dir, "/ks/enclaves/") {
			t.Fatalf("enclave %q maps to %q, outside /ks/enclaves", name, dir)
		}
		if rel := strings.TrimPrefix(strings.TrimPrefix(dir, "/ks/enclaves"), "/"); name != "/" && "/"+rel != name {
			t.Fatalf("enclave %q maps to %q", name, dir)
		}
	})
}
