package dds

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// shmConfig is loopbackConfig with shared memory on.
var shmConfig = strings.Replace(loopbackConfig, "</Domain>",
	"<SharedMemory><Enable>true</Enable><LogLevel>warn</LogLevel></SharedMemory></Domain>", 1)

// fixedLayout is struct { uint8 a; uint16 b[3]; uint64 c; float32 d; }
// as C lays it out: a@0, b@2..7, c@8, d@16, size 24. Its CDR body has the
// same offsets up to d and no trailing padding: 20 bytes.
var fixedLayout = &Layout{Size: 24, Runs: []Run{{0, 1, 1}, {2, 3, 2}, {8, 1, 8}, {16, 1, 4}}}

// fixedRaw returns the C memory of one fixedLayout sample (padding 0xEE,
// which must not reach the CDR) and its CDR (header included).
func fixedRaw(seed byte) (raw, cdr []byte) {
	raw = bytes.Repeat([]byte{0xEE}, 24)
	raw[0] = seed
	for i := 0; i < 3; i++ {
		binary.LittleEndian.PutUint16(raw[2+2*i:], uint16(seed)*256+uint16(i))
	}
	binary.LittleEndian.PutUint64(raw[8:], 0x0102030405060708+uint64(seed))
	binary.LittleEndian.PutUint32(raw[16:], 0x3f800000) // 1.0f
	cdr = append([]byte{0, 1, 0, 0, seed, 0}, raw[2:20]...)
	return raw, cdr
}

func TestLayoutCheck(t *testing.T) {
	bad := []*Layout{
		{Size: 8},                               // no runs
		{Size: 8, Runs: []Run{{0, 1, 3}}},       // size 3
		{Size: 8, Runs: []Run{{4, 1, 8}}},       // past the end
		{Size: 8, Runs: []Run{{0, 0, 4}}},       // empty run
		{Size: 8, Runs: []Run{{0, 1 << 31, 8}}}, // overflow
		{Size: 8, Runs: make([]Run, maxRuns+1)}, // too many
	}
	for i, l := range bad {
		if l.check() == nil {
			t.Errorf("layout %d: check passed", i)
		}
	}
	p := newTestParticipant(t, testenv.Domain(t))
	if _, err := p.TopicWithLayout("rt/bad_layout", "test::Bad_", bad[1]); err == nil {
		t.Error("TopicWithLayout took a bad layout")
	}
}

// TestSharedMemory runs a writer process and a reader process with shared
// memory on, and a reader here without it (a process has one
// configuration per domain; iceoryx's RouDi also stops the processes
// registered with it when it stops, so the test process stays out of
// iceoryx). Serialized samples of any type go through chunks; loans of a
// fixed-size type reach the shared-memory reader as the CDR made from
// their memory, and the network reader as the same CDR.
func TestSharedMemory(t *testing.T) {
	testenv.RouDi(t)
	domain := testenv.Domain(t)
	sub := startRoleLines(t, fmt.Sprintf("shmsub:%d", domain))
	if line := nextLine(t, sub, "shmsub"); line != "ready" {
		t.Fatalf("shmsub: %q", line)
	}
	p := newTestParticipant(t, domain) // no shared memory
	q := QoS{Reliability: Reliable, History: KeepLast, Depth: 16}
	var cs []*collector
	for _, tc := range shmTopics {
		if tc.shmOnly {
			cs = append(cs, nil)
			continue
		}
		tp, err := p.TopicWithLayout(tc.name, tc.typ, tc.layout)
		if err != nil {
			t.Fatal(err)
		}
		c := newCollector()
		if _, err := p.NewReader(tp, q, c.handle); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	pub := startRoleLines(t, fmt.Sprintf("shmpub:%d", domain))
	for line := nextLine(t, pub, "shmpub"); line != "done"; line = nextLine(t, pub, "shmpub") {
		t.Errorf("shmpub: %s", line)
	}
	want := shmSamples()
	got := map[string][]string{}
	n := 0
	for n < len(want[0])+len(want[1])+len(want[2]) {
		line := nextLine(t, sub, "shmsub")
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("shmsub: %q", line)
		}
		got[f[0]] = append(got[f[0]], f[1])
		n++
	}
	for i, tc := range shmTopics {
		for k, w := range want[i] {
			if k >= len(got[tc.name]) || got[tc.name][k] != hex.EncodeToString(w) {
				t.Errorf("shared-memory reader, %s sample %d:\n got %v\nwant %x", tc.name, k, got[tc.name], w)
			}
		}
		c := cs[i]
		if c == nil {
			continue
		}
		if i == 0 {
			want[i] = append(want[i], bigSample())
		}
		testenv.WaitFor(t, 20*time.Second, "the network reader's samples", func() bool { return c.count() >= len(want[i]) })
		for k, w := range want[i] {
			if g := c.get(k); !bytes.Equal(g, w) {
				t.Errorf("network reader, %s sample %d:\n got % x\nwant % x", tc.name, k, g, w)
			}
		}
	}
}

// nextLine returns the next line of a helper, failing the test when
// there is none within 20 s.
func nextLine(t *testing.T, ch <-chan string, who string) string {
	t.Helper()
	select {
	case line, ok := <-ch:
		if !ok {
			t.Fatalf("%s ended", who)
		}
		return line
	case <-time.After(20 * time.Second):
		t.Fatalf("%s printed nothing for 20 s", who)
	}
	return ""
}

