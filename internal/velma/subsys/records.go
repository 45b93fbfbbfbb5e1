// Package subsys runs the subsystems of the Velma core agent as separate
// processes, as the original does: velma_sim (the simulated effectors),
// velma_core_ve_body (the safety layer, which owns the 500 Hz clock),
// velma_core_cs (the control subsystem) and the client side of the ROS
// interface agent. They exchange one record per iteration through io
// buffers (package iobuf) in the order of the original's loop:
//
//	velma_sim ──EffStatus──▶ ve_body ──BodyStatus──▶ cs ◀──Task── interface
//	velma_sim ◀─EffCommand── ve_body ◀─BodyCommand── cs ──CSStatus─▶ interface
//
// A missing or late record is a fault the receiving subsystem's own
// predicates see: ve_body without cs's command for an iteration has
// ¬recvCommand (→ safe), ve_body without a new effector status has
// ¬recvStatus (→ idle, COMM_HW), cs without ve_body's status has
// ¬veBodyStatusValid (→ IN_ERROR, idle), and cs whose task source stops
// sending treats a running body motion as one that lost its command source
// (a behaviour error → IN_ERROR, idle, then safe). No FSM row is added.
//
// Nothing here imports ROS; the executables in nodes/ wire these loops to
// ROS 2 nodes for parameters, logging and introspection.
package subsys

import (
	"path/filepath"

	"github.com/fsmnodes/fsmnodes/internal/velma"
	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
)

// Buffer file names, below a per-agent directory prefix.
const (
	EffStatusFile   = "eff_st"     // velma_sim → ve_body
	EffCommandFile  = "eff_cmd"    // ve_body → velma_sim
	BodyStatusFile  = "ve_body_st" // ve_body → cs
	BodyCommandFile = "cs_cmd"     // cs → ve_body
	CSStatusFile    = "cs_st"      // cs → interface
	TaskFile        = "task_cmd"   // interface → cs
)

// Buffers names the buffer files of one agent: Prefix + "." + name.
type Buffers struct{ Prefix string }

// Path returns the file of the named buffer.
func (b Buffers) Path(name string) string { return b.Prefix + "." + name }

// Dir returns the directory holding the buffers.
func (b Buffers) Dir() string { return filepath.Dir(b.Prefix) }

// EffStatus is velma_sim's status, published after every step and once at
// start.
type EffStatus struct {
	Answer uint64 // the ve_body iteration whose command this step applied (0: none)
	Steps  uint64 // simulator steps so far
	Valid  bool   // the effectors returned a status (false: status lost)
	Status velma.EffectorStatus
}

// EffCommand is what ve_body sends to the effectors, once per iteration
// (also when it sends nothing, Send=false: the record is the simulator's
// clock tick, as each command steps Gazebo in the original).
type EffCommand struct {
	Iteration uint64
	Send      bool
	Command   velma.EffectorCommand
}

// LoopFigures are a loop's counters and period statistics, in nanoseconds.
type LoopFigures struct {
	Iterations, Overruns      uint64
	P50, P99, P999, Max, Step int64
}

// LoopFiguresOf converts loop statistics.
func LoopFiguresOf(s velma.LoopStats) LoopFigures {
	return LoopFigures{Iterations: s.Iterations, Overruns: s.Overruns, P50: int64(s.P50),
		P99: int64(s.P99), P999: int64(s.P999), Max: int64(s.Max), Step: int64(s.MaxStep)}
}

// BodyDiag is ve_body's own state, carried up with its status for
// introspection (the original publishes it on its diag topic).
type BodyDiag struct {
	StatusState velma.BodyState // after the status run of this iteration
	State       velma.BodyState // after the command run of the previous iteration
	Sent        bool            // the previous iteration sent a command
	Command     velma.EffectorCommand
	Loop        LoopFigures
	// CmdMissed and StatusMissed count iterations without cs's command and
	// without a new effector status.
	CmdMissed, StatusMissed uint64
}

// BodyStatus is ve_body → cs, once per iteration.
type BodyStatus struct {
	Iteration uint64
	Status    velma.BodyStatus // Valid=false when ve_body passes nothing up
	Effector  velma.EffectorStatus
	SC        velma.StatusSC
	Diag      BodyDiag
}

// BodyCommand is cs → ve_body: the answer to the status of Iteration.
type BodyCommand struct {
	Iteration uint64
	Command   velma.BodyCommand
}

// errLen bounds the behaviour error text in CSStatus.
const errLen = 240

// CSStatus is cs → interface, once per cs iteration.
type CSStatus struct {
	Iteration  uint64 // the ve_body iteration whose status cs used (0: none arrived)
	Runs       uint64 // cs iterations so far
	TaskSeq    uint64 // newest task record cs took
	TaskLost   uint64 // task records overwritten before cs read them
	State      velma.CSState
	Step       velma.CSStep
	Collision  bool
	MinDist    float64
	Motors     bool
	Jnt, Head  velma.TrajStatus
	Cart       [2]velma.TrajStatus
	QDesired   [velma.BodyDOF]float64
	HeadDes    [velma.HeadDOF]float64
	Wrist      [2]kin.Frame
	WristCmd   [2]kin.Frame
	Torque     [velma.BodyDOF]float64
	ErrLen     int32
	Err        [errLen]byte
	Body       BodyStatus // the last ve_body record cs read
	BodyRecent bool       // Body is this iteration's
}
