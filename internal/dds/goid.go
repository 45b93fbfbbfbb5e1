package dds

import (
	"bytes"
	"runtime"
	"strconv"
)

// goid returns the current goroutine's id. It is used only on Close paths
// to tell whether Close runs on a participant's receive goroutine (inside a
// handler), where waiting for that goroutine would deadlock.
func goid() uint64 {
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
