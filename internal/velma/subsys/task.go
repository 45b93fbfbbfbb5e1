package subsys

import (
	"time"

	"github.com/fsmnodes/fsmnodes/internal/velma"
)

// Capacities of the fixed-size task record. One more than the largest
// valid size, so an oversized command stays oversized on the other side
// and cs rejects it with its own reason.
const (
	maxPoints = velma.MaxTrajectoryPoints + 1
	maxJoints = velma.BodyDOF + 1
)

// vec is a fixed-capacity float vector; N < 0 is nil.
type vec struct {
	N int32
	V [maxJoints]float64
}

func vecOf(s []float64) vec {
	if s == nil {
		return vec{N: -1}
	}
	v := vec{N: int32(min(len(s), maxJoints))}
	copy(v.V[:], s)
	return v
}

func (v *vec) slice() []float64 {
	if v.N < 0 {
		return nil
	}
	return append([]float64(nil), v.V[:v.N]...)
}

type jointPointRec struct {
	Pos, Vel, Acc vec
	T             int64
}

type jointRec struct {
	Valid           bool
	ID              uint32
	Start           int64
	N               int32
	Points          [maxPoints]jointPointRec
	Path, Goal, Stf vec
	GoalTime        int64
}

type cartRec struct {
	Valid              bool
	ID                 uint32
	Start              int64
	N                  int32
	Points             [maxPoints]velma.CartPoint
	Stiffness, Damping [6]float64
	Path, Goal         velma.CartTolerance
	GoalTime           int64
}

// Task is interface → cs: one task command (or, with nothing set, a
// heartbeat: the interface sends one at least every 10 ms so cs can tell it
// is alive).
type Task struct {
	Cart       [2]cartRec
	Jnt, Head  jointRec
	Relax      bool
	Motors     velma.MotorRequests
	SourceLost uint32
}

func (j *jointRec) set(c *velma.JointTrajectoryCommand) {
	if c == nil {
		j.Valid = false
		return
	}
	j.Valid, j.ID, j.Start = true, c.ID, int64(c.Start)
	j.N = int32(min(len(c.Points), maxPoints))
	for i := range j.N {
		p := &c.Points[i]
		j.Points[i] = jointPointRec{Pos: vecOf(p.Positions), Vel: vecOf(p.Velocities), Acc: vecOf(p.Accelerations), T: int64(p.TimeFromStart)}
	}
	j.Path, j.Goal, j.Stf = vecOf(c.PathTolerance), vecOf(c.GoalTolerance), vecOf(c.Stiffness)
	j.GoalTime = int64(c.GoalTimeTolerance)
}

func (j *jointRec) get() *velma.JointTrajectoryCommand {
	if !j.Valid {
		return nil
	}
	c := &velma.JointTrajectoryCommand{ID: j.ID, Start: time.Duration(j.Start), GoalTimeTolerance: time.Duration(j.GoalTime),
		PathTolerance: j.Path.slice(), GoalTolerance: j.Goal.slice(), Stiffness: j.Stf.slice()}
	n := max(0, min(j.N, maxPoints))
	c.Points = make([]velma.JointPoint, n)
	for i := range n {
		p := &j.Points[i]
		c.Points[i] = velma.JointPoint{Positions: p.Pos.slice(), Velocities: p.Vel.slice(), Accelerations: p.Acc.slice(), TimeFromStart: time.Duration(p.T)}
	}
	return c
}

func (r *cartRec) set(c *velma.CartImpCommand) {
	if c == nil {
		r.Valid = false
		return
	}
	r.Valid, r.ID, r.Start = true, c.ID, int64(c.Start)
	r.N = int32(copy(r.Points[:], c.Points))
	if len(c.Points) > maxPoints {
		r.N = maxPoints
	}
	r.Stiffness, r.Damping, r.Path, r.Goal = c.Stiffness, c.Damping, c.PathTolerance, c.GoalTolerance
	r.GoalTime = int64(c.GoalTimeTolerance)
}

func (r *cartRec) get() *velma.CartImpCommand {
	if !r.Valid {
		return nil
	}
	n := max(0, min(r.N, maxPoints))
	return &velma.CartImpCommand{ID: r.ID, Start: time.Duration(r.Start), Points: append([]velma.CartPoint(nil), r.Points[:n]...),
		Stiffness: r.Stiffness, Damping: r.Damping, PathTolerance: r.Path, GoalTolerance: r.Goal,
		GoalTimeTolerance: time.Duration(r.GoalTime)}
}

// Set fills the record from a task command (nil: a heartbeat).
func (t *Task) Set(c *velma.TaskCommand) {
	if c == nil {
		c = &velma.TaskCommand{}
	}
	for s := range 2 {
		t.Cart[s].set(c.Cart[s])
	}
	t.Jnt.set(c.Jnt)
	t.Head.set(c.Head)
	t.Relax, t.Motors, t.SourceLost = c.Relax, c.Motors, c.SourceLost
}

// Command returns the task command the record carries (allocating the
// trajectories it holds).
func (t *Task) Command() velma.TaskCommand {
	var c velma.TaskCommand
	for s := range 2 {
		c.Cart[s] = t.Cart[s].get()
	}
	c.Jnt, c.Head = t.Jnt.get(), t.Head.get()
	c.Relax, c.Motors, c.SourceLost = t.Relax, t.Motors, t.SourceLost
	return c
}

// MergeTask merges src into dst as one iteration takes several commands:
// newer trajectories replace older ones of the same kind, flags
// accumulate.
func MergeTask(dst, src *velma.TaskCommand) {
	for s := range 2 {
		if src.Cart[s] != nil {
			dst.Cart[s] = src.Cart[s]
		}
	}
	if src.Jnt != nil {
		dst.Jnt = src.Jnt
	}
	if src.Head != nil {
		dst.Head = src.Head
	}
	dst.Relax = dst.Relax || src.Relax
	if src.SourceLost != 0 {
		dst.SourceLost = src.SourceLost
	}
	m := &dst.Motors
	m.TorsoEnable = m.TorsoEnable || src.Motors.TorsoEnable
	m.HeadPanEnable = m.HeadPanEnable || src.Motors.HeadPanEnable
	m.HeadTiltEnable = m.HeadTiltEnable || src.Motors.HeadTiltEnable
	m.HeadPanHome = m.HeadPanHome || src.Motors.HeadPanHome
	m.HeadTiltHome = m.HeadTiltHome || src.Motors.HeadTiltHome
}
