package cli

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// spdpAnnouncement is what `fsmnodes doctor` reads from a participant
// announcement (RTPS SPDP DATA) heard on the discovery multicast port.
type spdpAnnouncement struct {
	// Vendor is the RTPS header's vendor id.
	Vendor [2]byte
	// Prefix is the participant's GUID prefix.
	Prefix [12]byte
	// DomainID is PID_DOMAIN_ID (-1 when absent).
	DomainID int64
	// UserData is PID_USER_DATA (ROS: "enclave=/;").
	UserData string
	// Host is the host name Cyclone DDS puts first in its participant
	// version information ("" for other vendors).
	Host string
	// Version is the Cyclone DDS version of that information.
	Version string
	// EntityName is PID_ENTITY_NAME (Fast DDS names its participants).
	EntityName string
}

// RTPS constants of the SPDP parse (DDSI-RTPS 2.x, Cyclone DDS's
// vendor-specific parameter).
const (
	rtpsHeaderLen   = 20
	smidData        = 0x15
	pidSentinel     = 0x0001
	pidPad          = 0x0000
	pidDomainID     = 0x000f
	pidUserData     = 0x002c
	pidEntityName   = 0x0062
	pidCycloneInfo  = 0x8007 // PID_ADLINK_PARTICIPANT_VERSION_INFO
	encPLCDRBE      = 0x0002
	encPLCDRLE      = 0x0003
	flagEndianLE    = 0x01
	flagInlineQoS   = 0x02
	flagDataPresent = 0x04
)

// spdpWriterID is the entity id of the SPDP built-in participant writer.
var spdpWriterID = [4]byte{0x00, 0x01, 0x00, 0xc2}

// vendorNames are the DDS vendor ids assigned by the OMG that ROS users meet.
var vendorNames = map[[2]byte]string{
	{0x01, 0x01}: "RTI Connext DDS",
	{0x01, 0x02}: "ADLINK OpenSplice DDS",
	{0x01, 0x03}: "OpenDDS",
	{0x01, 0x0f}: "eProsima Fast DDS",
	{0x01, 0x10}: "Eclipse Cyclone DDS",
	{0x01, 0x12}: "RTI Connext Micro",
	{0x01, 0x14}: "Eclipse Zenoh-DDS bridge",
}

// vendorCyclone is Eclipse Cyclone DDS's vendor id (rmw_cyclonedds_cpp and
// this project).
var vendorCyclone = [2]byte{0x01, 0x10}

func vendorName(v [2]byte) string {
	if n, ok := vendorNames[v]; ok {
		return n
	}
	return fmt.Sprintf("vendor %02x.%02x", v[0], v[1])
}

var errNotSPDP = errors.New("not an SPDP announcement")

// parseSPDP reads an RTPS message and returns the first participant
// announcement in it. It never panics on bad input: a short or malformed
// message is an error.
func parseSPDP(msg []byte) (spdpAnnouncement, error) {
	a := spdpAnnouncement{DomainID: -1}
	if len(msg) < rtpsHeaderLen || string(msg[:4]) != "RTPS" {
		return a, errNotSPDP
	}
	copy(a.Vendor[:], msg[6:8])
	copy(a.Prefix[:], msg[8:20])
	for off := rtpsHeaderLen; off+4 <= len(msg); {
		id, flags := msg[off], msg[off+1]
		var order binary.ByteOrder = binary.BigEndian
		if flags&flagEndianLE != 0 {
			order = binary.LittleEndian
		}
		size := int(order.Uint16(msg[off+2:]))
		body := msg[off+4:]
		if size == 0 && id != 0x01 { // 0: up to the end of the message (not for PAD)
			size = len(body)
		}
		if size > len(body) {
			return a, fmt.Errorf("submessage 0x%02x: length %d beyond the message", id, size)
		}
		body = body[:size]
		off += 4 + size
		if id != smidData || len(body) < 20 || [4]byte(body[8:12]) != spdpWriterID {
			continue
		}
		toInline := int(order.Uint16(body[2:]))
		p := 4 + toInline
		if p > len(body) {
			return a, errors.New("DATA: inline QoS offset beyond the submessage")
		}
		if flags&flagInlineQoS != 0 {
			n, err := skipParams(body[p:], order)
			if err != nil {
				return a, fmt.Errorf("DATA inline QoS: %w", err)
			}
			p += n
		}
		if flags&flagDataPresent == 0 || p+4 > len(body) {
			return a, errNotSPDP
		}
		var po binary.ByteOrder
		switch binary.BigEndian.Uint16(body[p:]) {
		case encPLCDRBE:
			po = binary.BigEndian
		case encPLCDRLE:
			po = binary.LittleEndian
		default:
			return a, errors.New("SPDP payload is not a parameter list")
		}
		return a, a.readParams(body[p+4:], po)
	}
	return a, errNotSPDP
}

// skipParams returns the length of a parameter list up to and including
// its sentinel.
func skipParams(b []byte, order binary.ByteOrder) (int, error) {
	for p := 0; p+4 <= len(b); {
		pid, n := order.Uint16(b[p:]), int(order.Uint16(b[p+2:]))
		p += 4
		if pid == pidSentinel {
			return p, nil
		}
		if p+n > len(b) {
			return 0, errors.New("parameter beyond the list")
		}
		p += n
	}
	return 0, errors.New("parameter list without sentinel")
}

func (a *spdpAnnouncement) readParams(b []byte, order binary.ByteOrder) error {
	for p := 0; p+4 <= len(b); {
		pid, n := order.Uint16(b[p:]), int(order.Uint16(b[p+2:]))
		p += 4
		if pid == pidSentinel {
			return nil
		}
		if p+n > len(b) {
			return fmt.Errorf("parameter 0x%04x: length %d beyond the list", pid, n)
		}
		v := b[p : p+n]
		p += n
		switch pid {
		case pidDomainID:
			if len(v) >= 4 {
				a.DomainID = int64(order.Uint32(v))
			}
		case pidUserData:
			if s, ok := cdrBytes(v, order); ok {
				a.UserData = strings.TrimRight(s, "\x00")
			}
		case pidEntityName:
			if s, ok := cdrBytes(v, order); ok {
				a.EntityName = strings.TrimRight(s, "\x00")
			}
		case pidCycloneInfo:
			// version, flags, 3 unused words, then "host/version/build host/target".
			if a.Vendor != vendorCyclone || len(v) < 20 {
				continue
			}
			if s, ok := cdrBytes(v[20:], order); ok {
				f := strings.Split(strings.TrimRight(s, "\x00"), "/")
				a.Host = f[0]
				if len(f) > 1 {
					a.Version = f[1]
				}
			}
		}
	}
	return errors.New("parameter list without sentinel")
}

// cdrBytes reads a CDR sequence<octet> or string: a uint32 length, then
// the bytes.
func cdrBytes(v []byte, order binary.ByteOrder) (string, bool) {
	if len(v) < 4 {
		return "", false
	}
	n := order.Uint32(v)
	if uint64(n) > uint64(len(v)-4) {
		return "", false
	}
	return string(v[4 : 4+n]), true
}