// shmTopics are the topics of TestSharedMemory: a variable-size type and
// the fixed-size type of fixedLayout, with a reader on shared memory and
// one on the network each; and the fixed-size type with the reader on
// shared memory alone, where a loan is written without CDR.
var shmTopics = []struct {
	name, typ string
	layout    *Layout
	shmOnly   bool
}{
	{"rt/shm_serialized", "test::Var_", nil, false},
	{"rt/shm_loaned", "test::Fixed_", fixedLayout, false},
	{"rt/shm_loaned_only", "test::Fixed_", fixedLayout, true},
}

// bigSample is a serialized sample of 5 MiB: no chunk of testenv's RouDi
// configuration (4 MiB at most) holds it.
func bigSample() []byte { return append([]byte{0, 1, 0, 0}, payload(5<<20, 9)...) }

// shmSamples returns the CDR the readers of shmTopics must get.
func shmSamples() [3][][]byte {
	var out [3][][]byte
	out[0] = [][]byte{append([]byte{0, 1, 0, 0}, payload(1000, 7)...)}
	for seed := byte(1); seed <= 3; seed++ {
		_, cdr := fixedRaw(seed)
		out[1] = append(out[1], cdr)
		_, cdr = fixedRaw(seed + 10)
		out[2] = append(out[2], cdr)
	}
	return out
}

// runShmSub is the role "shmsub:<domain>": readers of shmTopics with
// shared memory; it prints "ready", then "<topic> <hex>" per sample.
func runShmSub(domain uint32) error {
	p, err := NewParticipant(domain, shmConfig, []byte("enclave=/;"))
	if err != nil {
		return err
	}
	defer p.Close()
	var mu sync.Mutex
	for _, tc := range shmTopics {
		tp, err := p.TopicWithLayout(tc.name, tc.typ, tc.layout)
		if err != nil {
			return err
		}
		name := tc.name
		r, err := p.NewReader(tp, QoS{Reliability: Reliable, History: KeepLast, Depth: 16}, func(batch []Sample) {
			mu.Lock()
			defer mu.Unlock()
			for _, s := range batch {
				fmt.Printf("%s %x\n", name, s.Data)
			}
		})
		if err != nil {
			return err
		}
		if !r.SharedMemory() {
			return fmt.Errorf("reader on %s has no shared memory", name)
		}
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// runShmPub is the role "shmpub:<domain>": writers of shmTopics with
// shared memory. Once each has two readers it writes shmSamples (the
// fixed-size ones as loans) and prints "done"; problems before that.
// MaxLoans loans can be out at once, and no more.
func runShmPub(domain uint32) error {
	p, err := NewParticipant(domain, shmConfig, []byte("enclave=/;"))
	if err != nil {
		return err
	}
	defer p.Close()
	var ws []*Writer
	for _, tc := range shmTopics {
		tp, err := p.TopicWithLayout(tc.name, tc.typ, tc.layout)
		if err != nil {
			return err
		}
		w, err := p.NewWriter(tp, QoS{Reliability: Reliable, History: KeepLast, Depth: 16})
		if err != nil {
			return err
		}
		ws = append(ws, w)
	}
	if !ws[0].SharedMemory() || ws[0].CanLoan() || !ws[1].CanLoan() {
		fmt.Printf("SharedMemory %v, CanLoan %v %v: want true, false true\n", ws[0].SharedMemory(), ws[0].CanLoan(), ws[1].CanLoan())
	}
	if _, err := ws[0].Loan(); !errors.Is(err, ErrNoLoan) {
		fmt.Printf("Loan on a variable-size type: %v, want ErrNoLoan\n", err)
	}
	for i, w := range ws {
		readers := 2
		if shmTopics[i].shmOnly {
			readers = 1
		}
		deadline := time.Now().Add(20 * time.Second)
		for m, _ := w.MatchedReaders(); len(m) < readers; m, _ = w.MatchedReaders() {
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: %d readers matched after 20 s", w.Topic().Name(), len(m))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	want := shmSamples()
	if err := ws[0].Write(want[0][0]); err != nil {
		return err
	}
	for seed := byte(1); seed <= 3; seed++ {
		for i, w := range ws[1:] {
			chunk, err := w.Loan()
			if err != nil {
				return err
			}
			raw, _ := fixedRaw(seed + byte(10*i))
			copy(unsafe.Slice((*byte)(chunk), len(raw)), raw)
			if err := w.WriteLoaned(chunk); err != nil {
				return err
			}
		}
	}
	var loans []unsafe.Pointer
	for range MaxLoans {
		chunk, err := ws[1].Loan()
		if err != nil {
			return err
		}
		loans = append(loans, chunk)
	}
	if _, err := ws[1].Loan(); err == nil || !strings.Contains(err.Error(), "loans are out") {
		fmt.Printf("loan %d: %v, want the limit's error\n", MaxLoans+1, err)
	}
	for _, chunk := range loans {
		if err := ws[1].ReturnLoan(chunk); err != nil {
			fmt.Printf("ReturnLoan: %v\n", err)
		}
	}
	if chunk, err := ws[1].Loan(); err != nil {
		fmt.Printf("Loan after returning them all: %v\n", err)
	} else if err := ws[1].ReturnLoan(chunk); err != nil {
		fmt.Printf("ReturnLoan: %v\n", err)
	}
	// Above RouDi's largest chunk: only the network reader gets it.
	if err := ws[0].Write(bigSample()); err != nil {
		fmt.Printf("Write of a sample above RouDi's largest chunk: %v\n", err)
	}
	fmt.Println("done")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}
