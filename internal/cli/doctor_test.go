package cli

import (
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
)

// byteOrder is a byte order that also appends.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// spdpFor builds an RTPS message with one SPDP DATA submessage in byte
// order order, carrying the given parameters (pid, value) and a sentinel.
func spdpFor(order byteOrder, vendor [2]byte, prefix [12]byte, params [][2]any) []byte {
	var pl []byte
	for _, p := range params {
		v := append([]byte(nil), p[1].([]byte)...)
		for len(v)%4 != 0 {
			v = append(v, 0)
		}
		pl = order.AppendUint16(pl, p[0].(uint16))
		pl = order.AppendUint16(pl, uint16(len(v)))
		pl = append(pl, v...)
	}
	pl = order.AppendUint16(pl, pidSentinel)
	pl = order.AppendUint16(pl, 0)
	enc := []byte{0, encPLCDRBE, 0, 0}
	flags := byte(flagDataPresent)
	if order == byteOrder(binary.LittleEndian) {
		enc[1], flags = encPLCDRLE, flags|flagEndianLE
	}
	data := []byte{0, 0}
	data = order.AppendUint16(data, 16)
	data = append(data, 0, 1, 0, 0xc7, 0, 1, 0, 0xc2, 0, 0, 0, 0, 0, 0, 0, 1)
	data = append(append(data, enc...), pl...)
	msg := append([]byte("RTPS"), 2, 1, vendor[0], vendor[1])
	msg = append(msg, prefix[:]...)
	msg = append(msg, 0x09, 0x01, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8) // INFO_TS first, as Cyclone sends
	msg = append(msg, smidData, flags)
	msg = order.AppendUint16(msg, uint16(len(data)))
	return append(msg, data...)
}

func cdrString(order byteOrder, s string) []byte {
	return append(order.AppendUint32(nil, uint32(len(s)+1)), append([]byte(s), 0)...)
}

func TestParseSPDP(t *testing.T) {
	prefix := [12]byte{1, 0x10, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	for _, order := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
		info := order.AppendUint32(nil, 0)
		info = order.AppendUint32(info, 0)
		info = append(info, make([]byte, 12)...)
		info = append(info, cdrString(order, "robot/0.10.2/buildhost/Linux")...)
		msg := spdpFor(order, vendorCyclone, prefix, [][2]any{
			{uint16(pidDomainID), order.AppendUint32(nil, 42)},
			{uint16(pidUserData), append(order.AppendUint32(nil, 10), "enclave=/;"...)},
			{uint16(pidCycloneInfo), info},
		})
		a, err := parseSPDP(msg)
		if err != nil {
			t.Fatalf("%v: %v", order, err)
		}
		want := spdpAnnouncement{Vendor: vendorCyclone, Prefix: prefix, DomainID: 42, UserData: "enclave=/;", Host: "robot", Version: "0.10.2"}
		if a != want {
			t.Errorf("%v: got %+v, want %+v", order, a, want)
		}
		// Every truncation is an error, never a panic.
		for n := 0; n < len(msg); n++ {
			_, _ = parseSPDP(msg[:n])
		}
	}
	// Another vendor's 0x8007 is not Cyclone's version information.
	other := [2]byte{0x01, 0x0f}
	a, err := parseSPDP(spdpFor(binary.LittleEndian, other, prefix, [][2]any{{uint16(pidCycloneInfo), make([]byte, 28)}}))
	if err != nil || a.Host != "" || vendorName(a.Vendor) != "eProsima Fast DDS" {
		t.Errorf("Fast DDS announcement: %+v, %v", a, err)
	}
	for _, bad := range [][]byte{nil, []byte("RTPX0123456789012345678"), []byte("RTPS\x02\x01\x01\x10012345678901")} {
		if _, err := parseSPDP(bad); err == nil {
			t.Errorf("parseSPDP(%q) accepted", bad)
		}
	}
}

