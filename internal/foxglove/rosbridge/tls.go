package rosbridge

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Names of the self-signed certificate the bridge keeps in its
// directory under ROS_HOME when no certfile/keyfile is given.
const (
	selfCertName = "cert.pem"
	selfKeyName  = "key.pem"
	// selfCertLifetime is how long a generated certificate is valid; it is
	// replaced when less than selfCertRenew of it is left.
	selfCertLifetime = 365 * 24 * time.Hour
	selfCertRenew    = 7 * 24 * time.Hour
)

// certDir is where a generated certificate is kept: the foxglove_bridge
// folder of the ROS home directory ($ROS_HOME, default ~/.ros, as rcl).
func certDir(getenv func(string) string) (string, error) {
	home := getenv("ROS_HOME")
	if home == "" {
		h := getenv("HOME")
		if h == "" {
			var err error
			if h, err = os.UserHomeDir(); err != nil {
				return "", fmt.Errorf("finding the ROS home directory for the TLS certificate: %w", err)
			}
		}
		home = filepath.Join(h, ".ros")
	}
	return filepath.Join(home, "foxglove_bridge"), nil
}

// serverCertificate returns the certificate the bridge serves TLS with:
// the pair certFile/keyFile when given (both or neither), else a
// self-signed one kept in dir, made on first use and made again when it
// expires soon or does not name every one of hosts. created reports a new
// one. The key file is written with mode 0600 in a 0700 folder; a key or
// certificate that is not a regular file (a symbolic link) is refused.
func serverCertificate(certFile, keyFile, dir string, hosts []string, now time.Time) (cert tls.Certificate, path string, created bool, err error) {
	if certFile != "" || keyFile != "" {
		if certFile == "" || keyFile == "" {
			return tls.Certificate{}, "", false, errors.New("parameters certfile and keyfile: give both or neither")
		}
		cert, err = tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return tls.Certificate{}, "", false, fmt.Errorf("parameters certfile and keyfile: %w", err)
		}
		return cert, certFile, false, nil
	}
	certPath, keyPath := filepath.Join(dir, selfCertName), filepath.Join(dir, selfKeyName)
	if cert, ok := reuseCertificate(certPath, keyPath, hosts, now); ok {
		return cert, certPath, false, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return tls.Certificate{}, "", false, fmt.Errorf("TLS certificate folder: %w", err)
	}
	certPEM, keyPEM, err := selfSigned(hosts, now)
	if err != nil {
		return tls.Certificate{}, "", false, err
	}
	if err := writeFileAtomic(dir, selfKeyName, keyPEM, 0o600); err != nil {
		return tls.Certificate{}, "", false, err
	}
	if err := writeFileAtomic(dir, selfCertName, certPEM, 0o644); err != nil {
		return tls.Certificate{}, "", false, err
	}
	cert, err = tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, "", false, fmt.Errorf("generated TLS certificate: %w", err)
	}
	return cert, certPath, true, nil
}

// reuseCertificate loads a kept certificate if both files are regular
// files, the pair matches, it stays valid for selfCertRenew and it names
// every host.
func reuseCertificate(certPath, keyPath string, hosts []string, now time.Time) (tls.Certificate, bool) {
	for _, p := range []string{certPath, keyPath} {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			return tls.Certificate{}, false
		}
	}
	cert, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil || len(cert.Certificate) == 0 {
		return tls.Certificate{}, false
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil || now.Before(leaf.NotBefore) || now.Add(selfCertRenew).After(leaf.NotAfter) {
		return tls.Certificate{}, false
	}
	for _, h := range hosts {
		if leaf.VerifyHostname(h) != nil {
			return tls.Certificate{}, false
		}
	}
	cert.Leaf = leaf
	return cert, true
}

// selfSigned makes a P-256 certificate for hosts (names and IP
// addresses), valid from an hour before now for selfCertLifetime.
func selfSigned(hosts []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating a TLS key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, fmt.Errorf("generating a certificate serial number: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "fsmnodes foxglove_bridge", Organization: []string{"fsmnodes"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(selfCertLifetime),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("making the TLS certificate: %w", err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the TLS key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), nil
}

// writeFileAtomic writes data to dir/name through a new temporary file
// (created exclusively, so never through a link) renamed over it.
func writeFileAtomic(dir, name string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(dir, name), err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if err := f.Chmod(mode); werr == nil {
		werr = err
	}
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Rename(tmp, filepath.Join(dir, name))
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", filepath.Join(dir, name), werr)
	}
	return nil
}

// certHosts lists the names a certificate for a bridge on address must
// carry: loopback, this machine's host name, and the address itself, or
// every interface address when it is unspecified (0.0.0.0, ::).
func certHosts(address string) []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if h, err := os.Hostname(); err == nil && h != "" {
		hosts = append(hosts, strings.ToLower(h))
	}
	ip := net.ParseIP(address)
	switch {
	case address == "" || (ip != nil && ip.IsUnspecified()):
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
					hosts = append(hosts, n.IP.String())
				}
			}
		}
	default:
		hosts = append(hosts, address)
	}
	out := hosts[:0]
	seen := map[string]bool{}
	for _, h := range hosts {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

// fingerprint is the SHA-256 fingerprint of a certificate as browsers
// show it (upper-case hex pairs joined by colons).
func fingerprint(cert tls.Certificate) string {
	if len(cert.Certificate) == 0 {
		return ""
	}
	sum := sha256.Sum256(cert.Certificate[0])
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(parts, ":")
}
