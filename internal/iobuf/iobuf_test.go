package iobuf

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// rec is a test record whose every field follows from its sequence number,
// so a reader can tell a consistent record from a mixed one.
type rec struct {
	Seq  uint64
	Vals [64]float64
	Flag bool
	Tail int32
}

func mk(seq uint64) rec {
	var r rec
	r.Seq = seq
	for i := range r.Vals {
		r.Vals[i] = float64(seq)*1000 + float64(i)
	}
	r.Flag = seq%2 == 1
	r.Tail = int32(seq)
	return r
}

func consistent(r *rec) bool { return *r == mk(r.Seq) }

func TestMain(m *testing.M) {
	if path := os.Getenv("IOBUF_CHILD_WRITER"); path != "" {
		os.Exit(childWriter(path))
	}
	os.Exit(m.Run())
}

// childWriter writes N records, one per millisecond, then holds the buffer
// until killed or stdin closes.
func childWriter(path string) int {
	n, _ := strconv.Atoi(os.Getenv("IOBUF_CHILD_N"))
	w, err := Create[rec](path, 8)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := 1; i <= n; i++ {
		r := mk(w.Head() + 1)
		w.Write(&r)
		time.Sleep(time.Millisecond)
	}
	fmt.Println("done")
	buf := make([]byte, 1)
	os.Stdin.Read(buf)
	return 0
}

func TestWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buf")
	w, err := Create[rec](path, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, err := Open[rec](path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got rec
	if err := r.Read(1, &got); !errors.Is(err, ErrNotYet) {
		t.Fatalf("read before write: %v, want ErrNotYet", err)
	}
	if s := r.Latest(&got); s != 0 {
		t.Fatalf("Latest on an empty buffer = %d", s)
	}
	for i := uint64(1); i <= 10; i++ {
		v := mk(i)
		if s := w.Write(&v); s != i {
			t.Fatalf("Write returned %d, want %d", s, i)
		}
	}
	if r.Head() != 10 {
		t.Fatalf("head %d", r.Head())
	}
	for i := uint64(7); i <= 10; i++ {
		if err := r.Read(i, &got); err != nil || got != mk(i) {
			t.Fatalf("Read(%d) = %v, %+v", i, err, got.Seq)
		}
	}
	if err := r.Read(6, &got); !errors.Is(err, ErrOverwritten) {
		t.Fatalf("Read(6) after 10 writes into 4 slots: %v, want ErrOverwritten", err)
	}
	if err := r.Read(11, &got); !errors.Is(err, ErrNotYet) {
		t.Fatalf("Read(11): %v", err)
	}
	if s := r.Latest(&got); s != 10 || got != mk(10) {
		t.Fatalf("Latest = %d", s)
	}
}

func TestWriterLockAndRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buf")
	w, err := Create[rec](path, 4)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open[rec](path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.WriterAlive() {
		t.Fatal("writer open but WriterAlive false")
	}
	if _, err := Create[rec](path, 4); err == nil {
		t.Fatal("second writer accepted")
	}
	v := mk(1)
	w.Write(&v)
	w.Write(&v)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if r.WriterAlive() {
		t.Fatal("writer closed but WriterAlive true")
	}
	w2, err := Create[rec](path, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	v = mk(3)
	if s := w2.Write(&v); s != 3 {
		t.Fatalf("restarted writer wrote seq %d, want 3 (continuing)", s)
	}
	var got rec
	if s := r.Latest(&got); s != 3 || got != v {
		t.Fatalf("reader of the old mapping sees %d after the restart", s)
	}
}

func TestLayoutMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buf")
	w, err := Create[rec](path, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	type other struct {
		Seq  uint64
		Vals [64]float64
		Flag bool
		Tail uint32 // same size, other type
	}
	if _, err := Open[other](path); err == nil {
		t.Fatal("reader of another record type accepted")
	}
	type ptr struct{ P *int }
	if _, err := Create[ptr](filepath.Join(t.TempDir(), "p"), 4); err == nil {
		t.Fatal("record with a pointer accepted")
	}
	if _, err := Open[rec](filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("missing file opened")
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, nil, 0o600)
	if _, err := Open[rec](empty); err == nil {
		t.Fatal("empty file opened")
	}
}

func TestTornAndCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buf")
	w, err := Create[rec](path, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, err := Open[rec](path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := uint64(1); i <= 3; i++ {
		v := mk(i)
		w.Write(&v)
	}
	var got rec
	// a writer that died in the middle of record 2: slot word odd
	off := w.m.slotOff(2)
	*w.m.u64(off) = 3
	if err := r.Read(2, &got); !errors.Is(err, ErrTorn) {
		t.Fatalf("half-written record: %v, want ErrTorn", err)
	}
	// a damaged payload byte
	w.m.mem[w.m.slotOff(3)+slotHeader+20] ^= 0x40
	if err := r.Read(3, &got); !errors.Is(err, ErrTorn) {
		t.Fatalf("damaged record: %v, want ErrTorn", err)
	}
	if s := r.Latest(&got); s != 0 {
		t.Fatalf("Latest returned damaged record %d", s)
	}
	if r.Torn() < 3 {
		t.Fatalf("torn count %d", r.Torn())
	}
	if err := r.Read(1, &got); err != nil || got != mk(1) {
		t.Fatalf("intact record 1: %v", err)
	}
}

// A dead writer's half-written record is dropped by the next writer.
func TestRestartAfterTornWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buf")
	w, err := Create[rec](path, 4)
	if err != nil {
		t.Fatal(err)
	}
	v := mk(1)
	w.Write(&v)
	*w.m.u64(w.m.slotOff(2)) = 3 // record 2 being written when the writer died
	w.Close()
	w2, err := Create[rec](path, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if h := w2.Head(); h != 1 {
		t.Fatalf("head %d after restart, want 1", h)
	}
	v = mk(2)
	w2.Write(&v)
	r, err := Open[rec](path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got rec
	if err := r.Read(2, &got); err != nil || got != v {
		t.Fatalf("record 2 after restart: %v", err)
	}
}

// Readers racing a fast writer never return a mixed record.
func TestConcurrentNeverTorn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buf")
	w, err := Create[rec](path, 2) // a short ring: readers are overtaken often
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const n = 200000
	var wg sync.WaitGroup
	var bad, ok, lost [2]int
	for k := range 2 {
		r, err := Open[rec](path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got rec
			for r.Head() < n {
				h := r.Head()
				switch err := r.Read(h, &got); {
				case err == nil:
					if got.Seq != h || !consistent(&got) {
						bad[k]++
					}
					ok[k]++
				default:
					lost[k]++
				}
			}
		}()
	}
	for i := uint64(1); i <= n; i++ {
		v := mk(i)
		w.Write(&v)
	}
	wg.Wait()
	for k := range 2 {
		t.Logf("reader %d: %d consistent reads, %d refused (overwritten or torn)", k, ok[k], lost[k])
		if bad[k] != 0 {
			t.Fatalf("reader %d returned %d mixed records", k, bad[k])
		}
	}
}

// A writer in another process wakes a reader blocked in Wait; the reader
// sees every record in order, and sees the writer die.
func TestCrossProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buf")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "IOBUF_CHILD_WRITER="+path, "IOBUF_CHILD_N=200")
	stdin, _ := cmd.StdinPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var r *Reader[rec]
	deadline := time.Now().Add(30 * time.Second)
	for {
		var err error
		if r, err = Open[rec](path); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child never created the buffer: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	defer r.Close()
	var got rec
	var seen, missed uint64
	last := uint64(0)
	for last < 200 {
		if !r.Wait(last, 30*time.Second) {
			t.Fatalf("no record after %d", last)
		}
		h := r.Head()
		for s := last + 1; s <= h; s++ {
			if err := r.Read(s, &got); err != nil {
				missed++
				continue
			}
			if got != mk(s) {
				t.Fatalf("record %d differs", s)
			}
			seen++
		}
		last = h
	}
	t.Logf("read %d records, %d overwritten before they were read", seen, missed)
	if !r.WriterAlive() {
		t.Fatal("writer alive but not reported")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if r.WriterAlive() {
		t.Fatal("killed writer still reported alive")
	}
	if r.Wait(last, 20*time.Millisecond) {
		t.Fatal("Wait returned a record after the writer died")
	}
}

func TestNoAllocations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buf")
	w, err := Create[rec](path, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, err := Open[rec](path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	v := mk(1)
	var got rec
	allocs := testing.AllocsPerRun(1000, func() {
		s := w.Write(&v)
		if !r.Wait(s-1, time.Millisecond) {
			t.Fatal("no record")
		}
		if err := r.Read(s, &got); err != nil {
			t.Fatal(err)
		}
		r.Latest(&got)
		r.Wait(s, 0) // times out at once
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per write/wait/read", allocs)
	}
}

// FuzzDamagedBuffer damages the bytes of a buffer file (header, slot words,
// checksums, payloads) and checks that a reader either refuses the file or
// only ever returns records exactly as they were written.
func FuzzDamagedBuffer(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0x40, 0, 1, 0xff})
	f.Add([]byte{0x40 + 8, 0, 0, 0x10, 0x80, 0x02, 0x33, 0x01})
	f.Add([]byte{40, 0, 0, 0x09})
	f.Fuzz(func(t *testing.T, damage []byte) {
		path := filepath.Join(t.TempDir(), "buf")
		w, err := Create[rec](path, 4)
		if err != nil {
			t.Fatal(err)
		}
		for i := uint64(1); i <= 6; i++ {
			v := mk(i)
			w.Write(&v)
		}
		mem := w.m.mem
		// damage: (offset hi, offset lo, xor) triples... in the header and slots
		for i := 0; i+2 < len(damage); i += 3 {
			off := (int(damage[i])<<8 | int(damage[i+1])) * 7 % len(mem)
			mem[off] ^= damage[i+2]
		}
		w.Close()
		r, err := Open[rec](path)
		if err != nil {
			return // refused: fine
		}
		defer r.Close()
		var got rec
		h := r.Head()
		for s := uint64(1); s <= min(h, 64) && s >= 1; s++ {
			if err := r.Read(s, &got); err == nil && got != mk(s) {
				t.Fatalf("damaged buffer: Read(%d) returned a record that was never written as %d", s, s)
			}
		}
		if s := r.Latest(&got); s != 0 && got != mk(s) {
			t.Fatalf("damaged buffer: Latest returned a wrong record %d", s)
		}
		r.Wait(h, 0)
	})
}

func BenchmarkWriteRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "buf")
	w, _ := Create[rec](path, 8)
	defer w.Close()
	r, _ := Open[rec](path)
	defer r.Close()
	v := mk(1)
	var got rec
	b.SetBytes(int64(2 * len(v.Vals) * 8))
	for range b.N {
		s := w.Write(&v)
		if r.Read(s, &got) != nil {
			b.Fatal("read")
		}
	}
}
