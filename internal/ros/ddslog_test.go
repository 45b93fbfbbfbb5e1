package ros

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
)

// garbageRTPS is an RTPS message with a valid header and a DATA submessage
// whose length runs past the end of the packet: Cyclone drops it and logs
// "malformed packet".
func garbageRTPS() []byte {
	b := []byte("RTPS\x02\x01\x01\x10\xaa\xbb\xcc\xdd\x01\x02\x03\x04\x05\x06\x07\x08")
	b = append(b, 0x15, 0x01, 0x90, 0x01) // DATA, little endian, 400 bytes follow...
	return append(b, make([]byte, 12)...) // ...but only 12 do
}

// TestCycloneLog_ThrottledAndCounted_Process (issue 25, finding 5): garbage
// packets sent (from 127.0.0.1 only) to every unicast port of a domain made
// a node print Cyclone's "recvUC: malformed packet" once per packet on
// stderr, uncounted. Now robot_control_mux logs them at most about once a
// second, each line saying how many more came, and its /diagnostics
// counter dds_log_messages counts every one.
func TestCycloneLog_ThrottledAndCounted_Process(t *testing.T) {
	if testing.Short() {
		t.Skip("process test")
	}
	domain := testenv.Domain(t)
	bin := testenv.Executable(t, "nodes/robot_control_mux")
	p := testenv.Start(t, "robot_control_mux", testenv.Env(domain), bin)
	testenv.WaitFor(t, failAfter, "the mux ready", func() bool { return strings.Contains(p.Output(), "ready") })

	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pkt := garbageRTPS()
	base := 7400 + 250*int(domain)
	const rounds, perRound = 10, 20
	start := time.Now()
	sent := 0
	for r := range rounds { // about 2 s of garbage
		if r > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		for range perRound {
			for i := 0; i < 32; i++ { // every participant index the loopback config allows
				for _, port := range []int{base + 10 + 2*i, base + 11 + 2*i} {
					if _, err := conn.WriteToUDP(pkt, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}); err == nil {
						sent++
					}
				}
			}
		}
	}
	elapsed := time.Since(start)

	// The counter, read from /diagnostics by a participant that joins now.
	rc, err := NewContext(ContextOptions{DomainID: &domain, NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "test: "}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	n, err := rc.NewNode("ddslog_test", "")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var count uint64
	if _, err := NewSubscription(n, DiagnosticsTopic, QoSDiagnosticsReader, func(m *diagnostic_msgs_msg.DiagnosticArray) {
		for _, st := range m.Status {
			if st.Name != DiagnosticsStatusName("/robotControlMuxNode") {
				continue
			}
			for _, kv := range st.Values {
				if v, err := strconv.ParseUint(kv.Value, 10, 64); err == nil && kv.Key == CounterDDSLog {
					mu.Lock()
					count = max(count, v)
					mu.Unlock()
				}
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = rc.Spin(ctx) }()
	const want = rounds * perRound // at least one port of the mux got every round's packets
	testenv.WaitFor(t, failAfter, "dds_log_messages of the mux to count the malformed packets", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return count >= want
	})
	lines := strings.Count(p.Output(), "malformed packet")
	mu.Lock()
	t.Logf("%d garbage packets sent in %.1f s; the mux counted %d Cyclone log messages and logged %d lines about them", sent, elapsed.Seconds(), count, lines)
	mu.Unlock()
	if limit := int(elapsed/time.Second) + 3; lines < 1 || lines > limit {
		t.Errorf("%d lines about malformed packets in the mux's output, want 1…%d (one a second)", lines, limit)
	}
	if !strings.Contains(p.Output(), "more Cyclone DDS log messages since the last report") {
		t.Error("no logged line says how many messages it stands for")
	}
}
