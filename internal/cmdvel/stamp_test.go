package cmdvel

import (
	"strings"
	"testing"
	"time"
)

func TestStamps_Check_Rules(t *testing.T) {
	const timeout = 500 * time.Millisecond
	now := t0.Add(time.Hour)
	tests := []struct {
		name    string
		stamp   time.Time
		timeout time.Duration
		verdict StampVerdict
		at      time.Time // zero: none (ignored)
		age     time.Duration
	}{
		{"zero time.Time is now", time.Time{}, timeout, StampZero, now, 0},
		{"zero message (epoch) is now", time.Unix(0, 0), timeout, StampZero, now, 0},
		{"zero stamp without a timeout", time.Unix(0, 0), 0, StampZero, now, 0},
		{"stamped now", now, timeout, StampFresh, now, 0},
		{"100 ms late counts from its stamp", now.Add(-100 * time.Millisecond), timeout, StampFresh, now.Add(-100 * time.Millisecond), 100 * time.Millisecond},
		{"just within the timeout", now.Add(-timeout + time.Nanosecond), timeout, StampFresh, now.Add(-timeout + time.Nanosecond), timeout - time.Nanosecond},
		{"exactly the timeout is stale", now.Add(-timeout), timeout, StampStale, time.Time{}, timeout},
		{"an hour old is stale", now.Add(-time.Hour), timeout, StampStale, time.Time{}, time.Hour},
		{"1 s after the epoch is stale, not zero", time.Unix(1, 0), timeout, StampStale, time.Time{}, now.Sub(time.Unix(1, 0))},
		{"no timeout: an hour old counts", now.Add(-time.Hour), 0, StampFresh, now.Add(-time.Hour), time.Hour},
		{"1 ms ahead counts from now", now.Add(time.Millisecond), timeout, StampFuture, now, -time.Millisecond},
		{"an hour ahead counts from now, not from the stamp", now.Add(time.Hour), timeout, StampFuture, now, -time.Hour},
		{"ahead without a timeout", now.Add(time.Hour), 0, StampFuture, now, -time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStamps("cmd_vel")
			r := s.Check(tt.stamp, now, tt.timeout)
			if r.Verdict != tt.verdict || !r.At.Equal(tt.at) || r.Age != tt.age {
				t.Errorf("Check = %v at %v age %v, want %v at %v age %v", r.Verdict, r.At, r.Age, tt.verdict, tt.at, tt.age)
			}
			if tt.verdict != StampFresh && r.Report == nil {
				t.Errorf("%v stamp: no report for the first one", r.Verdict)
			}
			if tt.verdict == StampFresh && r.Report != nil {
				t.Errorf("fresh stamp reported: %v", r.Report)
			}
			if r.Report != nil && !strings.HasPrefix(r.Report.Error(), "cmd_vel: ") {
				t.Errorf("report %q does not name the input", r.Report)
			}
			stale, future, zero := uint64(0), uint64(0), uint64(0)
			switch tt.verdict {
			case StampStale:
				stale = 1
			case StampFuture:
				future = 1
			case StampZero:
				zero = 1
			}
			if s.Stale() != stale || s.Future() != future || s.Zero() != zero {
				t.Errorf("counters stale %d future %d zero %d, want %d %d %d", s.Stale(), s.Future(), s.Zero(), stale, future, zero)
			}
		})
	}
}

func TestStamps_Reports(t *testing.T) {
	now := t0.Add(time.Hour)
	const timeout = time.Second
	s := NewStamps("autonomy cmd_vel")
	// A zero stamp is said once, ever.
	if r := s.Check(time.Time{}, now, timeout); r.Report == nil || !strings.Contains(r.Report.Error(), "zero stamp") {
		t.Fatalf("first zero stamp: report %v", r.Report)
	}
	for i := range 3 {
		if r := s.Check(time.Time{}, now.Add(time.Duration(i+1)*time.Minute), timeout); r.Report != nil {
			t.Fatalf("zero stamp %d reported again: %v", i+2, r.Report)
		}
	}
	// Stale: the first of an episode, with the age and the timeout; the
	// rest of the episode is counted only.
	r := s.Check(now.Add(-3*time.Second), now, timeout)
	if r.Report == nil || !strings.Contains(r.Report.Error(), "3s ago") || !strings.Contains(r.Report.Error(), "timeout 1s") {
		t.Fatalf("first stale: report %v", r.Report)
	}
	for i := range 5 {
		if r := s.Check(now.Add(-3*time.Second), now.Add(time.Duration(i)*time.Millisecond), timeout); r.Report != nil {
			t.Fatalf("stale %d in the same episode reported: %v", i+2, r.Report)
		}
	}
	// A fresh command ends the episode; the next stale one is reported
	// once ReportInterval has passed, saying how many it stands for.
	s.Check(now, now, timeout)
	later := now.Add(ReportInterval)
	r = s.Check(later.Add(-2*time.Second), later, timeout)
	if r.Report == nil || !strings.Contains(r.Report.Error(), "6 such commands") {
		t.Fatalf("stale after a fresh one: report %v", r.Report)
	}
	if s.Stale() != 7 {
		t.Errorf("Stale() = %d, want 7", s.Stale())
	}
	// Future stamps have their own episodes.
	if r := s.Check(later.Add(time.Minute), later, timeout); r.Report == nil || !strings.Contains(r.Report.Error(), "1m0s ahead") {
		t.Fatalf("first future stamp: report %v", r.Report)
	}
	if r := s.Check(later.Add(time.Minute), later, timeout); r.Report != nil {
		t.Fatalf("second future stamp reported: %v", r.Report)
	}
}

func TestStampVerdict_String(t *testing.T) {
	for v, want := range map[StampVerdict]string{StampFresh: "fresh", StampZero: "zero", StampFuture: "future", StampStale: "stale", 9: "StampVerdict(9)"} {
		if v.String() != want {
			t.Errorf("%d: %q, want %q", int(v), v.String(), want)
		}
	}
}
