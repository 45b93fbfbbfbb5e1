//go:build !linux

package velma

import "time"

// preciseWait sleeps for d (runtime timer; nanosleep is used on Linux).
func preciseWait(d time.Duration) { time.Sleep(d) }
