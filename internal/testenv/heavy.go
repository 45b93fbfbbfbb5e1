package testenv

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Heavy tests are the ones that run a whole system: a demo or a robot's
// launch file, Velma's 500 Hz processes, a browser, hosts in network
// namespaces. `make test` runs test packages side by side and each package
// runs several tests at once; with nothing to bound them, a dozen systems
// shared the CI machine's two cores at once, its load average reached
// 50-160, and tests failed for want of CPU (a browser 20 s behind its
// WebSocket, Velma's loops late, daemons not started in time). Heavy makes a
// test wait for one of a fixed number of machine-wide slots before it
// starts its system, so that at most that many systems run at once, in this
// process or any other test binary on the machine, while light tests go on
// beside them.
//
// The number of slots is FSMNODES_TEST_HEAVY, by default the number of CPUs
// (at least 2). A slot is an exclusive flock(2) on a file under the
// temporary directory, as the DDS domains are (see Domain): a test binary
// that dies releases its slots with its file descriptors.

// heavyWait is how long a test waits for a slot before it logs that it
// waits (it waits on; `go test -timeout` bounds the whole).
const heavyWait = 10 * time.Second

// heavyHolders are the tests of this process that hold a slot, by name; a
// subtest of a holder runs in its parent's slot.
var heavyHolders = struct {
	sync.Mutex
	names map[string]bool
}{names: map[string]bool{}}

// Heavy reserves a slot for a test that runs a whole system (see above),
// waiting for one as long as it takes, and releases it when t ends. Call it
// before the test starts its processes; Launch and LaunchDemo call it. A
// test (or its parent test) that holds a slot already keeps using it.
func Heavy(t testing.TB) {
	t.Helper()
	name := t.Name()
	heavyHolders.Lock()
	for n := name; ; {
		if heavyHolders.names[n] {
			heavyHolders.Unlock()
			return
		}
		i := strings.LastIndexByte(n, '/')
		if i < 0 {
			break
		}
		n = n[:i]
	}
	heavyHolders.Unlock()

	start := time.Now()
	logged := false
	for {
		release, err := tryHeavySlot()
		if err != nil {
			t.Fatalf("testenv.Heavy: %v", err)
		}
		if release != nil {
			if waited := time.Since(start); waited > time.Second {
				t.Logf("testenv.Heavy: waited %v for a slot (FSMNODES_TEST_HEAVY=%d)", waited.Round(time.Millisecond), heavySlots())
			}
			heavyHolders.Lock()
			heavyHolders.names[name] = true
			heavyHolders.Unlock()
			t.Cleanup(func() {
				heavyHolders.Lock()
				delete(heavyHolders.names, name)
				heavyHolders.Unlock()
				release()
			})
			return
		}
		if !logged && time.Since(start) > heavyWait {
			t.Logf("testenv.Heavy: all %d slots for whole-system tests are taken; waiting", heavySlots())
			logged = true
		}
		// Jittered, so that waiters in several processes do not poll in step.
		time.Sleep(100*time.Millisecond + rand.N(150*time.Millisecond))
	}
}

// heavySlots is the number of slots: FSMNODES_TEST_HEAVY, or the number of
// CPUs and at least 2.
func heavySlots() int {
	if v := os.Getenv("FSMNODES_TEST_HEAVY"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return max(runtime.NumCPU(), 2)
}

// tryHeavySlot takes a free slot, or returns a nil release function when
// all are taken.
func tryHeavySlot() (release func(), err error) {
	dir := filepath.Join(os.TempDir(), "fsmnodes-heavy-tests")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("slot directory: %w", err)
	}
	n := heavySlots()
	first := os.Getpid() % n
	for k := range n {
		i := (first + k) % n
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%d.lock", i)), os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			return nil, fmt.Errorf("slot %d lock file: %w", i, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			continue
		}
		return func() { f.Close() }, nil
	}
	return nil, nil
}
