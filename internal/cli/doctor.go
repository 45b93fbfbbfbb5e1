package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsmnodes/fsmnodes/internal/ros"
)

func doctorVerbs() map[string]verb {
	return map[string]verb{
		"doctor": {
			usage: "doctor [--wait S]",
			help: "Check the network as ROS 2 sees it from this machine, like ros2 doctor but about discovery:\n" +
				"the discovery settings in effect (ROS_DOMAIN_ID, ROS_AUTOMATIC_DISCOVERY_RANGE, ROS_STATIC_PEERS,\n" +
				"ROS_LOCALHOST_ONLY, CYCLONEDDS_URI) and the ports they use, each interface and whether\n" +
				"participant announcements of other hosts arrive on it by multicast, the participants seen (address,\n" +
				"host, DDS vendor, ROS distro on the wire, nodes), and warnings for the classic mistakes: multicast\n" +
				"blocked with no static peers, Humble and Jazzy on one domain, participants of another DDS vendor\n" +
				"(services do not work across vendors), publishers and subscriptions with incompatible QoS, one\n" +
				"node name in two processes (two systems on one domain) and domain ids in the ephemeral port range.\n" +
				"It listens S seconds (default 9: Cyclone DDS repeats its announcements every 8 s).",
			run: (*App).doctor,
		},
	}
}

// spdpGroup is the DDSI discovery multicast group.
var spdpGroup = net.IPv4(239, 255, 0, 1)

// heardPeer is a participant whose announcement came by multicast.
type heardPeer struct {
	spdpAnnouncement
	From  net.IP
	Iface string // the interface whose subnet holds From ("" if none)
	Local bool   // From is an address of this host
}

// doctorPeer is a participant as the report shows it: from the graph, from
// a multicast announcement, or both (joined by GUID prefix).
type doctorPeer struct {
	Prefix [12]byte
	Heard  *heardPeer       // nil: not heard by multicast
	Graph  *ros.Participant // nil: not (yet) in the ROS graph
}

// endpointQoS is one endpoint of a topic for the QoS check.
type endpointQoS struct {
	Node string
	QoS  ros.QoS
}

// doctorInput is everything the warnings are computed from.
type doctorInput struct {
	Report ros.DiscoveryReport
	Wait   time.Duration
	// MulticastIfaces are the names of the interfaces (up, multicast,
	// not loopback) the announcements were listened for on.
	MulticastIfaces []string
	// ListenErr is why nothing could be listened for ("" if it could).
	ListenErr string
	Peers     []doctorPeer
	// Topics maps a topic to its publishers and subscriptions.
	Topics map[string][2][]endpointQoS
	// SelfDistroSet says whether this process's own dialect is set
	// (ROS_DISTRO), so that it counts in the dialect check.
	SelfDistroSet bool
}

