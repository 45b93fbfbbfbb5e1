package velma

import (
	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
)

// TrajState is the progress of a trajectory command.
type TrajState int

// Trajectory states, as reported to the task agent.
const (
	TrajNone         TrajState = iota // nothing received yet
	TrajActive                        // being executed
	TrajSucceeded                     // ended within goal tolerance
	TrajPathViolated                  // aborted: path tolerance exceeded
	TrajGoalViolated                  // ended outside goal tolerance
	TrajRejected                      // not accepted (invalid, or cs could not switch)
	TrajAborted                       // the behaviour ended before the trajectory did
)

var trajStateNames = [...]string{"none", "active", "succeeded", "path_tolerance_violated", "goal_tolerance_violated", "rejected", "aborted"}

// String names the state.
func (s TrajState) String() string {
	if s >= 0 && int(s) < len(trajStateNames) {
		return trajStateNames[s]
	}
	return "unknown"
}

// Done reports whether s is final.
func (s TrajState) Done() bool { return s >= TrajSucceeded }

// TrajStatus identifies a command and its progress.
type TrajStatus struct {
	ID    uint32
	State TrajState
}

// segment holds per-joint polynomial coefficients q(τ) = Σ c[k]·τᵏ over
// [t0, t1].
type segment struct {
	t0, t1 float64
	c      [][6]float64
}

// jointSpline is a piecewise polynomial joint trajectory in absolute cs time.
type jointSpline struct {
	segs []segment
}

// newJointSpline builds the spline from the start state (q0, v0) at time
// start through the command's points.
func newJointSpline(q0, v0 []float64, start float64, pts []JointPoint) jointSpline {
	n := len(q0)
	var s jointSpline
	pq, pv, pa := append([]float64(nil), q0...), append([]float64(nil), v0...), make([]float64, n)
	tPrev := start
	for _, p := range pts {
		t1 := start + p.TimeFromStart.Seconds()
		seg := segment{t0: tPrev, t1: t1, c: make([][6]float64, n)}
		T := t1 - tPrev
		for j := range n {
			h := p.Positions[j] - pq[j]
			c := &seg.c[j]
			c[0] = pq[j]
			switch {
			case T <= 0:
				c[0] = p.Positions[j]
			case p.Velocities != nil && p.Accelerations != nil:
				v1, a1 := p.Velocities[j], p.Accelerations[j]
				v0, a0 := pv[j], pa[j]
				c[1], c[2] = v0, a0/2
				c[3] = (20*h - (8*v1+12*v0)*T - (3*a0-a1)*T*T) / (2 * T * T * T)
				c[4] = (-30*h + (14*v1+16*v0)*T + (3*a0-2*a1)*T*T) / (2 * T * T * T * T)
				c[5] = (12*h - 6*(v1+v0)*T + (a1-a0)*T*T) / (2 * T * T * T * T * T)
			case p.Velocities != nil:
				v1, v0 := p.Velocities[j], pv[j]
				c[1] = v0
				c[2] = (3*h - (2*v0+v1)*T) / (T * T)
				c[3] = (-2*h + (v0+v1)*T) / (T * T * T)
			default:
				c[1] = h / T
			}
		}
		for j := range n {
			pq[j] = p.Positions[j]
			pv[j], pa[j] = 0, 0
			if p.Velocities != nil {
				pv[j] = p.Velocities[j]
			}
			if p.Accelerations != nil {
				pa[j] = p.Accelerations[j]
			}
		}
		s.segs = append(s.segs, seg)
		tPrev = t1
	}
	return s
}

// End returns the time of the last point.
func (s *jointSpline) End() float64 { return s.segs[len(s.segs)-1].t1 }

// Sample writes the position and velocity at time t (clamped to the
// spline's span) into q and dq.
func (s *jointSpline) Sample(t float64, q, dq []float64) {
	i := 0
	for i < len(s.segs)-1 && t > s.segs[i].t1 {
		i++
	}
	seg := &s.segs[i]
	tau := t - seg.t0
	if tau < 0 {
		tau = 0
	}
	if d := seg.t1 - seg.t0; tau > d {
		tau = d
	}
	atEnd := t >= s.End()
	for j := range q {
		c := &seg.c[j]
		q[j] = c[0] + tau*(c[1]+tau*(c[2]+tau*(c[3]+tau*(c[4]+tau*c[5]))))
		dq[j] = c[1] + tau*(2*c[2]+tau*(3*c[3]+tau*(4*c[4]+tau*5*c[5])))
		if atEnd {
			dq[j] = 0
		}
	}
}

// cartSpline interpolates a wrist pose linearly in position and by slerp in
// orientation.
type cartSpline struct {
	t   []float64 // absolute time of each knot, t[0] = start
	pos []geom.Vec3
	rot []geom.Quat
}

func newCartSpline(from kin.Frame, start float64, pts []CartPoint) cartSpline {
	s := cartSpline{t: []float64{start}, pos: []geom.Vec3{from.P}, rot: []geom.Quat{geom.QuatFromMatrix(from.R)}}
	for _, p := range pts {
		s.t = append(s.t, start+p.TimeFromStart.Seconds())
		s.pos = append(s.pos, p.Pose.P)
		s.rot = append(s.rot, geom.QuatFromMatrix(p.Pose.R))
	}
	return s
}

// End returns the time of the last knot.
func (s *cartSpline) End() float64 { return s.t[len(s.t)-1] }

// Goal returns the last pose.
func (s *cartSpline) Goal() kin.Frame {
	n := len(s.t) - 1
	return kin.Frame{R: s.rot[n].Matrix(), P: s.pos[n]}
}

// Sample returns the pose at time t.
func (s *cartSpline) Sample(t float64) kin.Frame {
	if t <= s.t[0] {
		return kin.Frame{R: s.rot[0].Matrix(), P: s.pos[0]}
	}
	for i := 1; i < len(s.t); i++ {
		if t <= s.t[i] {
			d := s.t[i] - s.t[i-1]
			a := 1.0
			if d > 0 {
				a = (t - s.t[i-1]) / d
			}
			p := s.pos[i-1].Add(s.pos[i].Sub(s.pos[i-1]).Scale(a))
			return kin.Frame{R: geom.Slerp(s.rot[i-1], s.rot[i], a).Matrix(), P: p}
		}
	}
	return s.Goal()
}
