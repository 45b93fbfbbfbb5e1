// Package sros2 makes and reads SROS2 keystores: the layout `ros2 security`
// creates (public/, private/, enclaves/), the identity and permissions CA,
// one enclave directory per identity with the six files DDS Security reads
// (see ros.SecurityFiles), the governance and permissions documents, and
// the policy XML they are generated from (docs/security.md#sros2).
//
// Keys and certificates are made with Go's standard crypto (ECDSA P-256
// and SHA-256, as DDS Security's builtin plugins call for); documents are
// signed as S/MIME (PKCS#7, detached, text/plain) by the openssl command,
// which Debian ships; nothing here implements cryptography itself.
package sros2

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
)

// Layout of a keystore, as `ros2 security create_keystore` lays it out.
const (
	DirPublic   = "public"
	DirPrivate  = "private"
	DirEnclaves = "enclaves"

	// CACommonName is the subject of the CA sros2 creates.
	CACommonName = "sros2CA"
)

// caValidity and the day of slack before now are those of sros2's
// certificates (ten years, valid from a day ago).
const caValidity = 3650 * 24 * time.Hour

// Keystore is a keystore directory.
type Keystore struct {
	Root string
	// DomainID is written into the governance and permissions documents
	// this Keystore creates (sros2 takes ROS_DOMAIN_ID, default 0).
	DomainID uint32
	// Now, when set, replaces time.Now (tests).
	Now func() time.Time
}

func (k *Keystore) now() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}

func (k *Keystore) path(parts ...string) string {
	return filepath.Join(append([]string{k.Root}, parts...)...)
}

// MaxSecureDomainID is the largest domain id a DDS Security governance
// document can name: the OMG governance schema bounds DomainId at 230, and
// Cyclone's access-control plugin refuses a governance naming 231 or 232
// (ROS 2 domains that are fine without security).
const MaxSecureDomainID = 230

// DomainIDFromEnv returns ROS_DOMAIN_ID as sros2 uses it (unset: 0).
func DomainIDFromEnv(getenv func(string) string) (uint32, error) {
	v := strings.TrimSpace(getenv("ROS_DOMAIN_ID"))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil || n > ros.MaxDomainID {
		return 0, fmt.Errorf("ROS_DOMAIN_ID %q: not a domain id (0..%d)", v, ros.MaxDomainID)
	}
	return uint32(n), nil
}

// Valid reports whether the keystore has what sros2's is_valid_keystore
// asks for: both CA certificates and keys and the signed governance.
func (k *Keystore) Valid() bool {
	for _, p := range []string{
		k.path(DirPublic, "permissions_ca.cert.pem"), k.path(DirPublic, "identity_ca.cert.pem"),
		k.path(DirPrivate, "permissions_ca.key.pem"), k.path(DirPrivate, "identity_ca.key.pem"),
		k.path(DirEnclaves, "governance.p7s"),
	} {
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// Create makes the keystore as `ros2 security create_keystore` does: the
// directories, one CA (ca.cert.pem, ca.key.pem) that serves as identity CA
// and permissions CA (symbolic links), the governance document and its
// signed form. An existing valid keystore is an error.
func (k *Keystore) Create() error {
	if k.Valid() {
		return fmt.Errorf("sros2: keystore %s already exists", k.Root)
	}
	if k.DomainID > MaxSecureDomainID {
		return fmt.Errorf("sros2: create keystore: domain %d: DDS Security governance covers domain ids 0..%d only "+
			"(the OMG schema's limit: Cyclone refuses such a governance as \"Can not parse governance file\"); "+
			"pick ROS_DOMAIN_ID %d or lower", k.DomainID, MaxSecureDomainID, MaxSecureDomainID)
	}
	for _, d := range []string{k.Root, k.path(DirPublic), k.path(DirPrivate), k.path(DirEnclaves)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("sros2: create keystore: %w", err)
		}
	}
	if err := os.Chmod(k.path(DirPrivate), 0o700); err != nil {
		return fmt.Errorf("sros2: create keystore: %w", err)
	}
	caCert, caKey := k.path(DirPublic, "ca.cert.pem"), k.path(DirPrivate, "ca.key.pem")
	if !regular(k.path(DirPublic, "identity_ca.cert.pem")) || !regular(k.path(DirPrivate, "identity_ca.key.pem")) ||
		!regular(k.path(DirPublic, "permissions_ca.cert.pem")) || !regular(k.path(DirPrivate, "permissions_ca.key.pem")) {
		name := pkix.Name{CommonName: CACommonName}
		certPEM, keyPEM, err := newCert(name, nil, nil, true, k.now())
		if err != nil {
			return err
		}
		if err := writeFile(caKey, keyPEM, 0o600); err != nil {
			return err
		}
		if err := writeFile(caCert, certPEM, 0o644); err != nil {
			return err
		}
		for _, l := range []struct{ dir, name, target string }{
			{DirPublic, "identity_ca.cert.pem", "ca.cert.pem"},
			{DirPublic, "permissions_ca.cert.pem", "ca.cert.pem"},
			{DirPrivate, "identity_ca.key.pem", "ca.key.pem"},
			{DirPrivate, "permissions_ca.key.pem", "ca.key.pem"},
		} {
			if err := symlink(l.target, k.path(l.dir, l.name)); err != nil {
				return err
			}
		}
	}
	gov := k.path(DirEnclaves, "governance.xml")
	if !regular(gov) {
		if err := writeFile(gov, GovernanceXML(k.DomainID), 0o644); err != nil {
			return err
		}
	}
	signed := k.path(DirEnclaves, "governance.p7s")
	if !regular(signed) {
		return Sign(k.path(DirPublic, "permissions_ca.cert.pem"), k.path(DirPrivate, "permissions_ca.key.pem"), gov, signed)
	}
	return nil
}

// ValidateEnclaveName checks an enclave name as sros2 does (a valid ROS
// namespace: absolute, tokens of letters, digits and underscores, not
// starting with a digit, no empty token, no trailing slash except "/").
func ValidateEnclaveName(name string) error {
	if name == "/" {
		return nil
	}
	if !strings.HasPrefix(name, "/") {
		return fmt.Errorf("enclave %q: must be absolute (start with /)", name)
	}
	for _, tok := range strings.Split(name[1:], "/") {
		if tok == "" {
			return fmt.Errorf("enclave %q: empty token (repeated or trailing /)", name)
		}
		if tok[0] >= '0' && tok[0] <= '9' {
			return fmt.Errorf("enclave %q: token %q starts with a digit", name, tok)
		}
		for _, r := range tok {
			if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return fmt.Errorf("enclave %q: token %q has %q (only letters, digits and _)", name, tok, r)
			}
		}
	}
	return nil
}