func (a *App) doctor(ctx context.Context, args []string) error {
	p, err := parseFlags(args, flagSpec{"--wait": true})
	if err != nil {
		return err
	}
	if len(p.pos) != 0 {
		return usagef("usage: fsmnodes doctor [--wait S]")
	}
	secs, err := positiveFloat(p, "9", "--wait")
	if err != nil {
		return err
	}
	wait := time.Duration(secs * float64(time.Second))
	getenv := func(k string) string { v, _ := a.lookupEnv(k); return v }
	rep, err := ros.DescribeDiscovery(getenv)
	if err != nil {
		return fmt.Errorf("discovery settings: %w", err)
	}
	in := doctorInput{Report: rep, Wait: wait, Topics: map[string][2][]endpointQoS{}, SelfDistroSet: rep.DistroSet}

	ifaces, _ := net.Interfaces()
	var mcIfaces []net.Interface
	for _, ifi := range ifaces {
		if ifi.Flags&net.FlagUp != 0 && ifi.Flags&net.FlagMulticast != 0 && ifi.Flags&net.FlagLoopback == 0 {
			mcIfaces = append(mcIfaces, ifi)
			in.MulticastIfaces = append(in.MulticastIfaces, ifi.Name)
		}
	}
	port := 7400 + 250*int(rep.DomainID)
	var heard []heardPeer
	var mu sync.Mutex
	lctx, stopListen := context.WithTimeout(ctx, wait)
	defer stopListen()
	var listenDone chan struct{}
	if len(mcIfaces) > 0 {
		conn, err := listenSPDP(mcIfaces, port)
		if err != nil {
			in.ListenErr = err.Error()
		} else {
			listenDone = make(chan struct{})
			go func() {
				defer close(listenDone)
				readSPDP(lctx, conn, func(h heardPeer) {
					mu.Lock()
					heard = append(heard, h)
					mu.Unlock()
				})
			}()
		}
	}

	s, err := a.open(ctx, "doctor")
	if err != nil {
		return err
	}
	defer s.close()
	<-lctx.Done()
	if listenDone != nil {
		<-listenDone
	}
	if ctx.Err() != nil {
		return nil
	}
	self := s.rc.GUID().Prefix()

	// Join the announcements heard with the graph's participants.
	byPrefix := map[[12]byte]*doctorPeer{}
	peer := func(prefix [12]byte) *doctorPeer {
		if d, ok := byPrefix[prefix]; ok {
			return d
		}
		d := &doctorPeer{Prefix: prefix}
		byPrefix[prefix] = d
		return d
	}
	localAddrs := localIPs()
	mu.Lock()
	for i := range heard {
		h := heard[i]
		if h.Prefix == self || (rep.DomainID != 0 && h.DomainID >= 0 && h.DomainID != int64(rep.DomainID)) {
			continue
		}
		h.Local = localAddrs[h.From.String()]
		h.Iface = ifaceOf(ifaces, h.From)
		peer(h.Prefix).Heard = &h
	}
	mu.Unlock()
	for _, gp := range s.rc.Participants() {
		if gp.Self {
			continue
		}
		gp := gp
		peer(gp.GUID.Prefix()).Graph = &gp
	}
	for _, nt := range s.rc.TopicNamesAndTypes() {
		var pubs, subs []endpointQoS
		for _, e := range s.rc.PublishersInfo(nt.Name) {
			pubs = append(pubs, endpointQoS{Node: ros.FullyQualifiedNodeName(e.NodeNamespace, e.NodeName), QoS: e.QoS})
		}
		for _, e := range s.rc.SubscriptionsInfo(nt.Name) {
			subs = append(subs, endpointQoS{Node: ros.FullyQualifiedNodeName(e.NodeNamespace, e.NodeName), QoS: e.QoS})
		}
		in.Topics[nt.Name] = [2][]endpointQoS{pubs, subs}
	}
	for _, d := range byPrefix {
		in.Peers = append(in.Peers, *d)
	}
	sort.Slice(in.Peers, func(i, j int) bool { return peerLess(in.Peers[i], in.Peers[j]) })
	printDoctor(a.Stdout, in, ifaces)
	return nil
}

func peerLess(a, b doctorPeer) bool {
	ka, kb := peerAddr(a), peerAddr(b)
	if ka != kb {
		return ka < kb
	}
	return string(a.Prefix[:]) < string(b.Prefix[:])
}

func peerAddr(d doctorPeer) string {
	if d.Heard != nil {
		return d.Heard.From.String()
	}
	return "~"
}

// listenSPDP opens a UDP socket on the discovery multicast port, beside
// the DDS processes of this host (SO_REUSEADDR, as they bind it), joined to
// the discovery group on every interface given.
func listenSPDP(ifaces []net.Interface, port int) (*net.UDPConn, error) {
	conn, err := net.ListenMulticastUDP("udp4", &ifaces[0], &net.UDPAddr{IP: spdpGroup, Port: port})
	if err != nil {
		return nil, fmt.Errorf("listen on %v:%d: %w", spdpGroup, port, err)
	}
	raw, err := conn.SyscallConn()
	if err != nil {
		conn.Close()
		return nil, err
	}
	for _, ifi := range ifaces[1:] {
		var serr error
		err := raw.Control(func(fd uintptr) {
			mreq := &unix.IPMreqn{Ifindex: int32(ifi.Index)}
			copy(mreq.Multiaddr[:], spdpGroup.To4())
			serr = unix.SetsockoptIPMreqn(int(fd), unix.IPPROTO_IP, unix.IP_ADD_MEMBERSHIP, mreq)
		})
		if err == nil {
			err = serr
		}
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("join %v on %s: %w", spdpGroup, ifi.Name, err)
		}
	}
	return conn, nil
}

// readSPDP reads announcements until ctx ends, and closes conn.
func readSPDP(ctx context.Context, conn *net.UDPConn, got func(heardPeer)) {
	go func() {
		<-ctx.Done()
		conn.Close()
	}()
	buf := make([]byte, 65536)
	for {
		n, from, err := conn.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
				return
			}
			continue
		}
		a, err := parseSPDP(buf[:n])
		if err != nil {
			continue
		}
		got(heardPeer{spdpAnnouncement: a, From: from.IP})
	}
}

