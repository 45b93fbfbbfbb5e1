package sros2

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"sort"
	"strings"
	"time"
)

// PolicyVersion is the version of the policy format sros2 writes and reads.
const PolicyVersion = "0.2.0"

// Policy is an SROS2 policy document (sros2's policy.xsd): per enclave,
// per node profile, which topics it may publish and subscribe, which
// services it may request and reply to, which actions it may call and
// execute. XInclude elements are not expanded.
type Policy struct {
	XMLName  xml.Name        `xml:"policy"`
	Version  string          `xml:"version,attr"`
	Enclaves []PolicyEnclave `xml:"enclaves>enclave"`
}

// PolicyEnclave is one enclave of a policy.
type PolicyEnclave struct {
	Path     string          `xml:"path,attr"`
	Profiles []PolicyProfile `xml:"profiles>profile"`
}

// PolicyProfile is the rules of one node (ns, node) of an enclave.
type PolicyProfile struct {
	NS       string        `xml:"ns,attr"`
	Node     string        `xml:"node,attr"`
	Topics   []TopicRule   `xml:"topics,omitempty"`
	Services []ServiceRule `xml:"services,omitempty"`
	Actions  []ActionRule  `xml:"actions,omitempty"`
}

// Qualifiers of a rule.
const (
	Allow = "ALLOW"
	Deny  = "DENY"
)

// TopicRule qualifies publishing and subscribing for some topics.
type TopicRule struct {
	Publish   string   `xml:"publish,attr,omitempty"`
	Subscribe string   `xml:"subscribe,attr,omitempty"`
	Names     []string `xml:"topic"`
}

// ServiceRule qualifies requesting (a client) and replying (a server).
type ServiceRule struct {
	Request string   `xml:"request,attr,omitempty"`
	Reply   string   `xml:"reply,attr,omitempty"`
	Names   []string `xml:"service"`
}

// ActionRule qualifies calling (a client) and executing (a server).
type ActionRule struct {
	Call    string   `xml:"call,attr,omitempty"`
	Execute string   `xml:"execute,attr,omitempty"`
	Names   []string `xml:"action"`
}

// maxPolicyBytes bounds what ParsePolicy reads.
const maxPolicyBytes = 4 << 20

// ParsePolicy reads a policy document and checks it: the policy element,
// enclave paths that are valid enclave names, qualifiers ALLOW or DENY,
// non-empty names.
func ParsePolicy(b []byte) (*Policy, error) {
	if len(b) > maxPolicyBytes {
		return nil, fmt.Errorf("policy: %d bytes, more than %d", len(b), maxPolicyBytes)
	}
	var p Policy
	if err := xml.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if p.Version == "" {
		return nil, fmt.Errorf("policy: no version attribute (want %s)", PolicyVersion)
	}
	for _, e := range p.Enclaves {
		if err := ValidateEnclaveName(e.Path); err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		for _, pr := range e.Profiles {
			if pr.Node == "" || pr.NS == "" {
				return nil, fmt.Errorf("policy: enclave %s: a profile needs ns and node", e.Path)
			}
			check := func(kind string, names []string, quals ...string) error {
				for _, q := range quals {
					if q != "" && q != Allow && q != Deny {
						return fmt.Errorf("policy: enclave %s, node %s: %s qualifier %q (want ALLOW or DENY)", e.Path, pr.Node, kind, q)
					}
				}
				for _, n := range names {
					if strings.TrimSpace(n) == "" {
						return fmt.Errorf("policy: enclave %s, node %s: an empty %s name", e.Path, pr.Node, kind)
					}
				}
				return nil
			}
			for _, r := range pr.Topics {
				if err := check("topic", r.Names, r.Publish, r.Subscribe); err != nil {
					return nil, err
				}
			}
			for _, r := range pr.Services {
				if err := check("service", r.Names, r.Request, r.Reply); err != nil {
					return nil, err
				}
			}
			for _, r := range pr.Actions {
				if err := check("action", r.Names, r.Call, r.Execute); err != nil {
					return nil, err
				}
			}
		}
	}
	return &p, nil
}

// Marshal writes the policy as indented XML.
func (p *Policy) Marshal() ([]byte, error) {
	out, err := xml.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}

// Enclave returns the policy's enclave of that path.
func (p *Policy) Enclave(path string) (*PolicyEnclave, bool) {
	for i := range p.Enclaves {
		if p.Enclaves[i].Path == path {
			return &p.Enclaves[i], true
		}
	}
	return nil, false
}

// DefaultPolicy is sros2's default policy for one enclave: every topic,
// service and action allowed both ways.
func DefaultPolicy(enclave string) *Policy {
	return &Policy{Version: PolicyVersion, Enclaves: []PolicyEnclave{{
		Path: enclave,
		Profiles: []PolicyProfile{{
			NS: "/", Node: "default",
			Topics:   []TopicRule{{Publish: Allow, Subscribe: Allow, Names: []string{"/*"}}},
			Services: []ServiceRule{{Reply: Allow, Request: Allow, Names: []string{"/*"}}},
			Actions:  []ActionRule{{Call: Allow, Execute: Allow, Names: []string{"/*"}}},
		}},
	}}}
}

