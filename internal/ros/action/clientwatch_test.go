package action

import (
	"testing"
	"time"
)

func TestClientWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	type obs struct {
		at        time.Duration
		listeners int
		lost      bool
	}
	tests := []struct {
		name  string
		after time.Duration
		obs   []obs
	}{
		{"a client that listens the whole time", 0, []obs{{0, 1, false}, {time.Second, 2, false}, {time.Hour, 1, false}}},
		{"never listened: never lost", 0, []obs{{0, 0, false}, {time.Second, 0, false}, {time.Hour, 0, false}}},
		{"listener appears late, then goes: lost after 500 ms", 0, []obs{
			{0, 0, false}, {100 * ms, 1, false}, {200 * ms, 0, false}, {700 * ms, 0, false}, {701 * ms, 0, true}}},
		{"a short gap is forgiven", 0, []obs{
			{0, 1, false}, {100 * ms, 0, false}, {500 * ms, 0, false}, {550 * ms, 1, false}, {2 * time.Second, 0, false},
			{2500 * ms, 0, false}, {2600 * ms, 0, true}}},
		{"configured LostAfter", 2 * time.Second, []obs{{0, 1, false}, {ms, 0, false}, {2 * time.Second, 0, false}, {2002 * ms, 0, true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := ClientWatch{LostAfter: tt.after}
			for i, o := range tt.obs {
				if got := w.Lost(o.listeners, t0.Add(o.at)); got != o.lost {
					t.Errorf("observation %d (%d listeners at %v): lost = %v, want %v", i, o.listeners, o.at, got, o.lost)
				}
			}
		})
	}
}
