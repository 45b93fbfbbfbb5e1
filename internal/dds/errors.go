package dds

/*
#include <dds/dds.h>
*/
import "C"

import (
	"errors"
	"fmt"
)

// ErrClosed is returned by operations on a closed Participant, Writer or
// Reader.
var ErrClosed = errors.New("dds: closed")

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