// EnclaveDir returns an enclave's directory in the keystore.
func (k *Keystore) EnclaveDir(name string) string { return ros.EnclaveDir(k.Root, name) }

// CreateEnclave makes an enclave as `ros2 security create_enclave` does:
// links to the CA certificates and the governance, a key and a certificate
// (subject CN=<name>) signed by the identity CA unless both exist, and
// permissions that allow everything (the default policy), signed by the
// permissions CA.
func (k *Keystore) CreateEnclave(name string) error {
	if !k.Valid() {
		return fmt.Errorf("sros2: %s is not a valid keystore (create it with create_keystore)", k.Root)
	}
	if err := ValidateEnclaveName(name); err != nil {
		return fmt.Errorf("sros2: %w", err)
	}
	dir := k.EnclaveDir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("sros2: create enclave: %w", err)
	}
	for _, l := range []struct{ name, target string }{
		{"identity_ca.cert.pem", k.path(DirPublic, "identity_ca.cert.pem")},
		{"permissions_ca.cert.pem", k.path(DirPublic, "permissions_ca.cert.pem")},
		{"governance.p7s", k.path(DirEnclaves, "governance.p7s")},
	} {
		rel, err := filepath.Rel(dir, l.target)
		if err != nil {
			return fmt.Errorf("sros2: create enclave: %w", err)
		}
		if err := symlink(rel, filepath.Join(dir, l.name)); err != nil {
			return err
		}
	}
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if !regular(cert) || !regular(key) {
		caCert, caKey, err := loadCA(k.path(DirPublic, "identity_ca.cert.pem"), k.path(DirPrivate, "identity_ca.key.pem"))
		if err != nil {
			return err
		}
		certPEM, keyPEM, err := newCert(pkix.Name{CommonName: name}, caCert, caKey, false, k.now())
		if err != nil {
			return err
		}
		if err := writeFile(key, keyPEM, 0o600); err != nil {
			return err
		}
		if err := writeFile(cert, certPEM, 0o644); err != nil {
			return err
		}
	}
	return k.CreatePermission(name, DefaultPolicy(name))
}

// CreatePermission writes the enclave's permissions.xml from the policy's
// enclave of that name (as `ros2 security create_permission`), validity
// taken from the enclave's certificate, and signs it into permissions.p7s.
func (k *Keystore) CreatePermission(name string, policy *Policy) error {
	dir := k.EnclaveDir(name)
	certPEM, err := os.ReadFile(filepath.Join(dir, "cert.pem"))
	if err != nil {
		return fmt.Errorf("sros2: create permission: enclave %s has no certificate (create_enclave first): %w", name, err)
	}
	cert, err := parseCert(certPEM)
	if err != nil {
		return fmt.Errorf("sros2: create permission: %s: %w", filepath.Join(dir, "cert.pem"), err)
	}
	doc, err := policy.PermissionsXML(name, k.DomainID, cert.NotBefore, cert.NotAfter)
	if err != nil {
		return fmt.Errorf("sros2: create permission: %w", err)
	}
	xmlPath := filepath.Join(dir, "permissions.xml")
	if err := writeFile(xmlPath, doc, 0o644); err != nil {
		return err
	}
	return Sign(k.path(DirPublic, "permissions_ca.cert.pem"), k.path(DirPrivate, "permissions_ca.key.pem"), xmlPath, filepath.Join(dir, "permissions.p7s"))
}

