package ros

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/dds"
)

func gslice(g dds.GUID) []byte { return g[:] }

func guid(b byte) dds.GUID {
	var g dds.GUID
	for i := range g {
		g[i] = b + byte(i)
	}
	return g
}

func TestParticipantInfoBytesJazzy(t *testing.T) {
	p := participantInfo{GID: guid(0x10), Nodes: []nodeEntities{{
		Namespace: "/", Name: "n",
		Readers: []dds.GUID{guid(0x20)},
	}}}
	got := encodeParticipantInfo(p, Jazzy)
	// header | gid(16) | node count 1 | ns "/" (len 2) | pad 2 | name "n" (len 2) | pad 2 |
	// readers 1 | gid(16) | writers 0
	want := "00010000" +
		hex.EncodeToString(gslice(guid(0x10))) +
		"01000000" + "02000000" + "2f00" + "0000" + "02000000" + "6e00" + "0000" +
		"01000000" + hex.EncodeToString(gslice(guid(0x20))) +
		"00000000"
	if hex.EncodeToString(got) != want {
		t.Errorf("jazzy bytes\n got %x\nwant %s", got, want)
	}
	back, err := decodeParticipantInfo(got, Jazzy)
	if err != nil || !reflect.DeepEqual(back, p) {
		t.Errorf("round trip = %+v, %v", back, err)
	}
}

func TestParticipantInfoHumbleGidIs24Bytes(t *testing.T) {
	p := participantInfo{GID: guid(1), Nodes: []nodeEntities{{Namespace: "/a", Name: "b", Writers: []dds.GUID{guid(2), guid(3)}}}}
	got := encodeParticipantInfo(p, Humble)
	if !bytes.Equal(got[4:20], gslice(guid(1))) || !bytes.Equal(got[20:28], make([]byte, 8)) {
		t.Errorf("humble gid not 16 bytes + 8 zeros: %x", got[4:28])
	}
	if len(got) != len(encodeParticipantInfo(p, Jazzy))+3*8 {
		t.Errorf("humble payload %d bytes, want jazzy + 24", len(got))
	}
	back, err := decodeParticipantInfo(got, Humble)
	if err != nil || !reflect.DeepEqual(back, p) {
		t.Errorf("round trip = %+v, %v", back, err)
	}
	// A Humble sample read as Jazzy must not decode to the same thing.
	if j, err := decodeParticipantInfo(got, Jazzy); err == nil && reflect.DeepEqual(j, p) {
		t.Error("humble sample decoded as jazzy unchanged")
	}
}

func TestDecodeParticipantInfoRejectsGarbage(t *testing.T) {
	good := encodeParticipantInfo(participantInfo{GID: guid(1), Nodes: []nodeEntities{{Namespace: "/", Name: "x"}}}, Jazzy)
	for n := 0; n < len(good)-3; n++ { // the last 3 bytes may be padding
		if _, err := decodeParticipantInfo(good[:n], Jazzy); err == nil {
			t.Errorf("truncated to %d bytes: no error", n)
		}
	}
	huge := append([]byte{0, 1, 0, 0}, make([]byte, 16)...)
	huge = append(huge, 0xff, 0xff, 0xff, 0x7f)
	if _, err := decodeParticipantInfo(huge, Jazzy); err == nil {
		t.Error("huge node count accepted")
	}
	long := encodeParticipantInfo(participantInfo{Nodes: []nodeEntities{{Namespace: "/" + strings.Repeat("a", 300), Name: "x"}}}, Jazzy)
	if _, err := decodeParticipantInfo(long, Jazzy); err == nil {
		t.Error("namespace above the 256 bound accepted")
	}
}

func TestCSIDString(t *testing.T) {
	var part dds.GUID
	copy(part[:], []byte{0x01, 0x0f, 0xa3, 0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0xaa, 0xbb, 0xcc, 0xdd})
	id := newCSID(part, 0x0102)
	if got, want := id.String(), "01.f.a3.0.10.20.30.40.50.60.70.80.0.0.1.2"; got != want {
		t.Errorf("csid = %s, want %s", got, want)
	}
	if got := newCSID(dds.GUID{0x0a}, 1).String(); !strings.HasPrefix(got, "0a.0.") {
		t.Errorf("first byte not zero padded: %s", got)
	}
}

func TestParseUserData(t *testing.T) {
	got := parseUserData([]byte("serviceid=01.2.3;typehash=RIHS01_ab;junk;=x;"))
	want := map[string]string{"serviceid": "01.2.3", "typehash": "RIHS01_ab"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseUserData = %v, want %v", got, want)
	}
	if typeHashUserData(Humble, "RIHS01_x") != "" || typeHashUserData(Jazzy, "") != "" {
		t.Error("typehash user data where none is due")
	}
	if got := typeHashUserData(Jazzy, "RIHS01_x"); got != "typehash=RIHS01_x;" {
		t.Errorf("typehash user data = %q", got)
	}
}
