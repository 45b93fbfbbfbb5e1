// Package goid tells which goroutine is running. The client library uses
// it only on Close paths: a Close that runs on the goroutine it would wait
// for (a node's callback goroutine, a participant's receive goroutine)
// must not wait, or it would deadlock.
package goid

import (
	"bytes"
	"runtime"
	"strconv"
)

// Current returns the id of the calling goroutine, read from the first line
// of its stack trace ("goroutine N [...]"), or 0 if that cannot be parsed.
func Current() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return 0
	}
	return id
}
