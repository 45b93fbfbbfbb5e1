package dds

import (
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// TestNoSecureBesideInsecure: a secured participant on a domain that has
// an insecure participant in this process is refused with an error before
// Cyclone is asked (Cyclone 0.10 crashed the process), and once the
// insecure one is closed the domain is free again.
func TestNoSecureBesideInsecure(t *testing.T) {
	domain := uint32(testenv.Domain(t))
	plain, err := NewParticipant(domain, loopbackConfig, []byte("enclave=/;"))
	if err != nil {
		t.Fatal(err)
	}
	props := []Property{{Name: "dds.sec.auth.identity_ca", Value: "file:/nonexistent"}}
	_, err = NewParticipantWithProperties(domain, loopbackConfig, []byte("enclave=/;"), props)
	if err == nil || !strings.Contains(err.Error(), "insecure participant") {
		t.Fatalf("a secure participant beside an insecure one: %v", err)
	}
	// Another insecure one is fine.
	second := newTestParticipant(t, domain)
	_ = second
	if err := plain.Close(); err != nil {
		t.Fatal(err)
	}
	if securedBy(nil) || !securedBy(props) {
		t.Error("securedBy")
	}
}
