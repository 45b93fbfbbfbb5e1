package dds

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
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
// writes every sample back on rt/pong until stdin closes.
func runChild(role string) error {
	var domain int
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

// startChild starts the test binary as an echo helper on domain.
func startChild(t *testing.T, domain int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=echo:"+strconv.Itoa(domain))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("child: %v", err)
		}
	})
}
