package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Domain ranges handed out by Domain. ROS 2 domain ids go up to 232 on Linux
// (Cyclone's port formula 7400 + 250·id must stay below 65536), but DDS
// Security's governance covers only 0–230 (sros2.MaxSecureDomainID), and any
// test may run secure participants: 231 and 232 are not handed out (a
// fresh-clone CI run drew 231 for two security tests, whose participants
// Cyclone then refused: "Can not parse governance file"). Domain 0 is left to
// people running nodes by hand, and 150–199 to hand tests beside a running
// test suite.
var domainRanges = [][2]uint32{{1, 149}, {200, 230}}

// Domain reserves a DDS domain id that no other test holds, in this process
// or any other on the machine (parallel packages of one `go test ./...`,
// other checkouts' test runs), and returns it. The reservation is an
// exclusive flock(2) on a file per domain under the temporary directory, so a
// test binary that dies releases it with its file descriptors. It is
// released when t ends; child processes started by the test get the id
// through ROS_DOMAIN_ID and need no reservation of their own.
func Domain(t testing.TB) uint32 {
	t.Helper()
	id, release, err := ReserveDomain()
	if err != nil {
		t.Fatalf("testenv.Domain: %v", err)
	}
	t.Cleanup(release)
	return id
}

// ReserveDomain is Domain for code without a testing.TB (a TestMain, a
// benchmark program): it returns the id and the function that releases it.
func ReserveDomain() (uint32, func(), error) {
	dir := lockDir()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return 0, nil, fmt.Errorf("domain lock directory: %w", err)
	}
	// Start at a place that depends on the process, so parallel test
	// binaries do not all race for the first free id.
	var ids []uint32
	for _, r := range domainRanges {
		for id := r[0]; id <= r[1]; id++ {
			ids = append(ids, id)
		}
	}
	start := os.Getpid() % len(ids)
	for k := range ids {
		id := ids[(start+k)%len(ids)]
		release, err := tryReserve(dir, id)
		if err != nil {
			return 0, nil, err
		}
		if release != nil {
			return id, release, nil
		}
	}
	return 0, nil, fmt.Errorf("all %d test domains are held by other tests", len(ids))
}

// tryReserve takes the lock of domain id in dir. It returns a nil release
// function when another holder has it.
func tryReserve(dir string, id uint32) (release func(), err error) {
	f, err := tryLock(filepath.Join(dir, fmt.Sprintf("%d.lock", id)))
	if err != nil {
		return nil, fmt.Errorf("domain %d: %w", id, err)
	}
	if f == nil {
		return nil, nil
	}
	return func() { f.Close() }, nil
}

// tryLock takes an exclusive flock(2) on the file at path, created if need
// be, without waiting. It returns the open file, whose closing (or the
// process's end) releases the lock, or nil when another holder has it:
// the machine-wide reservations of this package (domains, Heavy's slots)
// are such files.
func tryLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	if flock(f, syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil, nil
	}
	return f, nil
}

// flock is flock(2) on f, retried when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

func lockDir() string { return filepath.Join(os.TempDir(), "fsmnodes-dds-domains") }
