package ros

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsmnodes/fsmnodes/internal/dds"
)

// The environment variables of ROS 2 security (rcl/security.h).
const (
	EnvSecurityEnable          = "ROS_SECURITY_ENABLE"
	EnvSecurityStrategy        = "ROS_SECURITY_STRATEGY"
	EnvSecurityKeystore        = "ROS_SECURITY_KEYSTORE"
	EnvSecurityEnclaveOverride = "ROS_SECURITY_ENCLAVE_OVERRIDE"
)

// SecurityFiles are the files of an enclave directory that DDS Security
// needs, in the order rmw_dds_common lists them, with the attribute names
// it uses; SecurityCRL is the optional certificate revocation list.
var SecurityFiles = []struct{ Attr, File string }{
	{"IDENTITY_CA", "identity_ca.cert.pem"},
	{"CERTIFICATE", "cert.pem"},
	{"PRIVATE_KEY", "key.pem"},
	{"PERMISSIONS_CA", "permissions_ca.cert.pem"},
	{"GOVERNANCE", "governance.p7s"},
	{"PERMISSIONS", "permissions.p7s"},
}

// SecurityCRL is the optional file of an enclave directory: a certificate
// revocation list of the identity CA.
const SecurityCRL = "crl.pem"

// SecuritySettings is what the environment says about DDS Security, read
// as rcl reads it (rcl_get_security_options_from_environment).
type SecuritySettings struct {
	// Enabled is ROS_SECURITY_ENABLE=true (exactly "true", as rcl).
	Enabled bool
	// Enforce is ROS_SECURITY_STRATEGY=Enforce (exactly; anything else,
	// including unset, is Permissive).
	Enforce bool
	// Keystore is ROS_SECURITY_KEYSTORE.
	Keystore string
	// Override is ROS_SECURITY_ENCLAVE_OVERRIDE: when set, the enclave
	// looked up instead of the node's --enclave.
	Override string
}

// ReadSecuritySettings reads the ROS_SECURITY_* variables through getenv.
func ReadSecuritySettings(getenv func(string) string) SecuritySettings {
	return SecuritySettings{
		Enabled:  getenv(EnvSecurityEnable) == "true",
		Enforce:  getenv(EnvSecurityStrategy) == "Enforce",
		Keystore: getenv(EnvSecurityKeystore),
		Override: getenv(EnvSecurityEnclaveOverride),
	}
}

// Strategy returns "Enforce" or "Permissive".
func (s SecuritySettings) Strategy() string {
	if s.Enforce {
		return "Enforce"
	}
	return "Permissive"
}

// EnclaveDir returns the directory of an enclave in a keystore as rcl
// looks it up (exact_match_lookup): "<keystore>/enclaves" for "/", else
// "<keystore>/enclaves/<enclave without its leading slash>".
func EnclaveDir(keystore, enclave string) string {
	dir := filepath.Join(keystore, "enclaves")
	if enclave == "/" {
		return dir
	}
	return filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(enclave, "/")))
}

// SecureRoot is rcl_get_secure_root: the enclave directory for enclave
// (or for ROS_SECURITY_ENCLAVE_OVERRIDE when set), which must exist. The
// error says why there is none.
func (s SecuritySettings) SecureRoot(enclave string) (string, error) {
	if s.Keystore == "" {
		return "", fmt.Errorf("%s is not set", EnvSecurityKeystore)
	}
	name := enclave
	if s.Override != "" {
		name = s.Override
	}
	dir := EnclaveDir(s.Keystore, name)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("SECURITY ERROR: directory '%s' does not exist", dir)
	}
	return dir, nil
}

// EnclaveFiles is rmw_dds_common's get_security_files: the "file:" URI of
// every required file of the enclave directory root (and of crl.pem when
// present), by attribute. The error lists the missing files.
func EnclaveFiles(root string) (map[string]string, error) {
	out := make(map[string]string, len(SecurityFiles)+1)
	var missing []string
	for _, f := range SecurityFiles {
		p := filepath.Join(root, f.File)
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			missing = append(missing, f.File)
			continue
		}
		out[f.Attr] = "file:" + p
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("could not find all security files in %s: missing %s", root, strings.Join(missing, ", "))
	}
	p := filepath.Join(root, SecurityCRL)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
		out["CRL"] = "file:" + p
	}
	return out, nil
}

