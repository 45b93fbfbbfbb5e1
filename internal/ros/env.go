package ros

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// MaxDomainID is the largest domain id Cyclone accepts with the default
// RTPS port mapping.
const MaxDomainID = 232

// parseDomainID parses ROS_DOMAIN_ID like rcl does (strtoul base 0: "0x"
// hex, leading "0" octal, else decimal); empty means the default domain 0.
func parseDomainID(s string) (uint32, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, nil
	}
	t = strings.TrimPrefix(t, "+") // strtoul accepts a plus sign
	if t == "" {
		return 0, fmt.Errorf("ROS_DOMAIN_ID %q: not a number", s)
	}
	base := 10
	digits := t
	switch {
	case strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X"):
		base, digits = 16, t[2:]
	case len(t) > 1 && t[0] == '0':
		base, digits = 8, t[1:]
	}
	v, err := strconv.ParseUint(digits, base, 32)
	if err != nil {
		return 0, fmt.Errorf("ROS_DOMAIN_ID %q: not a number", s)
	}
	if v > MaxDomainID {
		return 0, fmt.Errorf("ROS_DOMAIN_ID %q: %d is above the maximum %d", s, v, MaxDomainID)
	}
	return uint32(v), nil
}

// DiscoveryRange is ROS_AUTOMATIC_DISCOVERY_RANGE.
type DiscoveryRange int

// Discovery ranges (rmw_automatic_discovery_range_t).
const (
	RangeSubnet DiscoveryRange = iota
	RangeLocalhost
	RangeOff
	RangeSystemDefault
)

// String returns the environment spelling of the range.
func (r DiscoveryRange) String() string {
	switch r {
	case RangeSubnet:
		return "SUBNET"
	case RangeLocalhost:
		return "LOCALHOST"
	case RangeOff:
		return "OFF"
	case RangeSystemDefault:
		return "SYSTEM_DEFAULT"
	}
	return "UNKNOWN"
}

// discoverySettings is what the environment says about discovery.
type discoverySettings struct {
	Range       DiscoveryRange
	StaticPeers []string
	// LocalhostOnly is Humble's ROS_LOCALHOST_ONLY=1.
	LocalhostOnly bool
	// Warnings to log (deprecated or invalid settings).
	Warnings []string
}

// readDiscoverySettings interprets ROS_LOCALHOST_ONLY,
// ROS_AUTOMATIC_DISCOVERY_RANGE and ROS_STATIC_PEERS for the distro as rcl
// does (docs/wire.md#domain-id-and-discovery-range).
func readDiscoverySettings(getenv func(string) string, distro Distro) (discoverySettings, error) {
	var s discoverySettings
	localhost := getenv("ROS_LOCALHOST_ONLY") == "1"
	if distro == Humble {
		s.LocalhostOnly = localhost
		return s, nil
	}
	switch v := getenv("ROS_AUTOMATIC_DISCOVERY_RANGE"); v {
	case "", "SUBNET":
		s.Range = RangeSubnet
	case "LOCALHOST":
		s.Range = RangeLocalhost
	case "OFF":
		s.Range = RangeOff
	case "SYSTEM_DEFAULT":
		s.Range = RangeSystemDefault
	default:
		s.Range = RangeLocalhost
		s.Warnings = append(s.Warnings, fmt.Sprintf("invalid ROS_AUTOMATIC_DISCOVERY_RANGE %q, using LOCALHOST", v))
	}
	if peers := getenv("ROS_STATIC_PEERS"); peers != "" {
		for _, p := range strings.Split(peers, ";") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			if len(p) >= 256 {
				return s, fmt.Errorf("ROS_STATIC_PEERS: peer %.20q... is longer than 255 characters", p)
			}
			s.StaticPeers = append(s.StaticPeers, p)
		}
	}
	if localhost {
		s.Warnings = append(s.Warnings, "ROS_LOCALHOST_ONLY is deprecated; using ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and no static peers")
		s.Range = RangeLocalhost
		s.StaticPeers = nil
	}
	if s.Range == RangeSystemDefault && len(s.StaticPeers) > 0 {
		s.Warnings = append(s.Warnings, "static peers are ignored with ROS_AUTOMATIC_DISCOVERY_RANGE=SYSTEM_DEFAULT")
	}
	if s.Range == RangeOff && len(s.StaticPeers) > 0 {
		s.Warnings = append(s.Warnings, "static peers are ignored with ROS_AUTOMATIC_DISCOVERY_RANGE=OFF")
	}
	return s, nil
}

