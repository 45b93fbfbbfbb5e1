package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RouDiConfig is the iceoryx RouDi configuration the shared-memory tests
// and benchmarks use: iceoryx's default memory pools plus 2 MiB chunks
// for 1 MiB messages (a chunk also holds iceoryx's and Cyclone's
// headers, so a 1 MiB sample does not fit a 1 MiB chunk).
const RouDiConfig = `[general]
version = 1

[[segment]]

[[segment.mempool]]
size = 128
count = 10000

[[segment.mempool]]
size = 1024
count = 5000

[[segment.mempool]]
size = 16384
count = 1000

[[segment.mempool]]
size = 131072
count = 200

[[segment.mempool]]
size = 524288
count = 50

[[segment.mempool]]
size = 1048576
count = 30

[[segment.mempool]]
size = 2097152
count = 48

[[segment.mempool]]
size = 4194304
count = 10
`

// SharedMemoryConfig is a Cyclone configuration (CYCLONEDDS_URI) that
// turns shared memory on, as a ROS 2 user does for rmw_cyclonedds_cpp.
const SharedMemoryConfig = `<CycloneDDS><Domain><SharedMemory><Enable>true</Enable><LogLevel>warn</LogLevel></SharedMemory></Domain></CycloneDDS>`

// RouDi starts iceoryx's RouDi daemon for the test and stops it at the
// test's end, after the processes the test starts later. iceoryx allows
// one RouDi per machine, so tests that need it take turns across test
// binaries (a lock file under the temporary directory; the wait is at
// most 5 minutes). Without iox-roudi the test is skipped, except in CI.
func RouDi(t testing.TB) {
	t.Helper()
	Tool(t, "iox-roudi")
	lockPath := filepath.Join(os.TempDir(), "fsmnodes-roudi.lock")
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		if time.Now().After(deadline) {
			f.Close()
			t.Fatal("another test held RouDi for 5 minutes")
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Cleanup(func() { f.Close() })
	stop, err := StartRouDi(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if out := stop(); t.Failed() {
			t.Logf("iox-roudi output:\n%s", tail(out, logTail))
		}
	})
}

// StartRouDi starts iox-roudi with RouDiConfig (written into dir) and
// waits until it is ready. stop ends it and returns its output. Go
// programs exit without C++'s static destructors, so iceoryx's runtime
// never unregisters them: RouDi's monitoring notices a dead process after
// about a second and a half, and a RouDi stopped before that tries to
// stop the dead process and aborts. stop therefore waits 3 s first; call
// it after the processes that used shared memory have ended. RouDi also
// stops every process still registered with it when it stops, so the
// caller must never use shared memory itself: only its child processes.
func StartRouDi(dir string) (stop func() string, err error) {
	bin, err := exec.LookPath("iox-roudi")
	if err != nil {
		return nil, fmt.Errorf("iox-roudi is not installed (Debian package iceoryx): %w", err)
	}
	cfg := filepath.Join(dir, "roudi.toml")
	if err := os.WriteFile(cfg, []byte(RouDiConfig), 0o644); err != nil {
		return nil, err
	}
	var out lockedBuffer
	cmd := exec.Command(bin, "-c", cfg, "-l", "info")
	cmd.Stdout, cmd.Stderr = &out, &out
	// If the caller dies without stopping it, RouDi gets SIGINT.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGINT}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start iox-roudi: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop = func() string {
		select {
		case <-exited:
		default:
			time.Sleep(3 * time.Second)
			_ = cmd.Process.Signal(os.Interrupt)
			select {
			case <-exited:
			case <-time.After(StopTimeout):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-exited
			}
		}
		return out.String()
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), "RouDi is ready for clients"); {
		select {
		case <-exited:
			return nil, fmt.Errorf("iox-roudi exited before it was ready:\n%s", out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("iox-roudi not ready after 30 s:\n%s", stop())
		}
	}
	return stop, nil
}

// lockedBuffer is a bytes.Buffer safe for a writing process and a reader.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
