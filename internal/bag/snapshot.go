package bag

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Event is what makes the flight recorder write its window to disk: a
// state machine's transition seen on a topic.
type Event struct {
	Time  time.Time // receive time of the message that showed it
	Kind  string    // "estop", "autonomy_stop", "ve_body_safe", "fault_counter", ...
	Topic string
	// Machine is the state machine's name when the event came from its
	// ~/fsm/transition ("operation_mode", "ve_body"); "" otherwise.
	Machine string
	From    string
	To      string
	Cause   string
}

// String describes the event in one line.
func (e Event) String() string {
	if e.Topic == "" {
		return e.Kind + " (" + e.Cause + ")"
	}
	s := fmt.Sprintf("%s on %s: %s -> %s", e.Kind, e.Topic, e.From, e.To)
	if e.Machine != "" {
		s = fmt.Sprintf("%s on %s: %s %s -> %s", e.Kind, e.Topic, e.Machine, e.From, e.To)
	}
	if e.Cause != "" {
		s += " (" + e.Cause + ")"
	}
	return s
}

// customData is how an event is kept in a snapshot's metadata.yaml
// (custom_data) and in its .mcap files' "rosbag2" metadata records.
func (e Event) customData() map[string]string {
	return map[string]string{
		"fsmnodes.trigger.kind":    e.Kind,
		"fsmnodes.trigger.topic":   e.Topic,
		"fsmnodes.trigger.machine": e.Machine,
		"fsmnodes.trigger.from":    e.From,
		"fsmnodes.trigger.to":      e.To,
		"fsmnodes.trigger.cause":   e.Cause,
		"fsmnodes.trigger.time":    fmt.Sprint(e.Time.UnixNano()),
	}
}

// EventOf reads the trigger back from a snapshot's metadata (false when
// the bag is not a snapshot).
func EventOf(m *Metadata) (Event, bool) {
	c := m.CustomData
	if c["fsmnodes.trigger.kind"] == "" {
		return Event{}, false
	}
	var ns int64
	fmt.Sscan(c["fsmnodes.trigger.time"], &ns)
	return Event{Time: time.Unix(0, ns), Kind: c["fsmnodes.trigger.kind"], Topic: c["fsmnodes.trigger.topic"], Machine: c["fsmnodes.trigger.machine"],
		From: c["fsmnodes.trigger.from"], To: c["fsmnodes.trigger.to"], Cause: c["fsmnodes.trigger.cause"]}, true
}

// SnapshotOptions bounds the flight recorder.
type SnapshotOptions struct {
	// Dir holds the snapshot bags, one directory per event.
	Dir string
	// Window is how much receive time the ring keeps (the N of
	// --snapshot-duration).
	Window time.Duration
	// MaxBytes bounds the ring's memory (message bytes): the oldest
	// messages go first when it is full, even within the window.
	MaxBytes int64
	// KeepBags and MaxDiskBytes bound Dir: after each snapshot the oldest
	// snapshot bags are removed until at most KeepBags remain and they
	// take at most MaxDiskBytes together (the newest is always kept).
	KeepBags     int
	MaxDiskBytes int64
	// Holdoff is the least time between two snapshots; events within it
	// are counted and logged but write nothing (the first one's window
	// already holds what led to them). Manual requests (KindManual) are
	// always written.
	Holdoff time.Duration
	// Writer options of the snapshot bags.
	Writer WriterOptions
	// Logf, if not nil, reports snapshots and skipped events; Errorf (if
	// nil, Logf) reports snapshots that could not be written.
	Logf, Errorf func(format string, args ...any)
}

// Defaults of the flight recorder's bounds (docs/recording.md).
const (
	DefaultSnapshotMaxBytes = 64 << 20
	DefaultKeepBags         = 20
	DefaultMaxDiskBytes     = 512 << 20
	DefaultHoldoff          = 5 * time.Second
)

// ringMsgOverhead is what the ring holds per message beside its bytes
// (the entry, the slice header and the allocation's rounding), counted
// against MaxBytes.
const ringMsgOverhead = 96

type ringMsg struct {
	topic      string
	recv, sent time.Time
	data       []byte
}

