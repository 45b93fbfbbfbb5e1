package ros

import (
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/dds"
)

func TestQoSMapping(t *testing.T) {
	tests := []struct {
		name string
		in   QoS
		want dds.QoS
	}{
		{"default", QoSDefault, dds.QoS{Reliability: dds.Reliable, Durability: dds.Volatile, History: dds.KeepLast, Depth: 10}},
		{"sensor data", QoSSensorData, dds.QoS{Reliability: dds.BestEffort, Durability: dds.Volatile, History: dds.KeepLast, Depth: 5}},
		{"services", QoSServices, dds.QoS{Reliability: dds.Reliable, History: dds.KeepLast, Depth: 10}},
		{"parameters", QoSParameters, dds.QoS{Reliability: dds.Reliable, History: dds.KeepLast, Depth: 1000}},
		{"parameter events", QoSParameterEvents, dds.QoS{Reliability: dds.Reliable, History: dds.KeepLast, Depth: 1000}},
		{"system default", QoSSystemDefault, dds.QoS{Reliability: dds.Reliable, Durability: dds.Volatile, History: dds.KeepLast, Depth: 1}},
		{"rosout", QoSRosout, dds.QoS{Reliability: dds.Reliable, Durability: dds.TransientLocal, History: dds.KeepLast, Depth: 1000, Lifespan: 10 * time.Second}},
		{"clock", QoSClock, dds.QoS{Reliability: dds.BestEffort, History: dds.KeepLast, Depth: 1}},
		{"latched", QoSLatched, dds.QoS{Reliability: dds.Reliable, Durability: dds.TransientLocal, History: dds.KeepLast, Depth: 1}},
		{"default made latched", QoSDefault.TransientLocal(), dds.QoS{Durability: dds.TransientLocal, History: dds.KeepLast, Depth: 10}},
		{"keep all", QoSDefault.KeepAll(), dds.QoS{History: dds.KeepAll}},
		{"infinite durations unset", QoS{Deadline: DurationInfinite, Lifespan: DurationInfinite, LivelinessLeaseDuration: DurationInfinite},
			dds.QoS{History: dds.KeepLast, Depth: 1}},
		{"finite durations", QoS{Deadline: time.Second, LivelinessLeaseDuration: 2 * time.Second, Liveliness: LivelinessManualByTopic},
			dds.QoS{History: dds.KeepLast, Depth: 1, Deadline: time.Second, LeaseDuration: 2 * time.Second, Liveliness: dds.ManualByTopic}},
		{"best effort helper", QoSDefault.BestEffort().KeepLast(3), dds.QoS{Reliability: dds.BestEffort, History: dds.KeepLast, Depth: 3}},
	}
	for _, tt := range tests {
		got, err := tt.in.ddsQoS(nil, false)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got.Reliability != tt.want.Reliability || got.Durability != tt.want.Durability || got.History != tt.want.History ||
			got.Depth != tt.want.Depth || got.Deadline != tt.want.Deadline || got.Lifespan != tt.want.Lifespan ||
			got.LeaseDuration != tt.want.LeaseDuration || got.Liveliness != tt.want.Liveliness {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
	q, _ := QoSDefault.ddsQoS([]byte("typehash=x;"), true)
	if string(q.UserData) != "typehash=x;" || !q.IgnoreLocal {
		t.Errorf("user data / ignore local not passed: %+v", q)
	}
}

func TestQoSValidate(t *testing.T) {
	bad := []QoS{
		{Depth: -1},
		{History: 7},
		{Reliability: 9},
		{Durability: -1},
		{Liveliness: 2},
		{Deadline: -time.Second},
		{Depth: 1 << 40},
	}
	for _, q := range bad {
		if _, err := q.ddsQoS(nil, false); err == nil {
			t.Errorf("%+v accepted", q)
		}
	}
}

func TestQoSFromDDSRoundTrip(t *testing.T) {
	for _, q := range []QoS{QoSDefault, QoSSensorData, QoSLatched, QoSClock} {
		d, err := q.ddsQoS(nil, false)
		if err != nil {
			t.Fatal(err)
		}
		back := qosFromDDS(d)
		if back.History != q.History || back.Depth != q.Depth || back.Reliability != q.Reliability || back.Durability != q.Durability {
			t.Errorf("round trip of %+v = %+v", q, back)
		}
		if back.Deadline != DurationInfinite || back.Liveliness != LivelinessAutomatic {
			t.Errorf("unset deadline/liveliness not reported as infinite/automatic: %+v", back)
		}
	}
}
