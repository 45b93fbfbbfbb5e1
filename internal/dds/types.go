package dds

import (
	"encoding/hex"
	"time"
)

// GUID is a DDSI GUID: a 12-byte prefix followed by a 4-byte entity id, in
// network byte order as in Cyclone's dds_guid_t.v.
type GUID [16]byte

// String formats the GUID as 32 lowercase hex digits.
func (g GUID) String() string { return hex.EncodeToString(g[:]) }

// Prefix returns the 12-byte GUID prefix (identifies the participant).
func (g GUID) Prefix() [12]byte {
	var p [12]byte
	copy(p[:], g[:12])
	return p
}

// InstanceHandle is a Cyclone instance handle (dds_instance_handle_t). It is
// a process-local number that identifies an entity or a discovered endpoint.
type InstanceHandle uint64

// Reliability is the DDS reliability kind.
type Reliability int

// Reliability kinds. Reliable writers block for ever when their history is
// full (max_blocking_time infinite), as rmw_cyclonedds configures them.
const (
	Reliable Reliability = iota
	BestEffort
)

// String returns the ROS name of the reliability kind.
func (r Reliability) String() string {
	switch r {
	case Reliable:
		return "reliable"
	case BestEffort:
		return "best_effort"
	}
	return "unknown"
}

// Durability is the DDS durability kind.
type Durability int

// Durability kinds. TransientLocal also sets the durability-service policy
// (same history kind and depth, unlimited resource limits, cleanup delay 0)
// as rmw_cyclonedds does.
const (
	Volatile Durability = iota
	TransientLocal
)

// String returns the ROS name of the durability kind.
func (d Durability) String() string {
	switch d {
	case Volatile:
		return "volatile"
	case TransientLocal:
		return "transient_local"
	}
	return "unknown"
}

// History is the DDS history kind.
type History int

// History kinds.
const (
	KeepLast History = iota
	KeepAll
)

// String returns the ROS name of the history kind.
func (h History) String() string {
	switch h {
	case KeepLast:
		return "keep_last"
	case KeepAll:
		return "keep_all"
	}
	return "unknown"
}

// Liveliness is the DDS liveliness kind.
type Liveliness int

// Liveliness kinds.
const (
	Automatic Liveliness = iota
	ManualByTopic
)

// String returns the ROS name of the liveliness kind.
func (l Liveliness) String() string {
	switch l {
	case Automatic:
		return "automatic"
	case ManualByTopic:
		return "manual_by_topic"
	}
	return "unknown"
}

// QoS is the subset of DDS QoS that ROS 2 uses, mapped onto Cyclone exactly
// as rmw_cyclonedds' create_readwrite_qos does. The zero value is reliable,
// volatile, keep-last 1 (a Depth of 0 means 1), automatic liveliness.
//
// Writers and readers always get writer_data_lifecycle autodispose=false
// and XCDR1 as their only data representation.
type QoS struct {
	Reliability Reliability
	Durability  Durability
	History     History
	// Depth is the keep-last depth; 0 means 1. Ignored for KeepAll.
	Depth int32
	// Deadline, Lifespan and LeaseDuration: 0 means not set (the DDS
	// default, infinite); a negative value is rejected.
	Deadline, Lifespan, LeaseDuration time.Duration
	Liveliness                        Liveliness
	// UserData is the USER_DATA policy (e.g. "typehash=RIHS01_...;").
	UserData []byte
	// IgnoreLocal (readers only) ignores writers of the same participant
	// (ignorelocal = PARTICIPANT).
	IgnoreLocal bool
	// MaxSampleSize (readers only; not a DDS policy) drops samples of
	// more bytes than this, header included, as soon as Cyclone hands them
	// over: their bytes are released in C and never copied into Go, and
	// the handler gets a Sample with Oversize set instead. 0: no limit.
	MaxSampleSize uint32
}

// Sample is one received sample. Data is only valid during the handler
// call that delivers it.
type Sample struct {
	// Data is the full serialized payload, including the 4-byte
	// encapsulation header. It may carry up to 3 bytes of padding.
	Data []byte
	// SourceTimestamp is the writer's source timestamp in ns since the
	// Unix epoch.
	SourceTimestamp int64
	// PublicationHandle is the instance handle of the writer that wrote
	// the sample (the request writer, for services).
	PublicationHandle InstanceHandle
	// Oversize is non-zero for a sample that exceeded the reader's
	// QoS.MaxSampleSize: it was that many bytes long and was dropped, and
	// Data is nil.
	Oversize uint32
}

// Endpoint describes a discovered or matched reader or writer (from
// Cyclone's dds_builtintopic_endpoint_t).
type Endpoint struct {
	Key, ParticipantKey GUID
	Handle              InstanceHandle
	TopicName, TypeName string
	QoS                 QoS
	UserData            []byte
}

// EntityKind says which built-in discovery topic an event comes from.
type EntityKind int

// Entity kinds of discovery events.
const (
	KindParticipant EntityKind = iota // DCPSParticipant
	KindWriter                        // DCPSPublication
	KindReader                        // DCPSSubscription
)

// String returns a short name of the kind.
func (k EntityKind) String() string {
	switch k {
	case KindParticipant:
		return "participant"
	case KindWriter:
		return "writer"
	case KindReader:
		return "reader"
	}
	return "unknown"
}

// DiscoveryEvent reports a participant, writer or reader appearing,
// changing or disappearing, from Cyclone's built-in topics.
type DiscoveryEvent struct {
	Kind EntityKind
	// Alive is false when the entity was disposed or lost (it is gone).
	Alive               bool
	Key, ParticipantKey GUID
	// TopicName and TypeName are set for writers and readers only.
	TopicName, TypeName string
	QoS                 QoS
	UserData            []byte
	// Local is true when the entity belongs to this participant.
	Local bool
}