// Snapshotter is the flight recorder's Sink: a ring of the last Window
// of messages that Trigger writes to a new bag.
type Snapshotter struct {
	opts SnapshotOptions

	mu      sync.Mutex
	topics  map[string]Topic
	ring    []ringMsg // oldest first, from index head
	head    int
	bytes   int64
	evicted uint64
	last    time.Time // time of the last snapshot
	skipped uint64
	written []string
	wg      sync.WaitGroup
}

// NewSnapshotter checks opts (filling in defaults) and creates Dir.
func NewSnapshotter(opts SnapshotOptions) (*Snapshotter, error) {
	if opts.Window <= 0 {
		return nil, errors.New("bag: snapshot window must be positive")
	}
	if opts.Dir == "" {
		return nil, errors.New("bag: no snapshot directory")
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultSnapshotMaxBytes
	}
	if opts.KeepBags <= 0 {
		opts.KeepBags = DefaultKeepBags
	}
	if opts.MaxDiskBytes <= 0 {
		opts.MaxDiskBytes = DefaultMaxDiskBytes
	}
	if opts.Holdoff < 0 {
		opts.Holdoff = 0
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Errorf == nil {
		opts.Errorf = opts.Logf
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("bag: %w", err)
	}
	return &Snapshotter{opts: opts, topics: map[string]Topic{}}, nil
}

// AddTopic implements Sink.
func (s *Snapshotter) AddTopic(t Topic) error {
	s.mu.Lock()
	s.topics[t.Name] = t
	s.mu.Unlock()
	return nil
}

// Write implements Sink: the message joins the ring, and messages older
// than the window (or beyond MaxBytes) leave it.
func (s *Snapshotter) Write(topic string, recv, sent time.Time, data []byte) error {
	recv, sent = recv.Round(0), sent.Round(0)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.topics[topic]; !ok {
		return fmt.Errorf("bag: message on undeclared topic %s", topic)
	}
	s.ring = append(s.ring, ringMsg{topic: topic, recv: recv, sent: sent, data: data})
	s.bytes += int64(len(data)) + ringMsgOverhead
	for s.head < len(s.ring) {
		m := s.ring[s.head]
		if s.bytes <= s.opts.MaxBytes && recv.Sub(m.recv) <= s.opts.Window {
			break
		}
		s.bytes -= int64(len(m.data)) + ringMsgOverhead
		s.ring[s.head] = ringMsg{}
		s.head++
		s.evicted++
	}
	// Compact when the dead prefix is half the slice.
	if s.head > 1024 && s.head*2 > len(s.ring) {
		n := copy(s.ring, s.ring[s.head:])
		clear(s.ring[n:])
		s.ring = s.ring[:n]
		s.head = 0
	}
	return nil
}

// SnapshotStats describes the ring.
type SnapshotStats struct {
	Messages int
	Bytes    int64
	Evicted  uint64
	Skipped  uint64   // events within the holdoff
	Written  []string // snapshot bags written (still on disk or not)
}

// Stats returns the ring's figures.
func (s *Snapshotter) Stats() SnapshotStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SnapshotStats{Messages: len(s.ring) - s.head, Bytes: s.bytes, Evicted: s.evicted, Skipped: s.skipped, Written: append([]string(nil), s.written...)}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// KindManual is the kind of an event a user asked for (~/snapshot): it
// is not held off.
const KindManual = "manual"

// Trigger writes the ring's window to a new bag named after the event,
// with the event in its metadata, in the background. It returns the bag's
// directory, or "" when the event falls within the holdoff.
func (s *Snapshotter) Trigger(ev Event) string { return s.TriggerThen(ev, nil) }

// TriggerThen is Trigger, and calls done (if not nil; on the writing
// goroutine) once the bag is complete, metadata.yaml included, or its
// writing failed. done is not called when the event falls within the
// holdoff (the result is then "").
func (s *Snapshotter) TriggerThen(ev Event, done func(dir string, err error)) string {
	ev.Time = ev.Time.Round(0)
	s.mu.Lock()
	// A manual request (~/snapshot, FlightRecorder.Snapshot) is what a
	// user asked for: it is written whatever came just before (rosbag2's
	// snapshot service always writes). KeepBags and MaxDiskBytes bound
	// what repeated requests can take.
	if ev.Kind != KindManual && !s.last.IsZero() && ev.Time.Sub(s.last) < s.opts.Holdoff && ev.Time.After(s.last) {
		s.skipped++
		s.mu.Unlock()
		s.opts.Logf("flight recorder: %s within %v of the last snapshot: not written", ev, s.opts.Holdoff)
		return ""
	}
	s.last = ev.Time
	msgs := append([]ringMsg(nil), s.ring[s.head:]...)
	topics := make([]Topic, 0, len(s.topics))
	for _, t := range s.topics {
		topics = append(topics, t)
	}
	name := ev.Time.UTC().Format("20060102T150405.000Z") + "_" + unsafeName.ReplaceAllString(ev.Kind, "_")
	dir := filepath.Join(s.opts.Dir, name)
	// A free name: _1, _2, ... after one that exists. Any other answer of
	// Stat (the directory gone, not a directory, not readable) ends the
	// search too: writing the bag then fails and says why.
	for i := 1; ; i++ {
		if _, err := os.Stat(dir); err != nil {
			break
		}
		dir = filepath.Join(s.opts.Dir, fmt.Sprintf("%s_%d", name, i))
	}
	s.written = append(s.written, dir)
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		err := s.writeBag(dir, ev, topics, msgs)
		if err != nil {
			s.opts.Errorf("flight recorder: %s: writing %s failed: %v", ev, dir, err)
		} else {
			s.opts.Logf("flight recorder: %s: wrote %d messages of the last %v to %s", ev, len(msgs), s.opts.Window, dir)
			s.prune()
		}
		if done != nil {
			done(dir, err)
		}
	}()
	return dir
}

