package tf

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

func near(a, b geom.Vec3) bool { return a.Sub(b).Norm() < 1e-9 }

func tr(parent, child string, x, y, z, yaw float64) Transform {
	return Transform{Parent: parent, Child: child, Translation: geom.Vec3{X: x, Y: y, Z: z}, Rotation: geom.QuatFromYaw(yaw)}
}

func mustSet(t *testing.T, b *Buffer, ts ...Transform) {
	t.Helper()
	for _, x := range ts {
		if err := b.Set(x); err != nil {
			t.Fatalf("Set(%+v): %v", x, err)
		}
	}
}

func TestLookup_Chain_MapOdomBase(t *testing.T) {
	b := NewBuffer()
	// map → odom: 1 m in x, turned 90°; odom → base_footprint: 2 m along odom x.
	mustSet(t, b, tr("map", "odom", 1, 0, 0, math.Pi/2), tr("odom", "base_footprint", 2, 0, 0, 0))
	p, err := b.Lookup("map", "/base_footprint") // ROS 1 style leading slash accepted
	if err != nil {
		t.Fatal(err)
	}
	if !near(p.Position, geom.Vec3{X: 1, Y: 2}) {
		t.Errorf("position = %+v, want (1, 2, 0)", p.Position)
	}
	if yaw := p.Orientation.Yaw(); math.Abs(yaw-math.Pi/2) > 1e-9 {
		t.Errorf("yaw = %v, want π/2", yaw)
	}
	// The inverse lookup undoes it.
	q, err := b.Lookup("base_footprint", "map")
	if err != nil {
		t.Fatal(err)
	}
	back := q.Orientation.Rotate(p.Position).Add(q.Position)
	if !near(back, geom.Vec3{}) {
		t.Errorf("inverse does not undo: %+v", back)
	}
}

func TestLookup_SiblingsThroughCommonRoot(t *testing.T) {
	b := NewBuffer()
	mustSet(t, b, tr("odom", "base", 1, 1, 0, 0), tr("odom", "map", 0, 1, 0, 0), tr("base", "laser", 0.5, 0, 0.2, math.Pi))
	p, err := b.Lookup("map", "laser")
	if err != nil {
		t.Fatal(err)
	}
	if !near(p.Position, geom.Vec3{X: 1.5, Y: 0, Z: 0.2}) {
		t.Errorf("position = %+v", p.Position)
	}
}

func TestLookup_Errors(t *testing.T) {
	b := NewBuffer()
	mustSet(t, b, tr("map", "odom", 0, 0, 0, 0), tr("world", "robot", 0, 0, 0, 0))
	if _, err := b.Lookup("map", "base_link"); !errors.Is(err, ErrUnknownFrame) {
		t.Errorf("unknown frame: %v", err)
	}
	if _, err := b.Lookup("map", "robot"); !errors.Is(err, ErrNoPath) {
		t.Errorf("disconnected: %v", err)
	}
	if p, err := b.Lookup("map", "map"); err != nil || p.Orientation != geom.Identity {
		t.Errorf("identity: %v %v", p, err)
	}
}

func TestSet_RejectsBadTransforms(t *testing.T) {
	b := NewBuffer()
	mustSet(t, b, tr("map", "odom", 0, 0, 0, 0), tr("odom", "base", 0, 0, 0, 0))
	bad := []Transform{
		tr("", "x", 0, 0, 0, 0),
		tr("a", "/a", 0, 0, 0, 0),
		tr("a", "b", math.NaN(), 0, 0, 0),
		{Parent: "a", Child: "b", Rotation: geom.Quat{W: math.Inf(1)}},
		{Parent: "a", Child: "b"},     // zero quaternion
		tr("base", "map", 0, 0, 0, 0), // loop
	}
	for _, x := range bad {
		if err := b.Set(x); err == nil {
			t.Errorf("Set(%+v) accepted", x)
		}
	}
	if b.Len() != 2 {
		t.Errorf("Len = %d, want 2", b.Len())
	}
}

