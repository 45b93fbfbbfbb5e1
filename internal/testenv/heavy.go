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
// launch file, Velma's 500 Hz processes, a browser, a robot system on
// network-namespace hosts. `make test` runs test packages side by side and
// each package runs several tests at once; with nothing to bound them, a
// dozen systems shared the CI machine's two cores at once, its load average
// reached 50-160, and tests failed for want of CPU (a browser 20 s behind
// its WebSocket, Velma's loops late, daemons not started in time). Heavy
// makes a test wait for one of a fixed number of machine-wide slots before
// it starts its system, so that at most that many systems run at once, in
// this process or any other test binary on the machine, while light tests
// go on beside them.
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
// after t.Parallel and before the test starts its processes (a paused
// parallel test holding a slot could keep the serial tests it waits for
// from getting one); Launch and LaunchDemo call it. A test (or its parent
// test) that holds slots already keeps using them.
func Heavy(t testing.TB) {
	t.Helper()
	heavy(t, 1)
}

// HeavyN is Heavy for a test that loads the machine as much as n whole
// systems do (several robots and a browser under load): it waits for n
// slots at once, or all of them when n is more. While it waits, Heavy
// calls elsewhere wait behind it, so that it is not starved by tests that
// take one slot each.
func HeavyN(t testing.TB, n int) {
	t.Helper()
	heavy(t, n)
}

func heavy(t testing.TB, n int) {
	t.Helper()
	name := t.Name()
	heavyHolders.Lock()
	for p := name; ; {
		if heavyHolders.names[p] {
			heavyHolders.Unlock()
			return
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	heavyHolders.Unlock()

	slots := heavySlots()
	n = min(max(n, 1), slots)
	start := time.Now()
	release, err := acquireHeavy(n, slots, func() {
		t.Logf("testenv.Heavy: waiting for %d of the %d slots for whole-system tests (taken, or a test that wants several goes first)", n, slots)
	})
	if err != nil {
		t.Fatalf("testenv.Heavy: %v", err)
	}
	if waited := time.Since(start); waited > time.Second {
		t.Logf("testenv.Heavy: waited %v for %d of %d slots", waited.Round(time.Millisecond), n, slots)
	}
	heavyHolders.Lock()
	heavyHolders.names[name] = true
	heavyHolders.Unlock()
	got := time.Now()
	t.Cleanup(func() {
		heavyHolders.Lock()
		delete(heavyHolders.names, name)
		heavyHolders.Unlock()
		release()
		if err := logHeavy(os.Getenv("FSMNODES_HEAVY_LOG"), name, n, slots, got.Sub(start), time.Since(got)); err != nil {
			t.Logf("testenv.Heavy: %v", err)
		}
	})
}

// logHeavy appends one line for a test that held slots to the ledger at
// path (FSMNODES_HEAVY_LOG; nothing when empty): the slot-seconds it held,
// seconds held, seconds waited, its slots, the machine's slots, the test
// binary's package and the test's name. `make unit` keeps it in
// build/heavy-slots.log and prints the largest holders, which is where make
// test's time goes.
func logHeavy(path, name string, n, slots int, waited, held time.Duration) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return fmt.Errorf("slot ledger: %w", err)
	}
	pkg, _ := os.Getwd() // a test binary runs in its package's directory
	// One write(2) of a short line with O_APPEND: lines of concurrent
	// test binaries do not interleave.
	_, err = fmt.Fprintf(f, "%7.1f %6.1f %6.1f %d %d %s %s\n", float64(n)*held.Seconds(), held.Seconds(), waited.Seconds(), n, slots, filepath.Base(pkg), name)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("slot ledger: %w", err)
	}
	return nil
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

// acquireHeavy takes n of the slots, waiting as long as it takes, and
// calls waiting once if that is more than heavyWait. A taker of several
// slots holds the whole lock's exclusive flock while it collects them,
// keeping what it gets; a taker of one takes a slot only while nobody
// holds that lock. Nobody waits for the whole lock while holding slots, so
// the takers of single slots finish and the collector gets its n.
func acquireHeavy(n, slots int, waiting func()) (release func(), err error) {
	dir := filepath.Join(os.TempDir(), "fsmnodes-heavy-tests")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("slot directory: %w", err)
	}
	whole, err := os.OpenFile(filepath.Join(dir, "whole.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("whole lock file: %w", err)
	}
	defer whole.Close()
	var held []*os.File
	releaseAll := func() {
		for _, f := range held {
			f.Close()
		}
	}
	if n > 1 {
		if err := flock(whole, syscall.LOCK_EX); err != nil {
			return nil, fmt.Errorf("whole lock: %w", err)
		}
	}
	start := time.Now()
	logged := false
	for {
		free := true
		if n == 1 {
			// Behind a collector of several slots: it goes first.
			if flock(whole, syscall.LOCK_SH|syscall.LOCK_NB) != nil {
				free = false
			} else {
				_ = flock(whole, syscall.LOCK_UN)
			}
		}
		if free {
			got, err := tryHeavySlots(dir, slots, n-len(held))
			if err != nil {
				releaseAll()
				return nil, err
			}
			held = append(held, got...)
			if len(held) == n {
				return releaseAll, nil // closing whole (deferred) lets the others on
			}
		}
		if !logged && time.Since(start) > heavyWait {
			waiting()
			logged = true
		}
		// Jittered, so that waiters in several processes do not poll in step.
		time.Sleep(100*time.Millisecond + rand.N(150*time.Millisecond))
	}
}

// tryHeavySlots takes up to want free slots without waiting and returns
// their open lock files (closing one frees its slot).
func tryHeavySlots(dir string, slots, want int) ([]*os.File, error) {
	var got []*os.File
	first := os.Getpid() % slots
	for k := 0; k < slots && len(got) < want; k++ {
		i := (first + k) % slots
		f, err := tryLock(filepath.Join(dir, fmt.Sprintf("%d.lock", i)))
		if err != nil {
			for _, g := range got {
				g.Close()
			}
			return nil, fmt.Errorf("slot %d: %w", i, err)
		}
		if f != nil {
			got = append(got, f)
		}
	}
	return got, nil
}
