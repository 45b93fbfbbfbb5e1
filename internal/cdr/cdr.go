// Package cdr encodes and decodes XCDR1 ("classic CDR") payloads exactly as
// ROS 2's rmw_cyclonedds_cpp does: a 4-byte encapsulation header followed by
// a body whose primitives are aligned to their own size (capped at 8)
// relative to the first byte after the header.
//
// The Encoder always succeeds; it grows its buffer as needed. The Decoder
// keeps the first error it meets (sticky error) and returns zero values from
// then on, so generated code can read field after field and check Err once.
// Decoding never panics and never allocates more than the remaining input can
// justify: every length field is checked against the bytes left before any
// slice is made.
package cdr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf16"
	"unsafe"
)

// HeaderSize is the size of the encapsulation header that starts every
// serialized payload.
const HeaderSize = 4

// Encapsulation identifiers (byte 1 of the header).
const (
	idCDRBE = 0x00
	idCDRLE = 0x01
)

// Encoder appends an XCDR1 payload to a byte slice.
type Encoder struct {
	buf []byte
	big bool
}

// NewEncoder returns a little-endian encoder that appends to buf[:0] and has
// already written the encapsulation header 00 01 00 00.
func NewEncoder(buf []byte) *Encoder {
	e := &Encoder{}
	e.Reset(buf)
	return e
}

// NewBigEndianEncoder returns an encoder that writes CDR_BE (header
// 00 00 00 00). ROS 2 hosts are little endian; this exists for tests and for
// peers on big-endian machines.
func NewBigEndianEncoder(buf []byte) *Encoder {
	e := &Encoder{big: true}
	e.Reset(buf)
	return e
}

// Reset starts a new payload in buf[:0], keeping the byte order.
func (e *Encoder) Reset(buf []byte) {
	id := byte(idCDRLE)
	if e.big {
		id = idCDRBE
	}
	e.buf = append(buf[:0], 0x00, id, 0x00, 0x00)
}