// cycloneConfig builds the Cyclone configuration string exactly as
// rmw_cyclonedds_cpp's check_create_domain does: an XML fragment for the
// discovery settings (only when something must change), then
// $CYCLONEDDS_URI.
func cycloneConfig(s discoverySettings, distro Distro, cycloneURI string, pid int) string {
	var b strings.Builder
	if distro == Humble {
		if s.LocalhostOnly {
			b.WriteString(`<CycloneDDS><Domain><General><Interfaces><NetworkInterface address="127.0.0.1"/></Interfaces></General></Domain></CycloneDDS>,`)
		}
		b.WriteString(cycloneURI)
		return b.String()
	}
	var localhostPeer, staticPeers, noMulticast bool
	switch s.Range {
	case RangeSubnet:
		staticPeers = true
	case RangeLocalhost:
		localhostPeer, staticPeers, noMulticast = true, true, true
	case RangeOff:
		noMulticast = true
	}
	// As rmw_cyclonedds_cpp: the fragment is written whenever static peers
	// are taken (SUBNET and LOCALHOST), even with none given, so a Jazzy
	// process in SUBNET always has ParticipantIndex auto (well-known
	// unicast ports another host's peer list reaches), never Cyclone's
	// default none.
	if localhostPeer || staticPeers || noMulticast {
		b.WriteString("<CycloneDDS><Domain>")
		if noMulticast {
			b.WriteString("<General><AllowMulticast>false</AllowMulticast></General>")
		}
		if noMulticast && !localhostPeer && !staticPeers {
			fmt.Fprintf(&b, "<Discovery><ParticipantIndex>none</ParticipantIndex><Tag>ros_discovery_off_%d</Tag>", pid)
		} else {
			b.WriteString("<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>")
		}
		if localhostPeer || (staticPeers && len(s.StaticPeers) > 0) {
			b.WriteString("<Peers>")
			if localhostPeer {
				b.WriteString(`<Peer address="localhost"/>`)
			}
			for _, p := range s.StaticPeers {
				fmt.Fprintf(&b, `<Peer address="%s"/>`, xmlEscape(p))
			}
			b.WriteString("</Peers>")
		}
		b.WriteString("</Discovery></Domain></CycloneDDS>,")
	}
	b.WriteString(cycloneURI)
	return b.String()
}

func xmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")
	return r.Replace(s)
}

// distroFromEnv maps ROS_DISTRO to a wire dialect: "humble" is Humble,
// anything else (including unset) is Jazzy.
func distroFromEnv(v string) Distro {
	if strings.EqualFold(strings.TrimSpace(v), "humble") {
		return Humble
	}
	return Jazzy
}

// humbleLocalhostOnly reports whether the environment asks for localhost
// only with Humble's variable and none of Jazzy's.
func humbleLocalhostOnly(getenv func(string) string) bool {
	return getenv("ROS_LOCALHOST_ONLY") == "1" && getenv("ROS_AUTOMATIC_DISCOVERY_RANGE") == "" &&
		getenv("ROS_STATIC_PEERS") == ""
}

// envConfig is everything a Context takes from the environment.
type envConfig struct {
	DomainID uint32
	Distro   Distro
	// DistroSet is true when ROS_DISTRO (or the override) names a distro;
	// otherwise Distro is Jazzy and the Context follows its peers.
	DistroSet bool
	Config    string
	Warnings  []string
}

// readEnv reads the environment; a non-empty distro overrides ROS_DISTRO
// (and so decides which discovery variables apply).
func readEnv(getenv func(string) string, distro string) (envConfig, error) {
	var c envConfig
	var err error
	if c.DomainID, err = parseDomainID(getenv("ROS_DOMAIN_ID")); err != nil {
		return c, err
	}
	if distro == "" {
		distro = getenv("ROS_DISTRO")
	}
	c.Distro = distroFromEnv(distro)
	c.DistroSet = strings.TrimSpace(distro) != ""
	// The discovery variables are read as the distro reads them. Without a
	// distro (the Context follows its peers' dialect, decided only after
	// the participant exists), ROS_LOCALHOST_ONLY=1 alone is read as Humble
	// reads it: it is Humble's variable (Jazzy's are
	// ROS_AUTOMATIC_DISCOVERY_RANGE and ROS_STATIC_PEERS), and the two
	// readings do not discover each other.
	discovery := c.Distro
	if !c.DistroSet && humbleLocalhostOnly(getenv) {
		discovery = Humble
	}
	s, err := readDiscoverySettings(getenv, discovery)
	if err != nil {
		return c, err
	}
	c.Warnings = s.Warnings
	c.Config = cycloneConfig(s, discovery, getenv("CYCLONEDDS_URI"), os.Getpid())
	return c, nil
}

