package iobuf

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Shared (not FUTEX_PRIVATE) operations: the word lives in a mapping that
// other processes share.
const (
	futexWaitOp = 0 // FUTEX_WAIT
	futexWakeOp = 1 // FUTEX_WAKE
)

// futexWait sleeps while *addr == val, at most d. Spurious and early
// returns are fine: callers re-check their condition. It is an ordinary
// (not raw) system call: a raw one would keep the goroutine's P, but the
// runtime then sees the goroutine running without a break and preempts it
// every 10 ms through the scheduler, which costs a SCHED_FIFO loop far
// more (measured: ten times more missed deadlines).
func futexWait(addr *uint32, val uint32, d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWaitOp, uintptr(val),
		uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// futexWake wakes every waiter on addr. It never blocks, so it is a raw
// system call: the writer's goroutine keeps its P.
func futexWake(addr *uint32) {
	unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWakeOp, uintptr(1<<31-1), 0, 0, 0)
}
