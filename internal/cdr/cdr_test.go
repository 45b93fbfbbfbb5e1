package cdr

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.NewReplacer(" ", "", "|", "").Replace(s))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// primCase is one primitive-level vector used in both directions: enc
// writes values, dec reads them back into a comparable value.
type primCase struct {
	name string
	big  bool
	enc  func(e *Encoder)
	dec  func(d *Decoder) any
	want any
	hex  string // full payload including header and final padding
}

type u8f64 struct {
	A uint8
	B float64
}

var primCases = []primCase{
	{
		name: "uint8 then float64: 7 pad bytes",
		enc:  func(e *Encoder) { e.Uint8(1); e.Float64(1) },
		dec:  func(d *Decoder) any { return u8f64{d.Uint8(), d.Float64()} },
		want: u8f64{1, 1},
		hex:  "00010000 | 01 00000000000000 | 000000000000f03f",
	},
	{
		name: "bool then int16 then int32",
		enc:  func(e *Encoder) { e.Bool(true); e.Int16(-2); e.Int32(3) },
		dec:  func(d *Decoder) any { return []any{d.Bool(), d.Int16(), d.Int32()} },
		want: []any{true, int16(-2), int32(3)},
		hex:  "00010000 | 01 00 feff | 03000000",
	},
	{
		name: "int8 uint16 uint32 uint64 int64: uint64 lands 8-aligned at 8 with no pad",
		enc:  func(e *Encoder) { e.Int8(-1); e.Uint16(0x0102); e.Uint32(0x03040506); e.Uint64(7); e.Int64(-1) },
		dec:  func(d *Decoder) any { return []any{d.Int8(), d.Uint16(), d.Uint32(), d.Uint64(), d.Int64()} },
		want: []any{int8(-1), uint16(0x0102), uint32(0x03040506), uint64(7), int64(-1)},
		hex:  "00010000 | ff 00 0201 | 06050403 | 0700000000000000 | ffffffffffffffff",
	},
	{
		name: "big endian mix",
		big:  true,
		enc:  func(e *Encoder) { e.Uint8(1); e.Uint16(0x0102); e.Float32(1); e.Float64(-2) },
		dec:  func(d *Decoder) any { return []any{d.Uint8(), d.Uint16(), d.Float32(), d.Float64()} },
		want: []any{uint8(1), uint16(0x0102), float32(1), float64(-2)},
		hex:  "00000000 | 01 00 0102 | 3f800000 | c000000000000000",
	},
	{
		name: "string after uint8 aligns the length",
		enc:  func(e *Encoder) { e.Uint8(9); e.String("ab") },
		dec:  func(d *Decoder) any { return []any{d.Uint8(), d.String()} },
		want: []any{uint8(9), "ab"},
		hex:  "00010000 | 09 000000 | 03000000 616200 | 00",
	},
	{
		name: "empty float64 slice writes no padding",
		enc:  func(e *Encoder) { e.Uint8(1); e.SeqLen(0); e.Float64s(nil); e.Uint8(2) },
		dec: func(d *Decoder) any {
			a := d.Uint8()
			n := d.SeqLen(8)
			return []any{a, n, d.Uint8()}
		},
		want: []any{uint8(1), 0, uint8(2)},
		hex:  "00010000 | 01 000000 | 00000000 | 02 | 000000",
	},
	{
		name: "float32 sequence aligned after a byte",
		enc:  func(e *Encoder) { e.SeqLen(1); e.RawBytes([]byte{7}); e.SeqLen(2); e.Float32s([]float32{1, 2}) },
		dec: func(d *Decoder) any {
			b := d.RawBytes(d.SeqLen(1))
			f := make([]float32, d.SeqLen(4))
			d.Float32s(f)
			return []any{b, f}
		},
		want: []any{[]byte{7}, []float32{1, 2}},
		hex:  "00010000 | 01000000 07 000000 | 02000000 | 0000803f 00000040",
	},
	{
		name: "int slices: 4 pad bytes before the int64 element at 16",
		enc: func(e *Encoder) {
			e.Int16s([]int16{-1})
			e.Uint16s([]uint16{2})
			e.Int32s([]int32{-3})
			e.Uint32s([]uint32{4})
			e.Int64s([]int64{-5})
			e.Uint64s([]uint64{6})
			e.Int8s([]int8{-7})
			e.Bools([]bool{true, false})
		},
		dec: func(d *Decoder) any {
			a, b, c, dd := make([]int16, 1), make([]uint16, 1), make([]int32, 1), make([]uint32, 1)
			f, g, h, i := make([]int64, 1), make([]uint64, 1), make([]int8, 1), make([]bool, 2)
			d.Int16s(a)
			d.Uint16s(b)
			d.Int32s(c)
			d.Uint32s(dd)
			d.Int64s(f)
			d.Uint64s(g)
			d.Int8s(h)
			d.Bools(i)
			return []any{a, b, c, dd, f, g, h, i}
		},
		want: []any{[]int16{-1}, []uint16{2}, []int32{-3}, []uint32{4}, []int64{-5}, []uint64{6}, []int8{-7}, []bool{true, false}},
		hex:  "00010000 | ffff 0200 | fdffffff | 04000000 | 00000000 | fbffffffffffffff | 0600000000000000 | f9 01 00 | 00",
	},
	{
		name: "float64 slice big endian",
		big:  true,
		enc:  func(e *Encoder) { e.Uint32(1); e.Float64s([]float64{0.5}) },
		dec: func(d *Decoder) any {
			n := d.Uint32()
			f := make([]float64, n)
			d.Float64s(f)
			return f
		},
		want: []float64{0.5},
		hex:  "00000000 | 00000001 | 00000000 | 3fe0000000000000",
	},
	{
		name: "wstring as 4-byte units",
		enc:  func(e *Encoder) { e.WString("hé") },
		dec:  func(d *Decoder) any { return d.WString() },
		want: "hé",
		hex:  "00010000 | 02000000 | 68000000 | e9000000",
	},
}

