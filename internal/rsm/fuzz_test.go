package rsm

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// FuzzParseWaypoints asks that any file content either loads into finite,
// valid waypoints or is rejected, never a panic.
func FuzzParseWaypoints(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "wp.yaml")
	arr := WaypointArray{Mode: Patrol, Waypoints: []Waypoint{{Pose: at(1, 2), Routine: "Reversing"}}}
	if err := SaveWaypoints(path, arr); err != nil {
		f.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	f.Add(good)
	f.Add([]byte("version: 1\nmode: 2\nwaypoints: []\n"))
	f.Add([]byte("version: 1\nwaypoints:\n  - position: {x: .inf}\n"))
	f.Add([]byte("{{{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := parseWaypoints(data)
		if err != nil {
			return
		}
		if !a.Mode.Valid() {
			t.Fatalf("mode %d accepted", a.Mode)
		}
		for _, w := range a.Waypoints {
			if w.Pose.Validate() != nil {
				t.Fatalf("non-finite pose accepted: %+v", w.Pose)
			}
		}
	})
}

// FuzzMux feeds arbitrary commands; the output must always be finite.
func FuzzMux(f *testing.F) {
	f.Add(1.0, 0.0, 2.0, uint8(1), false, int64(100))
	f.Add(nan(), 1.0, -1.0, uint8(2), true, int64(600))
	f.Fuzz(func(t *testing.T, a, b, c float64, mode uint8, estop bool, ms int64) {
		m, err := NewMux(MuxConfig{JoystickUsed: true})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Unix(0, 0)
		m.SetOperationMode(OperationMode{EmergencyStop: estop, Mode: Mode(mode)})
		_ = m.OnAutonomy(Twist{Linear: geom.Vec3{X: a}, Angular: geom.Vec3{Z: b}}, now)
		_ = m.OnTeleop(Twist{Linear: geom.Vec3{Y: c}}, now)
		_ = m.OnJoy(Joy{Axes: []float32{float32(a)}}, now)
		_ = m.OnJoy(Joy{Axes: []float32{float32(b)}}, now)
		tw, op := m.Tick(now.Add(time.Duration(ms) * time.Millisecond))
		if err := tw.Validate(); err != nil {
			t.Fatalf("output %+v: %v", tw, err)
		}
		if !op.Mode.Valid() {
			t.Fatalf("mode %d", op.Mode)
		}
		if op.EmergencyStop && !tw.IsZero() {
			t.Fatalf("non-zero output %+v during e-stop", tw)
		}
		if math.Abs(tw.Linear.X) > DefaultMaxLinearVelocity || math.Abs(tw.Linear.Y) > DefaultMaxLinearVelocity ||
			math.Abs(tw.Angular.Z) > DefaultMaxAngularVelocity {
			t.Fatalf("output %+v beyond the default limits", tw)
		}
	})
}

func BenchmarkStateInterface_TickNavigating(b *testing.B) {
	h := newHarness(b)
	h.addWaypoints(wp(1, 0, ""))
	h.setGoal(NavigationWaypointFollowing, 0, "")
	h.makeCurrent(NewNavigation())
	_ = h.si.OnOperationMode(h.ctx, OperationMode{Mode: ModeAutonomous})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.pose.pose.Position.X += 0.01
		h.step()
	}
}

func BenchmarkMux_Tick(b *testing.B) {
	m, _ := NewMux(MuxConfig{})
	m.SetOperationMode(OperationMode{Mode: ModeAutonomous})
	now := time.Unix(0, 0)
	for i := 0; i < b.N; i++ {
		_ = m.OnAutonomy(lin(float64(i)), now)
		m.Tick(now)
	}
}
