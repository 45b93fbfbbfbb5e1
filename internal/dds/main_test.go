package dds

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// childEnv makes the test binary act as a helper process (see runChild).
const childEnv = "FSM_DDS_TEST_CHILD"

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		if err := runChild(role); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runChild is the helper process: role "echo:<domain>" reads rt/ping and
// writes every sample back on rt/pong until stdin closes; role
// "latched:<domain>" writes samples 0..4 on the transient-local topic
// rt/latched (depth 1), prints "ready" and waits for stdin to close; role
// "gatereader:<domain>" is runGateReader.
func runChild(role string) error {
	var domain int
	if _, err := fmt.Sscanf(role, "latched:%d", &domain); err == nil {
		return runLatched(uint32(domain))
	}
	if _, err := fmt.Sscanf(role, "gatereader:%d", &domain); err == nil {
		return runGateReader(uint32(domain))
	}
	if _, err := fmt.Sscanf(role, "shmsub:%d", &domain); err == nil {
		return runShmSub(uint32(domain))
	}
	if _, err := fmt.Sscanf(role, "shmpub:%d", &domain); err == nil {
		return runShmPub(uint32(domain))
	}
	if _, err := fmt.Sscanf(role, "echo:%d", &domain); err != nil {
		return fmt.Errorf("bad role %q", role)
	}
	p, err := NewParticipant(uint32(domain), loopbackConfig, []byte("enclave=/;"))
	if err != nil {
		return err
	}
	defer p.Close()
	tin, err := p.Topic("rt/ping", "test::Ping_")
	if err != nil {
		return err
	}
	tout, err := p.Topic("rt/pong", "test::Pong_")
	if err != nil {
		return err
	}
	q := QoS{Reliability: Reliable, History: KeepAll, UserData: []byte("role=echo;")}
	w, err := p.NewWriter(tout, q)
	if err != nil {
		return err
	}
	_, err = p.NewReader(tin, q, func(batch []Sample) {
		for _, s := range batch {
			if err := w.Write(s.Data); err != nil {
				fmt.Fprintln(os.Stderr, "child write:", err)
			}
		}
	})
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes stdin
	return nil
}

// latchedQoS is the QoS of the rt/latched topic of runLatched.
var latchedQoS = QoS{Reliability: Reliable, Durability: TransientLocal, History: KeepLast, Depth: 1}

func runLatched(domain uint32) error {
	p, err := NewParticipant(domain, loopbackConfig, nil)
	if err != nil {
		return err
	}
	defer p.Close()
	t, err := p.Topic("rt/latched", "test::Latched_")
	if err != nil {
		return err
	}
	w, err := p.NewWriter(t, latchedQoS)
	if err != nil {
		return err
	}
	for i := 0; i < 5; i++ {
		if err := w.Write(payload(3000, byte(i))); err != nil {
			return err
		}
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// startChild starts the test binary as an echo helper on domain.
func startChild(t *testing.T, domain uint32) {
	t.Helper()
	startRole(t, "echo:"+strconv.Itoa(int(domain)))
}

// startRole starts the test binary as a helper process in role and waits
// for its first output line, if any, before returning. It returns the
// helper's standard output; the helper is stopped (stdin closed) when the
// test ends.
func startRole(t *testing.T, role string) *bufio.Reader {
	t.Helper()
	out := bufio.NewReader(spawnRole(t, role, func(r io.Reader) { _, _ = io.Copy(io.Discard, r) }))
	if strings.HasPrefix(role, "latched:") {
		line, err := out.ReadString('\n')
		if err != nil || line != "ready\n" {
			t.Fatalf("helper %s: %q, %v", role, line, err)
		}
	}
	return out
}

// startRoleLines starts a helper as startRole does and returns its output
// lines (without the newline), read by a goroutine until the helper ends.
func startRoleLines(t *testing.T, role string) <-chan string {
	t.Helper()
	ch := make(chan string, 64)
	stop, done := make(chan struct{}), make(chan struct{})
	out := spawnRole(t, role, func(io.Reader) { close(stop); <-done })
	go func() {
		defer close(done)
		defer close(ch)
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			select {
			case ch <- strings.TrimSuffix(line, "\n"):
			case <-stop: // the test is over: read on to the end
			}
		}
	}()
	return ch
}

// spawnRole starts the helper and returns its standard output. At the
// test's end it closes the helper's stdin, calls drain with the output
// and waits for the helper.
func spawnRole(t *testing.T, role string, drain func(io.Reader)) io.Reader {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+role)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		drain(stdout)
		if err := cmd.Wait(); err != nil {
			t.Errorf("child: %v", err)
		}
	})
	return stdout
}
