package sros2

import (
	"encoding/xml"
	"fmt"
	"strings"
)

// Governance is a DDS Security governance document (the subset of the OMG
// schema that SROS2 writes): per domain rule, whether unauthenticated
// participants are let in, and how discovery, liveliness, RTPS messages
// and each topic's data are protected.
type Governance struct {
	XMLName xml.Name     `xml:"dds"`
	XSI     string       `xml:"xmlns:xsi,attr,omitempty"`
	Schema  string       `xml:"xsi:noNamespaceSchemaLocation,attr,omitempty"`
	Rules   []DomainRule `xml:"domain_access_rules>domain_rule"`
}

// DomainRule is the governance of some domains.
type DomainRule struct {
	Domains                 []uint32      `xml:"domains>id"`
	AllowUnauthenticated    bool          `xml:"allow_unauthenticated_participants"`
	EnableJoinAccessControl bool          `xml:"enable_join_access_control"`
	DiscoveryProtection     string        `xml:"discovery_protection_kind"`
	LivelinessProtection    string        `xml:"liveliness_protection_kind"`
	RTPSProtection          string        `xml:"rtps_protection_kind"`
	TopicRules              []TopicAccess `xml:"topic_access_rules>topic_rule"`
}

// TopicAccess is the governance of the topics matching an expression.
type TopicAccess struct {
	Expression                 string `xml:"topic_expression"`
	EnableDiscoveryProtection  bool   `xml:"enable_discovery_protection"`
	EnableLivelinessProtection bool   `xml:"enable_liveliness_protection"`
	EnableReadAccessControl    bool   `xml:"enable_read_access_control"`
	EnableWriteAccessControl   bool   `xml:"enable_write_access_control"`
	MetadataProtection         string `xml:"metadata_protection_kind"`
	DataProtection             string `xml:"data_protection_kind"`
}

// protectionKinds are the values of the *_protection_kind elements.
var protectionKinds = map[string]bool{
	"NONE": true, "SIGN": true, "ENCRYPT": true,
	"SIGN_WITH_ORIGIN_AUTHENTICATION": true, "ENCRYPT_WITH_ORIGIN_AUTHENTICATION": true,
}

// DefaultGovernance is the governance sros2 writes for a keystore: only
// authenticated participants join the domain, discovery and liveliness
// are encrypted, RTPS messages signed, and every topic access-controlled
// both ways with its data and metadata encrypted.
func DefaultGovernance(domain uint32) *Governance {
	return &Governance{
		XSI:    "http://www.w3.org/2001/XMLSchema-instance",
		Schema: "http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd",
		Rules: []DomainRule{{
			Domains:                 []uint32{domain},
			AllowUnauthenticated:    false,
			EnableJoinAccessControl: true,
			DiscoveryProtection:     "ENCRYPT",
			LivelinessProtection:    "ENCRYPT",
			RTPSProtection:          "SIGN",
			TopicRules: []TopicAccess{{
				Expression:                 "*",
				EnableDiscoveryProtection:  true,
				EnableLivelinessProtection: true,
				EnableReadAccessControl:    true,
				EnableWriteAccessControl:   true,
				MetadataProtection:         "ENCRYPT",
				DataProtection:             "ENCRYPT",
			}},
		}},
	}
}

// GovernanceXML is DefaultGovernance(domain) as a document.
func GovernanceXML(domain uint32) []byte {
	out, err := xml.MarshalIndent(DefaultGovernance(domain), "", "  ")
	if err != nil {
		panic(err) // a fixed document of plain fields always marshals
	}
	return append([]byte(xml.Header), append(out, '\n')...)
}

// ParseGovernance reads a governance document (the XML or its signed
// S/MIME form) and checks its protection kinds and that it has rules.
func ParseGovernance(b []byte) (*Governance, error) {
	if len(b) > maxPolicyBytes {
		return nil, fmt.Errorf("governance: %d bytes, more than %d", len(b), maxPolicyBytes)
	}
	var g Governance
	if err := xml.Unmarshal(signedContent(b), &g); err != nil {
		return nil, fmt.Errorf("governance: %w", err)
	}
	if len(g.Rules) == 0 {
		return nil, fmt.Errorf("governance: no domain_rule")
	}
	for i, r := range g.Rules {
		if len(r.Domains) == 0 {
			return nil, fmt.Errorf("governance: domain_rule %d has no domain id", i+1)
		}
		kinds := []string{r.DiscoveryProtection, r.LivelinessProtection, r.RTPSProtection}
		for _, t := range r.TopicRules {
			kinds = append(kinds, t.MetadataProtection, t.DataProtection)
		}
		for _, k := range kinds {
			if !protectionKinds[strings.TrimSpace(k)] {
				return nil, fmt.Errorf("governance: domain_rule %d: protection kind %q", i+1, k)
			}
		}
	}
	return &g, nil
}

// Covers reports whether a rule of the governance names domain.
func (g *Governance) Covers(domain uint32) bool {
	for _, r := range g.Rules {
		for _, d := range r.Domains {
			if d == domain {
				return true
			}
		}
	}
	return false
}
