package bag

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/foxglove/mcap/go/mcap"
)

// Message is one recorded message.
type Message struct {
	Topic   string
	Type    string
	LogTime time.Time // receive time (rosbag2's recv_timestamp)
	// PublishTime is the publisher's source timestamp (send_timestamp).
	PublishTime time.Time
	Data        []byte // serialized, with the encapsulation header
}

// Bag is an open bag directory.
type Bag struct {
	Dir      string
	Metadata *Metadata
	// Size is the size of the directory's files, as ros2 bag info
	// reports it.
	Size int64
}

// Open reads a bag directory's metadata.yaml. Topics missing a schema
// or QoS there are completed from the .mcap files' channels.
func Open(dir string) (*Bag, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("bag: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("bag: %s is not a bag directory", dir)
	}
	m, err := ReadMetadata(dir)
	if err != nil {
		return nil, err
	}
	if m.StorageID != StorageID {
		return nil, fmt.Errorf("bag: %s: storage %q is not supported (only mcap)", dir, m.StorageID)
	}
	b := &Bag{Dir: dir, Metadata: m}
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if info, err := d.Info(); err == nil {
			b.Size += info.Size()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bag: %w", err)
	}
	if err := b.completeTopics(); err != nil {
		return nil, err
	}
	return b, nil
}

