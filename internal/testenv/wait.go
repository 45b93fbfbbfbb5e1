package testenv

import (
	"strings"
	"testing"
	"time"
)

// WaitFor polls cond every 10 ms until it returns true, and fails the test
// with what if that has not happened within timeout. The timeout is a
// failure bound only: a passing test never depends on how fast cond became
// true.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// LogWriter is an io.Writer that sends each line written to T.Log with
// Prefix in front. Use it as a node's log output or a child process's
// stdout/stderr so their lines show with the test's.
type LogWriter struct {
	T      testing.TB
	Prefix string
}

// Write logs every line of p through T.Log.
func (w LogWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimSuffix(string(p), "\n"), "\n") {
		w.T.Log(w.Prefix + line)
	}
	return len(p), nil
}
