package dds

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// BenchmarkWrite measures the write path (one cgo call, one serdata
// allocation, dds_writecdr) for 1 KiB samples with no matched reader.
func BenchmarkWrite(b *testing.B) {
	p := newTestParticipant(b, testenv.Domain(b))
	tp, err := p.Topic("rt/bench_write", "bench::W_")
	if err != nil {
		b.Fatal(err)
	}
	w, err := p.NewWriter(tp, QoS{History: KeepLast, Depth: 10})
	if err != nil {
		b.Fatal(err)
	}
	data := payload(1024, 1)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := w.Write(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteTake measures writing 1 KiB samples to a reader of
// another participant in the same process and delivering them to its
// handler: the writer's thread runs the reader's listener (local delivery),
// the receive goroutine copies batches out of the hub queue into its
// reused buffer (plus its wake-ups).
func BenchmarkWriteTake(b *testing.B) {
	for _, size := range []int{64, 1024, 64 << 10} {
		b.Run(byteSize(size), func(b *testing.B) {
			domain := testenv.Domain(b)
			a := newTestParticipant(b, domain)
			c := newTestParticipant(b, domain)
			ta, _ := a.Topic("rt/bench_take", "bench::T_")
			tc, _ := c.Topic("rt/bench_take", "bench::T_")
			var got atomic.Int64
			if _, err := c.NewReader(tc, QoS{History: KeepAll}, func(batch []Sample) {
				got.Add(int64(len(batch)))
			}); err != nil {
				b.Fatal(err)
			}
			w, err := a.NewWriter(ta, QoS{History: KeepAll})
			if err != nil {
				b.Fatal(err)
			}
			testenv.WaitFor(b, 10*time.Second, "match", func() bool { m, _ := w.MatchedReaders(); return len(m) == 1 })
			data := payload(size, 2)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := w.Write(data); err != nil {
					b.Fatal(err)
				}
			}
			for got.Load() < int64(b.N) {
				time.Sleep(50 * time.Microsecond)
			}
		})
	}
}

// BenchmarkRoundTrip measures a ping-pong round trip between two
// participants of this process (handler to handler).
func BenchmarkRoundTrip(b *testing.B) {
	domain := testenv.Domain(b)
	a := newTestParticipant(b, domain)
	c := newTestParticipant(b, domain)
	pingA, _ := a.Topic("rt/bench_ping", "bench::P_")
	pongA, _ := a.Topic("rt/bench_pong", "bench::P_")
	pingC, _ := c.Topic("rt/bench_ping", "bench::P_")
	pongC, _ := c.Topic("rt/bench_pong", "bench::P_")
	q := QoS{History: KeepLast, Depth: 1}
	wPong, _ := c.NewWriter(pongC, q)
	if _, err := c.NewReader(pingC, q, func(batch []Sample) {
		for _, s := range batch {
			_ = wPong.Write(s.Data)
		}
	}); err != nil {
		b.Fatal(err)
	}
	wPing, _ := a.NewWriter(pingA, q)
	done := make(chan struct{}, 1)
	if _, err := a.NewReader(pongA, q, func(batch []Sample) { done <- struct{}{} }); err != nil {
		b.Fatal(err)
	}
	testenv.WaitFor(b, 10*time.Second, "match", func() bool {
		m1, _ := wPing.MatchedReaders()
		m2, _ := wPong.MatchedReaders()
		return len(m1) == 1 && len(m2) == 1
	})
	data := payload(1024, 3)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := wPing.Write(data); err != nil {
			b.Fatal(err)
		}
		<-done
	}
}

func byteSize(n int) string {
	switch {
	case n >= 1<<10 && n%(1<<10) == 0:
		return itoa(n>>10) + "KiB"
	}
	return itoa(n) + "B"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
