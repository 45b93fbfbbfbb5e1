package builtin_interfaces_msg

import (
	"math"
	"time"
)

// This file is written by hand (not generated): the one place where Go's
// time.Time and time.Duration meet builtin_interfaces/Time and Duration.

// TimeOf converts t to a Time message. ROS 2 time is not negative: the zero
// time.Time and times before the Unix epoch give the zero message, and times
// after the last representable second (2038-01-19T03:14:07Z, int32 seconds)
// are clamped to it.
func TimeOf(t time.Time) Time {
	if t.IsZero() || t.Unix() < 0 {
		return Time{}
	}
	if t.Unix() > math.MaxInt32 {
		return Time{Sec: math.MaxInt32, Nanosec: 999999999}
	}
	return Time{Sec: int32(t.Unix()), Nanosec: uint32(t.Nanosecond())}
}

// AsTime converts the message to a time.Time in UTC. The zero message is the
// Unix epoch (not time.Time{}); nanosec values of a second or more carry
// into the seconds.
func (m Time) AsTime() time.Time {
	return time.Unix(int64(m.Sec), int64(m.Nanosec)).UTC()
}

// IsZero reports whether both fields are zero (a stamp that was not set).
func (m Time) IsZero() bool { return m.Sec == 0 && m.Nanosec == 0 }

// DurationOf converts d to a Duration message as rclcpp does: nanosec is in
// [0, 1e9) and sec carries the sign (-1.5 s is sec -2, nanosec 5e8).
// Durations beyond int32 seconds (about 68 years) are clamped.
func DurationOf(d time.Duration) Duration {
	sec := int64(d / time.Second)
	ns := int64(d % time.Second)
	if ns < 0 {
		sec--
		ns += int64(time.Second)
	}
	switch {
	case sec > math.MaxInt32:
		return Duration{Sec: math.MaxInt32, Nanosec: 999999999}
	case sec < math.MinInt32:
		return Duration{Sec: math.MinInt32}
	}
	return Duration{Sec: int32(sec), Nanosec: uint32(ns)}
}

// AsDuration converts the message to a time.Duration; nanosec values of a
// second or more carry into the seconds.
func (m Duration) AsDuration() time.Duration {
	return time.Duration(m.Sec)*time.Second + time.Duration(m.Nanosec)
}
