package hexapod

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/fsm"
)

// State is a state of the motion FSM (tState of motion_control.hpp).
type State int

// The seven states of the original, in its enum order. Unknown is the zero
// value: a safe state that frees the servos and is never entered by a
// transition.
const (
	Unknown State = iota
	Idle
	Sitting
	StandingUp
	Standing
	Walking
	SittingDown
)

var stateNames = [...]string{"Unknown", "Idle", "Sitting", "Standing_up", "Standing", "Walking", "Sitting_down"}

// String returns the original's name of the state, as published on ~/state.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Command is an operator command of the original's MotionControl.
type Command int

// Operator commands.
const (
	CmdStartStop Command = iota + 1 // toggle servo power (start_stop)
	CmdStandUp                      // stand up (stand_up)
	CmdSitDown                      // sit down (sit_down)
	CmdStandWalk                    // toggle between posing and walking (stand_walk)
)

// String returns the service name of the command.
func (c Command) String() string {
	switch c {
	case CmdStartStop:
		return "start_stop"
	case CmdStandUp:
		return "stand_up"
	case CmdSitDown:
		return "sit_down"
	case CmdStandWalk:
		return "stand_walk"
	}
	return fmt.Sprintf("Command(%d)", int(c))
}

// IgnoredError says that a command was ignored by the FSM, and why. Services
// answer success=false with its message.
type IgnoredError struct {
	Command Command
	State   State
	Reason  string
}

func (e *IgnoredError) Error() string {
	return fmt.Sprintf("%s ignored in state %s: %s", e.Command, e.State, e.Reason)
}

// Flags are the command flags of the original: start_cmd, stand_up_cmd and
// walking_cmd. The zero value is not the initial value; see InitialFlags.
type Flags struct {
	Started bool // start_cmd: servos powered, robot may stand up
	StandUp bool // stand_up_cmd: the robot should be up
	Walk    bool // walking_cmd: walk (true) or pose the body (false) when up
}

// InitialFlags returns the original's initial flags: not started, not
// standing up, walking.
func InitialFlags() Flags { return Flags{Walk: true} }

// Apply applies an operator command to the flags with the original's rules:
// start_stop is ignored while stand_up is set, stand_up and sit_down only
// work once started, and stand_walk only once stood up. It returns a
// human-readable result or an *IgnoredError (with state s for context).
func (f *Flags) Apply(cmd Command, s State) (string, error) {
	ignore := func(reason string) (string, error) {
		return "", &IgnoredError{Command: cmd, State: s, Reason: reason}
	}
	switch cmd {
	case CmdStartStop:
		if f.StandUp {
			return ignore("the robot is standing up or stood up; sit down first")
		}
		f.Started = !f.Started
		if f.Started {
			return "Start", nil
		}
		return "Stop", nil
	case CmdStandUp:
		if !f.Started {
			return ignore("not started; call start_stop first")
		}
		f.StandUp = true
		return "Stand up", nil
	case CmdSitDown:
		if !f.Started {
			return ignore("not started; call start_stop first")
		}
		f.StandUp = false
		return "Sit down", nil
	case CmdStandWalk:
		if !f.StandUp {
			return ignore("only possible once stand_up was requested")
		}
		f.Walk = !f.Walk
		if f.Walk {
			return "Walk", nil
		}
		return "Stand", nil
	}
	return ignore("unknown command")
}

// Inputs are everything a transition guard looks at.
type Inputs struct {
	Flags
	// AtWalkingHeight is true once Standing_up has lowered the feet to the
	// walking height.
	AtWalkingHeight bool
	// AtSittingHeight is true once Sitting_down has raised the feet to the
	// sitting height.
	AtSittingHeight bool
	// GaitStanding is the gait's is_standing(): all feet down at neutral.
	GaitStanding bool
}

// Action is a servo action attached to a transition.
type Action int

// Transition actions of the original (docs/hexapod.md#original-state-machine).
const (
	NoAction  Action = iota
	TorqueOn         // Idle -> Sitting: servo_driver.turn_on_servos()
	TorqueOff        // Sitting -> Idle: servo_driver.free_servos()
	FullSpeed        // Sitting -> Standing_up: servo_driver.set_servo_speed(0)
)