// Bytes returns the payload, padded with zeros to a multiple of 4 bytes as
// rmw_cyclonedds_cpp does. The options bytes of the header stay zero. The
// padding is not part of the encoder's state: writing may continue after
// Bytes (the returned slice shares memory with the encoder's buffer).
func (e *Encoder) Bytes() []byte {
	b := e.buf
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// Len returns the number of bytes written so far, header included, without
// padding.
func (e *Encoder) Len() int { return len(e.buf) }

func (e *Encoder) align(n int) {
	for (len(e.buf)-HeaderSize)%n != 0 {
		e.buf = append(e.buf, 0)
	}
}

// Bool writes a boolean as one byte, 0 or 1.
func (e *Encoder) Bool(v bool) {
	if v {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

// Uint8 writes one byte.
func (e *Encoder) Uint8(v uint8) { e.buf = append(e.buf, v) }

// Int8 writes one signed byte.
func (e *Encoder) Int8(v int8) { e.buf = append(e.buf, byte(v)) }

// Uint16 writes v aligned to 2.
func (e *Encoder) Uint16(v uint16) {
	e.align(2)
	if e.big {
		e.buf = binary.BigEndian.AppendUint16(e.buf, v)
	} else {
		e.buf = binary.LittleEndian.AppendUint16(e.buf, v)
	}
}

// Int16 writes v aligned to 2.
func (e *Encoder) Int16(v int16) { e.Uint16(uint16(v)) }

// Uint32 writes v aligned to 4.
func (e *Encoder) Uint32(v uint32) {
	e.align(4)
	if e.big {
		e.buf = binary.BigEndian.AppendUint32(e.buf, v)
	} else {
		e.buf = binary.LittleEndian.AppendUint32(e.buf, v)
	}
}

// Int32 writes v aligned to 4.
func (e *Encoder) Int32(v int32) { e.Uint32(uint32(v)) }

// Uint64 writes v aligned to 8.
func (e *Encoder) Uint64(v uint64) {
	e.align(8)
	if e.big {
		e.buf = binary.BigEndian.AppendUint64(e.buf, v)
	} else {
		e.buf = binary.LittleEndian.AppendUint64(e.buf, v)
	}
}

// Int64 writes v aligned to 8.
func (e *Encoder) Int64(v int64) { e.Uint64(uint64(v)) }

// Float32 writes an IEEE-754 single aligned to 4.
func (e *Encoder) Float32(v float32) { e.Uint32(math.Float32bits(v)) }

// Float64 writes an IEEE-754 double aligned to 8.
func (e *Encoder) Float64(v float64) { e.Uint64(math.Float64bits(v)) }

// String writes a CDR string: uint32 length including the NUL, the bytes,
// then the NUL.
func (e *Encoder) String(s string) {
	e.Uint32(uint32(len(s) + 1))
	e.buf = append(e.buf, s...)
	e.buf = append(e.buf, 0)
}

// SeqLen writes the element count of a sequence.
func (e *Encoder) SeqLen(n int) { e.Uint32(uint32(n)) }

// RawBytes appends bytes with no length and no alignment (uint8/byte/char
// arrays and the elements of byte sequences).
func (e *Encoder) RawBytes(b []byte) { e.buf = append(e.buf, b...) }

// WString writes a wstring as rmw_cyclonedds does on Linux: uint32 count of
// UTF-16 code units (no terminator), then each unit as a 4-byte wchar_t.
func (e *Encoder) WString(s string) {
	units := utf16.Encode([]rune(s))
	e.Uint32(uint32(len(units)))
	for _, u := range units {
		e.put32(uint32(u))
	}
}

func (e *Encoder) put16(v uint16) {
	if e.big {
		e.buf = binary.BigEndian.AppendUint16(e.buf, v)
	} else {
		e.buf = binary.LittleEndian.AppendUint16(e.buf, v)
	}
}

func (e *Encoder) put32(v uint32) {
	if e.big {
		e.buf = binary.BigEndian.AppendUint32(e.buf, v)
	} else {
		e.buf = binary.LittleEndian.AppendUint32(e.buf, v)
	}
}

func (e *Encoder) put64(v uint64) {
	if e.big {
		e.buf = binary.BigEndian.AppendUint64(e.buf, v)
	} else {
		e.buf = binary.LittleEndian.AppendUint64(e.buf, v)
	}
}

// grow makes room for n more bytes in one allocation.
func (e *Encoder) grow(n int) {
	if cap(e.buf)-len(e.buf) < n {
		nb := make([]byte, len(e.buf), 2*cap(e.buf)+n)
		copy(nb, e.buf)
		e.buf = nb
	}
}

// The slice writers below write the elements of an array or sequence (no
// count): the first element is aligned to the element size, the rest follow
// back to back. An empty slice writes nothing, not even padding.

// Bools writes bool elements, one byte each.
func (e *Encoder) Bools(v []bool) {
	e.grow(len(v))
	for _, x := range v {
		e.Bool(x)
	}
}

// Int8s writes int8 elements.
func (e *Encoder) Int8s(v []int8) {
	e.buf = append(e.buf, int8Bytes(v)...)
}

// int8Bytes views v as bytes (same size, same bits).
func int8Bytes(v []int8) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v))
}

// Int16s writes int16 elements.
func (e *Encoder) Int16s(v []int16) {
	if len(v) == 0 {
		return
	}
	e.align(2)
	e.grow(2 * len(v))
	for _, x := range v {
		e.put16(uint16(x))
	}
}

// Uint16s writes uint16 elements.
func (e *Encoder) Uint16s(v []uint16) {
	if len(v) == 0 {
		return
	}
	e.align(2)
	e.grow(2 * len(v))
	for _, x := range v {
		e.put16(x)
	}
}

// Int32s writes int32 elements.
func (e *Encoder) Int32s(v []int32) {
	if len(v) == 0 {
		return
	}
	e.align(4)
	e.grow(4 * len(v))
	for _, x := range v {
		e.put32(uint32(x))
	}
}

// Uint32s writes uint32 elements.
func (e *Encoder) Uint32s(v []uint32) {
	if len(v) == 0 {
		return
	}
	e.align(4)
	e.grow(4 * len(v))
	for _, x := range v {
		e.put32(x)
	}
}

