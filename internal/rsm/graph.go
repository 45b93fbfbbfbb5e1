package rsm

import "github.com/fsmnodes/fsmnodes/internal/fsm"

// Machine is the name of RSM's state machine in the introspection graph.
const Machine = "rsm"

// Causes StateInterface reports (Deps.OnTransition) besides the
// interrupts (Interrupt.String) and the command hooks.
const (
	// CauseRenamed: the current state changed its name while active (a
	// plugin's feedback).
	CauseRenamed = "renamed while active"
)

// Graph returns RSM's states as an introspection graph with the built-in
// plugins (docs/rsm.md#transition-diagram): the names /rsm/stateInfo shows
// and every transition between them with its trigger (an interrupt, a
// command hook, or what the state's own OnActive saw), starting in Boot.
// internal/rsm's table tests drive every edge (TestGraph_IsTheTestedBehaviour
// holds this table equal to them); a plugin of another name shows states
// that are not in it.
// "E: Calculate Goal" is bounded by twice cfg.CalculateGoalTimeout, after
// which it gives up by itself.
func Graph(cfg Config) fsm.Graph {
	return fsm.Graph{
		Machine: Machine,
		Initial: "Boot",
		States: []fsm.State{
			{Name: "Boot"}, {Name: "Idle"}, {Name: "Emergency Stop"}, {Name: "Teleoperation"},
			{Name: "E: Calculate Goal", MaxDwell: 2 * cfg.CalculateGoalTimeout}, {Name: "E: Navigation"}, {Name: "E: Mapping Dummy"},
			{Name: "W: Waypoint Following"}, {Name: "W: Navigation"}, {Name: "W: Reversing"},
			{Name: "G: Navigation"},
		},
		Edges: []fsm.Edge{
			{From: "Boot", To: "Emergency Stop", Guard: "EMERGENCY_STOP_INTERRUPT"},
			{From: "Boot", To: "Idle", Guard: "bootUpFinished"},
			{From: "E: Calculate Goal", To: "E: Navigation", Guard: "goal found"},
			{From: "E: Calculate Goal", To: "Emergency Stop", Guard: "EMERGENCY_STOP_INTERRUPT"},
			{From: "E: Calculate Goal", To: "G: Navigation", Guard: "SIMPLE_GOAL_INTERRUPT"},
			{From: "E: Calculate Goal", To: "Idle", Guard: "no reachable goal"},
			{From: "E: Calculate Goal", To: "Idle", Guard: "stopExploration"},
			{From: "E: Calculate Goal", To: "Teleoperation", Guard: "TELEOPERATION_INTERRUPT"},
			{From: "E: Mapping Dummy", To: "E: Calculate Goal", Guard: "mapped"},
			{From: "E: Mapping Dummy", To: "Emergency Stop", Guard: "EMERGENCY_STOP_INTERRUPT"},
			{From: "E: Mapping Dummy", To: "G: Navigation", Guard: "SIMPLE_GOAL_INTERRUPT"},
			{From: "E: Mapping Dummy", To: "Idle", Guard: "stopExploration"},
			{From: "E: Mapping Dummy", To: "Teleoperation", Guard: "TELEOPERATION_INTERRUPT"},
			{From: "E: Navigation", To: "E: Calculate Goal", Guard: "failed"},
			{From: "E: Navigation", To: "E: Calculate Goal", Guard: "goalObsolete (Interrupt mode), not moved"},
			{From: "E: Navigation", To: "E: Mapping Dummy", Guard: "goalObsolete (Interrupt mode), moved"},
			{From: "E: Navigation", To: "E: Mapping Dummy", Guard: "reached"},
			{From: "E: Navigation", To: "Emergency Stop", Guard: "EMERGENCY_STOP_INTERRUPT"},
			{From: "E: Navigation", To: "G: Navigation", Guard: "SIMPLE_GOAL_INTERRUPT"},
			{From: "E: Navigation", To: "Idle", Guard: "stopExploration"},
			{From: "E: Navigation", To: "Teleoperation", Guard: "TELEOPERATION_INTERRUPT"},
			{From: "Emergency Stop", To: "Idle", Guard: "INTERRUPT_END"},
			{From: "G: Navigation", To: "Emergency Stop", Guard: "EMERGENCY_STOP_INTERRUPT"},
			{From: "G: Navigation", To: "G: Navigation", Guard: "SIMPLE_GOAL_INTERRUPT"},
			{From: "G: Navigation", To: "Idle", Guard: "SIMPLE_GOAL_STOP_INTERRUPT"},
			{From: "G: Navigation", To: "Idle", Guard: "reached or failed"},
			{From: "G: Navigation", To: "Teleoperation", Guard: "TELEOPERATION_INTERRUPT"},
			{From: "Idle", To: "E: Calculate Goal", Guard: "startExploration"},
			{From: "Idle", To: "Emergency Stop", Guard: "EMERGENCY_STOP_INTERRUPT"},
			{From: "Idle", To: "G: Navigation", Guard: "SIMPLE_GOAL_INTERRUPT"},
			{From: "Idle", To: "Teleoperation", Guard: "TELEOPERATION_INTERRUPT"},
			{From: "Idle", To: "W: Waypoint Following", Guard: "startWaypointFollowing"},
			{From: "Teleoperation", To: "Emergency Stop", Guard: "EMERGENCY_STOP_INTERRUPT"},
			{From: "Teleoperation", To: "Idle", Guard: "INTERRUPT_END"},
			{From: "W: Navigation", To: "Emergency Stop", Guard: "EMERGENCY_STOP_INTERRUPT"},
			{From: "W: Navigation", To: "G: Navigation", Guard: "SIMPLE_GOAL_INTERRUPT"},
			{From: "W: Navigation", To: "Idle", Guard: "stopWaypointFollowing"},
			{From: "W: Navigation", To: "Teleoperation", Guard: "TELEOPERATION_INTERRUPT"},
			{From: "W: Navigation", To: "W: Reversing", Guard: "reached, routine Reversing"},
			{From: "W: Navigation", To: "W: Waypoint Following", Guard: "failed"},
			{From: "W: Navigation", To: "W: Waypoint Following", Guard: "reached"},
			{From: "W: Reversing", To: "Emergency Stop", Guard: "EMERGENCY_STOP_INTERRUPT"},
			{From: "W: Reversing", To: "G: Navigation", Guard: "SIMPLE_GOAL_INTERRUPT"},
			{From: "W: Reversing", To: "Idle", Guard: "stopWaypointFollowing"},
			{From: "W: Reversing", To: "Teleoperation", Guard: "TELEOPERATION_INTERRUPT"},
			{From: "W: Reversing", To: "W: Waypoint Following", Guard: "reverse mode toggled"},
			{From: "W: Waypoint Following", To: "Emergency Stop", Guard: "EMERGENCY_STOP_INTERRUPT"},
			{From: "W: Waypoint Following", To: "G: Navigation", Guard: "SIMPLE_GOAL_INTERRUPT"},
			{From: "W: Waypoint Following", To: "Idle", Guard: "no waypoint left (SINGLE)"},
			{From: "W: Waypoint Following", To: "Idle", Guard: "stopWaypointFollowing"},
			{From: "W: Waypoint Following", To: "Teleoperation", Guard: "TELEOPERATION_INTERRUPT"},
			{From: "W: Waypoint Following", To: "W: Navigation", Guard: "next waypoint"},
		},
	}
}
