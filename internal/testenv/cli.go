package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
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
	ctx, cancel := context.WithTimeout(context.Background(), CLITimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, Executable(t, "cmd/fsmnodes"), args...)
	cmd.Env = Env(domain)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	t.Logf("fsmnodes %s: %q %q %v", strings.Join(args, " "), out.String(), errOut.String(), err)
	return out.String(), errOut.String(), err == nil
}
