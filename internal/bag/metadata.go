// Package bag reads and writes recordings in rosbag2's MCAP layout: a
// directory holding metadata.yaml (rosbag2_bagfile_information) and one or
// more .mcap files written with github.com/foxglove/mcap (profile "ros2",
// ros2msg schemas, CDR messages with their encapsulation header, each
// channel's offered QoS profiles in its metadata), so that ros2 bag,
// Foxglove and the MCAP tools read what fsmnodes records, and fsmnodes
// plays what they wrote.
//
// metadata.yaml is written in rosbag2's version 8: the newest that both
// Humble's rosbag2 (which reads offered_qos_profiles as a YAML string) and
// Jazzy's (which writes version 9 and still reads 8) understand.
package bag

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fsmnodes/fsmnodes/internal/ros"
)

// MetadataVersion is the version of metadata.yaml this package writes.
const MetadataVersion = 8

// MetadataFile is the name of the metadata file in a bag directory.
const MetadataFile = "metadata.yaml"

// StorageID is rosbag2's storage_identifier of MCAP files.
const StorageID = "mcap"

// SerializationFormat is the serialization format of every topic: CDR
// with its 4-byte encapsulation header, as on the wire.
const SerializationFormat = "cdr"

// SchemaEncoding is the MCAP schema encoding of every type.
const SchemaEncoding = "ros2msg"

// Profile is the MCAP header profile of ROS 2 recordings.
const Profile = "ros2"

// Topic describes one recorded topic.
type Topic struct {
	Name string // fully qualified, "/chatter"
	Type string // "std_msgs/msg/String"
	// OfferedQoS are the QoS profiles of the topic's publishers when it
	// was recorded; play offers the same (see PlaybackQoS).
	OfferedQoS []ros.QoS
	// TypeHash is the REP-2011 hash ("RIHS01_…"); empty when unknown.
	TypeHash string
	// Schema is the ros2msg definition (the type's .msg text followed by
	// its dependencies').
	Schema string
}

// TopicInfo is a topic with its message count in a bag.
type TopicInfo struct {
	Topic
	MessageCount uint64
}

// FileInfo describes one .mcap file of a bag.
type FileInfo struct {
	Path         string // relative to the bag directory
	Start        time.Time
	Duration     time.Duration
	MessageCount uint64
}

// Metadata is the content of metadata.yaml.
type Metadata struct {
	Version       int
	StorageID     string
	Start         time.Time
	Duration      time.Duration
	MessageCount  uint64
	Topics        []TopicInfo
	Files         []FileInfo
	CustomData    map[string]string
	ROSDistro     string
	CompressionFm string
	CompressionMd string
}

// End is the receive time of the last message.
func (m *Metadata) End() time.Time { return m.Start.Add(m.Duration) }

// ---- YAML form (field names and order as rosbag2 writes them) ----

type yNanos struct {
	Nanoseconds int64 `yaml:"nanoseconds"`
}

type yEpoch struct {
	NanosecondsSinceEpoch int64 `yaml:"nanoseconds_since_epoch"`
}

type yTopicMetadata struct {
	Name                string `yaml:"name"`
	Type                string `yaml:"type"`
	SerializationFormat string `yaml:"serialization_format"`
	OfferedQoSProfiles  string `yaml:"offered_qos_profiles"`
	TypeDescriptionHash string `yaml:"type_description_hash"`
}

type yTopicInfo struct {
	TopicMetadata yTopicMetadata `yaml:"topic_metadata"`
	MessageCount  uint64         `yaml:"message_count"`
}

type yFile struct {
	Path         string `yaml:"path"`
	StartingTime yEpoch `yaml:"starting_time"`
	Duration     yNanos `yaml:"duration"`
	MessageCount uint64 `yaml:"message_count"`
}

type yInfo struct {
	Version                int               `yaml:"version"`
	StorageIdentifier      string            `yaml:"storage_identifier"`
	Duration               yNanos            `yaml:"duration"`
	StartingTime           yEpoch            `yaml:"starting_time"`
	MessageCount           uint64            `yaml:"message_count"`
	TopicsWithMessageCount []yTopicInfo      `yaml:"topics_with_message_count"`
	CompressionFormat      string            `yaml:"compression_format"`
	CompressionMode        string            `yaml:"compression_mode"`
	RelativeFilePaths      []string          `yaml:"relative_file_paths"`
	Files                  []yFile           `yaml:"files"`
	CustomData             map[string]string `yaml:"custom_data"`
	ROSDistro              string            `yaml:"ros_distro"`
}