// securityProperties are the participant QoS properties rmw_cyclonedds_cpp
// sets for the enclave files (configure_qos_for_security), in its order.
func securityProperties(files map[string]string) []dds.Property {
	props := []dds.Property{
		{Name: "dds.sec.auth.identity_ca", Value: files["IDENTITY_CA"]},
		{Name: "dds.sec.auth.identity_certificate", Value: files["CERTIFICATE"]},
		{Name: "dds.sec.auth.private_key", Value: files["PRIVATE_KEY"]},
		{Name: "dds.sec.access.permissions_ca", Value: files["PERMISSIONS_CA"]},
		{Name: "dds.sec.access.governance", Value: files["GOVERNANCE"]},
		{Name: "dds.sec.access.permissions", Value: files["PERMISSIONS"]},
		{Name: "dds.sec.auth.library.path", Value: "dds_security_auth"},
		{Name: "dds.sec.auth.library.init", Value: "init_authentication"},
		{Name: "dds.sec.auth.library.finalize", Value: "finalize_authentication"},
		{Name: "dds.sec.crypto.library.path", Value: "dds_security_crypto"},
		{Name: "dds.sec.crypto.library.init", Value: "init_crypto"},
		{Name: "dds.sec.crypto.library.finalize", Value: "finalize_crypto"},
		{Name: "dds.sec.access.library.path", Value: "dds_security_ac"},
		{Name: "dds.sec.access.library.init", Value: "init_access_control"},
		{Name: "dds.sec.access.library.finalize", Value: "finalize_access_control"},
	}
	if crl, ok := files["CRL"]; ok {
		props = append(props, dds.Property{Name: "org.eclipse.cyclonedds.sec.auth.crl", Value: crl})
	}
	return props
}

// SecurityError is NewContext's error when security was asked for with
// ROS_SECURITY_STRATEGY=Enforce and cannot be set up, or when Cyclone
// refused the enclave's files (in either strategy).
type SecurityError struct {
	Enclave string // the enclave looked up
	Dir     string // its directory, if known
	Err     error
}

// Error formats the enclave, the directory and the reason.
func (e *SecurityError) Error() string {
	if e.Dir != "" {
		return fmt.Sprintf("security: enclave %s (%s): %v", e.Enclave, e.Dir, e.Err)
	}
	return fmt.Sprintf("security: enclave %s: %v", e.Enclave, e.Err)
}

// Unwrap returns the reason.
func (e *SecurityError) Unwrap() error { return e.Err }

// securityPlan is what NewContext does about security: the properties to
// set (nil: an insecure participant), the directory they come from, and a
// line to log.
type securityPlan struct {
	props []dds.Property
	dir   string
	info  string // "Found security directory: ..." (rcl, info)
	warn  string // Permissive fell back to no security
}

// planSecurity decides as rcl_get_security_options_from_environment and
// rmw_cyclonedds_cpp's configure_qos_for_security do together:
//   - security not enabled: no security;
//   - no enclave directory: an error with Enforce, no security with
//     Permissive;
//   - a directory without all six files: likewise;
//   - all files: the security properties (whether Cyclone then accepts the
//     files is decided by the participant's creation, in both strategies).
func planSecurity(s SecuritySettings, enclave string) (securityPlan, error) {
	if !s.Enabled {
		return securityPlan{}, nil
	}
	name := enclave
	if s.Override != "" {
		name = s.Override
	}
	root, err := s.SecureRoot(enclave)
	if err != nil {
		if s.Enforce {
			return securityPlan{}, &SecurityError{Enclave: name, Err: fmt.Errorf("%w (%s=Enforce)", err, EnvSecurityStrategy)}
		}
		return securityPlan{warn: fmt.Sprintf("security is enabled but %v: running WITHOUT security (%s=Permissive)", err, EnvSecurityStrategy)}, nil
	}
	files, err := EnclaveFiles(root)
	if err != nil {
		if s.Enforce {
			return securityPlan{}, &SecurityError{Enclave: name, Dir: root, Err: fmt.Errorf("%w (%s=Enforce)", err, EnvSecurityStrategy)}
		}
		return securityPlan{dir: "", info: "Found security directory: " + root,
			warn: fmt.Sprintf("%v: running WITHOUT security (%s=Permissive)", err, EnvSecurityStrategy)}, nil
	}
	return securityPlan{props: securityProperties(files), dir: root, info: "Found security directory: " + root}, nil
}
