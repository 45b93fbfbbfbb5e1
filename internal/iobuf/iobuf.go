// Package iobuf holds io buffers between processes on one host: a ring of
// fixed-size records in a shared-memory file (normally in /dev/shm), with
// one writer process and any number of reader processes, the way FABRIC
// subsystems of the original Velma exchange their command and status
// buffers.
//
// # Layout
//
// The file starts with a 64-byte header (magic, version, slot count, record
// size, a fingerprint of the record type, the writer's pid, a futex word, a
// waiter count and the sequence number of the newest record), followed by
// the slots. Record n (n = 1, 2, …, the sequence number) lives in slot
// (n−1) mod slots. A slot holds its own sequence word, a CRC-32C of the
// payload and the payload (seeded with n): the bytes of a Go value of the record type,
// which must contain no pointers (arrays, numbers and bools only), so a
// record is copied with one memmove and nothing is allocated per record.
//
// # Consistency
//
// Each slot is a seqlock. The writer marks the slot odd (2n−1, "record n is
// being written"), copies the payload and its checksum, marks it even (2n,
// "record n is complete"), then publishes n in the header and wakes waiting
// readers through the futex word. A reader copies the payload out and checks
// that the slot word was 2n before and after the copy and that the checksum
// of its copy matches; otherwise the record is torn (overwritten while it
// was read) or corrupt, and the reader never hands it to its caller. A
// reader that is too slow for the ring loses records (ErrOverwritten); a
// writer never waits for readers, so a stalled or dead reader cannot stall
// the writer.
//
// # Liveness
//
// The writer holds an exclusive flock on the file while it is open: a second
// writer of the same buffer is refused, and the lock disappears with the
// writer's process, whatever way it ends (WriterAlive). Sequence numbers
// survive a writer's restart (a new writer continues after the newest
// record), so readers keep their mapping across restarts. A missing or late
// record is for the reader to judge: Wait returns false at its deadline and
// the reader's state machine decides what that means.
//
// The checksum protects against torn and damaged records, not against a
// hostile process: anyone who can write the file can forge records.
//
// # Ownership
//
// Buffers live in a directory every local user may write (/dev/shm), and
// Velma's processes may run as root, so a buffer file is trusted only if it
// is ours. Create makes a new file with O_EXCL|O_NOFOLLOW and mode 0600, and
// opens an existing one with O_NOFOLLOW; Create and Open then check the
// open file (fstat, so nothing can be swapped in between): a regular file
// with one link, owned by the effective user, not writable by others. A
// symbolic link, a foreign file or a world-writable one is refused with
// ErrUnsafeFile and left untouched (the group may share a buffer on
// purpose: its write bit is allowed).
package iobuf

import (
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io/fs"
	"os"
	"reflect"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	magic      = 0x6675_6272_6f69_7366 // "fsiorbuf" little-endian-ish; any fixed value
	version    = 1
	headerSize = 64
	slotHeader = 16 // seq uint64, crc uint32, pad uint32
	// MaxSlots bounds the ring length.
	MaxSlots = 1 << 16
	// MaxRecord bounds one record's size.
	MaxRecord = 1 << 24
)

// header field offsets
const (
	offMagic   = 0
	offVersion = 8
	offSlots   = 12
	offSize    = 16
	offPID     = 20
	offLayout  = 24
	offFutex   = 32
	offWaiters = 36
	offHead    = 40
)

// Errors of Read.
var (
	ErrNotYet      = errors.New("iobuf: record not written yet")
	ErrOverwritten = errors.New("iobuf: record overwritten (reader too slow)")
	ErrTorn        = errors.New("iobuf: record torn or corrupt")
	// ErrUnsafeFile is wrapped by the errors of Create and Open for a path
	// that is not a buffer file of ours (see Ownership in the package
	// documentation).
	ErrUnsafeFile = errors.New("not a buffer file of ours")
)