// yInfoIn is yInfo as read: offered_qos_profiles may be a string
// (versions 4 to 8) or a list (9).
type yInfoIn struct {
	Version                int    `yaml:"version"`
	StorageIdentifier      string `yaml:"storage_identifier"`
	Duration               yNanos `yaml:"duration"`
	StartingTime           yEpoch `yaml:"starting_time"`
	MessageCount           uint64 `yaml:"message_count"`
	TopicsWithMessageCount []struct {
		TopicMetadata struct {
			Name                string    `yaml:"name"`
			Type                string    `yaml:"type"`
			SerializationFormat string    `yaml:"serialization_format"`
			OfferedQoSProfiles  yaml.Node `yaml:"offered_qos_profiles"`
			TypeDescriptionHash string    `yaml:"type_description_hash"`
		} `yaml:"topic_metadata"`
		MessageCount uint64 `yaml:"message_count"`
	} `yaml:"topics_with_message_count"`
	CompressionFormat string            `yaml:"compression_format"`
	CompressionMode   string            `yaml:"compression_mode"`
	RelativeFilePaths []string          `yaml:"relative_file_paths"`
	Files             []yFile           `yaml:"files"`
	CustomData        map[string]string `yaml:"custom_data"`
	ROSDistro         string            `yaml:"ros_distro"`
}

type yDoc struct {
	Info yInfo `yaml:"rosbag2_bagfile_information"`
}