func TestPrimitivesEncode(t *testing.T) {
	for _, c := range primCases {
		e := NewEncoder(nil)
		if c.big {
			e = NewBigEndianEncoder(nil)
		}
		c.enc(e)
		if got, want := e.Bytes(), unhex(t, c.hex); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got % x\nwant % x", c.name, got, want)
		}
	}
}

func TestPrimitivesDecode(t *testing.T) {
	for _, c := range primCases {
		d, err := NewDecoder(unhex(t, c.hex))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := c.dec(d)
		if d.Err() != nil {
			t.Errorf("%s: %v", c.name, d.Err())
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.name, got, c.want)
		}
	}
}

func TestHeader(t *testing.T) {
	for _, c := range []struct {
		hex  string
		ok   bool
		big  bool
		text string
	}{
		{"", false, false, "cdr: bad encapsulation header: 0 bytes"},
		{"0001", false, false, "cdr: bad encapsulation header: 2 bytes"},
		{"00010000", true, false, ""},
		{"00010003", true, false, ""}, // options (padding count) ignored
		{"00000000", true, true, ""},
		{"00020000", false, false, "cdr: bad encapsulation header: 00 02"},
		{"01010000", false, false, "cdr: bad encapsulation header: 01 01"},
	} {
		d, err := NewDecoder(unhex(t, c.hex))
		if c.ok {
			if err != nil || d.big != c.big {
				t.Errorf("%s: err %v big %v", c.hex, err, d != nil && d.big)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrHeader) || err.Error() != c.text {
			t.Errorf("%s: error %v, want %q", c.hex, err, c.text)
		}
	}
}

func TestStickyError(t *testing.T) {
	d, err := NewDecoder(unhex(t, "00010000 | 01000000"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Uint32() != 1 {
		t.Fatal("first value")
	}
	if v := d.Float64(); v != 0 || !errors.Is(d.Err(), ErrShort) {
		t.Fatalf("read past end: %v %v", v, d.Err())
	}
	first := d.Err()
	if d.String() != "" || d.Uint8() != 0 || d.SeqLen(1) != 0 || d.RawBytes(1) != nil {
		t.Error("reads after an error must return zero values")
	}
	d.Fail(errors.New("later"))
	if d.Err() != first {
		t.Errorf("error changed to %v", d.Err())
	}
	if want := "cdr: payload too short: need 8 bytes at body offset 8"; first.Error() != want {
		t.Errorf("error text %q, want %q", first, want)
	}
}

func TestLengthChecks(t *testing.T) {
	cases := []struct {
		name string
		hex  string
		read func(d *Decoder)
		want error
		text string
	}{
		{"seq count beyond input", "00010000 | ffffffff | 00000000",
			func(d *Decoder) { d.SeqLen(1) }, ErrLength,
			"cdr: bad sequence length: 4294967295 elements of >= 1 bytes with 4 bytes left"},
		{"seq count times element size", "00010000 | 02000000 | 0000000000000000",
			func(d *Decoder) { d.SeqLen(8) }, ErrLength,
			"cdr: bad sequence length: 2 elements of >= 8 bytes with 8 bytes left"},
		{"bounded seq", "00010000 | 02000000 | 0000",
			func(d *Decoder) { d.BoundedSeqLen(1, 1) }, ErrLength,
			"cdr: bad sequence length: 2 elements exceed bound 1"},
		{"string length beyond input", "00010000 | 10000000 | 616200",
			func(d *Decoder) { _ = d.String() }, ErrString,
			"cdr: malformed string: length 16 with 3 bytes left"},
		{"string not NUL terminated", "00010000 | 02000000 | 6162",
			func(d *Decoder) { _ = d.String() }, ErrString, "cdr: malformed string: not NUL terminated"},
		{"bounded string", "00010000 | 04000000 | 61626300",
			func(d *Decoder) { _ = d.BoundedString(2) }, ErrLength,
			"cdr: bad sequence length: string of 3 bytes exceeds bound 2"},
		{"wstring beyond input", "00010000 | 05000000 | 61000000",
			func(d *Decoder) { _ = d.WString() }, ErrString,
			"cdr: malformed string: wstring of 5 units with 4 bytes left"},
		{"negative raw length", "00010000 | 00",
			func(d *Decoder) { d.RawBytes(-1) }, ErrShort, "cdr: payload too short: need -1 bytes at body offset 0"},
	}
	for _, c := range cases {
		d, err := NewDecoder(unhex(t, c.hex))
		if err != nil {
			t.Fatal(err)
		}
		c.read(d)
		if !errors.Is(d.Err(), c.want) || d.Err().Error() != c.text {
			t.Errorf("%s: error %v, want %q", c.name, d.Err(), c.text)
		}
	}
}

func TestStringZeroLengthAccepted(t *testing.T) {
	d, _ := NewDecoder(unhex(t, "00010000 | 00000000 | 07"))
	if s := d.String(); s != "" || d.Err() != nil || d.Uint8() != 7 {
		t.Errorf("zero-length string: %q %v", s, d.Err())
	}
}

func TestEncoderReset(t *testing.T) {
	e := NewEncoder(nil)
	e.Float64(math.Pi)
	buf := e.Bytes()
	e.Reset(buf)
	e.Uint8(1)
	if got := e.Bytes(); !bytes.Equal(got, unhex(t, "00010000 01000000")) {
		t.Errorf("after reset: % x", got)
	}
	if e.Len() != 5 { // header + one byte; the padding is not counted
		t.Errorf("Len %d", e.Len())
	}
}

func TestBytesThenContinue(t *testing.T) {
	e := NewEncoder(nil)
	e.Uint8(1)
	if got := e.Bytes(); !bytes.Equal(got, unhex(t, "00010000 01000000")) {
		t.Errorf("padded: % x", got)
	}
	e.Uint8(2) // must follow the first byte, not the padding
	if got := e.Bytes(); !bytes.Equal(got, unhex(t, "00010000 01020000")) {
		t.Errorf("continued: % x", got)
	}
}

func TestOffsets(t *testing.T) {
	d, _ := NewDecoder(unhex(t, "00010000 | 01 000000 | 02000000"))
	d.Uint8()
	if d.Offset() != 1 || d.Remaining() != 7 {
		t.Errorf("offset %d remaining %d", d.Offset(), d.Remaining())
	}
	d.Uint32()
	if d.Offset() != 8 || d.Remaining() != 0 {
		t.Errorf("offset %d remaining %d", d.Offset(), d.Remaining())
	}
}

func FuzzDecoder(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 3, 0, 0, 0, 'h', 'i', 0, 0})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 2, 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := NewDecoder(b)
		if err != nil {
			return
		}
		// A fixed read program over every reader; it must never panic and
		// never allocate more than the input justifies.
		for i := 0; i < 8 && d.Err() == nil; i++ {
			_ = d.String()
			_ = d.WString()
			n := d.SeqLen(8)
			d.Float64s(make([]float64, n))
			_ = d.RawBytes(d.SeqLen(1))
			_ = d.BoundedString(4)
			_ = d.Int16()
		}
	})
}