// openFile opens path read-write without following a symbolic link;
// with create it first tries to create the file exclusively with mode
// 0600. The open file is then checked by checkOwned.
func openFile(path string, create bool) (*os.File, error) {
	if create {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("iobuf: %w", err)
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("iobuf %s: a symbolic link: %w (refusing to follow it)", path, ErrUnsafeFile)
	}
	if err != nil {
		return nil, fmt.Errorf("iobuf: %w", err)
	}
	if err := checkOwned(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkOwned refuses an open file that is not a regular file with one link,
// owned by the effective user and not writable by others.
func checkOwned(f *os.File, path string) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fmt.Errorf("iobuf %s: fstat: %w", path, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fmt.Errorf("iobuf %s: not a regular file (mode %#o): %w", path, st.Mode, ErrUnsafeFile)
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("iobuf %s: owned by uid %d, not by us (uid %d): %w", path, st.Uid, os.Geteuid(), ErrUnsafeFile)
	case st.Mode&0o002 != 0:
		return fmt.Errorf("iobuf %s: writable by every user (mode %#o): %w", path, st.Mode&0o7777, ErrUnsafeFile)
	case st.Nlink != 1:
		return fmt.Errorf("iobuf %s: %d hard links to it: %w", path, st.Nlink, ErrUnsafeFile)
	}
	return nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksum is the CRC-32C of a record's payload, seeded with its sequence
// number so that a complete record found under another sequence number (a
// damaged slot word) does not pass either.
func checksum(seq uint64, payload []byte) uint32 {
	return crc32.Update(uint32((seq*0x9E3779B97F4A7C15)>>32), castagnoli, payload)
}

// Fingerprint returns a hash of T's layout (type name, size, and every
// field's name, type, offset and size, recursively), stored in the header so
// that processes built from different versions of a record type refuse each
// other's buffers. It fails when T contains pointers, slices, maps,
// strings, interfaces, channels or functions.
func Fingerprint[T any]() (uint64, error) {
	t := reflect.TypeFor[T]()
	h := fnv.New64a()
	if err := describe(h, t, 0); err != nil {
		return 0, fmt.Errorf("iobuf: record type %v: %w", t, err)
	}
	return h.Sum64(), nil
}

type writer interface{ Write([]byte) (int, error) }

func describe(w writer, t reflect.Type, depth int) error {
	if depth > 32 {
		return errors.New("nested too deeply")
	}
	fmt.Fprintf(w, "%s/%s/%d;", t.PkgPath(), t.String(), t.Size())
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return nil
	case reflect.Array:
		fmt.Fprintf(w, "[%d]", t.Len())
		return describe(w, t.Elem(), depth+1)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			fmt.Fprintf(w, "{%s@%d:", f.Name, f.Offset)
			if err := describe(w, f.Type, depth+1); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
			fmt.Fprint(w, "}")
		}
		return nil
	}
	return fmt.Errorf("%v is not a plain value (a record must hold no pointers, slices, strings or maps)", t)
}

// mapping is a mapped buffer file.
type mapping struct {
	path  string
	f     *os.File
	mem   []byte
	slots uint64
	size  int // record size
	slot  int // slot stride
}

func align(n, a int) int { return (n + a - 1) / a * a }

func (m *mapping) u32(off int) *uint32 { return (*uint32)(unsafe.Pointer(&m.mem[off])) }
func (m *mapping) u64(off int) *uint64 { return (*uint64)(unsafe.Pointer(&m.mem[off])) }

func (m *mapping) slotOff(seq uint64) int {
	return headerSize + int((seq-1)%m.slots)*m.slot
}

func (m *mapping) close() error {
	var err error
	if m.mem != nil {
		err = unix.Munmap(m.mem)
		m.mem = nil
	}
	if m.f != nil {
		if cerr := m.f.Close(); err == nil {
			err = cerr
		}
		m.f = nil
	}
	return err
}

func fileSize(slots, size int) int {
	return headerSize + slots*align(slotHeader+size, 64)
}

// Writer publishes records of type T into a buffer file. Its methods must
// be called from one goroutine at a time.
type Writer[T any] struct {
	m mapping
}

