package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
)

// Topic and type names of the benchmark (not ddsperf's, so the two never
// match each other).
const (
	dataTopic = "rt/fsm_bench_data"
	pingTopic = "rt/fsm_bench_ping"
	pongTopic = "rt/fsm_bench_pong"
	typeName  = "fsm_bench::msg::dds_::Blob_"
)

// pingQoS is ddsperf's ping/pong QoS: reliable, keep-last 1.
var pingQoS = dds.QoS{Reliability: dds.Reliable, History: dds.KeepLast, Depth: 1}

// dataQoS is the throughput QoS: reliable, keep-last depth (keep-all for
// depth 0), as ddsperf's -k option.
func dataQoS(depth int) dds.QoS {
	if depth == 0 {
		return dds.QoS{Reliability: dds.Reliable, History: dds.KeepAll}
	}
	return dds.QoS{Reliability: dds.Reliable, History: dds.KeepLast, Depth: int32(depth)}
}

// runRole runs one helper process of the benchmark.
func runRole(role string, domain uint32, dur time.Duration, depth int, out io.Writer) error {
	config := loopbackConfig()
	if role == "pub-batch" {
		// What ddsperf's dds_write_set_batch(true) does, via the config.
		config = loopbackConfigWith("<Internal><WriteBatch>true</WriteBatch></Internal>")
		role = "pub"
	}
	if dir := os.Getenv("FSM_BENCH_PROFILE"); dir != "" {
		f, err := os.Create(filepath.Join(dir, role+".pprof"))
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	p, err := dds.NewParticipant(domain, config, nil)
	if err != nil {
		return err
	}
	defer p.Close()
	switch role {
	case "sub":
		return roleSub(p, dur, dataQoS(depth), out)
	case "pub":
		return rolePub(p, dur, dataQoS(depth))
	case "ping":
		return rolePing(p, dur, out)
	case "pong":
		return rolePong(p, dur)
	}
	return fmt.Errorf("unknown role %q", role)
}

// newSample returns a sample: encapsulation header (CDR little endian)
// then payloadBody bytes starting with a sequence number.
func newSample() []byte {
	b := make([]byte, 4+payloadBody)
	b[1] = 0x01
	for i := 12; i < len(b); i++ {
		b[i] = 0xee
	}
	return b
}

// waitMatched waits until f reports at least one match.
func waitMatched(what string, f func() ([]dds.Endpoint, error)) error {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		m, err := f()
		if err != nil {
			return err
		}
		if len(m) > 0 {
			return nil
		}
		time.Sleep(2 * time.Millisecond)
	}
	return fmt.Errorf("%s: no match within 15 s", what)
}

func roleSub(p *dds.Participant, dur time.Duration, q dds.QoS, out io.Writer) error {
	t, err := p.Topic(dataTopic, typeName)
	if err != nil {
		return err
	}
	var count, lost atomic.Int64
	var next uint32
	r, err := p.NewReader(t, q, func(batch []dds.Sample) {
		for _, s := range batch {
			if len(s.Data) < 8 {
				continue
			}
			seq := binary.LittleEndian.Uint32(s.Data[4:])
			if seq > next && next != 0 {
				lost.Add(int64(seq - next))
			}
			next = seq + 1
		}
		count.Add(int64(len(batch)))
	})
	if err != nil {
		return err
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	end := time.After(dur)
	last, lastT := int64(0), time.Now()
	for {
		select {
		case now := <-tick.C:
			c := count.Load()
			// lost: gaps in the sequence numbers (the publisher's keep-last
			// history, UDP drops and our receive queue); queue-dropped: the
			// last of these alone (Reader.Dropped).
			fmt.Fprintf(out, "rate %.0f lost %d queue-dropped %d\n", float64(c-last)/now.Sub(lastT).Seconds(), lost.Load(), r.Dropped())
			last, lastT = c, now
		case <-end:
			return nil
		}
	}
}

func rolePub(p *dds.Participant, dur time.Duration, q dds.QoS) error {
	t, err := p.Topic(dataTopic, typeName)
	if err != nil {
		return err
	}
	w, err := p.NewWriter(t, q)
	if err != nil {
		return err
	}
	if err := waitMatched("publisher", w.MatchedReaders); err != nil {
		return err
	}
	b := newSample()
	end := time.Now().Add(dur)
	for seq := uint32(1); ; seq++ {
		binary.LittleEndian.PutUint32(b[4:], seq)
		if err := w.Write(b); err != nil {
			return err
		}
		if seq&1023 == 0 && time.Now().After(end) {
			return nil
		}
	}
}

func rolePong(p *dds.Participant, dur time.Duration) error {
	tin, err := p.Topic(pingTopic, typeName)
	if err != nil {
		return err
	}
	tout, err := p.Topic(pongTopic, typeName)
	if err != nil {
		return err
	}
	w, err := p.NewWriter(tout, pingQoS)
	if err != nil {
		return err
	}
	var werr atomic.Value
	if _, err := p.NewReader(tin, pingQoS, func(batch []dds.Sample) {
		for _, s := range batch {
			if err := w.Write(s.Data); err != nil {
				werr.Store(err)
			}
		}
	}); err != nil {
		return err
	}
	time.Sleep(dur)
	if e, ok := werr.Load().(error); ok {
		return e
	}
	return nil
}

func rolePing(p *dds.Participant, dur time.Duration, out io.Writer) error {
	tout, err := p.Topic(pingTopic, typeName)
	if err != nil {
		return err
	}
	tin, err := p.Topic(pongTopic, typeName)
	if err != nil {
		return err
	}
	w, err := p.NewWriter(tout, pingQoS)
	if err != nil {
		return err
	}
	var (
		mu       sync.Mutex
		rtts     = make([]time.Duration, 0, 1<<20)
		sentAt   time.Time
		seq      uint32
		progress atomic.Uint32
	)
	warmup := time.Now().Add(500 * time.Millisecond)
	b := newSample()
	send := func() error { // mu held
		seq++
		binary.LittleEndian.PutUint32(b[4:], seq)
		sentAt = time.Now()
		return w.Write(b)
	}
	r, err := p.NewReader(tin, pingQoS, func(batch []dds.Sample) {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		for _, s := range batch {
			if len(s.Data) >= 8 && binary.LittleEndian.Uint32(s.Data[4:]) == seq {
				if now.After(warmup) {
					rtts = append(rtts, now.Sub(sentAt))
				}
				progress.Add(1)
				_ = send()
			}
		}
	})
	if err != nil {
		return err
	}
	if err := waitMatched("ping writer", w.MatchedReaders); err != nil {
		return err
	}
	if err := waitMatched("pong reader", r.MatchedWriters); err != nil {
		return err
	}
	warmup = time.Now().Add(500 * time.Millisecond)
	mu.Lock()
	err = send()
	mu.Unlock()
	if err != nil {
		return err
	}
	// Resend if a round trip stalls (it should not with reliable QoS).
	end := time.Now().Add(dur)
	for last := uint32(0); time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
		if cur := progress.Load(); cur == last {
			mu.Lock()
			_ = send()
			mu.Unlock()
		} else {
			last = cur
		}
	}
	if err := r.Close(); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if len(rtts) == 0 {
		return errors.New("no round trips")
	}
	sort.Slice(rtts, func(i, j int) bool { return rtts[i] < rtts[j] })
	q := func(f float64) int64 { return int64(rtts[int(f*float64(len(rtts)-1))]) }
	fmt.Fprintf(out, "rtt n %d median %d p10 %d p90 %d p99 %d\n", len(rtts), q(0.5), q(0.1), q(0.9), q(0.99))
	return nil
}