// Int64s writes int64 elements.
func (e *Encoder) Int64s(v []int64) {
	if len(v) == 0 {
		return
	}
	e.align(8)
	e.grow(8 * len(v))
	for _, x := range v {
		e.put64(uint64(x))
	}
}

// Uint64s writes uint64 elements.
func (e *Encoder) Uint64s(v []uint64) {
	if len(v) == 0 {
		return
	}
	e.align(8)
	e.grow(8 * len(v))
	for _, x := range v {
		e.put64(x)
	}
}

// Float64s writes the elements of a float64 array or sequence (no count).
func (e *Encoder) Float64s(v []float64) {
	if len(v) == 0 {
		return
	}
	e.align(8)
	e.grow(8 * len(v))
	for _, x := range v {
		e.put64(math.Float64bits(x))
	}
}

// Float32s writes the elements of a float32 array or sequence (no count).
func (e *Encoder) Float32s(v []float32) {
	if len(v) == 0 {
		return
	}
	e.align(4)
	e.grow(4 * len(v))
	for _, x := range v {
		e.put32(math.Float32bits(x))
	}
}

// Errors reported by the Decoder. Use errors.Is to test for them.
var (
	// ErrShort means the payload ended before the value.
	ErrShort = errors.New("cdr: payload too short")
	// ErrHeader means the encapsulation header is missing or not CDR.
	ErrHeader = errors.New("cdr: bad encapsulation header")
	// ErrString means a string is not NUL terminated or its length is bad.
	ErrString = errors.New("cdr: malformed string")
	// ErrLength means a sequence count cannot fit in the remaining bytes or
	// exceeds its declared bound.
	ErrLength = errors.New("cdr: bad sequence length")
)

// Decoder reads an XCDR1 payload. The zero value is not usable; call
// NewDecoder.
type Decoder struct {
	buf []byte
	off int
	big bool
	err error
}

// NewDecoder checks the encapsulation header of payload and returns a
// decoder positioned at the start of the body. Byte 1 selects the byte order
// (0x01 little endian, 0x00 big endian); the options bytes are ignored, and
// trailing padding is accepted.
func NewDecoder(payload []byte) (*Decoder, error) {
	d := &Decoder{}
	if err := d.Reset(payload); err != nil {
		return nil, err
	}
	return d, nil
}

// Reset reuses d for a new payload.
func (d *Decoder) Reset(payload []byte) error {
	*d = Decoder{buf: payload, off: HeaderSize}
	if len(payload) < HeaderSize {
		d.err = fmt.Errorf("%w: %d bytes", ErrHeader, len(payload))
		return d.err
	}
	if payload[0] != 0 || payload[1] > idCDRLE {
		d.err = fmt.Errorf("%w: % x", ErrHeader, payload[:2])
		return d.err
	}
	d.big = payload[1] == idCDRBE
	return nil
}

// Err returns the first error met, or nil.
func (d *Decoder) Err() error { return d.err }

// Fail records err (if no error is recorded yet), so generated code can
// report semantic problems such as a bound violation.
func (d *Decoder) Fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// Remaining returns the number of unread bytes (including any padding).
func (d *Decoder) Remaining() int {
	if d.off >= len(d.buf) {
		return 0
	}
	return len(d.buf) - d.off
}

// Offset returns the read position relative to the start of the body.
func (d *Decoder) Offset() int { return d.off - HeaderSize }

func (d *Decoder) take(n, align int) []byte {
	if d.err != nil {
		return nil
	}
	if align > 1 {
		if r := (d.off - HeaderSize) % align; r != 0 {
			d.off += align - r
		}
	}
	if n < 0 || d.off > len(d.buf) || n > len(d.buf)-d.off {
		d.err = fmt.Errorf("%w: need %d bytes at body offset %d", ErrShort, n, d.off-HeaderSize)
		return nil
	}
	b := d.buf[d.off : d.off+n]
	d.off += n
	return b
}

// Bool reads one byte; any non-zero value is true.
func (d *Decoder) Bool() bool {
	b := d.take(1, 1)
	return b != nil && b[0] != 0
}