// Create opens the buffer file at path for writing, creating it with the
// given number of slots if needed. An existing file with the same layout is
// reused and its sequence continues (readers that have it mapped keep
// working); one with another layout is re-initialised. It fails if another
// process holds the buffer open for writing.
func Create[T any](path string, slots int) (*Writer[T], error) {
	if slots < 1 || slots > MaxSlots {
		return nil, fmt.Errorf("iobuf %s: %d slots, want 1…%d", path, slots, MaxSlots)
	}
	layout, err := Fingerprint[T]()
	if err != nil {
		return nil, err
	}
	size := int(unsafe.Sizeof(*new(T)))
	if size > MaxRecord {
		return nil, fmt.Errorf("iobuf %s: record of %d bytes exceeds %d", path, size, MaxRecord)
	}
	f, err := openFile(path, true)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		pid := peekPID(f)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("iobuf %s: another process writes this buffer (pid %d)", path, pid)
		}
		return nil, fmt.Errorf("iobuf %s: lock: %w", path, err)
	}
	want := fileSize(slots, size)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("iobuf %s: %w", path, err)
	}
	if st.Size() == int64(want) {
		// map first and check the header
		mem, err := unix.Mmap(int(f.Fd()), 0, want, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("iobuf %s: mmap: %w", path, err)
		}
		w := &Writer[T]{m: mapping{path: path, f: f, mem: mem, slots: uint64(slots), size: size, slot: align(slotHeader+size, 64)}}
		if atomic.LoadUint64(w.m.u64(offMagic)) == magic && *w.m.u32(offVersion) == version &&
			*w.m.u32(offSlots) == uint32(slots) && *w.m.u32(offSize) == uint32(size) &&
			*w.m.u64(offLayout) == layout {
			atomic.StoreUint32(w.m.u32(offPID), uint32(os.Getpid()))
			w.fixTail()
			return w, nil
		}
		w.m.mem = nil
		if err := unix.Munmap(mem); err != nil {
			f.Close()
			return nil, fmt.Errorf("iobuf %s: munmap: %w", path, err)
		}
	}
	// (re-)initialise: clear the magic first so readers refuse the file
	// while it changes
	if st.Size() >= headerSize {
		if _, err := f.WriteAt(make([]byte, 8), offMagic); err != nil {
			f.Close()
			return nil, fmt.Errorf("iobuf %s: %w", path, err)
		}
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("iobuf %s: %w", path, err)
	}
	if err := f.Truncate(int64(want)); err != nil {
		f.Close()
		return nil, fmt.Errorf("iobuf %s: %w", path, err)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, want, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("iobuf %s: mmap: %w", path, err)
	}
	w := &Writer[T]{m: mapping{path: path, f: f, mem: mem, slots: uint64(slots), size: size, slot: align(slotHeader+size, 64)}}
	*w.m.u32(offVersion) = version
	*w.m.u32(offSlots) = uint32(slots)
	*w.m.u32(offSize) = uint32(size)
	*w.m.u64(offLayout) = layout
	atomic.StoreUint32(w.m.u32(offPID), uint32(os.Getpid()))
	atomic.StoreUint64(w.m.u64(offMagic), magic)
	return w, nil
}

// fixTail completes a record a dead writer left half-written: its slot word
// is odd; the record is dropped (marked as never written) so readers skip
// it, and the head stays at the last complete record.
func (w *Writer[T]) fixTail() {
	head := atomic.LoadUint64(w.m.u64(offHead))
	next := head + 1
	off := w.m.slotOff(next)
	if s := atomic.LoadUint64(w.m.u64(off)); s == 2*next-1 {
		atomic.StoreUint64(w.m.u64(off), 0)
	}
}

// peekPID reads the writer's pid from the header of the open file f.
func peekPID(f *os.File) int {
	var b [4]byte
	if _, err := f.ReadAt(b[:], offPID); err != nil {
		return 0
	}
	return int(*(*uint32)(unsafe.Pointer(&b[0])))
}

// Path returns the file's path.
func (w *Writer[T]) Path() string { return w.m.path }

// Head returns the sequence number of the newest record (0: none yet).
func (w *Writer[T]) Head() uint64 { return atomic.LoadUint64(w.m.u64(offHead)) }

// Write publishes v as the next record and returns its sequence number.
// It never blocks and allocates nothing.
func (w *Writer[T]) Write(v *T) uint64 {
	m := &w.m
	n := atomic.LoadUint64(m.u64(offHead)) + 1
	off := m.slotOff(n)
	seqw := m.u64(off)
	atomic.StoreUint64(seqw, 2*n-1)
	src := unsafe.Slice((*byte)(unsafe.Pointer(v)), m.size)
	copy(m.mem[off+slotHeader:off+slotHeader+m.size], src)
	atomic.StoreUint32(m.u32(off+8), checksum(n, src))
	atomic.StoreUint64(seqw, 2*n)
	atomic.StoreUint64(m.u64(offHead), n)
	atomic.AddUint32(m.u32(offFutex), 1)
	if atomic.LoadUint32(m.u32(offWaiters)) != 0 {
		futexWake(m.u32(offFutex))
	}
	return n
}

// Close unmaps the buffer and releases the writer's lock; the file stays
// for readers and for the next writer.
func (w *Writer[T]) Close() error { return w.m.close() }

// Remove closes the writer and deletes the file.
func (w *Writer[T]) Remove() error {
	err := w.m.close()
	if rerr := os.Remove(w.m.path); err == nil {
		err = rerr
	}
	return err
}

// Reader reads records of type T from a buffer file. Its methods must be
// called from one goroutine at a time; several readers (in one process or
// many) may read the same buffer.
type Reader[T any] struct {
	m    mapping
	torn uint64
}

