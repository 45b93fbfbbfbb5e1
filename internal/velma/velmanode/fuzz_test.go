package velmanode

import (
	"math"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/velma"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	control_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/control_msgs/msg"
	trajectory_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/trajectory_msgs/msg"
)

// FuzzJointGoal: arbitrary goals never panic, and an accepted goal always
// passes the core's own validation.
func FuzzJointGoal(f *testing.F) {
	f.Add(uint8(15), uint8(1), 0.1, 0.0, int32(1), uint32(0), false, false)
	f.Add(uint8(14), uint8(3), math.NaN(), 1.0, int32(0), uint32(5), true, true)
	f.Add(uint8(15), uint8(60), 1e308, math.Inf(1), int32(-1), uint32(2e9), true, false)
	f.Fuzz(func(t *testing.T, nNames, nPoints uint8, pos, vel float64, sec int32, nsec uint32, tol bool, withVel bool) {
		g := bodyGoal([velma.BodyDOF]float64{}, 0, time.Second)
		g.Trajectory.JointNames = g.Trajectory.JointNames[:min(int(nNames), velma.BodyDOF)]
		pts := make([]trajectory_msgs_msg.JointTrajectoryPoint, min(int(nPoints), 60))
		for i := range pts {
			pts[i].Positions = make([]float64, velma.BodyDOF)
			for j := range pts[i].Positions {
				pts[i].Positions[j] = pos * float64(j%3) / 3
			}
			if withVel {
				pts[i].Velocities = make([]float64, velma.BodyDOF)
				pts[i].Velocities[i%velma.BodyDOF] = vel
			}
			pts[i].TimeFromStart = builtin_interfaces_msg.Duration{Sec: sec + int32(i), Nanosec: nsec}
		}
		g.Trajectory.Points = pts
		if tol {
			g.PathTolerance = []control_msgs_msg.JointTolerance{{Name: "torso_0_joint", Position: vel}}
		}
		cmd, err := JointGoal(g, BodyJoints, DefaultParams().Interface, 0, 1)
		if err != nil {
			return
		}
		if err := cmd.Validate(velma.BodyLimits[:]); err != nil {
			t.Fatalf("accepted goal does not validate: %v", err)
		}
	})
}
