package dds

/*
#include <dds/dds.h>
#include "logsink.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
)

// ErrClosed is returned by operations on a closed Participant, Writer or
// Reader.
var ErrClosed = errors.New("dds: closed")

// ErrNoLoan is returned by the loan calls of a writer that cannot lend
// samples: shared memory is off or unavailable for it, or its type is not
// fixed-size.
var ErrNoLoan = errors.New("loans need shared memory and a fixed-size type")

// ErrEncapsulation matches (with errors.Is) the error of a Writer.Write
// whose payload does not start with a valid XCDR1 encapsulation header.
var ErrEncapsulation = errors.New("dds: bad encapsulation header")

// ErrTimeout matches (with errors.Is) an *Error whose code is
// DDS_RETCODE_TIMEOUT, e.g. from Writer.WaitForAcks.
var ErrTimeout = errors.New("dds: timeout")

// Error is a failed Cyclone DDS call.
type Error struct {
	// Op names the operation that failed (usually the C function).
	Op string
	// Code is the (negative) dds_return_t, e.g. -10 for DDS_RETCODE_TIMEOUT.
	Code int32
	// Text is Cyclone's description of Code (dds_strretcode).
	Text string
}

// Error formats the error as "dds: <op>: <text> (<code>)".
func (e *Error) Error() string {
	return fmt.Sprintf("dds: %s: %s (%d)", e.Op, e.Text, e.Code)
}

// Is reports whether target is ErrTimeout and e is a timeout.
func (e *Error) Is(target error) bool {
	return target == ErrTimeout && e.Code == C.DDS_RETCODE_TIMEOUT
}

// newError wraps a negative dds_return_t.
func newError(op string, rc C.dds_return_t) error {
	return &Error{Op: op, Code: int32(rc), Text: C.GoString(C.dds_strretcode(rc))}
}

// check returns nil for a non-negative return code and an *Error otherwise.
func check(op string, rc C.dds_return_t) error {
	if rc >= 0 {
		return nil
	}
	return newError(op, rc)
}

// CreateError is NewParticipantWithProperties' error when Cyclone refused
// to create the participant: the return code and the error messages
// Cyclone logged meanwhile (with DDS Security, the only place that says
// which certificate, signature or permission was refused).
type CreateError struct {
	Err error    // the *Error of dds_create_participant
	Log []string // Cyclone's error and warning messages, oldest first
}

// Error formats the return code followed by the logged messages.
func (e *CreateError) Error() string {
	if len(e.Log) == 0 {
		return e.Err.Error()
	}
	return e.Err.Error() + ": " + strings.Join(e.Log, "; ")
}

// Unwrap returns the *Error.
func (e *CreateError) Unwrap() error { return e.Err }

// errorsLoggedSince takes Cyclone's queued log messages if any was logged
// after the count total (CycloneLogStats) and returns the errors and
// warnings among them. The log is process-wide, so this may take messages
// of another participant of the process too: they are kept in the result
// only if they are errors or warnings, which is where they would have gone
// anyway (the participant that failed is the one to report).
func errorsLoggedSince(total uint64) []string {
	if CycloneLogStats().Total == total {
		return nil
	}
	var out []string
	for _, m := range TakeLog(C.FSM_LOG_RING) {
		if m.Level >= LogWarning {
			out = append(out, strings.Join(strings.Fields(m.Text), " "))
		}
	}
	return out
}