func (a Action) String() string {
	switch a {
	case NoAction:
		return "none"
	case TorqueOn:
		return "torque on"
	case TorqueOff:
		return "torque off"
	case FullSpeed:
		return "full speed"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Guard is a named, side-effect-free transition condition.
type Guard struct {
	Name string
	Test func(Inputs) bool
}

// Transition is one edge of the motion FSM.
type Transition struct {
	From   State
	Guard  Guard
	To     State
	Action Action
}

var (
	guardStarted         = Guard{"start_cmd", func(in Inputs) bool { return in.Started }}
	guardStopped         = Guard{"!start_cmd", func(in Inputs) bool { return !in.Started }}
	guardStandUp         = Guard{"stand_up_cmd", func(in Inputs) bool { return in.StandUp }}
	guardAtWalkingHeight = Guard{"height <= -walking_height", func(in Inputs) bool { return in.AtWalkingHeight }}
	guardAtSittingHeight = Guard{"height >= sitting_height", func(in Inputs) bool { return in.AtSittingHeight }}
	guardWalk            = Guard{"walking_cmd", func(in Inputs) bool { return in.Walk }}
	guardSitAndStanding  = Guard{"!stand_up_cmd && gait standing", func(in Inputs) bool { return !in.StandUp && in.GaitStanding }}
	guardStandAndStill   = Guard{"!walking_cmd && gait standing", func(in Inputs) bool { return !in.Walk && in.GaitStanding }}
)

// Transitions returns the original's transition table
// (docs/hexapod.md#original-state-machine). For each state the first
// matching edge wins; the original assigned next_hex_state several times in
// a row so that the last assignment won, and the edges below are listed in
// the reverse of the original's order to keep exactly that precedence.
func Transitions() []Transition {
	return []Transition{
		{Idle, guardStarted, Sitting, TorqueOn},
		{Sitting, guardStandUp, StandingUp, FullSpeed},
		{Sitting, guardStopped, Idle, TorqueOff},
		{StandingUp, guardAtWalkingHeight, Walking, NoAction},
		{Standing, guardWalk, Walking, NoAction},
		{Standing, guardSitAndStanding, SittingDown, NoAction},
		{Walking, guardStandAndStill, Standing, NoAction},
		{Walking, guardSitAndStanding, SittingDown, NoAction},
		{SittingDown, guardAtSittingHeight, Sitting, NoAction},
	}
}

// Machine evaluates the transition table.
type Machine struct {
	byState map[State][]Transition
}

// NewMachine returns a Machine over Transitions().
func NewMachine() *Machine {
	m := &Machine{byState: make(map[State][]Transition)}
	for _, t := range Transitions() {
		m.byState[t.From] = append(m.byState[t.From], t)
	}
	return m
}

// Next returns the state after s for the inputs, and the action of the edge
// taken; without a matching edge it returns s and NoAction.
func (m *Machine) Next(s State, in Inputs) (State, Action) {
	if t, ok := m.Step(s, in); ok {
		return t.To, t.Action
	}
	return s, NoAction
}

// Step returns the edge taken from s for the inputs (the first whose guard
// holds), or false when none holds.
func (m *Machine) Step(s State, in Inputs) (Transition, bool) {
	for _, t := range m.byState[s] {
		if t.Guard.Test(in) {
			return t, true
		}
	}
	return Transition{}, false
}

// FSMMachine is the name of the motion FSM in the introspection graph.
const FSMMachine = "motion"

// Graph returns the motion FSM as an introspection graph: the states Idle
// to Sitting_down (Unknown is never entered), the edges of Transitions()
// with their guards (and actions, as Mermaid shows them) and the initial
// state Idle. Standing_up and Sitting_down are bounded: they move the feet
// by cfg.SitStep per tick of the given period over the distance between the
// sitting and the walking height, and a stay of more than twice that time
// plus a second is an overrun.
func Graph(cfg Config, tick time.Duration) fsm.Graph {
	ticks := math.Ceil((cfg.SittingHeight + cfg.Geometry.WalkingHeight) / cfg.SitStep)
	bound := time.Duration(0)
	if ticks > 0 && !math.IsInf(ticks, 0) && tick > 0 {
		bound = (2*time.Duration(ticks)*tick + time.Second).Round(time.Millisecond)
	}
	g := fsm.Graph{Machine: FSMMachine, Initial: Idle.String()}
	for s := Idle; s <= SittingDown; s++ {
		st := fsm.State{Name: s.String()}
		if s == StandingUp || s == SittingDown {
			st.MaxDwell = bound
		}
		g.States = append(g.States, st)
	}
	for _, t := range Transitions() {
		g.Edges = append(g.Edges, fsm.Edge{From: t.From.String(), To: t.To.String(), Guard: t.label()})
	}
	return g
}

// label is the edge's guard and, if it has one, its action.
func (t Transition) label() string {
	if t.Action == NoAction {
		return t.Guard.Name
	}
	return t.Guard.Name + " / " + t.Action.String()
}

// Mermaid renders the transition table as a Mermaid state diagram.
func Mermaid() string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	b.WriteString("    [*] --> Idle\n")
	for _, t := range Transitions() {
		fmt.Fprintf(&b, "    %s --> %s: %s\n", t.From, t.To, t.label())
	}
	return b.String()
}