func TestQoSIncompatible(t *testing.T) {
	rel, be := ros.QoSDefault, ros.QoSSensorData
	latched := ros.QoSDefault
	latched.Durability = ros.DurabilityTransientLocal
	deadline := func(q ros.QoS, d time.Duration) ros.QoS { q.Deadline = d; return q }
	for _, tt := range []struct {
		name     string
		pub, sub ros.QoS
		want     string
	}{
		{"reliable to reliable", rel, rel, ""},
		{"reliable to best effort", rel, be, ""},
		{"best effort to reliable", be, rel, "reliability"},
		{"volatile to transient local", rel, latched, "durability"},
		{"transient local to volatile", latched, rel, ""},
		{"no deadline offered", rel, deadline(rel, time.Second), "deadline"},
		{"longer deadline offered", deadline(rel, 2*time.Second), deadline(rel, time.Second), "deadline"},
		{"shorter deadline offered", deadline(rel, time.Second), deadline(rel, 2*time.Second), ""},
	} {
		got := qosIncompatible(tt.pub, tt.sub)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestDiagnose covers each warning of fsmnodes doctor and a sound network
// without any; test/multihost shows each on real networks.
func TestDiagnose(t *testing.T) {
	robot := net.IPv4(10, 0, 0, 1)
	heardFrom := func(ip net.IP, vendor [2]byte) *heardPeer {
		return &heardPeer{spdpAnnouncement: spdpAnnouncement{Vendor: vendor}, From: ip}
	}
	node := func(name string, d ros.Distro) *ros.Participant {
		return &ros.Participant{Nodes: []ros.NodeName{{Name: name, Namespace: "/"}}, Dialect: d}
	}
	subnet := ros.DiscoveryReport{DomainID: 7, Range: ros.RangeSubnet, Multicast: true}
	for _, tt := range []struct {
		name string
		in   doctorInput
		want []string // one substring per expected warning
	}{
		{"sound", doctorInput{Report: subnet, MulticastIfaces: []string{"eth0"},
			Peers: []doctorPeer{{Heard: heardFrom(robot, vendorCyclone), Graph: node("a", ros.Jazzy)}}}, nil},
		{"multicast blocked, no peers", doctorInput{Report: subnet, MulticastIfaces: []string{"eth0"}},
			[]string{"multicast: no participant announcement of another host arrived on eth0"}},
		{"nothing heard but static peers", doctorInput{Report: ros.DiscoveryReport{Range: ros.RangeSubnet, Multicast: true,
			StaticPeers: []string{"10.0.0.1"}}, MulticastIfaces: []string{"eth0"}}, nil},
		{"only this host heard", doctorInput{Report: subnet, MulticastIfaces: []string{"eth0"},
			Peers: []doctorPeer{{Heard: &heardPeer{spdpAnnouncement: spdpAnnouncement{Vendor: vendorCyclone}, From: robot, Local: true}}}},
			[]string{"multicast: no participant announcement"}},
		{"multicast off, no peers", doctorInput{Report: ros.DiscoveryReport{Range: ros.RangeSubnet}},
			[]string{"multicast is off in the Cyclone configuration"}},
		{"dialect mix", doctorInput{Report: subnet, MulticastIfaces: []string{"eth0"},
			Peers: []doctorPeer{{Heard: heardFrom(robot, vendorCyclone), Graph: node("a", ros.Humble)},
				{Heard: heardFrom(net.IPv4(10, 0, 0, 2), vendorCyclone), Graph: node("b", ros.Jazzy)}}},
			[]string{"Humble and Jazzy share domain 7: Humble 10.0.0.1; Jazzy 10.0.0.2"}},
		{"foreign vendor with services", doctorInput{Report: subnet, MulticastIfaces: []string{"eth0"},
			Peers: []doctorPeer{{Heard: heardFrom(robot, [2]byte{1, 0x0f}), Graph: &ros.Participant{Services: 4, Dialect: ros.Jazzy}}}},
			[]string{"participant at 10.0.0.1 runs eProsima Fast DDS, not Cyclone DDS (rmw_cyclonedds_cpp): it has 4 service endpoints"}},
		{"incompatible qos", doctorInput{Report: subnet, MulticastIfaces: []string{"eth0"},
			Peers:  []doctorPeer{{Heard: heardFrom(robot, vendorCyclone)}},
			Topics: map[string][2][]endpointQoS{"/scan": {{{Node: "/sim", QoS: ros.QoSSensorData}}, {{Node: "/viewer", QoS: ros.QoSDefault}}}}},
			[]string{"topic /scan: publisher /sim and subscription /viewer have incompatible QoS (reliability"}},
		{"one node in two processes", doctorInput{Report: subnet, MulticastIfaces: []string{"eth0"},
			Peers: []doctorPeer{{Heard: heardFrom(robot, vendorCyclone), Graph: node("mux", ros.Jazzy)},
				{Graph: node("mux", ros.Jazzy)}}},
			[]string{"node /mux runs in 2 processes (10.0.0.1; participant 00000000)"}},
		{"domain in the ephemeral range", doctorInput{Report: ros.DiscoveryReport{DomainID: 150, Range: ros.RangeOff}},
			[]string{"ROS_DOMAIN_ID 150 uses UDP ports 44900-44973"}},
	} {
		got := diagnose(tt.in)
		if len(got) != len(tt.want) {
			t.Errorf("%s: %d warnings %q, want %d", tt.name, len(got), got, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: warning %q does not say %q", tt.name, got[i], w)
			}
		}
	}
}