// Open maps the buffer file at path for reading. It fails if the file does
// not exist yet, is not initialised or holds another record type; callers
// retry until the writer has created it.
func Open[T any](path string) (*Reader[T], error) {
	layout, err := Fingerprint[T]()
	if err != nil {
		return nil, err
	}
	size := int(unsafe.Sizeof(*new(T)))
	f, err := openFile(path, false)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("iobuf %s: %w", path, err)
	}
	if st.Size() < headerSize {
		f.Close()
		return nil, fmt.Errorf("iobuf %s: not initialised (%d bytes)", path, st.Size())
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("iobuf %s: mmap: %w", path, err)
	}
	r := &Reader[T]{m: mapping{path: path, f: f, mem: mem, size: size, slot: align(slotHeader+size, 64)}}
	fail := func(format string, a ...any) (*Reader[T], error) {
		r.m.close()
		return nil, fmt.Errorf("iobuf %s: "+format, append([]any{path}, a...)...)
	}
	if atomic.LoadUint64(r.m.u64(offMagic)) != magic {
		return fail("not initialised (bad magic)")
	}
	if v := *r.m.u32(offVersion); v != version {
		return fail("version %d, want %d", v, version)
	}
	if s := *r.m.u32(offSize); s != uint32(size) {
		return fail("records of %d bytes, want %d (another record type)", s, size)
	}
	if l := *r.m.u64(offLayout); l != layout {
		return fail("record layout %#x, want %#x (another version of the record type)", l, layout)
	}
	slots := int(*r.m.u32(offSlots))
	if slots < 1 || slots > MaxSlots || fileSize(slots, size) != int(st.Size()) {
		return fail("%d slots do not match the file size %d", slots, st.Size())
	}
	r.m.slots = uint64(slots)
	return r, nil
}

// Path returns the file's path.
func (r *Reader[T]) Path() string { return r.m.path }

// Head returns the sequence number of the newest complete record (0: none).
func (r *Reader[T]) Head() uint64 { return atomic.LoadUint64(r.m.u64(offHead)) }

// Torn returns how many reads found a torn or corrupt record.
func (r *Reader[T]) Torn() uint64 { return r.torn }

// WriterPID returns the pid the last writer recorded.
func (r *Reader[T]) WriterPID() int { return int(atomic.LoadUint32(r.m.u32(offPID))) }

// WriterAlive reports whether a process holds the buffer open for writing
// (its lock), i.e. the writer has not exited or died.
func (r *Reader[T]) WriterAlive() bool {
	fd := int(r.m.f.Fd())
	if err := unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB); err != nil {
		return true
	}
	_ = unix.Flock(fd, unix.LOCK_UN)
	return false
}

// Read copies record seq into dst. It returns ErrNotYet if the record has
// not been published, ErrOverwritten if the ring has moved past it, and
// ErrTorn if it changed while being copied or its checksum does not match;
// dst then holds garbage and must not be used. It allocates nothing.
func (r *Reader[T]) Read(seq uint64, dst *T) error {
	m := &r.m
	if seq == 0 || seq > atomic.LoadUint64(m.u64(offHead)) {
		return ErrNotYet
	}
	off := m.slotOff(seq)
	seqw := m.u64(off)
	s1 := atomic.LoadUint64(seqw)
	if s1 != 2*seq {
		if s1 > 2*seq {
			return ErrOverwritten
		}
		r.torn++
		return ErrTorn
	}
	d := unsafe.Slice((*byte)(unsafe.Pointer(dst)), m.size)
	copy(d, m.mem[off+slotHeader:off+slotHeader+m.size])
	sum := atomic.LoadUint32(m.u32(off + 8))
	if s2 := atomic.LoadUint64(seqw); s2 != s1 {
		if s2 > s1 {
			return ErrOverwritten
		}
		r.torn++
		return ErrTorn
	}
	if checksum(seq, d) != sum {
		r.torn++
		return ErrTorn
	}
	return nil
}

// Latest copies the newest readable record into dst and returns its
// sequence number, or 0 if there is none. It retries a few times when the
// writer overwrites the record while it is copied.
func (r *Reader[T]) Latest(dst *T) uint64 {
	for range 4 {
		h := r.Head()
		if h == 0 {
			return 0
		}
		switch err := r.Read(h, dst); err {
		case nil:
			return h
		case ErrTorn:
			if r.Head() == h {
				return 0 // damaged, not racing: give up
			}
		}
	}
	return 0
}

// Wait blocks until a record newer than seq is published or timeout
// passes, and reports whether one was. It sleeps on the futex word, so a
// writer wakes it within microseconds; it allocates nothing.
func (r *Reader[T]) Wait(seq uint64, timeout time.Duration) bool {
	m := &r.m
	deadline := time.Now().Add(timeout)
	fw := m.u32(offFutex)
	for {
		f := atomic.LoadUint32(fw)
		if atomic.LoadUint64(m.u64(offHead)) > seq {
			return true
		}
		d := time.Until(deadline)
		if d <= 0 {
			return false
		}
		atomic.AddUint32(m.u32(offWaiters), 1)
		futexWait(fw, f, d)
		atomic.AddUint32(m.u32(offWaiters), ^uint32(0))
	}
}

// Close unmaps the buffer.
func (r *Reader[T]) Close() error { return r.m.close() }
