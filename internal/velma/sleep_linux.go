package velma

import (
	"syscall"
	"time"
)

// preciseWait blocks the calling OS thread for d with nanosleep(2),
// resuming after EINTR.
func preciseWait(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var rem syscall.Timespec
		if err := syscall.Nanosleep(&ts, &rem); err != syscall.EINTR {
			return
		}
		ts = rem
	}
}
