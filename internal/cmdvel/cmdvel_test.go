package cmdvel

import (
	"math"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newGuard(t *testing.T) *Guard {
	t.Helper()
	g, err := NewGuard("cmd_vel", Limits{Linear: 0.5, Angular: 1.5})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestLimits_Validate(t *testing.T) {
	for _, tt := range []struct {
		lim Limits
		ok  bool
	}{
		{Limits{0.5, 1.5}, true},
		{Limits{0, 1}, false},
		{Limits{-1, 1}, false},
		{Limits{1, math.NaN()}, false},
		{Limits{math.Inf(1), 1}, false},
		{Limits{1, 0}, false},
	} {
		err := tt.lim.Validate()
		if (err == nil) != tt.ok {
			t.Errorf("%+v: err %v, want ok=%v", tt.lim, err, tt.ok)
		}
		if _, err := NewGuard("x", tt.lim); (err == nil) != tt.ok {
			t.Errorf("NewGuard(%+v): err %v, want ok=%v", tt.lim, err, tt.ok)
		}
	}
}

func TestGuard_Check_Verdicts(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	tests := []struct {
		name string
		in   Twist
		want Twist
		v    Verdict
		why  string
	}{
		{"zero", Twist{}, Twist{}, Accepted, ""},
		{"within", Twist{Linear: [3]float64{0.3}, Angular: [3]float64{2: -1.0}}, Twist{Linear: [3]float64{0.3}, Angular: [3]float64{2: -1.0}}, Accepted, ""},
		{"at the limits", Twist{Linear: [3]float64{-0.5}, Angular: [3]float64{2: 1.5}}, Twist{Linear: [3]float64{-0.5}, Angular: [3]float64{2: 1.5}}, Accepted, ""},
		{"1e308 forward", Twist{Linear: [3]float64{1e308}}, Twist{Linear: [3]float64{0.5}}, Clamped, "linear.x = 1e+308 beyond max_linear_velocity 0.5"},
		{"-1e308 backward", Twist{Linear: [3]float64{-1e308}}, Twist{Linear: [3]float64{-0.5}}, Clamped, "linear.x = -1e+308"},
		{"fast turn", Twist{Angular: [3]float64{2: -7}}, Twist{Angular: [3]float64{2: -1.5}}, Clamped, "angular.z = -7 beyond max_angular_velocity 1.5"},
		{"every component", Twist{Linear: [3]float64{1, -2, 3}, Angular: [3]float64{-4, 5, -6}},
			Twist{Linear: [3]float64{0.5, -0.5, 0.5}, Angular: [3]float64{-1.5, 1.5, -1.5}}, Clamped, "linear.x = 1"},
		{"NaN", Twist{Linear: [3]float64{nan}}, Twist{}, Rejected, "linear.x is NaN"},
		{"+Inf angular", Twist{Angular: [3]float64{1: inf}}, Twist{}, Rejected, "angular.y is +Inf"},
		{"NaN beside a huge value", Twist{Linear: [3]float64{1e308}, Angular: [3]float64{2: nan}}, Twist{}, Rejected, "angular.z is NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGuard(t)
			r := g.Check(tt.in, t0)
			if r.Twist != tt.want || r.Verdict != tt.v {
				t.Errorf("Check = %+v, %v; want %+v, %v", r.Twist, r.Verdict, tt.want, tt.v)
			}
			if tt.why == "" {
				if r.Report != nil || r.Err != nil {
					t.Errorf("report %v, err %v for an accepted command", r.Report, r.Err)
				}
			} else {
				for _, err := range []error{r.Err, r.Report} {
					if err == nil || !strings.Contains(err.Error(), tt.why) || !strings.HasPrefix(err.Error(), "cmd_vel "+tt.v.String()) {
						t.Errorf("err/report %v, want it to start with %q and contain %q", err, "cmd_vel "+tt.v.String(), tt.why)
					}
				}
			}
			var wr, wc uint64
			switch tt.v {
			case Rejected:
				wr = 1
			case Clamped:
				wc = 1
			}
			if g.Rejected() != wr || g.Clamped() != wc {
				t.Errorf("counters rejected %d clamped %d, want %d %d", g.Rejected(), g.Clamped(), wr, wc)
			}
		})
	}
}

// step is one command fed to a guard in a sequence.
type step struct {
	at     time.Duration // after t0
	in     Twist
	report bool // a report is expected
}

func TestGuard_Reports_OncePerEpisodeAtMostEveryInterval(t *testing.T) {
	good := Twist{Linear: [3]float64{0.1}}
	huge := Twist{Linear: [3]float64{1e308}}
	nan := Twist{Angular: [3]float64{2: math.NaN()}}
	ms := time.Millisecond
	tests := []struct {
		name     string
		steps    []step
		rejected uint64
		clamped  uint64
	}{
		{"a flood of clamped commands is reported once", []step{
			{0, huge, true}, {50 * ms, huge, false}, {100 * ms, huge, false}, {10 * time.Second, huge, false},
		}, 0, 4},
		{"alternating bad and good at 20 Hz: once per interval, not 20 lines/s", []step{
			{0, nan, true}, {50 * ms, good, false}, {100 * ms, nan, false}, {150 * ms, good, false},
			{4900 * ms, nan, false}, {4950 * ms, good, false}, {5000 * ms, nan, true}, {5050 * ms, good, false},
		}, 4, 0},
		{"an episode held back is reported once the interval has passed", []step{
			{0, huge, true}, {100 * ms, good, false}, {200 * ms, huge, false}, {3 * time.Second, huge, false},
			{5100 * ms, huge, true}, {9 * time.Second, huge, false},
		}, 0, 5},
		{"a new episode after the interval is reported again", []step{
			{0, huge, true}, {time.Second, good, false}, {7 * time.Second, huge, true},
		}, 0, 2},
		{"rejections and clamps are reported separately", []step{
			{0, huge, true}, {10 * ms, nan, true}, {20 * ms, huge, false}, {30 * ms, nan, false},
		}, 2, 2},
		{"a clock going backwards does not silence reports", []step{
			{10 * time.Second, huge, true}, {10*time.Second + ms, good, false}, {0, huge, true},
		}, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGuard(t)
			for i, s := range tt.steps {
				r := g.Check(s.in, t0.Add(s.at))
				if (r.Report != nil) != s.report {
					t.Errorf("step %d at %v: report %v, want report=%v", i, s.at, r.Report, s.report)
				}
				if (r.Err != nil) != (r.Verdict != Accepted) {
					t.Errorf("step %d: err %v with verdict %v", i, r.Err, r.Verdict)
				}
			}
			if g.Rejected() != tt.rejected || g.Clamped() != tt.clamped {
				t.Errorf("counters rejected %d clamped %d, want %d %d", g.Rejected(), g.Clamped(), tt.rejected, tt.clamped)
			}
		})
	}
}

