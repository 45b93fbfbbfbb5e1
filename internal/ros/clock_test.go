package ros

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/fsmnodes/fsmnodes/internal/ros/param"
)

func TestClock_SystemThenSimTime(t *testing.T) {
	wall := time.Unix(1700000000, 0)
	c := NewClock(func() time.Time { return wall })
	if got := c.Now(); !got.Equal(wall) || c.IsSimTime() {
		t.Fatalf("system clock: %v, sim=%v", got, c.IsSimTime())
	}
	c.SetTime(time.Unix(5, 0)) // ignored while on system time
	c.SetSimTime(true)
	if got := c.Now(); !got.Equal(time.Unix(0, 0)) {
		t.Fatalf("sim time before /clock = %v, want 0", got)
	}
	c.SetTime(time.Unix(42, 5))
	if got := c.Now(); !got.Equal(time.Unix(42, 5)) {
		t.Fatalf("sim time = %v", got)
	}
	c.SetSimTime(false)
	if got := c.Now(); !got.Equal(wall) {
		t.Fatalf("back on system time: %v", got)
	}
}

func TestClock_WaitUntil_WakesOnlyWhenSimTimeReachesDeadline(t *testing.T) {
	c := NewClock(nil)
	c.SetSimTime(true)
	c.SetTime(time.Unix(10, 0))
	done := make(chan error, 1)
	go func() { done <- c.WaitUntil(context.Background(), time.Unix(12, 0)) }()
	c.SetTime(time.Unix(11, 0))
	select {
	case err := <-done:
		t.Fatalf("WaitUntil returned at sim time 11 (deadline 12): %v", err)
	default:
	}
	c.SetTime(time.Unix(12, 0))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- c.WaitUntil(ctx, time.Unix(100, 0)) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitUntil after cancel = %v", err)
	}
}

func TestRosoutRecord_LevelsNameFieldsCaller(t *testing.T) {
	ent := zapcore.Entry{
		Level: zapcore.WarnLevel, LoggerName: "ns.node", Message: "hot",
		Time:   time.Unix(1700000000, 5),
		Caller: zapcore.NewEntryCaller(0, "/src/x/motor.go", 42, true),
	}
	rec := rosoutRecord(ent, []zapcore.Field{zap.Float64("temp", 80.5), zap.String("id", "m1")})
	if rec.Level != 30 || rec.Name != "ns.node" || rec.Msg != "hot id=m1 temp=80.5" ||
		rec.Stamp.Sec != 1700000000 || rec.Stamp.Nanosec != 5 || rec.File != "motor.go" || rec.Line != 42 {
		t.Fatalf("record = %+v", rec)
	}
	for l, want := range map[zapcore.Level]uint8{zapcore.DebugLevel: 10, zapcore.InfoLevel: 20, zapcore.ErrorLevel: 40, zapcore.FatalLevel: 50} {
		if got := rosoutRecord(zapcore.Entry{Level: l}, nil).Level; got != want {
			t.Errorf("level %v -> %d, want %d", l, got, want)
		}
	}
}

func TestParamValueMsg_RoundTripsEveryType(t *testing.T) {
	vals := []param.Value{
		param.BoolValue(true), param.IntegerValue(-4), param.DoubleValue(2.5), param.StringValue("s"),
		param.ByteArrayValue([]byte{1}), param.BoolArrayValue([]bool{false, true}),
		param.IntegerArrayValue([]int64{7}), param.DoubleArrayValue([]float64{0.5}),
		param.StringArrayValue([]string{"a", "b"}), {},
	}
	for _, v := range vals {
		m := paramValueToMsg(v)
		back, err := paramValueFromMsg(&m)
		if err != nil || !back.Equal(v) {
			t.Errorf("%v (%v): round trip = %v, %v", v, v.Type(), back, err)
		}
	}
	bad := paramValueToMsg(param.IntegerValue(1))
	bad.Type = 10
	if _, err := paramValueFromMsg(&bad); err == nil {
		t.Error("type 10 accepted")
	}
}