func TestSet_LatestWinsAndReparent(t *testing.T) {
	b := NewBuffer()
	mustSet(t, b, tr("map", "base", 1, 0, 0, 0), tr("map", "base", 2, 0, 0, 0))
	src := PoseSource{Buffer: b, Map: "map", Robot: "/base"}
	if p, _ := src.RobotPose(); !near(p.Position, geom.Vec3{X: 2}) {
		t.Errorf("latest not used: %+v", p.Position)
	}
	mustSet(t, b, tr("odom", "base", 0, 3, 0, 0), tr("map", "odom", 1, 0, 0, 0))
	if p, err := src.RobotPose(); err != nil || !near(p.Position, geom.Vec3{X: 1, Y: 3}) {
		t.Errorf("after reparent: %+v %v", p.Position, err)
	}
}

func TestSet_NormalizesRotation(t *testing.T) {
	b := NewBuffer()
	mustSet(t, b, Transform{Parent: "map", Child: "base", Rotation: geom.Quat{Z: 2, W: 2}})
	p, _ := b.Lookup("map", "base")
	if yaw := p.Orientation.Yaw(); math.Abs(yaw-math.Pi/2) > 1e-9 {
		t.Errorf("yaw = %v", yaw)
	}
}

func BenchmarkLookup_ThreeLinks(b *testing.B) {
	buf := NewBuffer()
	_ = buf.Set(tr("map", "odom", 1, 0, 0, 0.3))
	_ = buf.Set(tr("odom", "base_footprint", 2, 0, 0, 0.1))
	_ = buf.Set(tr("base_footprint", "base_link", 0, 0, 0.1, 0))
	for i := 0; i < b.N; i++ {
		if _, err := buf.Lookup("map", "base_link"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestExpiry_FakeDoesNotOutliveItsPublisher (issue 25, finding 6): a fake
// map → odom (+5 m) on /tf hid the simulator's static map → odom for good,
// leaving getRobotPose 5 m off after the fake stopped. A dynamic transform
// now expires MaxAge after it was received: while the fake is sent the pose
// follows it, once it stops the static transform applies again; a frame
// known only from /tf becomes unknown; a transform sent on time never
// expires; the frames kept are bounded.
func TestExpiry_FakeDoesNotOutliveItsPublisher(t *testing.T) {
	now := time.Unix(1000, 0)
	b := NewBuffer()
	b.Now = func() time.Time { return now }
	static := tr("map", "odom", 0, 0, 0, 0)
	static.Static = true
	mustSet(t, b, static, tr("odom", "base_footprint", 1, 0, 0, 0))
	pose := func() (geom.Vec3, error) {
		p, err := b.Lookup("map", "base_footprint")
		return p.Position, err
	}
	cases := []struct {
		name string
		step func()
		want geom.Vec3
		err  error
	}{
		{"static map → odom", func() {}, geom.Vec3{X: 1}, nil},
		{"fake map → odom on /tf", func() { mustSet(t, b, tr("map", "odom", 5, 0, 0, 0)) }, geom.Vec3{X: 6}, nil},
		{"odom → base kept fresh, fake still young", func() {
			now = now.Add(DefaultMaxAge / 2)
			mustSet(t, b, tr("odom", "base_footprint", 1, 0, 0, 0))
		}, geom.Vec3{X: 6}, nil},
		{"fake stopped: static again", func() {
			now = now.Add(DefaultMaxAge/2 + time.Millisecond)
			mustSet(t, b, tr("odom", "base_footprint", 1, 0, 0, 0))
		}, geom.Vec3{X: 1}, nil},
		{"odometry stopped too: no pose", func() { now = now.Add(DefaultMaxAge + time.Millisecond) }, geom.Vec3{}, ErrUnknownFrame},
		{"odometry back", func() { mustSet(t, b, tr("odom", "base_footprint", 2, 0, 0, 0)) }, geom.Vec3{X: 2}, nil},
		{"clock jumps back: expired", func() { now = now.Add(-2 * DefaultMaxAge) }, geom.Vec3{}, ErrUnknownFrame},
	}
	for _, c := range cases {
		c.step()
		got, err := pose()
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.err)
			}
			continue
		}
		if err != nil || !near(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}

	small := NewBuffer()
	small.MaxFrames = 3
	mustSet(t, small, tr("a", "b", 0, 0, 0, 0), tr("b", "c", 0, 0, 0, 0), tr("c", "d", 0, 0, 0, 0))
	if err := small.Set(tr("d", "e", 0, 0, 0, 0)); !errors.Is(err, ErrTooManyFrames) {
		t.Errorf("a fourth frame with MaxFrames 3: %v", err)
	}
	mustSet(t, small, tr("a", "b", 1, 0, 0, 0)) // a known frame is updated
}