func TestGuard_ReportCountsHeldBackCommands(t *testing.T) {
	g := newGuard(t)
	huge := Twist{Linear: [3]float64{9}}
	good := Twist{}
	g.Check(huge, t0)
	g.Check(good, t0.Add(time.Millisecond))
	g.Check(huge, t0.Add(2*time.Millisecond))
	g.Check(huge, t0.Add(3*time.Millisecond))
	r := g.Check(huge, t0.Add(ReportInterval+time.Second))
	if r.Report == nil || !strings.Contains(r.Report.Error(), "(3 such commands since the last report") {
		t.Errorf("report %v, want it to count the 3 held-back commands", r.Report)
	}
}

func TestGuard_SetLimits(t *testing.T) {
	g := newGuard(t)
	if err := g.SetLimits(Limits{Linear: 0.1, Angular: 0.2}); err != nil {
		t.Fatal(err)
	}
	if r := g.Check(Twist{Linear: [3]float64{0.3}}, t0); r.Verdict != Clamped || r.Twist.Linear[0] != 0.1 {
		t.Errorf("Check after SetLimits = %+v", r)
	}
	if err := g.SetLimits(Limits{Linear: math.NaN(), Angular: 1}); err == nil {
		t.Error("NaN limit accepted")
	}
	if g.Limits() != (Limits{Linear: 0.1, Angular: 0.2}) {
		t.Errorf("limits after a refused change = %+v", g.Limits())
	}
}