func localIPs() map[string]bool {
	m := map[string]bool{}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			m[n.IP.String()] = true
		}
	}
	return m
}

// ifaceOf names the interface whose subnet holds ip.
func ifaceOf(ifaces []net.Interface, ip net.IP) string {
	for _, ifi := range ifaces {
		addrs, _ := ifi.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.Contains(ip) {
				return ifi.Name
			}
		}
	}
	return ""
}

// portsLine describes the UDP ports of the domain (Cyclone's mapping: PB
// 7400, DG 250, PG 2, d0 0, d1 10, d2 1, d3 11).
func portsLine(d uint32) string {
	b := 7400 + 250*int(d)
	return fmt.Sprintf("UDP %d (discovery multicast), %d (data multicast), %d+2i (discovery unicast), %d+2i (data unicast), "+
		"i = 0..31 the participant index on a host", b, b+1, b+10, b+11)
}

func printDoctor(w io.Writer, in doctorInput, ifaces []net.Interface) {
	r := in.Report
	fmt.Fprintf(w, "DISCOVERY SETTINGS (domain %d)\n", r.DomainID)
	distro := r.Distro.String()
	if !r.DistroSet {
		distro = "unset: " + distro + "'s variables apply; the wire dialect follows the peers"
	}
	fmt.Fprintf(w, "  ROS_DISTRO                     %s\n", distro)
	fmt.Fprintf(w, "  ROS_DOMAIN_ID                  %d: %s\n", r.DomainID, portsLine(r.DomainID))
	if r.Distro == ros.Jazzy {
		fmt.Fprintf(w, "  ROS_AUTOMATIC_DISCOVERY_RANGE  %s\n", r.Range)
		fmt.Fprintf(w, "  ROS_STATIC_PEERS               %s\n", listOrNone(r.StaticPeers))
	} else {
		lo := "0 (all interfaces)"
		if r.Range == ros.RangeLocalhost {
			lo = "1 (loopback only)"
		}
		fmt.Fprintf(w, "  ROS_LOCALHOST_ONLY             %s\n", lo)
	}
	fmt.Fprintf(w, "  CYCLONEDDS_URI peers           %s\n", listOrNone(r.CyclonePeers))
	mc := "on"
	if !r.Multicast {
		mc = "off"
	}
	fmt.Fprintf(w, "  multicast discovery            %s\n", mc)
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "  note: %s\n", warn)
	}

	fmt.Fprintf(w, "\nINTERFACES (announcements listened for %.0f s)\n", in.Wait.Seconds())
	for _, ifi := range ifaces {
		var addrs []string
		as, _ := ifi.Addrs()
		for _, a := range as {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil { // DDS discovery here is IPv4
				addrs = append(addrs, a.String())
			}
		}
		state := "down"
		switch {
		case ifi.Flags&net.FlagUp == 0:
		case ifi.Flags&net.FlagLoopback != 0:
			state = "up, loopback"
		case ifi.Flags&net.FlagMulticast == 0:
			state = "up, NO MULTICAST flag: discovery needs peers on this interface"
		default:
			var from []string
			for _, p := range in.Peers {
				if p.Heard != nil && !p.Heard.Local && p.Heard.Iface == ifi.Name {
					from = appendUnique(from, p.Heard.From.String())
				}
			}
			if len(from) > 0 {
				state = "up, multicast works: announcements of other hosts arrive (" + strings.Join(from, ", ") + ")"
			} else {
				state = fmt.Sprintf("up, multicast: no announcement of another host arrived in %.0f s", in.Wait.Seconds())
			}
		}
		fmt.Fprintf(w, "  %-8s %-22s %s\n", ifi.Name, strings.Join(addrs, " "), state)
	}
	if in.ListenErr != "" {
		fmt.Fprintf(w, "  (could not listen for announcements: %s)\n", in.ListenErr)
	}

	fmt.Fprintln(w, "\nPARTICIPANTS SEEN")
	if len(in.Peers) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, p := range in.Peers {
		fmt.Fprintf(w, "  %s\n", describePeer(p))
	}

	warns := diagnose(in)
	fmt.Fprintln(w, "\nWARNINGS")
	if len(warns) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, m := range warns {
		fmt.Fprintf(w, "  WARNING: %s\n", m)
	}
	fmt.Fprintf(w, "\n%d warning(s)\n", len(warns))
}

