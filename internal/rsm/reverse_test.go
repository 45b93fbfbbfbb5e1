package rsm

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/cmdvel"
	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// TestReverseRelay_Command: linear negated, angular kept, in either
// reverse mode; bad commands become a stop, absurd ones are clamped.
func TestReverseRelay_Command(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name    string
		reverse bool
		in      Twist
		want    Twist
		report  string // substring of the report, "" = none
	}{
		{"forward of the reverse stack is backward", true,
			Twist{Linear: geom.Vec3{X: 0.3}}, Twist{Linear: geom.Vec3{X: -0.3}}, ""},
		{"backward of the reverse stack is forward", true,
			Twist{Linear: geom.Vec3{X: -0.2}}, Twist{Linear: geom.Vec3{X: 0.2}}, ""},
		{"turns are kept", true,
			Twist{Linear: geom.Vec3{X: 0.3}, Angular: geom.Vec3{Z: 0.5}}, Twist{Linear: geom.Vec3{X: -0.3}, Angular: geom.Vec3{Z: 0.5}}, ""},
		{"all linear components negated, all angular kept (holonomic)", true,
			Twist{Linear: geom.Vec3{X: 0.1, Y: -0.2, Z: 0.05}, Angular: geom.Vec3{X: 0.01, Y: -0.02, Z: -0.4}},
			Twist{Linear: geom.Vec3{X: -0.1, Y: 0.2, Z: -0.05}, Angular: geom.Vec3{X: 0.01, Y: -0.02, Z: -0.4}}, ""},
		{"reverse mode off (an unstuck attempt): converted too", false,
			Twist{Linear: geom.Vec3{X: 0.3}, Angular: geom.Vec3{Z: -0.2}}, Twist{Linear: geom.Vec3{X: -0.3}, Angular: geom.Vec3{Z: -0.2}}, ""},
		{"zero stays zero", true, Twist{}, Twist{}, ""},
		{"NaN: stop", true, Twist{Linear: geom.Vec3{X: nan()}, Angular: geom.Vec3{Z: 0.3}}, Twist{}, "linear.x is NaN"},
		{"Inf angular: stop", true, Twist{Linear: geom.Vec3{X: 0.3}, Angular: geom.Vec3{Z: inf}}, Twist{}, "angular.z is +Inf"},
		{"beyond the limits: clamped, then negated", true,
			Twist{Linear: geom.Vec3{X: 1e308}, Angular: geom.Vec3{Z: -50}}, Twist{Linear: geom.Vec3{X: -1}, Angular: geom.Vec3{Z: -2}}, "beyond max_linear_velocity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewReverseRelay(cmdvel.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if rep := r.SetNavigationToReverse(tt.reverse); !rep.Success || rep.Message != "Mode set" {
				t.Fatalf("SetNavigationToReverse = %+v", rep)
			}
			got, report := r.Command(tt.in, t0)
			if got != tt.want {
				t.Errorf("Command(%+v) = %+v, want %+v", tt.in, got, tt.want)
			}
			if (report == nil) != (tt.report == "") || report != nil && !strings.Contains(report.Error(), tt.report) {
				t.Errorf("report = %v, want %q", report, tt.report)
			}
		})
	}
}

func TestReverseRelay_ModeAndCounters(t *testing.T) {
	r, err := NewReverseRelay(cmdvel.Limits{Linear: 0.5, Angular: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Reverse() {
		t.Fatal("starts in reverse mode")
	}
	now := t0
	step := func(tw Twist) (Twist, error) { now = now.Add(50 * time.Millisecond); return r.Command(tw, now) }
	_, _ = step(lin(0.2)) // unstuck attempt
	r.SetNavigationToReverse(true)
	if !r.Reverse() {
		t.Fatal("reverse mode not recorded")
	}
	_, _ = step(lin(0.2))
	_, _ = step(lin(0.2))
	if out, _ := step(lin(0.9)); out != lin(-0.5) {
		t.Errorf("clamped to %v, want the configured 0.5 m/s (negated)", out)
	}
	// A burst of bad commands is reported once, counted every time.
	reports := 0
	for range 10 {
		if _, err := step(Twist{Linear: geom.Vec3{X: nan()}}); err != nil {
			reports++
		}
	}
	if off, on := r.Relayed(); off != 1 || on != 3 || r.Rejected() != 10 || r.Clamped() != 1 || reports != 1 {
		t.Errorf("relayed %d off, %d on, rejected %d, clamped %d, reports %d; want 1, 3, 10, 1, 1 (%v)",
			off, on, r.Rejected(), r.Clamped(), reports, r)
	}
	r.SetNavigationToReverse(false)
	if r.Reverse() {
		t.Error("reverse mode not cleared")
	}
	if _, err := NewReverseRelay(cmdvel.Limits{Linear: -1, Angular: 1}); err == nil {
		t.Error("negative limit accepted")
	}
}
