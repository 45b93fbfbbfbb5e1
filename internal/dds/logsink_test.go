package dds

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// GarbageRTPS is an RTPS message with a valid header and a DATA submessage
// whose length runs past the end of the packet: Cyclone drops it as a
// malformed packet and logs a warning.
func garbageRTPS() []byte {
	b := []byte("RTPS\x02\x01\x01\x10")
	b = append(b, []byte("\xaa\xbb\xcc\xdd\x01\x02\x03\x04\x05\x06\x07\x08")...) // a GUID prefix nobody has
	b = append(b, 0x15, 0x01, 0x90, 0x01)                                        // DATA, little endian, 400 bytes follow...
	b = append(b, []byte("\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00\x00\x00")...) // ...but only 12 do
	return b
}

// sendGarbage sends n garbage packets to every unicast port (discovery and
// data) of participant indices 0…20 of domain on 127.0.0.1.
func sendGarbage(t testing.TB, domain uint32, n int) {
	t.Helper()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pkt := garbageRTPS()
	base := 7400 + 250*int(domain)
	for range n {
		for i := 0; i <= 20; i++ {
			for _, port := range []int{base + 10 + 2*i, base + 11 + 2*i} {
				_, _ = conn.WriteToUDP(pkt, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
			}
		}
	}
}

// TestCycloneLog_TakenNotPrinted (issue 25, finding 5): garbage packets
// make Cyclone log "malformed packet" once per packet; the messages reach
// the log sink of this package (counted, taken by Go) instead of stderr,
// and a flood beyond the ring is counted as dropped, not buffered without
// bound.
func TestCycloneLog_TakenNotPrinted(t *testing.T) {
	domain := testenv.Domain(t)
	newTestParticipant(t, domain)
	TakeLog(1 << 20) // whatever earlier tests left
	before := CycloneLogStats()
	const n = 200
	sendGarbage(t, domain, n)
	var got []LogMessage
	deadline := time.Now().Add(30 * time.Second)
	last, quietSince := before.Total, time.Now()
	for time.Now().Before(deadline) {
		got = append(got, TakeLog(1000)...)
		total := CycloneLogStats().Total
		if total != last {
			last, quietSince = total, time.Now()
		}
		// every packet logged, and nothing more for a while
		if total-before.Total >= n && time.Since(quietSince) > 300*time.Millisecond {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	got = append(got, TakeLog(1000)...)
	after := CycloneLogStats()
	t.Logf("%d garbage packets: Cyclone logged %d messages, %d dropped from the ring, %d taken", n, after.Total-before.Total, after.Dropped-before.Dropped, len(got))
	if after.Total-before.Total < n {
		t.Fatalf("Cyclone logged %d messages for %d malformed packets, want ≥ %d", after.Total-before.Total, n, n)
	}
	malformed := 0
	for _, m := range got {
		if strings.Contains(m.Text, "malformed packet") {
			malformed++
			if m.Level != LogWarning {
				t.Errorf("level %v of %q, want warning", m.Level, m.Text)
			}
		}
	}
	if malformed == 0 {
		t.Fatalf("no malformed-packet message taken: %v", got)
	}
	if uint64(len(got)) > after.Total-before.Total {
		t.Errorf("took %d messages of %d logged", len(got), after.Total-before.Total)
	}
	if len(TakeLog(1000)) != 0 {
		t.Error("messages left after taking them all")
	}
}