// resolve expands a policy name for a profile as sros2's template does:
// absolute names stay, "~x" is the node's private name, others are
// relative to the profile's namespace.
func resolve(ns, node, name string) string {
	if !strings.HasSuffix(ns, "/") {
		ns += "/"
	}
	switch {
	case strings.HasPrefix(name, "/"):
		return name
	case strings.HasPrefix(name, "~"):
		return ns + node + name[1:]
	}
	return ns + name
}

// rules collects the DDS topic expressions a qualifier grants or denies.
type rules struct{ publish, subscribe []string }

func (r *rules) add(pub, sub []string) {
	r.publish = append(r.publish, pub...)
	r.subscribe = append(r.subscribe, sub...)
}

var actionRequests = []string{"/_action/cancel_goalRequest", "/_action/get_resultRequest", "/_action/send_goalRequest"}
var actionReplies = []string{"/_action/cancel_goalReply", "/_action/get_resultReply", "/_action/send_goalReply"}
var actionTopics = []string{"/_action/feedback", "/_action/status"}

// ddsTopics maps the profile's rules of qualifier q to DDS topic names
// (rt/, rq/...Request, rr/...Reply), as sros2's permissions template does.
func (pr *PolicyProfile) ddsTopics(q string, r *rules) {
	for _, t := range pr.Topics {
		var names []string
		for _, n := range t.Names {
			names = append(names, "rt"+resolve(pr.NS, pr.Node, n))
		}
		if t.Publish == q {
			r.add(names, nil)
		}
		if t.Subscribe == q {
			r.add(nil, names)
		}
	}
	for _, s := range pr.Services {
		for _, n := range s.Names {
			fqn := resolve(pr.NS, pr.Node, n)
			if s.Request == q {
				r.add([]string{"rq" + fqn + "Request"}, []string{"rr" + fqn + "Reply"})
			}
			if s.Reply == q {
				r.add([]string{"rr" + fqn + "Reply"}, []string{"rq" + fqn + "Request"})
			}
		}
	}
	for _, a := range pr.Actions {
		for _, n := range a.Names {
			fqn := resolve(pr.NS, pr.Node, n)
			var req, rep []string
			for _, s := range actionRequests {
				req = append(req, "rq"+fqn+s)
			}
			for _, s := range actionReplies {
				rep = append(rep, "rr"+fqn+s)
			}
			for _, s := range actionTopics {
				rep = append(rep, "rt"+fqn+s)
			}
			if a.Call == q {
				r.add(req, rep)
			}
			if a.Execute == q {
				r.add(rep, req)
			}
		}
	}
}

// Permissions is a DDS Security permissions document (the subset of the
// OMG schema that SROS2 writes).
type Permissions struct {
	XMLName xml.Name `xml:"dds"`
	XSI     string   `xml:"xmlns:xsi,attr,omitempty"`
	Schema  string   `xml:"xsi:noNamespaceSchemaLocation,attr,omitempty"`
	Grants  []Grant  `xml:"permissions>grant"`
}

// Grant is the permissions of one subject.
type Grant struct {
	Name        string `xml:"name,attr"`
	SubjectName string `xml:"subject_name"`
	NotBefore   string `xml:"validity>not_before"`
	NotAfter    string `xml:"validity>not_after"`
	DenyRules   []Rule `xml:"deny_rule,omitempty"`
	AllowRules  []Rule `xml:"allow_rule,omitempty"`
	Default     string `xml:"default"`
}

// Rule is an allow or deny rule: domains, topics to publish and subscribe.
type Rule struct {
	Domains   []uint32 `xml:"domains>id"`
	Publish   []string `xml:"publish>topics>topic,omitempty"`
	Subscribe []string `xml:"subscribe>topics>topic,omitempty"`
}

// isoTime is the validity format sros2 writes (Python's isoformat of a
// naive UTC time).
const isoTime = "2006-01-02T15:04:05"

