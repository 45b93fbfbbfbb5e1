package ros

import (
	"fmt"
	"strings"

	"github.com/fsmnodes/fsmnodes/internal/cdr"
	"github.com/fsmnodes/fsmnodes/internal/dds"
)

// The ros_discovery_info topic (rmw_dds_common) maps DDS endpoints to ROS
// nodes. Its Gid is 16 bytes in Jazzy and 24 bytes (GUID + 8 zero bytes) in
// Humble; the type name is the same, so the encoding here is hand-written
// for both sizes.
const (
	discoveryInfoTopic = "ros_discovery_info"
	discoveryInfoType  = "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"
	// discoveryInfoHash is the Jazzy REP-2011 hash of
	// rmw_dds_common/msg/ParticipantEntitiesInfo.
	discoveryInfoHash = "RIHS01_91a0593bacdcc50ea9bdcf849a938b128412cc1ea821245c663bcd26f83c295e"
	// maxNodeNameField is the bound of NodeEntitiesInfo's strings.
	maxNodeNameField = 256
)

// Distro selects the ROS 2 wire dialect.
type Distro int

// Supported distributions.
const (
	// Jazzy (the default): 16-byte Gids, typehash= in endpoint USER_DATA.
	Jazzy Distro = iota
	// Humble: 24-byte Gids, no type hashes.
	Humble
)

// String returns the distro name.
func (d Distro) String() string {
	if d == Humble {
		return "humble"
	}
	return "jazzy"
}

// other returns the other dialect.
func (d Distro) other() Distro {
	if d == Humble {
		return Jazzy
	}
	return Humble
}

// gidSize is RMW_GID_STORAGE_SIZE of the distro.
func (d Distro) gidSize() int {
	if d == Humble {
		return 24
	}
	return 16
}

// nodeEntities is one NodeEntitiesInfo.
type nodeEntities struct {
	Namespace, Name string
	Readers         []dds.GUID
	Writers         []dds.GUID
}

// participantInfo is one ParticipantEntitiesInfo.
type participantInfo struct {
	GID   dds.GUID
	Nodes []nodeEntities
}

func putGid(e *cdr.Encoder, g dds.GUID, size int) {
	e.RawBytes(g[:])
	for i := len(g); i < size; i++ {
		e.Uint8(0)
	}
}

// getGid reads a Gid of size bytes; padding reports whether the bytes
// after the 16-byte GUID (Humble) are all zero, as rmw writes them.
func getGid(d *cdr.Decoder, size int) (g dds.GUID, padding bool) {
	padding = true
	for i := 0; i < size; i++ {
		b := d.Uint8()
		if i < len(g) {
			g[i] = b
		} else if b != 0 {
			padding = false
		}
	}
	return g, padding
}

// encodeParticipantInfo serializes p (header included) for the distro.
func encodeParticipantInfo(p participantInfo, distro Distro) []byte {
	size := distro.gidSize()
	e := cdr.NewEncoder(nil)
	putGid(e, p.GID, size)
	e.SeqLen(len(p.Nodes))
	for _, n := range p.Nodes {
		e.String(n.Namespace)
		e.String(n.Name)
		e.SeqLen(len(n.Readers))
		for _, g := range n.Readers {
			putGid(e, g, size)
		}
		e.SeqLen(len(n.Writers))
		for _, g := range n.Writers {
			putGid(e, g, size)
		}
	}
	return e.Bytes()
}

// decodeParticipantInfo parses a ParticipantEntitiesInfo sample in the
// distro's layout. Only the first 16 bytes of a Gid are kept (the rest is
// zero padding in Humble). The decoding is strict, so that the layout of a
// sample can be told from its bytes (sniffParticipantInfo): the participant
// Gid's padding must be zero and nothing but up to 3 bytes of padding may
// follow the last field.
func decodeParticipantInfo(payload []byte, distro Distro) (participantInfo, error) {
	var p participantInfo
	size := distro.gidSize()
	d, err := cdr.NewDecoder(payload)
	if err != nil {
		return p, err
	}
	var zeroPad bool
	p.GID, zeroPad = getGid(d, size)
	if !zeroPad {
		return participantInfo{}, fmt.Errorf("decode %s (%s): participant gid padding is not zero", discoveryInfoType, distro)
	}
	// A node has at least two strings (5 bytes each) and two counts.
	n := d.SeqLen(18)
	if n > 0 {
		p.Nodes = make([]nodeEntities, 0, n)
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		var ne nodeEntities
		ne.Namespace = d.BoundedString(maxNodeNameField)
		ne.Name = d.BoundedString(maxNodeNameField)
		nr := d.SeqLen(size)
		for j := 0; j < nr && d.Err() == nil; j++ {
			g, _ := getGid(d, size)
			ne.Readers = append(ne.Readers, g)
		}
		nw := d.SeqLen(size)
		for j := 0; j < nw && d.Err() == nil; j++ {
			g, _ := getGid(d, size)
			ne.Writers = append(ne.Writers, g)
		}
		p.Nodes = append(p.Nodes, ne)
	}
	if err := d.Err(); err != nil {
		return participantInfo{}, fmt.Errorf("decode %s (%s): %w", discoveryInfoType, distro, err)
	}
	if r := d.Remaining(); r > 3 {
		return participantInfo{}, fmt.Errorf("decode %s (%s): %d bytes left over", discoveryInfoType, distro, r)
	}
	return p, nil
}

// typeHashUserData is the endpoint USER_DATA "typehash=...;" (Jazzy only;
// empty when the hash is unknown).
func typeHashUserData(distro Distro, hash string) string {
	if distro == Humble || hash == "" {
		return ""
	}
	return "typehash=" + hash + ";"
}

// csid is a client/service id: the participant GUID prefix and a 4-byte
// big-endian per-context counter.
type csid [16]byte

func newCSID(participant dds.GUID, counter uint32) csid {
	var id csid
	copy(id[:12], participant[:12])
	id[12] = byte(counter >> 24)
	id[13] = byte(counter >> 16)
	id[14] = byte(counter >> 8)
	id[15] = byte(counter)
	return id
}

// String formats the id as rmw_cyclonedds does: hex bytes joined by '.',
// where only the first byte is zero-padded to two digits (std::setw applies
// to the first insertion only), e.g. "01.f.a3.0".
func (id csid) String() string {
	var b strings.Builder
	for i, c := range id {
		if i == 0 {
			fmt.Fprintf(&b, "%02x", c)
			continue
		}
		fmt.Fprintf(&b, ".%x", c)
	}
	return b.String()
}

// parseUserData splits "k=v;k2=v2;" USER_DATA into a map (like
// rmw::impl::cpp::parse_key_value). Malformed items are skipped.
func parseUserData(b []byte) map[string]string {
	out := map[string]string{}
	for _, item := range strings.Split(string(b), ";") {
		k, v, ok := strings.Cut(item, "=")
		if !ok || k == "" {
			continue
		}
		out[k] = v
	}
	return out
}
