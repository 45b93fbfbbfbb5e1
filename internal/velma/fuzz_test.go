package velma

import (
	"math"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/geom"
)

// FuzzCSRun: arbitrary (even non-finite) ve_body status and task commands
// never panic cs, and the torques it returns are always finite.
func FuzzCSRun(f *testing.F) {
	f.Add(0.1, -1.8, 0.5, 1.0, uint8(0))
	f.Add(math.NaN(), 0.0, math.Inf(1), -1.0, uint8(1))
	f.Add(3.0, 2.5, 1e9, 1e-9, uint8(2))
	f.Add(0.0, 0.0, 0.0, 0.0, uint8(3))
	f.Fuzz(func(t *testing.T, q0, q1, dq, target float64, kind uint8) {
		cs, err := NewCS(DefaultCSConfig())
		if err != nil {
			t.Fatal(err)
		}
		var bs BodyStatus
		bs.Valid = true
		for i := range ArmDOF {
			bs.RArm.Q[i], bs.LArm.Q[i] = q0*float64(i%2), -q1*float64(i%3)
			bs.RArm.DQ[i], bs.LArm.DQ[i] = dq, -dq
		}
		for _, m := range []*MotorStatus{&bs.Torso, &bs.HeadPan, &bs.HeadTilt} {
			m.Enabled, m.OK = true, true
		}
		pos := make([]float64, BodyDOF)
		for i := range pos {
			pos[i] = target * float64(i%2)
		}
		var task TaskCommand
		switch kind % 4 {
		case 0:
			task.Jnt = &JointTrajectoryCommand{ID: 1, Points: []JointPoint{{Positions: pos, TimeFromStart: time.Second}}}
		case 1:
			task.Relax = true
		case 2:
			var cp CartPoint
			cp.Pose.R = [3][3]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
			cp.Pose.P = geom.Vec3{X: target, Z: 1}
			task.Cart[0] = &CartImpCommand{ID: 2, Points: []CartPoint{cp}}
		case 3:
			task.Head = &JointTrajectoryCommand{ID: 3, Points: []JointPoint{{Positions: pos[:2], TimeFromStart: time.Second}}}
		}
		for i := range 4 {
			var tp *TaskCommand
			if i == 2 {
				tp = &task
			}
			cmd := cs.Run(bs, tp)
			for _, v := range append(append(cmd.RArm.T[:], cmd.LArm.T[:]...), cmd.Torso.T) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("non-finite torque %v in %v", v, cs.State())
				}
			}
		}
	})
}