// Enclaves lists the keystore's enclaves as `ros2 security list_enclaves`
// does: every directory under enclaves/ that holds a key.pem, sorted.
func (k *Keystore) Enclaves() ([]string, error) {
	if !k.Valid() {
		return nil, fmt.Errorf("sros2: %s is not a valid keystore", k.Root)
	}
	root := k.path(DirEnclaves)
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == "key.pem" && !d.IsDir() {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			if rel == "." {
				out = append(out, "/")
			} else {
				out = append(out, "/"+filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sros2: list enclaves: %w", err)
	}
	sort.Strings(out)
	return out, nil
}

// Sign signs the file in as S/MIME into out with the certificate and key
// (PEM files), detached and with text/plain MIME headers, as sros2 signs
// governance and permissions (PKCS7_DETACHED | PKCS7_TEXT), using the
// openssl command.
func Sign(certFile, keyFile, in, out string) error {
	// openssl writes beside out and the result is renamed over it: a
	// process starting meanwhile (a launch reading the keystore as it is
	// made) never sees a half-written file.
	tmp := fmt.Sprintf("%s.tmp-%d", out, os.Getpid())
	cmd := exec.Command("openssl", "smime", "-sign", "-text", "-md", "sha256",
		"-in", in, "-out", tmp, "-signer", certFile, "-inkey", keyFile)
	if msg, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		if errors.Is(err, exec.ErrNotFound) {
			return fmt.Errorf("sros2: signing %s needs the openssl command (Debian package openssl): %w", in, err)
		}
		return fmt.Errorf("sros2: openssl smime -sign %s: %v: %s", in, err, strings.TrimSpace(string(msg)))
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("sros2: %w", err)
	}
	return nil
}

// Verify checks an S/MIME signed file against a CA certificate with the
// openssl command, as the DDS Security access-control plugin checks
// governance.p7s and permissions.p7s, and returns the signed content.
func Verify(caFile, signed string) ([]byte, error) {
	cmd := exec.Command("openssl", "smime", "-verify", "-CAfile", caFile, "-in", signed, "-text")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("sros2: %s does not verify against %s: %v: %s", signed, caFile, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// newCert makes an ECDSA P-256 key and a certificate for subject, signed by
// caKey as caCert (self-signed when caCert is nil), valid from a day before
// now for ten years; a CA has BasicConstraints CA:TRUE, pathlen 1
// (critical), a leaf CA:FALSE. Both are returned PEM encoded (the key as
// PKCS#8).
func newCert(subject pkix.Name, caCert *x509.Certificate, caKey *ecdsa.PrivateKey, isCA bool, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("sros2: key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 159))
	if err != nil {
		return nil, nil, fmt.Errorf("sros2: serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               subject,
		NotBefore:             now.Add(-24 * time.Hour).UTC().Truncate(time.Second),
		NotAfter:              now.Add(caValidity).UTC().Truncate(time.Second),
		BasicConstraintsValid: true,
		IsCA:                  isCA,
		SignatureAlgorithm:    x509.ECDSAWithSHA256,
	}
	if isCA {
		tmpl.MaxPathLen = 1
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	}
	parent, signer := tmpl, key
	if caCert != nil {
		parent, signer = caCert, caKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return nil, nil, fmt.Errorf("sros2: certificate for %s: %w", subject.CommonName, err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("sros2: key for %s: %w", subject.CommonName, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}), nil
}

// parseCert decodes the first PEM certificate of b.
func parseCert(b []byte) (*x509.Certificate, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(blk.Bytes)
}

// loadCA reads a CA certificate and its ECDSA key (PKCS#8 or SEC 1 PEM).
func loadCA(certFile, keyFile string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	cb, err := os.ReadFile(certFile)
	if err != nil {
		return nil, nil, fmt.Errorf("sros2: CA certificate: %w", err)
	}
	cert, err := parseCert(cb)
	if err != nil {
		return nil, nil, fmt.Errorf("sros2: CA certificate %s: %w", certFile, err)
	}
	kb, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("sros2: CA key: %w", err)
	}
	blk, _ := pem.Decode(kb)
	if blk == nil {
		return nil, nil, fmt.Errorf("sros2: CA key %s: no PEM block", keyFile)
	}
	var key any
	switch blk.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(blk.Bytes)
	default:
		err = fmt.Errorf("PEM block %q", blk.Type)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("sros2: CA key %s: %w", keyFile, err)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok {
		return nil, nil, fmt.Errorf("sros2: CA key %s: not an ECDSA key", keyFile)
	}
	return cert, ec, nil
}

func regular(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// writeFile writes p through a temporary file renamed over it, so that
// a reader never sees it half written.
func writeFile(p string, b []byte, mode os.FileMode) error {
	tmp := fmt.Sprintf("%s.tmp-%d", p, os.Getpid())
	if err := os.WriteFile(tmp, b, mode); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("sros2: %w", err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("sros2: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("sros2: %w", err)
	}
	return nil
}

// symlink makes link point at target unless link exists already.
func symlink(target, link string) error {
	if _, err := os.Lstat(link); err == nil {
		return nil
	}
	if err := os.Symlink(target, link); err != nil {
		return fmt.Errorf("sros2: %w", err)
	}
	return nil
}
