package bag

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/foxglove/mcap/go/mcap"
	"go.yaml.in/yaml/v3"
)

// Library is the MCAP header's library string of files this package writes.
const Library = "fsmnodes bag"

// DefaultChunkSize is the MCAP chunk size (the writer holds one chunk in
// memory).
const DefaultChunkSize = 1 << 20

// WriterOptions configures a Writer. The zero value writes one
// uncompressed file.
type WriterOptions struct {
	// MaxFileBytes starts a new .mcap file once the current one holds
	// this many bytes (ros2 bag record --max-bag-size); 0: no limit.
	MaxFileBytes int64
	// MaxFileDuration starts a new .mcap file once the current one spans
	// this long in receive time (--max-bag-duration); 0: no limit.
	MaxFileDuration time.Duration
	// Compression of the MCAP chunks: "" (none, rosbag2's default),
	// "zstd" or "lz4".
	Compression string
	// ROSDistro is written as ros_distro.
	ROSDistro string
	// CustomData is written as custom_data (and in each file's "rosbag2"
	// metadata record).
	CustomData map[string]string
}

// Writer writes a bag directory. Its methods are safe for concurrent use.
type Writer struct {
	dir  string
	base string
	opts WriterOptions

	mu     sync.Mutex
	topics map[string]*TopicInfo
	order  []string // topic names in the order they were added
	meta   Metadata

	// The open file.
	f        *os.File
	mw       *mcap.Writer
	fileInfo *FileInfo
	schemas  map[string]uint16 // type -> schema id in the open file
	channels map[string]uint16 // topic -> channel id in the open file
	seq      map[uint16]uint32
	// fileBytes counts the message records written to the open file
	// (the MCAP writer's offset only moves when a chunk is flushed).
	fileBytes int64
	closed    bool
}

// Create makes the bag directory dir (which must not exist, as with ros2
// bag record) and returns a Writer for it. Nothing is written to disk
// until the first message.
func Create(dir string, opts WriterOptions) (*Writer, error) {
	if _, err := os.Stat(dir); err == nil {
		return nil, fmt.Errorf("bag: output folder %q already exists", dir)
	}
	switch opts.Compression {
	case "", "zstd", "lz4":
	default:
		return nil, fmt.Errorf("bag: unknown compression %q (none, zstd or lz4)", opts.Compression)
	}
	if opts.MaxFileBytes < 0 || opts.MaxFileDuration < 0 {
		return nil, errors.New("bag: negative split limit")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bag: %w", err)
	}
	w := &Writer{
		dir: dir, base: filepath.Base(filepath.Clean(dir)), opts: opts,
		topics: map[string]*TopicInfo{},
		meta: Metadata{
			Version: MetadataVersion, StorageID: StorageID, ROSDistro: opts.ROSDistro,
			CustomData: map[string]string{},
		},
	}
	for k, v := range opts.CustomData {
		w.meta.CustomData[k] = v
	}
	return w, nil
}

// Dir is the bag directory.
func (w *Writer) Dir() string { return w.dir }

// AddTopic declares a topic; messages of undeclared topics are refused.
// Declaring a topic again updates its offered QoS profiles.
func (w *Writer) AddTopic(t Topic) error {
	if t.Name == "" || t.Type == "" {
		return errors.New("bag: topic without a name or type")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("bag: writer closed")
	}
	if old, ok := w.topics[t.Name]; ok {
		if old.Type != t.Type {
			return fmt.Errorf("bag: topic %s recorded as %s, now %s", t.Name, old.Type, t.Type)
		}
		old.OfferedQoS = t.OfferedQoS
		return nil
	}
	w.topics[t.Name] = &TopicInfo{Topic: t}
	w.order = append(w.order, t.Name)
	if w.mw != nil {
		_, err := w.channelLocked(w.topics[t.Name])
		return err
	}
	return nil
}

