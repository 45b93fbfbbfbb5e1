package bag

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkWriterWrite: one 200-byte message into a bag (chunked MCAP on
// disk); prints ns per message and MB/s.
func BenchmarkWriterWrite(b *testing.B) {
	w, err := Create(filepath.Join(b.TempDir(), "bench"), WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.AddTopic(Topic{Name: "/x", Type: "std_msgs/msg/String", Schema: "string data\n"}); err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 200)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		if err := w.Write("/x", at, at, data); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSnapshotterWrite: one 200-byte message into the flight
// recorder's ring (a 1 s window at 1 message per ms, so every message
// also evicts one).
func BenchmarkSnapshotterWrite(b *testing.B) {
	s, err := NewSnapshotter(SnapshotOptions{Dir: b.TempDir(), Window: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	_ = s.AddTopic(Topic{Name: "/x", Type: "std_msgs/msg/String"})
	data := make([]byte, 200)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		if err := s.Write("/x", at, at, data); err != nil {
			b.Fatal(err)
		}
	}
}
