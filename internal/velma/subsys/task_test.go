package subsys

import (
	"reflect"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/iobuf"
	"github.com/fsmnodes/fsmnodes/internal/velma"
	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
)

func TestTaskRoundTrip(t *testing.T) {
	q := make([]float64, velma.BodyDOF)
	for i := range q {
		q[i] = float64(i) / 10
	}
	cases := map[string]velma.TaskCommand{
		"empty": {},
		"jnt": {Jnt: &velma.JointTrajectoryCommand{ID: 3, Start: 200 * time.Millisecond,
			Points: []velma.JointPoint{
				{Positions: q, TimeFromStart: time.Second},
				{Positions: q, Velocities: q, TimeFromStart: 2 * time.Second},
				{Positions: q, Velocities: q, Accelerations: q, TimeFromStart: 3 * time.Second}},
			PathTolerance: q, GoalTolerance: q, GoalTimeTolerance: time.Second, Stiffness: q}},
		"head and motors": {Head: &velma.JointTrajectoryCommand{ID: 4, Points: []velma.JointPoint{{Positions: []float64{0.1, 0.2}, TimeFromStart: time.Second}}},
			Motors: velma.MotorRequests{TorsoEnable: true, HeadTiltHome: true}, Relax: true, SourceLost: 9},
		"cart": {Cart: [2]*velma.CartImpCommand{nil, {ID: 5, Points: []velma.CartPoint{{Pose: kin.Frame{P: geom.Vec3{X: 1, Y: 2, Z: 3}}, TimeFromStart: time.Second}},
			Stiffness: [6]float64{1, 2, 3, 4, 5, 6}, PathTolerance: velma.CartTolerance{Position: 0.1}, GoalTimeTolerance: time.Second}}},
	}
	for name, c := range cases {
		var rec Task
		rec.Set(&c)
		got := rec.Command()
		if !reflect.DeepEqual(got, c) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", name, got, c)
		}
	}
}

// Commands too large for the record stay too large, so cs rejects them.
func TestTaskOversize(t *testing.T) {
	pts := make([]velma.JointPoint, 80)
	for i := range pts {
		pts[i] = velma.JointPoint{Positions: make([]float64, 20), TimeFromStart: time.Duration(i+1) * time.Second}
	}
	var rec Task
	rec.Set(&velma.TaskCommand{Jnt: &velma.JointTrajectoryCommand{ID: 1, Points: pts}})
	got := rec.Command()
	if len(got.Jnt.Points) <= velma.MaxTrajectoryPoints || len(got.Jnt.Points[0].Positions) <= velma.BodyDOF {
		t.Fatalf("oversized command shrank to a valid size: %d points of %d", len(got.Jnt.Points), len(got.Jnt.Points[0].Positions))
	}
	if err := got.Jnt.Validate(velma.BodyLimits[:]); err == nil {
		t.Fatal("oversized command validates")
	}
}

func TestRecordsArePlainValues(t *testing.T) {
	for name, f := range map[string]func() (uint64, error){
		"EffStatus": iobuf.Fingerprint[EffStatus], "EffCommand": iobuf.Fingerprint[EffCommand],
		"BodyStatus": iobuf.Fingerprint[BodyStatus], "BodyCommand": iobuf.Fingerprint[BodyCommand],
		"CSStatus": iobuf.Fingerprint[CSStatus], "Task": iobuf.Fingerprint[Task],
	} {
		if _, err := f(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
