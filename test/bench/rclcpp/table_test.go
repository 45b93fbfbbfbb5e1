package main

import (
	"errors"
	"strings"
	"testing"
)

// A failed measurement leaves its cell marked with the reason; the other
// cells, and the ratios of rounds where both sides were measured, are
// still printed.
func TestTablePrintsFailures(t *testing.T) {
	ms := []metric{{name: "round trip 1 KiB", unit: "us"}, {name: "service calls", unit: "calls/s", higher: true}}
	ps := []pair{{impl{name: "ours"}, impl{name: "ours"}}, {impl{name: "rclcpp"}, impl{name: "rclcpp"}}}
	tab := newTable(ms, ps)
	// round 1
	tab.add(0, 0, 50, nil)
	tab.add(0, 1, 0, errors.New("no round trip completed (2 pings unanswered for a second)"))
	tab.add(1, 0, 900, nil)
	tab.add(1, 1, 1000, nil)
	// round 2
	tab.add(0, 0, 70, nil)
	tab.add(0, 1, 0, errors.New("no round trip completed (3 pings unanswered for a second)"))
	tab.add(1, 0, 0, errors.New("client: exit status 1"))
	tab.add(1, 1, 500, nil)
	var b strings.Builder
	tab.print(&b)
	out := b.String()
	for _, want := range []string{
		"| line | ours | rclcpp | ours/rclcpp |",
		"| round trip 1 KiB (us) | 60.0 | failed: no round trip completed (3 pings unanswered for a second) | n/a (no round measured both) |",
		"| service calls (calls/s) | 900.0 (1 of 2 rounds; client: exit status 1) | 750.0 | 0.90 (behind) |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// The ratio is the median of per-round ratios, so a round where both
// sides were slowed down together does not move it.
func TestRatioPerRound(t *testing.T) {
	ms := []metric{{name: "throughput 1 KiB", unit: "msg/s", higher: true}}
	ps := []pair{{impl{name: "ours"}, impl{name: "ours"}}, {impl{name: "rclcpp"}, impl{name: "rclcpp"}}}
	tab := newTable(ms, ps)
	for _, r := range [][2]float64{{1000, 800}, {200, 160}, {3000, 2400}} {
		tab.add(0, 0, r[0], nil)
		tab.add(0, 1, r[1], nil)
	}
	if got := tab.ratio(0, 1); got != "1.25 (ahead)" {
		t.Errorf("ratio %q, want 1.25 (ahead)", got)
	}
}
