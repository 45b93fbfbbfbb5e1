package rosbridge

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The bridge's self-signed certificate is made once under ROS_HOME, with
// a private key only its user can read, and reused while it is valid and
// names the hosts; a new host, a near expiry or a key replaced by a link
// makes a new one. A given certfile/keyfile pair is used as it is.
func TestServerCertificate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "foxglove_bridge")
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	hosts := []string{"localhost", "127.0.0.1", "::1", "robot", "10.0.0.7"}

	first, path, created, err := serverCertificate("", "", dir, hosts, now)
	if err != nil || !created || path != filepath.Join(dir, "cert.pem") {
		t.Fatalf("first start: created %v path %s err %v, want a new certificate in %s", created, path, err, dir)
	}
	leaf, err := x509.ParseCertificate(first.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		if err := leaf.VerifyHostname(h); err != nil {
			t.Errorf("certificate does not name %s: %v", h, err)
		}
	}
	if leaf.VerifyHostname("evil.example") == nil {
		t.Error("certificate names evil.example")
	}
	for name, want := range map[string]os.FileMode{"key.pem": 0o600, "cert.pem": 0o644, ".": 0o700} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", name, fi.Mode().Perm(), err, want)
		}
	}

	again, _, created, err := serverCertificate("", "", dir, hosts[:3], now.Add(24*time.Hour))
	if err != nil || created || fingerprint(again) != fingerprint(first) {
		t.Errorf("second start: created %v err %v, want the same certificate", created, err)
	}
	for _, tc := range []struct {
		name  string
		hosts []string
		at    time.Time
	}{
		{"a new host", append(hosts, "10.0.0.8"), now},
		{"six days before expiry", hosts, now.Add(359 * 24 * time.Hour)},
	} {
		c, _, created, err := serverCertificate("", "", dir, tc.hosts, tc.at)
		if err != nil || !created || fingerprint(c) == fingerprint(first) {
			t.Errorf("%s: created %v err %v, want a new certificate", tc.name, created, err)
		}
	}

	// A key replaced by a link (to a file someone else controls) is not used.
	other := filepath.Join(t.TempDir(), "key.pem")
	data, _ := os.ReadFile(filepath.Join(dir, "key.pem"))
	if err := os.WriteFile(other, data, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "key.pem"))
	if err := os.Symlink(other, filepath.Join(dir, "key.pem")); err != nil {
		t.Fatal(err)
	}
	if _, _, created, err := serverCertificate("", "", dir, hosts, now); err != nil || !created {
		t.Errorf("key is a link: created %v err %v, want a new certificate", created, err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "key.pem")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("key.pem after: %v %v, want a regular file", fi.Mode(), err)
	}

	// certfile/keyfile: both or neither; a pair that loads is used as is.
	given, path, created, err := serverCertificate(filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), t.TempDir(), hosts, now)
	if err != nil || created || path != filepath.Join(dir, "cert.pem") || len(given.Certificate) == 0 {
		t.Errorf("certfile/keyfile: path %s created %v err %v", path, created, err)
	}
	for _, tc := range [][2]string{{filepath.Join(dir, "cert.pem"), ""}, {"", filepath.Join(dir, "key.pem")}} {
		if _, _, _, err := serverCertificate(tc[0], tc[1], dir, hosts, now); err == nil || !strings.Contains(err.Error(), "both or neither") {
			t.Errorf("certfile %q keyfile %q: %v, want both or neither", tc[0], tc[1], err)
		}
	}
	if _, _, _, err := serverCertificate(filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem"), dir, hosts, now); err == nil {
		t.Error("swapped certfile/keyfile: no error")
	}
}

func TestCertHosts(t *testing.T) {
	for _, tc := range []struct {
		address string
		want    []string
	}{
		{"127.0.0.1", []string{"localhost", "127.0.0.1", "::1"}},
		{"192.168.1.20", []string{"192.168.1.20"}},
		{"robot.lan", []string{"robot.lan"}},
	} {
		got := strings.Join(certHosts(tc.address), " ")
		for _, w := range tc.want {
			if !strings.Contains(" "+got+" ", " "+w+" ") {
				t.Errorf("certHosts(%q) = %s, want %s in it", tc.address, got, w)
			}
		}
	}
}