func describePeer(p doctorPeer) string {
	var f []string
	if p.Heard != nil {
		where := p.Heard.From.String()
		if p.Heard.Local {
			where += " (this host)"
		}
		f = append(f, where)
		if p.Heard.Host != "" {
			f = append(f, "host "+p.Heard.Host)
		}
		v := vendorName(p.Heard.Vendor)
		if p.Heard.Version != "" {
			v += " " + p.Heard.Version
		}
		f = append(f, v)
	} else {
		f = append(f, "address unknown (not heard by multicast)")
		if p.Prefix[0] == 0x01 && p.Prefix[1] == 0x0f {
			f = append(f, "eProsima Fast DDS (GUID prefix)")
		}
	}
	if p.Graph != nil {
		switch p.Graph.Dialect {
		case ros.Humble:
			f = append(f, "ROS 2 Humble wire (no type hashes)")
		case ros.Jazzy:
			f = append(f, "ROS 2 Jazzy wire (type hashes)")
		default:
			f = append(f, "ROS 2 (no endpoints yet)")
		}
		var nodes []string
		for _, n := range p.Graph.Nodes {
			nodes = append(nodes, n.FullyQualifiedName())
		}
		if len(nodes) > 0 {
			f = append(f, "nodes "+strings.Join(nodes, " "))
		} else {
			f = append(f, "no nodes")
		}
	} else if p.Heard != nil && strings.Contains(p.Heard.UserData, "enclave=") {
		f = append(f, "ROS 2 (enclave "+strings.TrimSuffix(strings.TrimPrefix(p.Heard.UserData, "enclave="), ";")+"), not in the graph yet")
	} else if p.Heard != nil {
		f = append(f, "not a ROS 2 participant")
	}
	return fmt.Sprintf("participant %x: %s", p.Prefix[:4], strings.Join(f, ", "))
}

