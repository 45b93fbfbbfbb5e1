package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStart_StopsCleanly starts a process that prints a line and waits for
// a signal: WaitOutput finds the line, and the stop at the test's end (run
// here by hand) finds nothing wrong.
func TestStart_StopsCleanly(t *testing.T) {
	p := Start(t, "sleeper", nil, "/bin/sh", "-c", "echo ready port=42; exec sleep 60")
	m := p.WaitOutput(t, 10*time.Second, regexp.MustCompile(`port=(\d+)`))
	if m[1] != "42" {
		t.Fatalf("submatch %q, want 42", m[1])
	}
	p.MustRun(t)
	if problems := p.Stop(); len(problems) != 0 {
		t.Fatalf("clean stop reported %q", problems)
	}
	if done, _ := p.Exited(); !done {
		t.Fatal("process not exited after Stop")
	}
	if problems := p.Stop(); problems != nil {
		t.Fatalf("second Stop reported %q", problems)
	}
}

// TestStart_FindsLeftovers starts a shell that leaves a child behind in its
// process group and exits: the stop must say so (and kill the child).
func TestStart_FindsLeftovers(t *testing.T) {
	p := Start(t, "leaver", nil, "/bin/sh", "-c", "sleep 60 & echo left")
	p.WaitOutput(t, 10*time.Second, regexp.MustCompile(`left`))
	WaitFor(t, 10*time.Second, "the shell to exit", func() bool { done, _ := p.Exited(); return done })
	problems := p.Stop()
	if len(problems) != 1 || !strings.Contains(problems[0], "still running") {
		t.Fatalf("stop reported %q, want the process left behind", problems)
	}
}

// TestStart_DiesWithTheTest runs a test process that starts a sleeper and
// then dies by SIGKILL, so no cleanup runs: the sleeper must still end.
func TestStart_DiesWithTheTest(t *testing.T) {
	if os.Getenv("TESTENV_CHILD_START") != "" {
		p := Start(t, "orphan", nil, "/bin/sh", "-c", "trap 'exit 0' INT; echo pid=$$; while :; do sleep 0.1; done")
		m := p.WaitOutput(t, 10*time.Second, regexp.MustCompile(`pid=(\d+)`))
		os.Stdout.WriteString(m[1] + "\n")
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStart_DiesWithTheTest$")
	cmd.Env = append(os.Environ(), "TESTENV_CHILD_START=1")
	out, _ := cmd.Output() // killed: the error is expected
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("the child test printed %q, want the sleeper's pid", out)
	}
	WaitFor(t, 10*time.Second, fmt.Sprintf("the sleeper (pid %d) to end after its test died", pid), func() bool {
		return syscall.Kill(pid, 0) != nil
	})
}