// Marshal returns metadata.yaml's text for m.
func (m *Metadata) Marshal() ([]byte, error) {
	y := yInfo{
		Version:           m.Version,
		StorageIdentifier: m.StorageID,
		Duration:          yNanos{int64(m.Duration)},
		StartingTime:      yEpoch{m.Start.UnixNano()},
		MessageCount:      m.MessageCount,
		CompressionFormat: m.CompressionFm,
		CompressionMode:   m.CompressionMd,
		CustomData:        m.CustomData,
		ROSDistro:         m.ROSDistro,
	}
	if y.Version == 0 {
		y.Version = MetadataVersion
	}
	if y.StorageIdentifier == "" {
		y.StorageIdentifier = StorageID
	}
	y.TopicsWithMessageCount = []yTopicInfo{}
	for _, t := range m.Topics {
		q, err := MarshalQoSProfiles(t.OfferedQoS)
		if err != nil {
			return nil, err
		}
		y.TopicsWithMessageCount = append(y.TopicsWithMessageCount, yTopicInfo{
			TopicMetadata: yTopicMetadata{
				Name: t.Name, Type: t.Type, SerializationFormat: SerializationFormat,
				OfferedQoSProfiles: q, TypeDescriptionHash: t.TypeHash,
			},
			MessageCount: t.MessageCount,
		})
	}
	y.RelativeFilePaths = []string{}
	y.Files = []yFile{}
	for _, f := range m.Files {
		y.RelativeFilePaths = append(y.RelativeFilePaths, f.Path)
		y.Files = append(y.Files, yFile{
			Path: f.Path, StartingTime: yEpoch{f.Start.UnixNano()},
			Duration: yNanos{int64(f.Duration)}, MessageCount: f.MessageCount,
		})
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(yDoc{Info: y}); err != nil {
		return nil, fmt.Errorf("bag: encode metadata: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("bag: encode metadata: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalMetadata parses metadata.yaml's text. It reads the versions
// rosbag2 writes from 4 on (offered_qos_profiles as a YAML string up to
// 8, as a list from 9).
func UnmarshalMetadata(b []byte) (*Metadata, error) {
	var doc struct {
		Info yInfoIn `yaml:"rosbag2_bagfile_information"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("bag: parse %s: %w", MetadataFile, err)
	}
	y := doc.Info
	if y.Version == 0 {
		return nil, fmt.Errorf("bag: %s has no rosbag2_bagfile_information.version", MetadataFile)
	}
	m := &Metadata{
		Version: y.Version, StorageID: y.StorageIdentifier,
		Start:        time.Unix(0, y.StartingTime.NanosecondsSinceEpoch),
		Duration:     time.Duration(y.Duration.Nanoseconds),
		MessageCount: y.MessageCount, CustomData: y.CustomData, ROSDistro: y.ROSDistro,
		CompressionFm: y.CompressionFormat, CompressionMd: y.CompressionMode,
	}
	for _, t := range y.TopicsWithMessageCount {
		ti := TopicInfo{Topic: Topic{Name: t.TopicMetadata.Name, Type: t.TopicMetadata.Type, TypeHash: t.TopicMetadata.TypeDescriptionHash}, MessageCount: t.MessageCount}
		q := t.TopicMetadata.OfferedQoSProfiles
		var err error
		switch q.Kind {
		case yaml.ScalarNode:
			ti.OfferedQoS, err = UnmarshalQoSProfiles(q.Value)
		case yaml.SequenceNode:
			ti.OfferedQoS, err = decodeQoSNode(&q)
		}
		if err != nil {
			return nil, fmt.Errorf("bag: topic %s: %w", ti.Name, err)
		}
		m.Topics = append(m.Topics, ti)
	}
	for _, f := range y.Files {
		m.Files = append(m.Files, FileInfo{
			Path: f.Path, Start: time.Unix(0, f.StartingTime.NanosecondsSinceEpoch),
			Duration: time.Duration(f.Duration.Nanoseconds), MessageCount: f.MessageCount,
		})
	}
	if len(m.Files) == 0 { // versions before 5 list only the paths
		for _, p := range y.RelativeFilePaths {
			m.Files = append(m.Files, FileInfo{Path: p})
		}
	}
	return m, nil
}

// ReadMetadata reads dir/metadata.yaml.
func ReadMetadata(dir string) (*Metadata, error) {
	b, err := os.ReadFile(filepath.Join(dir, MetadataFile))
	if err != nil {
		return nil, fmt.Errorf("bag: %w", err)
	}
	return UnmarshalMetadata(b)
}

// WriteMetadata writes dir/metadata.yaml (through a temporary file, so a
// reader never sees half of it).
func WriteMetadata(dir string, m *Metadata) error {
	b, err := m.Marshal()
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+MetadataFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("bag: write metadata: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, MetadataFile)); err != nil {
		return fmt.Errorf("bag: write metadata: %w", err)
	}
	return nil
}

// ---- QoS profiles ----

// yTime is rmw_time_t as rosbag2 writes it.
type yTime struct {
	Sec  uint64 `yaml:"sec"`
	Nsec uint64 `yaml:"nsec"`
}

// yQoS is one offered QoS profile as rosbag2 (before version 9) writes
// it: the policies as rmw's enum numbers.
type yQoS struct {
	History                      int   `yaml:"history"`
	Depth                        int   `yaml:"depth"`
	Reliability                  int   `yaml:"reliability"`
	Durability                   int   `yaml:"durability"`
	Deadline                     yTime `yaml:"deadline"`
	Lifespan                     yTime `yaml:"lifespan"`
	Liveliness                   int   `yaml:"liveliness"`
	LivelinessLeaseDuration      yTime `yaml:"liveliness_lease_duration"`
	AvoidROSNamespaceConventions bool  `yaml:"avoid_ros_namespace_conventions"`
}

// rmw_time_t of RMW_DURATION_INFINITE, and the "infinite" values Foxy's
// rmw implementations reported, which rosbag2 also reads as infinite.
var (
	infiniteTime     = yTime{Sec: math.MaxInt64 / uint64(time.Second), Nsec: math.MaxInt64 % uint64(time.Second)}
	foxyInfiniteTime = []yTime{infiniteTime, {Sec: 0x7FFFFFFF, Nsec: 0xFFFFFFFF}, {Sec: 0x7FFFFFFF, Nsec: 0x7FFFFFFF}}
)

func toYTime(d time.Duration) yTime {
	if d == ros.DurationInfinite {
		return infiniteTime
	}
	if d < 0 {
		d = 0
	}
	return yTime{Sec: uint64(d / time.Second), Nsec: uint64(d % time.Second)}
}

func fromYTime(t yTime) time.Duration {
	for _, inf := range foxyInfiniteTime {
		if t == inf {
			return ros.DurationInfinite
		}
	}
	if t.Sec > uint64(math.MaxInt64/int64(time.Second)) {
		return ros.DurationInfinite
	}
	d := time.Duration(t.Sec)*time.Second + time.Duration(t.Nsec)
	if d < 0 {
		return ros.DurationInfinite
	}
	return d
}

// MarshalQoSProfiles returns the offered_qos_profiles string of
// metadata.yaml (version 8) and of an MCAP channel's metadata: a YAML
// list of profiles with rmw's enum numbers.
func MarshalQoSProfiles(qs []ros.QoS) (string, error) {
	if len(qs) == 0 {
		return "", nil
	}
	ys := make([]yQoS, len(qs))
	for i, q := range qs {
		ys[i] = yQoS{
			History: int(q.History), Depth: q.Depth, Reliability: int(q.Reliability),
			Durability: int(q.Durability), Deadline: toYTime(q.Deadline), Lifespan: toYTime(q.Lifespan),
			Liveliness: int(q.Liveliness), LivelinessLeaseDuration: toYTime(q.LivelinessLeaseDuration),
			AvoidROSNamespaceConventions: q.AvoidROSNamespaceConventions,
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(ys); err != nil {
		return "", fmt.Errorf("bag: encode QoS: %w", err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("bag: encode QoS: %w", err)
	}
	return buf.String(), nil
}

// UnmarshalQoSProfiles parses an offered_qos_profiles string (numbers, as
// up to version 8, or names such as "keep_last", as version 9 writes).
func UnmarshalQoSProfiles(s string) ([]ros.QoS, error) {
	if s == "" {
		return nil, nil
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil {
		return nil, fmt.Errorf("offered_qos_profiles: %w", err)
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return decodeQoSNode(n.Content[0])
	}
	return nil, nil
}

// policyNames are the names version 9 writes (rmw's *_to_str).
var policyNames = map[string]map[string]int{
	"history":     {"system_default": 0, "keep_last": 1, "keep_all": 2, "unknown": 3},
	"reliability": {"system_default": 0, "reliable": 1, "best_effort": 2, "unknown": 3, "best_available": 4},
	"durability":  {"system_default": 0, "transient_local": 1, "volatile": 2, "unknown": 3, "best_available": 4},
	"liveliness":  {"system_default": 0, "automatic": 1, "manual_by_topic": 3, "unknown": 4, "best_available": 5},
}

func decodeQoSNode(n *yaml.Node) ([]ros.QoS, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("offered_qos_profiles is not a list")
	}
	var out []ros.QoS
	for _, item := range n.Content {
		if item.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("offered_qos_profiles: a profile is not a map")
		}
		var y yQoS
		// The policies may be names: decode them first into a map.
		var raw map[string]yaml.Node
		if err := item.Decode(&raw); err != nil {
			return nil, fmt.Errorf("offered_qos_profiles: %w", err)
		}
		policy := func(key string) (int, error) {
			v, ok := raw[key]
			if !ok {
				return 0, nil
			}
			var i int
			if err := v.Decode(&i); err == nil {
				return i, nil
			}
			if i, ok := policyNames[key][v.Value]; ok {
				return i, nil
			}
			return 0, fmt.Errorf("offered_qos_profiles: unknown %s %q", key, v.Value)
		}
		var err error
		for key, dst := range map[string]*int{"history": &y.History, "reliability": &y.Reliability, "durability": &y.Durability, "liveliness": &y.Liveliness} {
			if *dst, err = policy(key); err != nil {
				return nil, err
			}
		}
		for key, dst := range map[string]*yTime{"deadline": &y.Deadline, "lifespan": &y.Lifespan, "liveliness_lease_duration": &y.LivelinessLeaseDuration} {
			if v, ok := raw[key]; ok {
				if err := v.Decode(dst); err != nil {
					return nil, fmt.Errorf("offered_qos_profiles: %s: %w", key, err)
				}
			}
		}
		if v, ok := raw["depth"]; ok {
			if err := v.Decode(&y.Depth); err != nil {
				return nil, fmt.Errorf("offered_qos_profiles: depth: %w", err)
			}
		}
		if v, ok := raw["avoid_ros_namespace_conventions"]; ok {
			if err := v.Decode(&y.AvoidROSNamespaceConventions); err != nil {
				return nil, fmt.Errorf("offered_qos_profiles: avoid_ros_namespace_conventions: %w", err)
			}
		}
		out = append(out, ros.QoS{
			History: ros.History(y.History), Depth: y.Depth, Reliability: ros.Reliability(y.Reliability),
			Durability: ros.Durability(y.Durability), Deadline: fromYTime(y.Deadline), Lifespan: fromYTime(y.Lifespan),
			Liveliness: ros.Liveliness(y.Liveliness), LivelinessLeaseDuration: fromYTime(y.LivelinessLeaseDuration),
			AvoidROSNamespaceConventions: y.AvoidROSNamespaceConventions,
		})
	}
	return out, nil
}

// PlaybackQoS is the QoS play offers for a topic, chosen from the offered
// profiles as rosbag2 does: reliable only if every recorded publisher was,
// transient local only if every one was; depth the largest recorded depth
// (at least 1); deadline, lifespan and liveliness left unspecified.
func PlaybackQoS(offered []ros.QoS) ros.QoS {
	q := ros.QoSDefault
	if len(offered) == 0 {
		return q
	}
	allReliable, allTL := true, true
	depth := 1
	for _, o := range offered {
		if o.Reliability == ros.ReliabilityBestEffort {
			allReliable = false
		}
		if o.Durability != ros.DurabilityTransientLocal {
			allTL = false
		}
		if o.History != ros.HistoryKeepAll && o.Depth > depth {
			depth = o.Depth
		}
	}
	q.Depth = max(depth, q.Depth)
	if !allReliable {
		q = q.BestEffort()
	}
	if allTL {
		q = q.TransientLocal()
	}
	return q
}
