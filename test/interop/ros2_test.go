package interop

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// syncBuffer is a bytes.Buffer safe for a child process and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ros2Env is the discovery environment of both sides for a real ROS 2 of
// distro: loopback only.
func ros2Env(distro string) map[string]string {
	if distro == "humble" {
		return map[string]string{"ROS_DISTRO": "humble", "ROS_LOCALHOST_ONLY": "1"}
	}
	return map[string]string{"ROS_DISTRO": distro, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
}

// Against a real `ros2 topic echo` (rmw_cyclonedds_cpp): samples whose
// encapsulation header is not CDR_LE/CDR_BE with rmw's options are refused
// by our writer, so the echo never prints Cyclone's "malformed packet" hex
// dumps (it did, for every retransmission, before the writer checked
// headers) and receives the valid samples written after them.
func TestROS2EchoGetsNoMalformedSamples(t *testing.T) {
	if testing.Short() {
		t.Skip("starts ros2 topic echo")
	}
	r := testenv.NeedROS2(t)
	domain := testenv.Domain(t)
	env := ros2Env(r.Distro)
	var vars []string
	for k, v := range env {
		vars = append(vars, k+"="+v)
	}
	var out syncBuffer
	echo := r.Command(fmt.Sprintf("ROS_DOMAIN_ID=%d %s exec ros2 topic echo --no-daemon /interop/raw std_msgs/msg/String",
		domain, strings.Join(vars, " ")))
	echo.Stdout, echo.Stderr = &out, &out
	if err := echo.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = echo.Process.Kill()
		_ = echo.Wait()
	})
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, Getenv: func(k string) string { return env[k] },
		NoSignals: true, LogOutput: testenv.LogWriter{T: t, Prefix: "[go] "}})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tp, err := rc.Participant().Topic("rt/interop/raw", std_msgs_msg.String_TypeInfo.DDSName)
	if err != nil {
		t.Fatal(err)
	}
	w, err := rc.Participant().NewWriter(tp, dds.QoS{History: dds.KeepLast, Depth: 10})
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, deadline, "ros2 topic echo to match", func() bool { m, _ := w.MatchedReaders(); return len(m) > 0 })
	body := []byte{3, 0, 0, 0, 'n', 'o', 0, 0}
	for _, hdr := range [][]byte{{0, 0x10, 0, 0}, {0, 0xff, 0, 0}, {0, 0x07, 0, 0}, {0, 0x02, 0, 0}, {0, 1, 0x12, 0x34}} {
		if err := w.Write(append(append([]byte(nil), hdr...), body...)); err == nil {
			t.Errorf("header % x was written", hdr)
		}
	}
	for i := 1; i <= 3; i++ {
		if err := w.Write([]byte{0, 1, 0, 0, 5, 0, 0, 0, 'o', 'k', ' ', byte('0' + i), 0, 0, 0, 0}); err != nil {
			t.Fatal(err)
		}
	}
	testenv.WaitFor(t, deadline, "the valid samples in the echo", func() bool { return strings.Contains(out.String(), "data: ok 3") })
	// Give Cyclone's retransmissions and heartbeats a moment to show any
	// complaint about the packets.
	time.Sleep(500 * time.Millisecond)
	if s := out.String(); strings.Contains(s, "malformed") || strings.Contains(s, "data: no") || strings.Contains(s, "data: ''") {
		t.Errorf("ros2 topic echo (%s) saw bad samples:\n%s", r.Distro, s)
	}
}