// diagnose returns the warnings for in, each a sentence a user can act on.
func diagnose(in doctorInput) []string {
	var out []string
	r := in.Report
	// Multicast blocked and nobody to ask instead.
	remoteHeard := false
	for _, p := range in.Peers {
		remoteHeard = remoteHeard || (p.Heard != nil && !p.Heard.Local)
	}
	if r.Multicast && r.Range == ros.RangeSubnet && len(r.StaticPeers) == 0 && len(r.CyclonePeers) == 0 &&
		len(in.MulticastIfaces) > 0 && !remoteHeard && in.ListenErr == "" {
		out = append(out, fmt.Sprintf("multicast: no participant announcement of another host arrived on %s in %.0f s, "+
			"and no static peers are set. If the robot or another ROS 2 machine is on this network and domain, multicast "+
			"is blocked between you (common on Wi-Fi): set ROS_STATIC_PEERS=<its address> on both machines (Jazzy), "+
			"or a Cyclone peer list in CYCLONEDDS_URI on both (Humble), and open the ports of the domain (%s)",
			strings.Join(in.MulticastIfaces, ", "), in.Wait.Seconds(), portsLine(r.DomainID)))
	}
	if !r.Multicast && r.Range == ros.RangeSubnet && len(r.StaticPeers) == 0 && len(r.CyclonePeers) == 0 {
		out = append(out, "multicast is off in the Cyclone configuration and no peers are set: this process discovers nothing")
	}

	// Humble and Jazzy on one domain.
	var humble, jazzy []string
	for _, p := range in.Peers {
		if p.Graph == nil {
			continue
		}
		switch p.Graph.Dialect {
		case ros.Humble:
			humble = append(humble, peerLabel(p))
		case ros.Jazzy:
			jazzy = append(jazzy, peerLabel(p))
		}
	}
	if len(humble) > 0 && len(jazzy) > 0 {
		out = append(out, fmt.Sprintf("Humble and Jazzy share domain %d: Humble %s; Jazzy %s. Their graph information "+
			"(ros_discovery_info) has different layouts, so neither lists the other's nodes, and types whose layout changed "+
			"between the distros do not match: give each distro its own ROS_DOMAIN_ID", r.DomainID,
			strings.Join(humble, ", "), strings.Join(jazzy, ", ")))
	}

	// Another DDS vendor.
	for _, p := range in.Peers {
		if p.Heard == nil || p.Heard.Vendor == vendorCyclone {
			continue
		}
		what := "its topics can match, but ROS 2 services and actions do not work between DDS vendors " +
			"(each RMW maps requests and replies its own way)"
		if p.Graph != nil && p.Graph.Services > 0 {
			what = fmt.Sprintf("it has %d service endpoints, which will never answer or be answered by Cyclone DDS "+
				"processes: ROS 2 services and actions do not work between DDS vendors", p.Graph.Services)
		}
		out = append(out, fmt.Sprintf("participant at %s runs %s, not Cyclone DDS (rmw_cyclonedds_cpp): %s; "+
			"use the same RMW_IMPLEMENTATION on every machine", p.Heard.From, vendorName(p.Heard.Vendor), what))
	}

	// Incompatible QoS.
	topics := make([]string, 0, len(in.Topics))
	for t := range in.Topics {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, t := range topics {
		eps := in.Topics[t]
		for _, pub := range eps[0] {
			for _, sub := range eps[1] {
				if why := qosIncompatible(pub.QoS, sub.QoS); why != "" {
					out = append(out, fmt.Sprintf("topic %s: publisher %s and subscription %s have incompatible QoS (%s): "+
						"the subscription receives nothing from it", t, pub.Node, sub.Node, why))
				}
			}
		}
	}

	// One node name in two processes: two systems on one domain.
	owners := map[string][]string{}
	for _, p := range in.Peers {
		if p.Graph == nil {
			continue
		}
		for _, n := range p.Graph.Nodes {
			fqn := n.FullyQualifiedName()
			owners[fqn] = append(owners[fqn], peerLabel(p))
		}
	}
	names := make([]string, 0, len(owners))
	for n, o := range owners {
		if len(o) > 1 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		out = append(out, fmt.Sprintf("node %s runs in %d processes (%s): two robots or two launches share domain %d; "+
			"give each system its own ROS_DOMAIN_ID (or its own namespace)", n, len(owners[n]), strings.Join(owners[n], "; "), r.DomainID))
	}

	// Domain ids whose ports fall into Linux's ephemeral range.
	if r.DomainID > 101 {
		lo := 7400 + 250*int(r.DomainID)
		out = append(out, fmt.Sprintf("ROS_DOMAIN_ID %d uses UDP ports %d-%d, inside Linux's ephemeral port range "+
			"(32768-60999), where any program's outgoing connection may take them first; ROS 2 recommends 0-101",
			r.DomainID, lo, lo+11+2*31))
	}
	return out
}

// peerLabel names a participant in a warning: its address and host if
// heard, else its GUID prefix.
func peerLabel(p doctorPeer) string {
	if p.Heard != nil {
		if p.Heard.Host != "" {
			return fmt.Sprintf("%s (%s)", p.Heard.From, p.Heard.Host)
		}
		return p.Heard.From.String()
	}
	return fmt.Sprintf("participant %x", p.Prefix[:4])
}

// qosIncompatible says why a publisher and a subscription do not match
// (DDS request/offered rules for the policies ROS exposes), or "".
func qosIncompatible(pub, sub ros.QoS) string {
	var why []string
	if pub.Reliability == ros.ReliabilityBestEffort && sub.Reliability == ros.ReliabilityReliable {
		why = append(why, "reliability: best effort offered, reliable requested")
	}
	if pub.Durability == ros.DurabilityVolatile && sub.Durability == ros.DurabilityTransientLocal {
		why = append(why, "durability: volatile offered, transient local requested")
	}
	if sub.Deadline > 0 && (pub.Deadline == 0 || pub.Deadline > sub.Deadline) {
		why = append(why, fmt.Sprintf("deadline: %v offered, %v requested", durOrInf(pub.Deadline), sub.Deadline))
	}
	if pub.Liveliness == ros.LivelinessAutomatic && sub.Liveliness == ros.LivelinessManualByTopic {
		why = append(why, "liveliness: automatic offered, manual by topic requested")
	}
	if sub.LivelinessLeaseDuration > 0 && (pub.LivelinessLeaseDuration == 0 || pub.LivelinessLeaseDuration > sub.LivelinessLeaseDuration) {
		why = append(why, fmt.Sprintf("liveliness lease: %v offered, %v requested", durOrInf(pub.LivelinessLeaseDuration), sub.LivelinessLeaseDuration))
	}
	return strings.Join(why, "; ")
}

func durOrInf(d time.Duration) string {
	if d == 0 {
		return "infinite"
	}
	return d.String()
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return strings.Join(l, ";")
}

func appendUnique(l []string, s string) []string {
	for _, x := range l {
		if x == s {
			return l
		}
	}
	return append(l, s)
}
