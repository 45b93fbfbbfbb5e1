package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// CLITimeout bounds one run of the fsmnodes CLI by CLI. It is a failure
// bound only.
const CLITimeout = 30 * time.Second

// Env is the environment of a test's child process on domain: this
// process's environment (which Main scrubbed and pointed at temporary log
// and home directories) with ROS_DOMAIN_ID set.
func Env(domain uint32) []string {
	return append(os.Environ(), fmt.Sprintf("ROS_DOMAIN_ID=%d", domain))
}

// CLI runs the module's fsmnodes CLI (built once, see Executable) with args
// on domain, logs what it printed, and returns its stdout, its stderr and
// whether it exited 0.
func CLI(t testing.TB, domain uint32, args ...string) (stdout, stderr string, ok bool) {
	t.Helper()
	return CLIWithin(t, domain, CLITimeout, args...)
}

// CLIWithin is CLI with its own bound instead of CLITimeout, for a command
// that takes as long as its input does (bag play of a recorded session).
func CLIWithin(t testing.TB, domain uint32, timeout time.Duration, args ...string) (stdout, stderr string, ok bool) {
	t.Helper()
	r := runCLI(t, Executable(t, "cmd/fsmnodes"), domain, timeout, args)
	return r.Stdout, r.Stderr, r.OK
}

// CLIResult is what one run of the CLI printed and whether it exited 0.
type CLIResult struct {
	Stdout, Stderr string
	OK             bool
}

// CLIAll runs the CLI as CLI does, once per argument list, all at the same
// time, and returns the results in the order of runs. Each run mostly
// waits for discovery, so independent calls (a table of refused parameter
// sets, say) take the time of one.
func CLIAll(t testing.TB, domain uint32, runs ...[]string) []CLIResult {
	t.Helper()
	bin := Executable(t, "cmd/fsmnodes")
	out := make([]CLIResult, len(runs))
	var wg sync.WaitGroup
	for i, args := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = runCLI(t, bin, domain, CLITimeout, args)
		}()
	}
	wg.Wait()
	return out
}

// runCLI runs bin with args, for at most timeout (any goroutine: it only
// logs).
func runCLI(t testing.TB, bin string, domain uint32, timeout time.Duration, args []string) CLIResult {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = Env(domain)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	t.Logf("fsmnodes %s: %q %q %v", strings.Join(args, " "), out.String(), errOut.String(), err)
	return CLIResult{Stdout: out.String(), Stderr: errOut.String(), OK: err == nil}
}