// Wait waits for the snapshots being written.
func (s *Snapshotter) Wait() { s.wg.Wait() }

func (s *Snapshotter) writeBag(dir string, ev Event, topics []Topic, msgs []ringMsg) error {
	wo := s.opts.Writer
	wo.MaxFileBytes, wo.MaxFileDuration = 0, 0
	wo.CustomData = ev.customData()
	w, err := Create(dir, wo)
	if err != nil {
		return err
	}
	used := map[string]bool{}
	for _, m := range msgs {
		used[m.topic] = true
	}
	sort.Slice(topics, func(i, j int) bool { return topics[i].Name < topics[j].Name })
	for _, t := range topics {
		if used[t.Name] {
			if err := w.AddTopic(t); err != nil {
				return errors.Join(err, w.Close())
			}
		}
	}
	for _, m := range msgs {
		if err := w.Write(m.topic, m.recv, m.sent, m.data); err != nil {
			return errors.Join(err, w.Close())
		}
	}
	return w.Close()
}

// prune removes the oldest snapshot bags beyond KeepBags and
// MaxDiskBytes (never the newest).
func (s *Snapshotter) prune() {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, err := os.ReadDir(s.opts.Dir)
	if err != nil {
		return
	}
	type bagDir struct {
		path string
		size int64
	}
	var bags []bagDir
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(s.opts.Dir, e.Name())
		if _, err := os.Stat(filepath.Join(p, MetadataFile)); err != nil {
			continue // not a finished bag
		}
		var size int64
		_ = filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if info, err := d.Info(); err == nil {
					size += info.Size()
				}
			}
			return nil
		})
		bags = append(bags, bagDir{p, size})
	}
	// Names start with the UTC time: lexical order is age order.
	sort.Slice(bags, func(i, j int) bool { return bags[i].path < bags[j].path })
	var total int64
	for _, b := range bags {
		total += b.size
	}
	for len(bags) > 1 && (len(bags) > s.opts.KeepBags || total > s.opts.MaxDiskBytes) {
		if err := os.RemoveAll(bags[0].path); err != nil {
			s.opts.Errorf("flight recorder: remove %s: %v", bags[0].path, err)
			return
		}
		s.opts.Logf("flight recorder: removed the oldest snapshot %s (bounds: %d bags, %d bytes)", bags[0].path, s.opts.KeepBags, s.opts.MaxDiskBytes)
		total -= bags[0].size
		bags = bags[1:]
	}
}
