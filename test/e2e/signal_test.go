package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// Ctrl-C in a terminal reaches every process of the foreground group, and
// `ros2 launch` forwards it to its children as well: a node gets SIGINT a
// second time while it shuts down. It must still finish cleanly (exit
// status 0), as an rclcpp node does, instead of dying of the copy.
func TestRepeatedSIGINTShutsDownCleanly(t *testing.T) {
	domain := testenv.Domain(t)
	if testing.Short() {
		t.Skip("multi-process test")
	}
	t.Parallel()
	bin := buildPeer(t)
	cmd := exec.Command(bin, "nodes", "/twice")
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "ROS_") || k == "ROS_LOG_DIR" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST", fmt.Sprintf("ROS_DOMAIN_ID=%d", domain),
		"PEER_EXIT_DELAY=300ms")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = testenv.LogWriter{T: t, Prefix: "[peer] "}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		done <- cmd.Wait()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	c := newContext(t, domain, nil)
	waitGraph(t, c, "the node of the other process", func() bool { return hasNodes(c, "/twice") })
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// The copy arrives while the node shuts down (after the ready line).
	for l := ""; l != "gopeer: shutting down"; {
		select {
		case l = <-lines:
			if l != "gopeer ready" && l != "gopeer: shutting down" {
				t.Fatalf("peer printed %q", l)
			}
		case <-time.After(deadline):
			t.Fatal("no shutdown after SIGINT")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after a repeated SIGINT: %v (want status 0)", err)
		}
	case <-time.After(deadline):
		t.Fatal("no exit after SIGINT")
	}
}
