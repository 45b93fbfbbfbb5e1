package hexapod

import (
	"math"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestSimServos_MovesTowardGoalAtCommandedSpeed(t *testing.T) {
	clk := &fakeClock{t: time.Unix(100, 0)}
	s := NewSimServos(clk.now, Joints{})
	goal := Joints{1, -1, 0.1}
	if err := s.WriteGoals(&goal); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Second)
	var p Joints
	s.ReadPositions(&p)
	if p != (Joints{}) {
		t.Fatalf("moved with torque off: %v", p)
	}
	s.SetTorque(true)
	if err := s.SetSpeed(0.2); err != nil {
		t.Fatal(err)
	}
	s.WriteGoals(&goal)
	clk.advance(500 * time.Millisecond)
	s.ReadPositions(&p)
	want := 0.2 * 532 * 0.111 * 2 * math.Pi / 60 * 0.5 // rad in 0.5 s
	if math.Abs(p[0]-want) > 1e-12 || math.Abs(p[1]+want) > 1e-12 || p[2] != 0.1 {
		t.Fatalf("after 0.5 s at 20%%: %v, want ±%v and 0.1", p[:3], want)
	}
	s.SetSpeed(0) // unregulated maximum
	clk.advance(200 * time.Millisecond)
	s.ReadPositions(&p)
	if p[0] != 1 || p[1] != -1 {
		t.Fatalf("not at goal at full speed: %v", p[:3])
	}
	s.SetTorque(false)
	other := Joints{-2}
	s.WriteGoals(&other)
	clk.advance(time.Second)
	s.ReadPositions(&p)
	if p[0] != 1 || !(s.Goals()[0] == 1) {
		t.Fatalf("moved after torque off: %v", p[:3])
	}
}

func TestSimServos_RejectsBadInput(t *testing.T) {
	s := NewSimServos(nil, Joints{})
	if s.SetSpeed(math.NaN()) == nil || s.SetSpeed(-1) == nil {
		t.Fatal("bad speed accepted")
	}
	bad := Joints{math.Inf(1)}
	if s.WriteGoals(&bad) == nil {
		t.Fatal("Inf goal accepted")
	}
}
