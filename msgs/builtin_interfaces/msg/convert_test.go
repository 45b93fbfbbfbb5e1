package builtin_interfaces_msg

import (
	"math"
	"testing"
	"time"
)

func TestTimeOf(t *testing.T) {
	cases := []struct {
		name string
		in   time.Time
		want Time
	}{
		{"zero time.Time", time.Time{}, Time{}},
		{"epoch", time.Unix(0, 0), Time{}},
		{"before the epoch", time.Unix(-5, 0), Time{}},
		{"ordinary", time.Unix(1700000000, 123456789), Time{Sec: 1700000000, Nanosec: 123456789}},
		{"last second", time.Unix(math.MaxInt32, 5), Time{Sec: math.MaxInt32, Nanosec: 5}},
		{"beyond int32", time.Unix(math.MaxInt32+10, 0), Time{Sec: math.MaxInt32, Nanosec: 999999999}},
	}
	for _, c := range cases {
		if got := TimeOf(c.in); got != c.want {
			t.Errorf("%s: TimeOf = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestTime_AsTime(t *testing.T) {
	if got := (Time{Sec: 3, Nanosec: 1500000000}).AsTime(); !got.Equal(time.Unix(4, 500000000)) {
		t.Errorf("nanosec carry: %v", got)
	}
	in := time.Unix(1700000000, 42).UTC()
	if got := TimeOf(in).AsTime(); !got.Equal(in) || got.Location() != time.UTC {
		t.Errorf("round trip: %v, want %v", got, in)
	}
	if !(Time{}).IsZero() || (Time{Nanosec: 1}).IsZero() {
		t.Error("IsZero")
	}
}

func TestDurationOf(t *testing.T) {
	cases := []struct {
		in   time.Duration
		want Duration
	}{
		{0, Duration{}},
		{1500 * time.Millisecond, Duration{Sec: 1, Nanosec: 500000000}},
		{-1500 * time.Millisecond, Duration{Sec: -2, Nanosec: 500000000}},
		{-time.Second, Duration{Sec: -1}},
		{-1, Duration{Sec: -1, Nanosec: 999999999}},
		{time.Duration(math.MaxInt64), Duration{Sec: math.MaxInt32, Nanosec: 999999999}},
		{time.Duration(math.MinInt64), Duration{Sec: math.MinInt32}},
	}
	for _, c := range cases {
		got := DurationOf(c.in)
		if got != c.want {
			t.Errorf("DurationOf(%v) = %+v, want %+v", c.in, got, c.want)
		}
		if c.in > -100*365*24*time.Hour && c.in < 100*365*24*time.Hour {
			if back := got.AsDuration(); back != c.in {
				t.Errorf("AsDuration(DurationOf(%v)) = %v", c.in, back)
			}
		}
	}
}
