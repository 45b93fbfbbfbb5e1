package dds

/*
#include <stdlib.h>
#include "logsink.h"
*/
import "C"

import (
	"sync"
	"unsafe"
)

// LogLevel is the severity of a message of Cyclone's own log.
type LogLevel int

// Levels of Cyclone's log (its categories fatal, error, warning, info).
const (
	LogInfo LogLevel = iota
	LogWarning
	LogError
	LogFatal
)

// String returns the level's name.
func (l LogLevel) String() string {
	switch l {
	case LogWarning:
		return "warning"
	case LogError:
		return "error"
	case LogFatal:
		return "fatal"
	}
	return "info"
}

// LogMessage is one message of Cyclone's own log.
type LogMessage struct {
	Level LogLevel
	Text  string // without Cyclone's header (time, domain, thread)
}

// LogStats counts the messages of Cyclone's own log in this process.
type LogStats struct {
	Total   uint64 // every message Cyclone logged since the sink was installed
	Dropped uint64 // messages lost because nobody took them in time (the ring held 64)
}

// logSinkOnce installs the sink once per process: Cyclone's log sink is
// process-wide.
var logSinkOnce sync.Once

// installLogSink routes Cyclone's own log (errors, warnings, info; not
// tracing) into a bounded buffer in C instead of stderr. NewParticipant
// calls it; the messages are taken with TakeLog.
func installLogSink() { logSinkOnce.Do(func() { C.fsm_log_install() }) }

// TakeLog returns up to max of the oldest messages of Cyclone's own log
// that nobody has taken yet (the messages are process-wide: whoever takes
// one owns it). Cyclone's threads only copy a message into a ring in C;
// Go code never runs on them.
func TakeLog(max int) []LogMessage {
	var out []LogMessage
	buf := (*C.char)(C.malloc(C.FSM_LOG_MSG))
	defer C.free(unsafe.Pointer(buf))
	for len(out) < max {
		var prio C.uint32_t
		if C.fsm_log_take(&prio, buf, C.FSM_LOG_MSG) == 0 {
			break
		}
		out = append(out, LogMessage{Level: levelOf(uint32(prio)), Text: C.GoString(buf)})
	}
	return out
}

// CycloneLogStats returns the counts of Cyclone's own log in this process.
func CycloneLogStats() LogStats {
	var total, dropped C.uint64_t
	C.fsm_log_stats(&total, &dropped)
	return LogStats{Total: uint64(total), Dropped: uint64(dropped)}
}

// levelOf maps Cyclone's category bits (DDS_LC_FATAL 1, ERROR 2, WARNING 4,
// INFO 8) to a level.
func levelOf(prio uint32) LogLevel {
	switch {
	case prio&1 != 0:
		return LogFatal
	case prio&2 != 0:
		return LogError
	case prio&4 != 0:
		return LogWarning
	}
	return LogInfo
}
