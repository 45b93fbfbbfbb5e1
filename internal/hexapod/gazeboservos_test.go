package hexapod

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// gazeboRig is a GazeboServos on a fake clock that records what it sends.
type gazeboRig struct {
	clk  *fakeClock
	g    *GazeboServos
	sent []Joints
	fail error
}

func newGazeboRig(t *testing.T) *gazeboRig {
	t.Helper()
	r := &gazeboRig{clk: &fakeClock{t: time.Unix(100, 0)}}
	g, err := NewGazeboServos(r.clk.now, JointNames(), Joints{}, func(j *Joints) error {
		r.sent = append(r.sent, *j)
		return r.fail
	})
	if err != nil {
		t.Fatal(err)
	}
	r.g = g
	return r
}

func TestNewGazeboServos_Refuses(t *testing.T) {
	send := func(*Joints) error { return nil }
	dup := JointNames()
	dup[5] = dup[4]
	for _, c := range []struct {
		name  string
		names []string
		send  func(*Joints) error
		want  string
	}{
		{"too few names", JointNames()[:17], send, "17 joint names"},
		{"repeated name", dup, send, "repeated"},
		{"empty name", append(JointNames()[:17:17], ""), send, "empty"},
		{"no sender", JointNames(), nil, "no sender"},
	} {
		if _, err := NewGazeboServos(nil, c.names, Joints{}, c.send); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// The targets follow the goals at the servo speed, only with torque on.
func TestGazeboServos_TargetsMoveAtServoSpeed(t *testing.T) {
	r := newGazeboRig(t)
	goal := Joints{1, -1, 0.1}
	if err := r.g.WriteGoals(&goal); err != nil || len(r.sent) != 0 {
		t.Fatalf("torque off: err %v, sent %v", err, r.sent)
	}
	if err := r.g.SetTorque(true); err != nil {
		t.Fatal(err)
	}
	if err := r.g.SetSpeed(0.2); err != nil {
		t.Fatal(err)
	}
	r.clk.advance(500 * time.Millisecond)
	if err := r.g.WriteGoals(&goal); err != nil {
		t.Fatal(err)
	}
	if len(r.sent) != 1 {
		t.Fatalf("sent %d times, want 1", len(r.sent))
	}
	// torque came on at t=0 holding 0; the goal arrives now, so no time has
	// passed toward it yet
	if r.sent[0] != (Joints{}) {
		t.Fatalf("first targets %v, want the held zeros", r.sent[0][:3])
	}
	r.clk.advance(500 * time.Millisecond)
	_ = r.g.WriteGoals(&goal)
	want := speedOf(0.2) * 0.5
	got := r.sent[1]
	if math.Abs(got[0]-want) > 1e-12 || math.Abs(got[1]+want) > 1e-12 || got[2] != 0.1 {
		t.Fatalf("after 0.5 s at 20%%: %v, want ±%v and 0.1", got[:3], want)
	}
	if r.g.Targets() != got {
		t.Fatalf("Targets() %v, sent %v", r.g.Targets(), got)
	}
	_ = r.g.SetSpeed(0)
	r.clk.advance(time.Second)
	_ = r.g.WriteGoals(&goal)
	if r.sent[2] != goal {
		t.Fatalf("at full speed after 1 s: %v, want the goal", r.sent[2][:3])
	}
	_ = r.g.SetTorque(false)
	other := Joints{-2}
	_ = r.g.WriteGoals(&other)
	if len(r.sent) != 3 {
		t.Fatal("sent with torque off")
	}
}

func TestGazeboServos_RefusesBadGoalsAndSpeeds(t *testing.T) {
	r := newGazeboRig(t)
	_ = r.g.SetTorque(true)
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		j := Joints{0, bad}
		if r.g.WriteGoals(&j) == nil {
			t.Errorf("goal %v accepted", bad)
		}
		if r.g.SetSpeed(bad) == nil {
			t.Errorf("speed %v accepted", bad)
		}
	}
	if r.g.SetSpeed(-0.5) == nil {
		t.Error("negative speed accepted")
	}
	if len(r.sent) != 0 {
		t.Fatalf("sent after refused goals: %v", r.sent)
	}
	// the sender's error comes back
	r.fail = errors.New("bridge gone")
	j := Joints{}
	if err := r.g.WriteGoals(&j); !errors.Is(err, r.fail) {
		t.Fatalf("send error lost: %v", err)
	}
}

func TestGazeboServos_JointStates(t *testing.T) {
	r := newGazeboRig(t)
	var j Joints
	if err := r.g.ReadPositions(&j); !errors.Is(err, ErrNoJointStates) {
		t.Fatalf("before any report: %v", err)
	}
	names := JointNames()
	pos := make([]float64, NumJoints)
	for i := range pos {
		pos[i] = float64(i) / 10
	}
	// Gazebo reports in its own order, with other joints among them
	rev := append([]string{"caster"}, names...)
	revPos := append([]float64{9}, pos...)
	for i, k := 1, len(rev)-1; i < k; i, k = i+1, k-1 {
		rev[i], rev[k] = rev[k], rev[i]
		revPos[i], revPos[k] = revPos[k], revPos[i]
	}
	// half of them first: still not all seen
	if err := r.g.JointStates(rev[:10], revPos[:10]); err != nil {
		t.Fatal(err)
	}
	if err := r.g.ReadPositions(&j); !errors.Is(err, ErrNoJointStates) {
		t.Fatalf("with 9 joints reported: %v", err)
	}
	if err := r.g.JointStates(rev, revPos); err != nil {
		t.Fatal(err)
	}
	if err := r.g.ReadPositions(&j); err != nil {
		t.Fatal(err)
	}
	for i := range j {
		if j[i] != pos[i] {
			t.Fatalf("joint %s at %v, want %v", names[i], j[i], pos[i])
		}
	}
	for _, c := range []struct {
		name  string
		names []string
		pos   []float64
	}{
		{"lengths differ", names[:2], pos[:1]},
		{"NaN", names[:2], []float64{0, math.NaN()}},
		{"Inf", names[:1], []float64{math.Inf(-1)}},
	} {
		if r.g.JointStates(c.names, c.pos) == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	if n := r.g.Rejected(); n != 3 {
		t.Fatalf("%d reports rejected, want 3", n)
	}
	// a refused report changes nothing
	_ = r.g.ReadPositions(&j)
	if j[0] != pos[0] || j[1] != pos[1] {
		t.Fatalf("a refused report changed the positions: %v", j[:2])
	}
}