// SetCustomData sets one custom_data entry.
func (w *Writer) SetCustomData(key, value string) {
	w.mu.Lock()
	w.meta.CustomData[key] = value
	w.mu.Unlock()
}

// Write records one message: data is the serialized message with its
// encapsulation header, recv the time it was received (the MCAP log
// time, rosbag2's recv_timestamp), sent the publisher's source timestamp.
func (w *Writer) Write(topic string, recv, sent time.Time, data []byte) error {
	recv, sent = recv.Round(0), sent.Round(0) // wall clock only: durations are differences of stamps
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("bag: writer closed")
	}
	ti, ok := w.topics[topic]
	if !ok {
		return fmt.Errorf("bag: message on undeclared topic %s", topic)
	}
	if w.mw != nil && w.needSplitLocked(recv) {
		if err := w.closeFileLocked(); err != nil {
			return err
		}
	}
	if w.mw == nil {
		if err := w.openFileLocked(recv); err != nil {
			return err
		}
	}
	ch, err := w.channelLocked(ti)
	if err != nil {
		return err
	}
	seq := w.seq[ch]
	w.seq[ch] = seq + 1
	if err := w.mw.WriteMessage(&mcap.Message{
		ChannelID: ch, Sequence: seq,
		LogTime: nanos(recv), PublishTime: nanos(sent), Data: data,
	}); err != nil {
		return fmt.Errorf("bag: write %s: %w", topic, err)
	}
	w.fileBytes += int64(len(data)) + messageRecordOverhead
	ti.MessageCount++
	w.meta.MessageCount++
	if w.meta.Start.IsZero() || recv.Before(w.meta.Start) {
		if !w.meta.Start.IsZero() {
			w.meta.Duration += w.meta.Start.Sub(recv)
		}
		w.meta.Start = recv
	}
	if d := recv.Sub(w.meta.Start); d > w.meta.Duration {
		w.meta.Duration = d
	}
	fi := w.fileInfo
	if fi.MessageCount == 0 || recv.Before(fi.Start) {
		if fi.MessageCount > 0 {
			fi.Duration += fi.Start.Sub(recv)
		}
		fi.Start = recv
	}
	if d := recv.Sub(fi.Start); d > fi.Duration {
		fi.Duration = d
	}
	fi.MessageCount++
	return nil
}

// messageRecordOverhead is the size of an MCAP message record without
// its data: opcode, length, channel id, sequence and two times.
const messageRecordOverhead = 1 + 8 + 2 + 4 + 8 + 8

func nanos(t time.Time) uint64 {
	if t.IsZero() || t.UnixNano() < 0 {
		return 0
	}
	return uint64(t.UnixNano())
}

func (w *Writer) needSplitLocked(recv time.Time) bool {
	if w.opts.MaxFileBytes > 0 && max(int64(w.mw.Offset()), w.fileBytes) >= w.opts.MaxFileBytes {
		return true
	}
	fi := w.fileInfo
	return w.opts.MaxFileDuration > 0 && fi.MessageCount > 0 && recv.Sub(fi.Start) >= w.opts.MaxFileDuration
}

