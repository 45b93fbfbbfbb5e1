package testenv

import (
	"os"
	"path/filepath"
	"regexp"
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
	bin := Tool(t, "iox-roudi")
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
	cfg := filepath.Join(t.TempDir(), "roudi.toml")
	if err := os.WriteFile(cfg, []byte(RouDiConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Start(t, "iox-roudi", os.Environ(), bin, "-c", cfg, "-l", "info")
	p.WaitOutput(t, 30*time.Second, regexp.MustCompile(`RouDi is ready for clients`))
	// Go programs exit without C++'s static destructors, so iceoryx's
	// runtime never unregisters them: RouDi's monitoring notices a dead
	// process after about a second and a half. A RouDi stopped before that
	// tries to stop the dead process and aborts. This cleanup runs after
	// those of the test's processes and before RouDi's.
	t.Cleanup(func() { time.Sleep(3 * time.Second) })
}
