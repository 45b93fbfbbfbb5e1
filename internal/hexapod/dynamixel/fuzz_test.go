package dynamixel

import (
	"errors"
	"testing"
)

// FuzzDriverReadStatus feeds arbitrary bytes to the status reader: it must
// never panic, and a successful read must return the requested servo's
// packet with a valid checksum.
func FuzzDriverReadStatus(f *testing.F) {
	f.Add([]byte{0xFF, 0xFF, 0x08, 0x04, 0x00, 0x23, 0x01, 0xCF})
	f.Add([]byte{0x00, 0xFF, 0xFF, 0xFF, 0x08, 0x01, 0xFF, 0xFF, 0x08, 0x02, 0x00, 0xF5})
	f.Add([]byte{0xFF, 0xFF, 0x08, 0xFF})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		p := &streamPort{in: in}
		d, err := New(p, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		st, err := d.transact(8, InstRead, AddrPresentPosition, 2)
		if err != nil {
			var se *StatusError
			if errors.As(err, &se) && st.ID != 8 {
				t.Fatalf("status error for id %d", st.ID)
			}
			return
		}
		if st.ID != 8 {
			t.Fatalf("status of id %d returned for id 8", st.ID)
		}
	})
}