// Uint8 reads one byte.
func (d *Decoder) Uint8() uint8 {
	if b := d.take(1, 1); b != nil {
		return b[0]
	}
	return 0
}

// Int8 reads one signed byte.
func (d *Decoder) Int8() int8 { return int8(d.Uint8()) }

// Uint16 reads a uint16 aligned to 2.
func (d *Decoder) Uint16() uint16 {
	b := d.take(2, 2)
	if b == nil {
		return 0
	}
	if d.big {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

// Int16 reads an int16 aligned to 2.
func (d *Decoder) Int16() int16 { return int16(d.Uint16()) }

// Uint32 reads a uint32 aligned to 4.
func (d *Decoder) Uint32() uint32 {
	b := d.take(4, 4)
	if b == nil {
		return 0
	}
	if d.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

// Int32 reads an int32 aligned to 4.
func (d *Decoder) Int32() int32 { return int32(d.Uint32()) }

// Uint64 reads a uint64 aligned to 8.
func (d *Decoder) Uint64() uint64 {
	b := d.take(8, 8)
	if b == nil {
		return 0
	}
	if d.big {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

// Int64 reads an int64 aligned to 8.
func (d *Decoder) Int64() int64 { return int64(d.Uint64()) }

// Float32 reads an IEEE-754 single aligned to 4.
func (d *Decoder) Float32() float32 { return math.Float32frombits(d.Uint32()) }

// Float64 reads an IEEE-754 double aligned to 8.
func (d *Decoder) Float64() float64 { return math.Float64frombits(d.Uint64()) }

// String reads a CDR string. A length of 0 is accepted as the empty string
// (as rmw_cyclonedds does); otherwise the last counted byte must be NUL.
func (d *Decoder) String() string {
	n := d.Uint32()
	if d.err != nil || n == 0 {
		return ""
	}
	if uint64(n) > uint64(d.Remaining()) {
		d.err = fmt.Errorf("%w: length %d with %d bytes left", ErrString, n, d.Remaining())
		return ""
	}
	b := d.take(int(n), 1)
	if b == nil {
		return ""
	}
	if b[n-1] != 0 {
		d.err = fmt.Errorf("%w: not NUL terminated", ErrString)
		return ""
	}
	return string(b[:n-1])
}

// BoundedString reads a string and fails if it is longer than max bytes.
func (d *Decoder) BoundedString(max int) string {
	s := d.String()
	if len(s) > max {
		d.Fail(fmt.Errorf("%w: string of %d bytes exceeds bound %d", ErrLength, len(s), max))
		return ""
	}
	return s
}

// SeqLen reads a sequence count and checks that count elements of at least
// minElemSize bytes each can fit in the remaining input, so callers may
// allocate count elements safely. minElemSize must be at least 1 (use 1 for
// elements whose size is not known, such as nested messages; a nested
// message is never smaller than one byte). On error it returns 0.
func (d *Decoder) SeqLen(minElemSize int) int {
	n := d.Uint32()
	if d.err != nil {
		return 0
	}
	if minElemSize < 1 {
		minElemSize = 1
	}
	if uint64(n)*uint64(minElemSize) > uint64(d.Remaining()) {
		d.err = fmt.Errorf("%w: %d elements of >= %d bytes with %d bytes left", ErrLength, n, minElemSize, d.Remaining())
		return 0
	}
	return int(n)
}

// BoundedSeqLen is SeqLen that also rejects counts above max.
func (d *Decoder) BoundedSeqLen(minElemSize, max int) int {
	n := d.SeqLen(minElemSize)
	if n > max {
		d.Fail(fmt.Errorf("%w: %d elements exceed bound %d", ErrLength, n, max))
		return 0
	}
	return n
}

// RawBytes reads n bytes with no alignment and returns a copy.
func (d *Decoder) RawBytes(n int) []byte {
	b := d.take(n, 1)
	if b == nil {
		return nil
	}
	// make(len(b)) then copy: the compiler allocates without zeroing
	// first (makeslicecopy), which matters for a 1 MiB payload.
	out := make([]byte, len(b))
	copy(out, b)
	return out
}

// ReadRawBytes fills dst with the next len(dst) bytes (fixed byte arrays).
func (d *Decoder) ReadRawBytes(dst []byte) {
	if b := d.take(len(dst), 1); b != nil {
		copy(dst, b)
	}
}

// WString reads a wstring written as by Encoder.WString. Each 4-byte unit
// carries one UTF-16 code unit in its low 16 bits.
func (d *Decoder) WString() string {
	n := d.Uint32()
	if d.err != nil || n == 0 {
		return ""
	}
	if uint64(n)*4 > uint64(d.Remaining()) {
		d.err = fmt.Errorf("%w: wstring of %d units with %d bytes left", ErrString, n, d.Remaining())
		return ""
	}
	units := make([]uint16, n)
	for i := range units {
		units[i] = uint16(d.Uint32())
	}
	return string(utf16.Decode(units))
}

func (d *Decoder) get16(b []byte) uint16 {
	if d.big {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (d *Decoder) get32(b []byte) uint32 {
	if d.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (d *Decoder) get64(b []byte) uint64 {
	if d.big {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

// The slice readers below fill dst with len(dst) elements of an array, or
// of a sequence whose count was read with SeqLen. An empty dst reads
// nothing.

// Bools fills dst with bool elements; any non-zero byte is true.
func (d *Decoder) Bools(dst []bool) {
	if b := d.take(len(dst), 1); b != nil {
		for i := range dst {
			dst[i] = b[i] != 0
		}
	}
}

// Int8s fills dst with int8 elements.
func (d *Decoder) Int8s(dst []int8) {
	if b := d.take(len(dst), 1); b != nil {
		copy(int8Bytes(dst), b)
	}
}

// Int16s fills dst with int16 elements.
func (d *Decoder) Int16s(dst []int16) {
	if len(dst) == 0 {
		return
	}
	if b := d.take(2*len(dst), 2); b != nil {
		for i := range dst {
			dst[i] = int16(d.get16(b[2*i:]))
		}
	}
}

// Uint16s fills dst with uint16 elements.
func (d *Decoder) Uint16s(dst []uint16) {
	if len(dst) == 0 {
		return
	}
	if b := d.take(2*len(dst), 2); b != nil {
		for i := range dst {
			dst[i] = d.get16(b[2*i:])
		}
	}
}

// Int32s fills dst with int32 elements.
func (d *Decoder) Int32s(dst []int32) {
	if len(dst) == 0 {
		return
	}
	if b := d.take(4*len(dst), 4); b != nil {
		for i := range dst {
			dst[i] = int32(d.get32(b[4*i:]))
		}
	}
}

// Uint32s fills dst with uint32 elements.
func (d *Decoder) Uint32s(dst []uint32) {
	if len(dst) == 0 {
		return
	}
	if b := d.take(4*len(dst), 4); b != nil {
		for i := range dst {
			dst[i] = d.get32(b[4*i:])
		}
	}
}

// Int64s fills dst with int64 elements.
func (d *Decoder) Int64s(dst []int64) {
	if len(dst) == 0 {
		return
	}
	if b := d.take(8*len(dst), 8); b != nil {
		for i := range dst {
			dst[i] = int64(d.get64(b[8*i:]))
		}
	}
}

// Uint64s fills dst with uint64 elements.
func (d *Decoder) Uint64s(dst []uint64) {
	if len(dst) == 0 {
		return
	}
	if b := d.take(8*len(dst), 8); b != nil {
		for i := range dst {
			dst[i] = d.get64(b[8*i:])
		}
	}
}

// Float64s fills dst with float64 elements (arrays, or sequences after
// SeqLen).
func (d *Decoder) Float64s(dst []float64) {
	if len(dst) == 0 {
		return
	}
	if b := d.take(8*len(dst), 8); b != nil {
		for i := range dst {
			dst[i] = math.Float64frombits(d.get64(b[8*i:]))
		}
	}
}

// Float32s fills dst with float32 elements.
func (d *Decoder) Float32s(dst []float32) {
	if len(dst) == 0 {
		return
	}
	if b := d.take(4*len(dst), 4); b != nil {
		for i := range dst {
			dst[i] = math.Float32frombits(d.get32(b[4*i:]))
		}
	}
}