// completeTopics fills in each topic's schema from the first file that
// has its channel.
func (b *Bag) completeTopics() error {
	need := map[string]*TopicInfo{}
	for i := range b.Metadata.Topics {
		t := &b.Metadata.Topics[i]
		if t.Schema == "" {
			need[t.Name] = t
		}
	}
	for _, fi := range b.Metadata.Files {
		if len(need) == 0 {
			return nil
		}
		err := withFile(filepath.Join(b.Dir, fi.Path), func(r *mcap.Reader) error {
			info, err := r.Info()
			if err != nil {
				return err
			}
			for _, ch := range info.Channels {
				t := need[ch.Topic]
				if t == nil {
					continue
				}
				if s := info.Schemas[ch.SchemaID]; s != nil {
					t.Schema = string(s.Data)
				}
				if len(t.OfferedQoS) == 0 {
					if q, err := UnmarshalQoSProfiles(ch.Metadata["offered_qos_profiles"]); err == nil {
						t.OfferedQoS = q
					}
				}
				delete(need, ch.Topic)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func withFile(path string, f func(*mcap.Reader) error) error {
	file, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("bag: %w", err)
	}
	defer file.Close()
	r, err := mcap.NewReader(file)
	if err != nil {
		return fmt.Errorf("bag: %s: %w", path, err)
	}
	defer r.Close()
	if err := f(r); err != nil {
		return fmt.Errorf("bag: %s: %w", path, err)
	}
	return nil
}

// Topic returns the metadata of a recorded topic.
func (b *Bag) Topic(name string) (TopicInfo, bool) {
	for _, t := range b.Metadata.Topics {
		if t.Name == name {
			return t, true
		}
	}
	return TopicInfo{}, false
}

// ErrStop, returned by a Messages callback, ends the iteration early
// without an error.
var ErrStop = errors.New("bag: stop")

// Messages calls f with each message of the given topics (all when
// topics is empty), file by file in the order of metadata.yaml and in
// receive-time order within each file. The message's Data is only valid
// during the call.
func (b *Bag) Messages(topics []string, f func(*Message) error) error {
	want := map[string]bool{}
	for _, t := range topics {
		want[t] = true
	}
	types := map[string]string{}
	for _, t := range b.Metadata.Topics {
		types[t.Name] = t.Type
	}
	for _, fi := range b.Metadata.Files {
		err := withFile(filepath.Join(b.Dir, fi.Path), func(r *mcap.Reader) error {
			opts := []mcap.ReadOpt{mcap.InOrder(mcap.LogTimeOrder)}
			if len(topics) > 0 {
				opts = append(opts, mcap.WithTopics(topics))
			}
			it, err := r.Messages(opts...)
			if err != nil {
				return err
			}
			var msg mcap.Message
			for {
				schema, ch, m, err := it.NextInto(&msg)
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				if len(want) > 0 && !want[ch.Topic] {
					continue
				}
				typ := types[ch.Topic]
				if typ == "" && schema != nil {
					typ = schema.Name
				}
				if err := f(&Message{
					Topic: ch.Topic, Type: typ,
					LogTime: time.Unix(0, int64(m.LogTime)), PublishTime: time.Unix(0, int64(m.PublishTime)),
					Data: m.Data,
				}); err != nil {
					return err
				}
			}
		})
		if errors.Is(err, ErrStop) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// FormatInfo prints a bag's metadata as ros2 bag info does (Jazzy's
// format), with times in loc.
func FormatInfo(b *Bag, loc *time.Location) string {
	m := b.Metadata
	var s strings.Builder
	const indent = "                   " // 19 spaces: "Topics with Type:" plus one
	distro := m.ROSDistro
	if distro == "" {
		distro = "unknown"
	}
	s.WriteString("\n")
	s.WriteString("Files:             ")
	if len(m.Files) == 0 {
		s.WriteString("\n")
	}
	for i, f := range m.Files {
		if i > 0 {
			s.WriteString(indent)
		}
		s.WriteString(f.Path + "\n")
	}
	fmt.Fprintf(&s, "Bag size:          %s\n", formatSize(b.Size))
	fmt.Fprintf(&s, "Storage id:        %s\n", m.StorageID)
	fmt.Fprintf(&s, "ROS Distro:        %s\n", distro)
	fmt.Fprintf(&s, "Duration:          %ss\n", secs(int64(m.Duration)))
	fmt.Fprintf(&s, "Start:             %s\n", formatTimePoint(m.Start.UnixNano(), loc))
	fmt.Fprintf(&s, "End:               %s\n", formatTimePoint(m.Start.UnixNano()+int64(m.Duration), loc))
	var topics, services []TopicInfo
	var serviceEvents uint64
	for _, t := range m.Topics {
		if IsServiceEventTopic(t.Name, t.Type) {
			services = append(services, t)
			serviceEvents += t.MessageCount
		} else {
			topics = append(topics, t)
		}
	}
	fmt.Fprintf(&s, "Messages:          %d\n", m.MessageCount-serviceEvents)
	s.WriteString("Topic information: ")
	if len(topics) == 0 {
		s.WriteString("\n")
	}
	for i, t := range topics {
		if i > 0 {
			s.WriteString(indent)
		}
		fmt.Fprintf(&s, "Topic: %s | Type: %s | Count: %d | Serialization Format: %s\n", t.Name, t.Type, t.MessageCount, SerializationFormat)
	}
	fmt.Fprintf(&s, "Service:           %d\n", len(services))
	s.WriteString("Service information: ")
	for i, t := range services {
		if i > 0 {
			s.WriteString(indent + "  ")
		}
		fmt.Fprintf(&s, "Service: %s | Type: %s | Event Count: %d | Serialization Format: %s\n",
			strings.TrimSuffix(t.Name, ServiceEventSuffix), strings.TrimSuffix(t.Type, "_Event"), t.MessageCount, SerializationFormat)
	}
	if len(services) == 0 {
		s.WriteString("\n")
	}
	return s.String()
}

func secs(ns int64) string {
	neg := ""
	if ns < 0 {
		neg, ns = "-", -ns
	}
	return fmt.Sprintf("%s%d.%09d", neg, ns/1e9, ns%1e9)
}

func formatTimePoint(ns int64, loc *time.Location) string {
	t := time.Unix(ns/1e9, 0).In(loc)
	return fmt.Sprintf("%s %s.%09d (%s)", t.Format("Jan _2 2006"), t.Format("15:04:05"), ns%1e9, secs(ns))
}

func formatSize(n int64) string {
	size := float64(n)
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for size >= 1024 && i < 4 {
		size /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", size, units[i])
	}
	return fmt.Sprintf("%.1f %s", size, units[i])
}

// SortedTopicNames returns the names of a bag's topics, sorted.
func (b *Bag) SortedTopicNames() []string {
	var out []string
	for _, t := range b.Metadata.Topics {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}
