package rmw_dds_common_msg

import (
	"fmt"

	"github.com/fsmnodes/fsmnodes/internal/cdr"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
)

// This file is written by hand (it is not generated): the Humble layout of
// the ros_discovery_info payload, whose Gid is 24 bytes instead of Jazzy's
// 16. The DDS type names are the same as the Jazzy ones, so a node picks
// one layout or the other from ROS_DISTRO. Humble sends no type hashes, so
// Hash is empty.

// GidHumble is rmw_dds_common/msg/Gid as in Humble: char[24] data.
type GidHumble struct {
	Data [24]uint8 `ros:"data"`
}

// NodeEntitiesInfoHumble is rmw_dds_common/msg/NodeEntitiesInfo with
// Humble's 24-byte Gids.
type NodeEntitiesInfoHumble struct {
	NodeNamespace string      `ros:"node_namespace"` // string<=256
	NodeName      string      `ros:"node_name"`      // string<=256
	ReaderGidSeq  []GidHumble `ros:"reader_gid_seq"`
	WriterGidSeq  []GidHumble `ros:"writer_gid_seq"`
}

// ParticipantEntitiesInfoHumble is rmw_dds_common/msg/ParticipantEntitiesInfo
// with Humble's 24-byte Gids.
type ParticipantEntitiesInfoHumble struct {
	Gid                 GidHumble                `ros:"gid"`
	NodeEntitiesInfoSeq []NodeEntitiesInfoHumble `ros:"node_entities_info_seq"`
}

// GidHumble_TypeInfo describes the Humble layout of rmw_dds_common/msg/Gid.
var GidHumble_TypeInfo = &rosidl.TypeInfo{
	Name:       "rmw_dds_common/msg/Gid",
	DDSName:    "rmw_dds_common::msg::dds_::Gid_",
	Definition: "char[24] data\n",
	New:        func() rosidl.Message { return &GidHumble{} },
}

// NodeEntitiesInfoHumble_TypeInfo describes the Humble layout of
// rmw_dds_common/msg/NodeEntitiesInfo.
var NodeEntitiesInfoHumble_TypeInfo = &rosidl.TypeInfo{
	Name:       "rmw_dds_common/msg/NodeEntitiesInfo",
	DDSName:    "rmw_dds_common::msg::dds_::NodeEntitiesInfo_",
	Definition: NodeEntitiesInfo_TypeInfo.Definition,
	New:        func() rosidl.Message { return &NodeEntitiesInfoHumble{} },
}

// ParticipantEntitiesInfoHumble_TypeInfo describes the Humble layout of
// rmw_dds_common/msg/ParticipantEntitiesInfo.
var ParticipantEntitiesInfoHumble_TypeInfo = &rosidl.TypeInfo{
	Name:       "rmw_dds_common/msg/ParticipantEntitiesInfo",
	DDSName:    "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_",
	Definition: ParticipantEntitiesInfo_TypeInfo.Definition,
	New:        func() rosidl.Message { return &ParticipantEntitiesInfoHumble{} },
}

// ROSType returns GidHumble_TypeInfo.
func (m *GidHumble) ROSType() *rosidl.TypeInfo { return GidHumble_TypeInfo }

// MarshalCDR appends the 24 bytes of m.
func (m *GidHumble) MarshalCDR(e *cdr.Encoder) { e.RawBytes(m.Data[:]) }

// UnmarshalCDR reads 24 bytes.
func (m *GidHumble) UnmarshalCDR(d *cdr.Decoder) error {
	d.ReadRawBytes(m.Data[:])
	return d.Err()
}

// ROSType returns NodeEntitiesInfoHumble_TypeInfo.
func (m *NodeEntitiesInfoHumble) ROSType() *rosidl.TypeInfo { return NodeEntitiesInfoHumble_TypeInfo }

// Validate checks the 256-byte bounds of the name fields.
func (m *NodeEntitiesInfoHumble) Validate() error {
	if len(m.NodeNamespace) > 256 {
		return fmt.Errorf("rmw_dds_common/msg/NodeEntitiesInfo.node_namespace: string of %d bytes exceeds the bound 256", len(m.NodeNamespace))
	}
	if len(m.NodeName) > 256 {
		return fmt.Errorf("rmw_dds_common/msg/NodeEntitiesInfo.node_name: string of %d bytes exceeds the bound 256", len(m.NodeName))
	}
	return nil
}

// MarshalCDR appends the CDR body of m.
func (m *NodeEntitiesInfoHumble) MarshalCDR(e *cdr.Encoder) {
	e.String(m.NodeNamespace)
	e.String(m.NodeName)
	for _, seq := range [][]GidHumble{m.ReaderGidSeq, m.WriterGidSeq} {
		e.SeqLen(len(seq))
		for i := range seq {
			seq[i].MarshalCDR(e)
		}
	}
}

// UnmarshalCDR reads the CDR body of m.
func (m *NodeEntitiesInfoHumble) UnmarshalCDR(d *cdr.Decoder) error {
	m.NodeNamespace = d.BoundedString(256)
	m.NodeName = d.BoundedString(256)
	m.ReaderGidSeq = readGidsHumble(d)
	m.WriterGidSeq = readGidsHumble(d)
	return d.Err()
}

func readGidsHumble(d *cdr.Decoder) []GidHumble {
	n := d.SeqLen(24)
	if n == 0 {
		return nil
	}
	out := make([]GidHumble, n)
	for i := range out {
		d.ReadRawBytes(out[i].Data[:])
	}
	return out
}

// ROSType returns ParticipantEntitiesInfoHumble_TypeInfo.
func (m *ParticipantEntitiesInfoHumble) ROSType() *rosidl.TypeInfo {
	return ParticipantEntitiesInfoHumble_TypeInfo
}

// Validate checks the bounds of every node entry.
func (m *ParticipantEntitiesInfoHumble) Validate() error {
	for i := range m.NodeEntitiesInfoSeq {
		if err := m.NodeEntitiesInfoSeq[i].Validate(); err != nil {
			return fmt.Errorf("node_entities_info_seq[%d]: %w", i, err)
		}
	}
	return nil
}

// MarshalCDR appends the CDR body of m.
func (m *ParticipantEntitiesInfoHumble) MarshalCDR(e *cdr.Encoder) {
	m.Gid.MarshalCDR(e)
	e.SeqLen(len(m.NodeEntitiesInfoSeq))
	for i := range m.NodeEntitiesInfoSeq {
		m.NodeEntitiesInfoSeq[i].MarshalCDR(e)
	}
}

// UnmarshalCDR reads the CDR body of m.
func (m *ParticipantEntitiesInfoHumble) UnmarshalCDR(d *cdr.Decoder) error {
	m.Gid.UnmarshalCDR(d)
	m.NodeEntitiesInfoSeq = nil
	// Each entry has at least two string lengths and two sequence counts.
	if n := d.SeqLen(16); n > 0 {
		m.NodeEntitiesInfoSeq = make([]NodeEntitiesInfoHumble, n)
		for i := 0; i < n && d.Err() == nil; i++ {
			m.NodeEntitiesInfoSeq[i].UnmarshalCDR(d)
		}
	}
	return d.Err()
}
