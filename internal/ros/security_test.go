package ros

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A real secured participant refused by Cyclone is tested with processes in
// test/ros2 (security_test.go), not here: Cyclone's log is process-wide and
// the refusal's messages would show up in the dds_log_messages counter of
// every later Context of this test binary.

// writeEnclave makes dir with the given files of an enclave (empty
// contents: planSecurity only looks for them, Cyclone reads them).
func writeEnclave(t *testing.T, dir string, files ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func allSecurityFiles() []string {
	var out []string
	for _, f := range SecurityFiles {
		out = append(out, f.File)
	}
	return out
}

func TestReadSecuritySettings(t *testing.T) {
	for _, tc := range []struct {
		env              map[string]string
		enabled, enforce bool
	}{
		{nil, false, false},
		{map[string]string{EnvSecurityEnable: "true"}, true, false},
		{map[string]string{EnvSecurityEnable: "TRUE"}, false, false}, // rcl: exactly "true"
		{map[string]string{EnvSecurityEnable: "1"}, false, false},
		{map[string]string{EnvSecurityEnable: "true", EnvSecurityStrategy: "Enforce"}, true, true},
		{map[string]string{EnvSecurityEnable: "true", EnvSecurityStrategy: "enforce"}, true, false}, // rcl: exactly "Enforce"
		{map[string]string{EnvSecurityEnable: "true", EnvSecurityStrategy: "Permissive"}, true, false},
	} {
		s := ReadSecuritySettings(func(k string) string { return tc.env[k] })
		if s.Enabled != tc.enabled || s.Enforce != tc.enforce {
			t.Errorf("%v: enabled %v enforce %v, want %v %v", tc.env, s.Enabled, s.Enforce, tc.enabled, tc.enforce)
		}
	}
}

func TestEnclaveDir(t *testing.T) {
	for _, tc := range []struct{ enclave, want string }{
		{"/", "/ks/enclaves"},
		{"/a", "/ks/enclaves/a"},
		{"/robot/base", "/ks/enclaves/robot/base"},
	} {
		if got := EnclaveDir("/ks", tc.enclave); got != tc.want {
			t.Errorf("EnclaveDir(%q) = %q, want %q", tc.enclave, got, tc.want)
		}
	}
}

// TestPlanSecurity covers every branch of rcl's and rmw_cyclonedds_cpp's
// decision: disabled, no keystore, no enclave directory, missing files,
// complete files, the override and the optional CRL, in both strategies.
func TestPlanSecurity(t *testing.T) {
	ks := t.TempDir()
	writeEnclave(t, filepath.Join(ks, "enclaves", "full"), allSecurityFiles()...)
	writeEnclave(t, filepath.Join(ks, "enclaves", "crl"), append(allSecurityFiles(), SecurityCRL)...)
	writeEnclave(t, filepath.Join(ks, "enclaves", "partial"), "cert.pem", "key.pem")
	writeEnclave(t, filepath.Join(ks, "enclaves"), allSecurityFiles()...) // the "/" enclave

	type want struct {
		props   bool   // security properties set
		err     string // error substring ("" = no error)
		warn    bool   // Permissive fell back
		crl     bool
		dirTail string
	}
	for _, tc := range []struct {
		name     string
		s        SecuritySettings
		enclave  string
		expected want
	}{
		{"disabled", SecuritySettings{Keystore: ks}, "/full", want{}},
		{"enforce no keystore", SecuritySettings{Enabled: true, Enforce: true}, "/full", want{err: "ROS_SECURITY_KEYSTORE is not set"}},
		{"permissive no keystore", SecuritySettings{Enabled: true}, "/full", want{warn: true}},
		{"enforce no dir", SecuritySettings{Enabled: true, Enforce: true, Keystore: ks}, "/nope", want{err: "does not exist"}},
		{"permissive no dir", SecuritySettings{Enabled: true, Keystore: ks}, "/nope", want{warn: true}},
		{"enforce partial", SecuritySettings{Enabled: true, Enforce: true, Keystore: ks}, "/partial", want{err: "missing identity_ca.cert.pem, permissions_ca.cert.pem, governance.p7s, permissions.p7s"}},
		{"permissive partial", SecuritySettings{Enabled: true, Keystore: ks}, "/partial", want{warn: true}},
		{"enforce full", SecuritySettings{Enabled: true, Enforce: true, Keystore: ks}, "/full", want{props: true, dirTail: "enclaves/full"}},
		{"permissive full", SecuritySettings{Enabled: true, Keystore: ks}, "/full", want{props: true, dirTail: "enclaves/full"}},
		{"root enclave", SecuritySettings{Enabled: true, Enforce: true, Keystore: ks}, "/", want{props: true, dirTail: "enclaves"}},
		{"override wins", SecuritySettings{Enabled: true, Enforce: true, Keystore: ks, Override: "/full"}, "/nope", want{props: true, dirTail: "enclaves/full"}},
		{"override missing", SecuritySettings{Enabled: true, Enforce: true, Keystore: ks, Override: "/nope"}, "/full", want{err: "enclave /nope"}},
		{"crl", SecuritySettings{Enabled: true, Enforce: true, Keystore: ks}, "/crl", want{props: true, crl: true, dirTail: "enclaves/crl"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := planSecurity(tc.s, tc.enclave)
			w := tc.expected
			if w.err != "" {
				var se *SecurityError
				if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), w.err) {
					t.Fatalf("err = %v, want a *SecurityError with %q", err, w.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (p.props != nil) != w.props || (p.warn != "") != w.warn {
				t.Fatalf("props %v warn %q, want props %v warn %v", p.props != nil, p.warn, w.props, w.warn)
			}
			if !w.props {
				return
			}
			if !strings.HasSuffix(p.dir, w.dirTail) {
				t.Errorf("dir %q, want .../%s", p.dir, w.dirTail)
			}
			got := map[string]string{}
			for _, pr := range p.props {
				got[pr.Name] = pr.Value
			}
			for name, file := range map[string]string{
				"dds.sec.auth.identity_ca":          "identity_ca.cert.pem",
				"dds.sec.auth.identity_certificate": "cert.pem",
				"dds.sec.auth.private_key":          "key.pem",
				"dds.sec.access.permissions_ca":     "permissions_ca.cert.pem",
				"dds.sec.access.governance":         "governance.p7s",
				"dds.sec.access.permissions":        "permissions.p7s",
			} {
				if want := "file:" + filepath.Join(p.dir, file); got[name] != want {
					t.Errorf("%s = %q, want %q", name, got[name], want)
				}
			}
			for name, v := range map[string]string{
				"dds.sec.auth.library.path":   "dds_security_auth",
				"dds.sec.crypto.library.path": "dds_security_crypto",
				"dds.sec.access.library.path": "dds_security_ac",
				"dds.sec.access.library.init": "init_access_control",
			} {
				if got[name] != v {
					t.Errorf("%s = %q, want %q", name, got[name], v)
				}
			}
			if _, ok := got["org.eclipse.cyclonedds.sec.auth.crl"]; ok != w.crl {
				t.Errorf("crl property present %v, want %v", ok, w.crl)
			}
		})
	}
}
