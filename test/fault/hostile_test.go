package fault

import (
	"bufio"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// corpus returns the []byte inputs of every fuzz corpus of the module
// (testdata/fuzz/<Target>/<file> in "go test fuzz v1" format).
func corpus(t *testing.T, root string) [][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "*", "testdata", "fuzz", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(root, "internal", "*", "testdata", "fuzz", "*", "*"))
	files = append(files, more...)
	var out [][]byte
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			line := sc.Text()
			if lit, ok := strings.CutPrefix(line, "[]byte("); ok && strings.HasSuffix(lit, ")") {
				if b, err := strconv.Unquote(strings.TrimSuffix(lit, ")")); err == nil {
					out = append(out, []byte(b))
				}
			}
		}
		fh.Close()
	}
	if len(out) < 20 {
		t.Fatalf("only %d corpus inputs under %s", len(out), root)
	}
	return out
}

// hostilePayloads builds the samples fired at one input: every corpus
// input as it is and behind a valid little-endian CDR header, plus
// generated garbage (truncated, random, absurd sequence lengths). For a
// service request (request is true) the body starts with the 16-byte
// request header rmw_cyclonedds expects (client id, sequence number).
func hostilePayloads(rng *rand.Rand, inputs [][]byte, request bool) [][]byte {
	hdr := []byte{0x00, 0x01, 0x00, 0x00}
	withHdr := func(body []byte) []byte {
		b := append(append([]byte{}, hdr...), body...)
		if request {
			reqHdr := make([]byte, 16)
			for i := range reqHdr {
				reqHdr[i] = byte(rng.UintN(256))
			}
			b = append(append(append([]byte{}, hdr...), reqHdr...), body...)
		}
		return b
	}
	var out [][]byte
	for _, in := range inputs {
		if len(in) >= 4 {
			out = append(out, in)
		}
		if len(in) > 4 {
			out = append(out, withHdr(in[4:]))
		}
		out = append(out, withHdr(in))
	}
	for _, n := range []int{0, 1, 3, 4, 7, 8, 15, 16, 33, 64, 257, 4096} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		out = append(out, withHdr(b))
	}
	for _, l := range []uint32{0xffffffff, 0x7fffffff, 1 << 28, 12345678} {
		b := binary.LittleEndian.AppendUint32(nil, l)
		out = append(out, withHdr(b), withHdr(append(b, 1, 2, 3, 4, 5, 6, 7, 8)), withHdr(append([]byte{0, 0, 0, 0}, b...)))
	}
	return out
}

// hostile fires hostile CDR at every topic a demo node subscribes to and
// every service it serves (including actions' and parameters' services),
// then requires every node to answer and none to have exited.
func (s *suite) hostile(t *testing.T) {
	inputs := corpus(t, s.d.root)
	rng := rand.New(rand.NewPCG(13, 13))
	c := s.o.n.Context()
	part := c.Participant()
	wq := dds.QoS{Reliability: dds.Reliable, Durability: dds.TransientLocal, History: dds.KeepAll}
	var topics, services int
	var samples, refused atomic.Int64
	fire := func(ddsTopic, ddsType string, payloads [][]byte) {
		tp, err := part.Topic(ddsTopic, ddsType)
		if err != nil {
			t.Errorf("topic %s: %v", ddsTopic, err)
			return
		}
		w, err := part.NewWriter(tp, wq)
		if err != nil {
			t.Errorf("writer on %s: %v", ddsTopic, err)
			return
		}
		defer w.Close()
		// Let the demo's readers match before writing.
		deadline := time.Now().Add(1500 * time.Millisecond)
		for time.Now().Before(deadline) {
			if m, err := w.MatchedReaders(); err == nil && len(m) > 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		for _, p := range payloads {
			if err := w.Write(p); err != nil {
				refused.Add(1) // a writer may refuse a malformed header; that is fine
				continue
			}
			samples.Add(1)
		}
		_ = w.WaitForAcks(3 * time.Second)
	}
	demoNode := func(ns, name string) bool {
		_, ok := s.d.procs[strings.TrimSuffix(ns, "/")+"/"+name]
		return ok
	}
	// Several inputs are attacked at once (each waits for its readers and
	// for the acknowledgements of what it wrote); the payloads are drawn in
	// order, so the corpus stays the same from run to run.
	var wg sync.WaitGroup
	slots := make(chan struct{}, 8)
	goFire := func(ddsTopic, ddsType string, payloads [][]byte) {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			fire(ddsTopic, ddsType, payloads)
		}()
	}
	start := time.Now()
	for _, nt := range c.TopicNamesAndTypes() {
		subscribed := false
		for _, e := range c.SubscriptionsInfo(nt.Name) {
			if demoNode(e.NodeNamespace, e.NodeName) {
				subscribed = true
			}
		}
		if !subscribed {
			continue
		}
		topics++
		for _, typ := range nt.Types {
			goFire("rt"+nt.Name, rosidl.DDSTypeName(typ), hostilePayloads(rng, inputs, false))
		}
	}
	for _, nt := range c.ServiceNamesAndTypes() {
		services++
		for _, typ := range nt.Types {
			goFire("rq"+nt.Name+"Request", rosidl.DDSTypeName(typ+"_Request"), hostilePayloads(rng, inputs, true))
		}
	}
	wg.Wait()
	t.Logf("fired %d hostile samples (%d refused by the writer) at %d subscribed topics and %d services in %.1f s",
		samples.Load(), refused.Load(), topics, services, time.Since(start).Seconds())
	if topics < 10 || services < 50 {
		t.Errorf("only %d topics and %d services found; the graph is incomplete", topics, services)
	}
	for _, fqn := range s.d.order {
		if fqn == nodeBoot {
			continue
		}
		if s.d.procs[fqn].exited() {
			t.Errorf("%s exited under hostile input", fqn)
			continue
		}
		s.answering(t, fqn, 30*time.Second)
		if out := s.d.procs[fqn].out.String(); strings.Contains(out, "panic:") {
			t.Errorf("%s panicked", fqn)
		}
	}
	// The robots still work: the simulator and the mux still publish.
	testenv.WaitFor(t, 10*time.Second, "diffbot odometry and mux output after the attack", func() bool {
		snap := s.o.get()
		return time.Since(snap.odomAt) < time.Second && time.Since(snap.cmdAt) < time.Second
	})
}