func (w *Writer) openFileLocked(recv time.Time) error {
	name := w.base + "_" + strconv.Itoa(len(w.meta.Files)) + ".mcap"
	f, err := os.OpenFile(filepath.Join(w.dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("bag: %w", err)
	}
	opts := &mcap.WriterOptions{Chunked: true, ChunkSize: DefaultChunkSize}
	switch w.opts.Compression {
	case "zstd":
		opts.Compression = mcap.CompressionZSTD
	case "lz4":
		opts.Compression = mcap.CompressionLZ4
	default:
		opts.Compression = mcap.CompressionNone
	}
	mw, err := mcap.NewWriter(f, opts)
	if err == nil {
		err = mw.WriteHeader(&mcap.Header{Profile: Profile, Library: Library})
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("bag: start %s: %w", name, err)
	}
	w.f, w.mw = f, mw
	w.meta.Files = append(w.meta.Files, FileInfo{Path: name, Start: recv})
	w.fileInfo = &w.meta.Files[len(w.meta.Files)-1]
	w.schemas, w.channels, w.seq = map[string]uint16{}, map[string]uint16{}, map[uint16]uint32{}
	w.fileBytes = 0
	// Every declared topic gets its channel, as rosbag2 creates one per
	// topic whether messages come or not.
	for _, name := range w.order {
		if _, err := w.channelLocked(w.topics[name]); err != nil {
			return err
		}
	}
	return nil
}

// channelLocked returns the channel of ti in the open file, writing its
// schema and channel records first.
func (w *Writer) channelLocked(ti *TopicInfo) (uint16, error) {
	if id, ok := w.channels[ti.Name]; ok {
		return id, nil
	}
	sid, ok := w.schemas[ti.Type]
	if !ok {
		sid = uint16(len(w.schemas) + 1)
		if err := w.mw.WriteSchema(&mcap.Schema{ID: sid, Name: ti.Type, Encoding: SchemaEncoding, Data: []byte(ti.Schema)}); err != nil {
			return 0, fmt.Errorf("bag: schema %s: %w", ti.Type, err)
		}
		w.schemas[ti.Type] = sid
	}
	q, err := MarshalQoSProfiles(ti.OfferedQoS)
	if err != nil {
		return 0, err
	}
	id := uint16(len(w.channels))
	if err := w.mw.WriteChannel(&mcap.Channel{
		ID: id, SchemaID: sid, Topic: ti.Name, MessageEncoding: SerializationFormat,
		Metadata: map[string]string{"offered_qos_profiles": q, "topic_type_hash": ti.TypeHash},
	}); err != nil {
		return 0, fmt.Errorf("bag: channel %s: %w", ti.Name, err)
	}
	w.channels[ti.Name] = id
	return id, nil
}

// snapshotLocked is the metadata so far.
func (w *Writer) snapshotLocked() *Metadata {
	m := w.meta
	m.Topics = nil
	for _, name := range w.order {
		m.Topics = append(m.Topics, *w.topics[name])
	}
	m.Files = append([]FileInfo(nil), w.meta.Files...)
	m.CustomData = map[string]string{}
	for k, v := range w.meta.CustomData {
		m.CustomData[k] = v
	}
	return &m
}

func (w *Writer) closeFileLocked() error {
	if w.mw == nil {
		return nil
	}
	m := w.snapshotLocked()
	var errs []error
	// The "rosbag2" metadata record lets rosbag2 rebuild metadata.yaml
	// from the file alone (ros2 bag reindex), as its MCAP plugin writes it.
	if y, err := m.Marshal(); err == nil {
		var doc map[string]yaml.Node
		if err := yaml.Unmarshal(y, &doc); err == nil {
			inner := doc["rosbag2_bagfile_information"]
			if b, err := yaml.Marshal(&inner); err == nil {
				errs = append(errs, w.mw.WriteMetadata(&mcap.Metadata{Name: "rosbag2", Metadata: map[string]string{"serialized_metadata": string(b)}}))
			}
		}
	} else {
		errs = append(errs, err)
	}
	errs = append(errs, w.mw.Close(), w.f.Close())
	w.mw, w.f, w.fileInfo = nil, nil, nil
	errs = append(errs, WriteMetadata(w.dir, w.snapshotLocked()))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("bag: close file: %w", err)
	}
	return nil
}

// Metadata returns the metadata of what was written so far.
func (w *Writer) Metadata() *Metadata {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.snapshotLocked()
}

// Close finishes the open file and writes metadata.yaml. A bag with no
// message still gets its metadata.yaml (and no .mcap file).
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.mw != nil {
		return w.closeFileLocked()
	}
	return WriteMetadata(w.dir, w.snapshotLocked())
}