// DiscoveryReport is what the environment makes of discovery, as a
// process of this library (and rmw_cyclonedds_cpp) started with it would
// apply it; `fsmnodes doctor` prints it.
type DiscoveryReport struct {
	// DomainID is ROS_DOMAIN_ID (0 when unset).
	DomainID uint32
	// Distro is the dialect whose discovery variables apply; DistroSet
	// says whether ROS_DISTRO named it (unset: Jazzy's variables, and the
	// wire dialect follows the peers).
	Distro    Distro
	DistroSet bool
	// Range is ROS_AUTOMATIC_DISCOVERY_RANGE as applied (Jazzy); Humble
	// has no range: RangeSubnet, or RangeLocalhost with ROS_LOCALHOST_ONLY=1.
	Range DiscoveryRange
	// StaticPeers are ROS_STATIC_PEERS as applied (Jazzy only).
	StaticPeers []string
	// Multicast is false where the range turns multicast off (LOCALHOST,
	// OFF) or the Cyclone configuration does (AllowMulticast false).
	Multicast bool
	// CyclonePeers are the Peer addresses of $CYCLONEDDS_URI (inline XML
	// or a file:// or plain path to one).
	CyclonePeers []string
	// Config is the Cyclone configuration the process would use.
	Config string
	// Warnings are the settings' problems, as the process would log them.
	Warnings []string
}

var (
	peerAddr       = regexp.MustCompile(`<Peer\s+[^>]*address\s*=\s*"([^"]*)"`)
	multicastFalse = regexp.MustCompile(`(?i)<AllowMulticast>\s*false\s*</AllowMulticast>`)
)

// DescribeDiscovery reads the discovery settings of the environment
// (getenv, e.g. os.Getenv) as NewContext does.
func DescribeDiscovery(getenv func(string) string) (DiscoveryReport, error) {
	c, err := readEnv(getenv, "")
	if err != nil {
		return DiscoveryReport{}, err
	}
	r := DiscoveryReport{DomainID: c.DomainID, Distro: c.Distro, DistroSet: c.DistroSet, Config: c.Config, Warnings: c.Warnings}
	discovery := c.Distro
	if !c.DistroSet && humbleLocalhostOnly(getenv) {
		discovery = Humble
	}
	s, err := readDiscoverySettings(getenv, discovery)
	if err != nil {
		return r, err
	}
	r.Range, r.StaticPeers = s.Range, s.StaticPeers
	if discovery == Humble && s.LocalhostOnly {
		r.Range = RangeLocalhost
	}
	xml := c.Config
	uri := strings.TrimSpace(getenv("CYCLONEDDS_URI"))
	for _, part := range strings.Split(uri, ",") {
		part = strings.TrimSpace(part)
		if part == "" || strings.HasPrefix(part, "<") {
			continue
		}
		if b, err := os.ReadFile(strings.TrimPrefix(part, "file://")); err == nil {
			xml += string(b)
		} else {
			r.Warnings = append(r.Warnings, fmt.Sprintf("CYCLONEDDS_URI names %q, which cannot be read: %v", part, err))
		}
	}
	for _, m := range peerAddr.FindAllStringSubmatch(uri+xml, -1) {
		if m[1] != "localhost" || r.Range != RangeLocalhost {
			r.CyclonePeers = appendNew(r.CyclonePeers, m[1])
		}
	}
	// Peers the range itself added are StaticPeers, not the user's Cyclone list.
	r.CyclonePeers = without(r.CyclonePeers, r.StaticPeers)
	r.Multicast = !multicastFalse.MatchString(xml)
	return r, nil
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func without(list, drop []string) []string {
	var out []string
	for _, x := range list {
		keep := true
		for _, d := range drop {
			keep = keep && x != d
		}
		if keep {
			out = append(out, x)
		}
	}
	return out
}

// uriSetsLease reports whether $CYCLONEDDS_URI (inline XML, or files it
// names) sets Discovery/LeaseDuration.
func uriSetsLease(uri string) bool {
	for _, part := range strings.Split(uri, ",") {
		part = strings.TrimSpace(part)
		if strings.HasPrefix(part, "<") {
			if strings.Contains(part, "LeaseDuration") {
				return true
			}
			continue
		}
		if part == "" {
			continue
		}
		if b, err := os.ReadFile(strings.TrimPrefix(part, "file://")); err == nil && strings.Contains(string(b), "LeaseDuration") {
			return true
		}
	}
	return false
}