func sortedUnique(in []string) []string {
	s := append([]string(nil), in...)
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// PermissionsXML builds the permissions document of the policy's enclave
// name for domain, valid from notBefore to notAfter (the enclave
// certificate's): deny rules, then allow rules, then the non-ROS topics
// every participant of this library uses (ros_discovery_info, as sros2
// grants it, and fsmnodes_heartbeat), then default DENY.
func (p *Policy) PermissionsXML(name string, domain uint32, notBefore, notAfter time.Time) ([]byte, error) {
	e, ok := p.Enclave(name)
	if !ok {
		return nil, fmt.Errorf("the policy has no enclave %q", name)
	}
	g := Grant{
		Name: name, SubjectName: "CN=" + name,
		NotBefore: notBefore.UTC().Format(isoTime), NotAfter: notAfter.UTC().Format(isoTime),
		Default: Deny,
	}
	for _, q := range []string{Deny, Allow} {
		var r rules
		for i := range e.Profiles {
			e.Profiles[i].ddsTopics(q, &r)
		}
		if len(r.publish)+len(r.subscribe) == 0 {
			continue
		}
		rule := Rule{Domains: []uint32{domain}, Publish: sortedUnique(r.publish), Subscribe: sortedUnique(r.subscribe)}
		if q == Deny {
			g.DenyRules = append(g.DenyRules, rule)
		} else {
			g.AllowRules = append(g.AllowRules, rule)
		}
	}
	// The non-ROS DDS topics every ROS participant of this library uses:
	// ros_discovery_info (as sros2 grants it) and fsmnodes_heartbeat (the
	// action clients' heartbeats, docs/security.md#sros2).
	g.AllowRules = append(g.AllowRules, Rule{Domains: []uint32{domain},
		Publish: []string{"fsmnodes_heartbeat", "ros_discovery_info"}, Subscribe: []string{"fsmnodes_heartbeat", "ros_discovery_info"}})
	doc := Permissions{
		XSI:    "http://www.w3.org/2001/XMLSchema-instance",
		Schema: "http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd",
		Grants: []Grant{g},
	}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// ParsePermissions reads a permissions document (the XML, or the signed
// S/MIME form, whose first text/plain part is the XML) and checks that
// every grant has a subject, a validity and a default of ALLOW or DENY.
func ParsePermissions(b []byte) (*Permissions, error) {
	if len(b) > maxPolicyBytes {
		return nil, fmt.Errorf("permissions: %d bytes, more than %d", len(b), maxPolicyBytes)
	}
	var p Permissions
	if err := xml.Unmarshal(signedContent(b), &p); err != nil {
		return nil, fmt.Errorf("permissions: %w", err)
	}
	if len(p.Grants) == 0 {
		return nil, fmt.Errorf("permissions: no grant")
	}
	for _, g := range p.Grants {
		if g.SubjectName == "" {
			return nil, fmt.Errorf("permissions: grant %q has no subject_name", g.Name)
		}
		for _, t := range []string{g.NotBefore, g.NotAfter} {
			if _, err := time.Parse(isoTime, strings.TrimSpace(t)); err != nil {
				return nil, fmt.Errorf("permissions: grant %q: validity %q: %w", g.Name, t, err)
			}
		}
		if d := strings.TrimSpace(g.Default); d != Allow && d != Deny {
			return nil, fmt.Errorf("permissions: grant %q: default %q (want ALLOW or DENY)", g.Name, g.Default)
		}
	}
	return &p, nil
}

// Allows reports whether the grant lets its subject publish (or, with
// publish false, subscribe) the DDS topic on domain: the first rule whose
// domain and topic expression match decides, deny rules before allow
// rules as sros2 orders them, else the default. Topic expressions are
// fnmatch patterns (only * and ? are used by SROS2).
func (g *Grant) Allows(domain uint32, topic string, publish bool) bool {
	match := func(rs []Rule) bool {
		for _, r := range rs {
			in := false
			for _, d := range r.Domains {
				in = in || d == domain
			}
			if !in {
				continue
			}
			list := r.Subscribe
			if publish {
				list = r.Publish
			}
			for _, pat := range list {
				if globMatch(pat, topic) {
					return true
				}
			}
		}
		return false
	}
	if match(g.DenyRules) {
		return false
	}
	if match(g.AllowRules) {
		return true
	}
	return strings.TrimSpace(g.Default) == Allow
}

// globMatch matches name against pattern with * (any run, "/" included, as
// fnmatch without FNM_PATHNAME) and ? (one byte).
func globMatch(pattern, name string) bool {
	px, nx := 0, 0
	nextPx, nextNx := -1, -1
	for px < len(pattern) || nx < len(name) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				nextPx, nextNx = px, nx+1
				px++
				continue
			case '?':
				if nx < len(name) {
					px++
					nx++
					continue
				}
			default:
				if nx < len(name) && name[nx] == c {
					px++
					nx++
					continue
				}
			}
		}
		if nextPx >= 0 && nextNx <= len(name) {
			px, nx = nextPx, nextNx
			continue
		}
		return false
	}
	return true
}

// signedContent returns the first MIME part of an S/MIME signed document
// after its text/plain header (the signed XML), or b unchanged when it is
// not S/MIME. It does not check the signature: Verify does.
func signedContent(b []byte) []byte {
	if !bytes.HasPrefix(bytes.TrimSpace(b), []byte("MIME-Version:")) {
		return b
	}
	i := bytes.Index(b, []byte("Content-Type: text/plain"))
	if i < 0 {
		return b
	}
	rest := b[i:]
	j := bytes.Index(rest, []byte("\n\n"))
	k := bytes.Index(rest, []byte("\r\n\r\n"))
	switch {
	case k >= 0 && (j < 0 || k < j):
		rest = rest[k+4:]
	case j >= 0:
		rest = rest[j+2:]
	default:
		return b
	}
	if end := bytes.Index(rest, []byte("\n------")); end >= 0 {
		rest = rest[:end]
	}
	return rest
}
