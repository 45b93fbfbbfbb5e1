// Package rsmplugin is the public API for plugin states of fsmnodes' Robot
// Statemachine written in Go. Everything else of fsmnodes is under
// internal/, which Go lets no other module import; this package makes the
// few names a plugin needs importable.
//
// There are two ways to add a state (docs/rsm.md#plugins):
//
//   - In process: write a type that embeds Base, register a factory for it
//     in the Registry RunStateInterface hands you, and build your own
//     state_interface executable around RunStateInterface. Select the
//     plugin with its name ("mypkg::StairsState") in calculate_goal_plugin,
//     navigation_plugin, mapping_plugin or routine_plugins.
//   - In its own process, in any language: serve the ROS 2 action
//     rsm_msgs/action/RunState and select it with "action:<action name>".
//     From Go, Serve (or ServeNode, for a plugin with parameters of its
//     own) does the ROS part; the state is a StateServer, and one that
//     also implements StateHooks answers the start/stop requests and
//     interrupts while its goal runs.
//
// The names here are aliases of fsmnodes' own types, so a plugin state is
// exactly what a built-in one is.
package rsmplugin

import (
	"context"

	"github.com/fsmnodes/fsmnodes/internal/geom"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
	"github.com/fsmnodes/fsmnodes/internal/rsm/rsmnode"
)

// Types a plugin state works with (aliases of internal/rsm).
type (
	// State is one state of the machine; embed Base to implement it.
	State = rsm.State
	// Base is embedded by every state (name, transitions, the owning
	// StateInterface).
	Base = rsm.Base
	// Factory makes a fresh instance of a plugin state.
	Factory = rsm.Factory
	// Registry maps plugin names to factories.
	Registry = rsm.Registry
	// StateInterface is the state machine a state belongs to
	// (Base.SI): its Store, Config, Now, Log, Plugin, Transition.
	StateInterface = rsm.StateInterface
	// DataStore is the service provider (waypoints, navigation goal,
	// robot pose, modes).
	DataStore = rsm.DataStore
	// Reply answers the start/stop services.
	Reply = rsm.Reply
	// Interrupt is what OnInterrupt receives.
	Interrupt = rsm.Interrupt
	// PluginKind selects a configured plugin in Base.NextPlugin.
	PluginKind = rsm.PluginKind
	// Pose, Vec3 and Quat are poses in the map frame.
	Pose = rsm.Pose
	// Vec3 is a position.
	Vec3 = geom.Vec3
	// Quat is an orientation.
	Quat = geom.Quat
	// NavigationGoal is what setNavigationGoal stores.
	NavigationGoal = rsm.NavigationGoal
	// NavigationMode says what a goal belongs to.
	NavigationMode = rsm.NavigationMode
	// GoalStatus is reported with navigationGoalCompleted.
	GoalStatus = rsm.GoalStatus
	// GoalState is REACHED, FAILED, …
	GoalState = rsm.GoalState
	// RunRequest is a RunState goal as a StateServer sees it.
	RunRequest = rsm.RunRequest
	// RunResult is a StateServer's answer: the next state and why.
	RunResult = rsm.RunResult
	// StateServer runs the state of a plugin node for each RunState goal.
	StateServer = rsm.StateServer
	// StateHooks is implemented by a StateServer whose running state
	// answers the start/stop requests and interrupts itself, as a
	// pluginlib state's hooks did (docs/rsm.md#hooks-of-a-plugin-node).
	StateHooks = rsm.StateHooks
	// Hook names a hook: HookExplorationStart … HookInterrupt.
	Hook = rsm.Hook
	// HookRequest is what rsmNode asks a StateHooks.
	HookRequest = rsm.HookRequest
	// HookReply answers it: handled or not, the reply, the next state.
	HookReply = rsm.HookReply
)

// The hooks a StateHooks answers.
const (
	HookExplorationStart       = rsm.HookExplorationStart
	HookExplorationStop        = rsm.HookExplorationStop
	HookWaypointFollowingStart = rsm.HookWaypointFollowingStart
	HookWaypointFollowingStop  = rsm.HookWaypointFollowingStop
	HookInterrupt              = rsm.HookInterrupt
)

// Interrupts, plugin kinds, navigation modes and goal states.
const (
	InterruptEnd            = rsm.InterruptEnd
	EmergencyStopInterrupt  = rsm.EmergencyStopInterrupt
	TeleoperationInterrupt  = rsm.TeleoperationInterrupt
	SimpleGoalInterrupt     = rsm.SimpleGoalInterrupt
	SimpleGoalStopInterrupt = rsm.SimpleGoalStopInterrupt

	AnyPlugin           = rsm.AnyPlugin
	CalculateGoalPlugin = rsm.CalculateGoalPlugin
	NavigationPlugin    = rsm.NavigationPlugin
	MappingPlugin       = rsm.MappingPlugin
	RoutinePlugin       = rsm.RoutinePlugin

	NavigationExploration       = rsm.NavigationExploration
	NavigationWaypointFollowing = rsm.NavigationWaypointFollowing
	NavigationSimpleGoal        = rsm.NavigationSimpleGoal

	GoalActive  = rsm.GoalActive
	GoalReached = rsm.GoalReached
	GoalFailed  = rsm.GoalFailed
	GoalAborted = rsm.GoalAborted
)

// Names of RunState's state_name and next_state besides plugin names, and
// the prefix that names a RunState server as a plugin.
const (
	NextIdle              = rsm.NextIdle
	NextWaypointFollowing = rsm.NextWaypointFollowing
	NextCalculateGoal     = rsm.NextCalculateGoal
	NextNavigation        = rsm.NextNavigation
	NextMapping           = rsm.NextMapping
	RoutinePrefix         = rsm.RoutinePrefix
	ActionPluginPrefix    = rsm.ActionPluginPrefix
)

// NewBase returns the Base of a state shown as name.
func NewBase(name string) Base { return rsm.NewBase(name) }

// NewIdle returns the Idle state (for Base.Next).
func NewIdle() State { return rsm.NewIdle() }

// NewWaypointFollowing returns the Waypoint Following state.
func NewWaypointFollowing() State { return rsm.NewWaypointFollowing() }

// DefaultRegistry returns a registry with the built-in plugin states.
func DefaultRegistry() *Registry { return rsm.DefaultRegistry() }

// RunStateInterface runs state_interface (node rsmNode) until ctx ends or
// a signal arrives, with the built-in plugin states plus those register
// adds. args are the command line (os.Args[1:]: --ros-args, parameters,
// remappings), as for the state_interface executable.
func RunStateInterface(ctx context.Context, args []string, register func(*Registry) error) error {
	reg := rsm.DefaultRegistry()
	if register != nil {
		if err := register(reg); err != nil {
			return err
		}
	}
	return rsmnode.RunStateInterfaceWith(ctx, args, reg)
}

// Serve runs a plugin node named node until ctx ends or a signal arrives:
// it serves the rsm_msgs/action/RunState action (relative to the node's
// namespace unless absolute) with the StateServer newServer makes. store
// calls the service provider's /rsm services. A plugin with parameters of
// its own uses ServeNode.
func Serve(ctx context.Context, args []string, node, action string, newServer func(store DataStore) (StateServer, error)) error {
	return rsmnode.RunPlugin(ctx, args, node, action, newServer)
}

// ServeNode is Serve for a plugin that reads parameters of its own: the
// constructor gets the plugin's Node, declares them with Param and
// LiveParam and reaches the service provider with Node.Store. A parameter
// of the wrong type, or one its check refuses, ends the node with the
// reason before it serves anything.
func ServeNode(ctx context.Context, args []string, node, action string, newServer func(n *Node) (StateServer, error)) error {
	return rsmnode.RunPluginNode(ctx, args, node, action, func(p rsmnode.PluginSetup) (StateServer, error) {
		return newServer(&Node{p: p})
	})
}

// Node is a plugin node as the constructor ServeNode calls sees it.
type Node struct{ p rsmnode.PluginSetup }

// Store returns the service provider's services (waypoints, navigation
// goal, robot pose, modes).
func (n *Node) Store() DataStore { return n.p.Store }

// Name returns the node's fully qualified name (e.g. /robot1/go_home_plugin).
func (n *Node) Name() string { return n.p.Node.FullyQualifiedName() }

// Log returns the node's logger (console, /rosout and the log file).
func (n *Node) Log() Logger { return n.p.Node.Logger() }

// Logger logs a plugin's messages.
type Logger = rsm.Logger

// ParamType is the set of types a parameter may have, ROS 2's: bool,
// int64, float64, string, []byte and arrays of bool, int64, float64 and
// string.
type ParamType = param.Kind

// Param declares the read-only parameter name of the plugin node with
// default def and returns its value: def, or what a --params-file or
// --ros-args -p name:=value gave. description is what `ros2 param
// describe` shows. check, if not nil, validates the value; its error (or a
// value of another type) ends the node with the reason.
func Param[T ParamType](n *Node, name string, def T, description string, check func(T) error) T {
	return param.Declare(n.p.Params, name, def, param.ReadOnly(description, "the plugin reads it at start-up"), check)
}

// LiveParam declares a parameter that may also be set while the plugin
// runs (ros2 param set, fsmnodes param set) and returns a function that
// gives its current value, safe to call from any goroutine. check, if not
// nil, validates the start-up value and every change (a refused change
// answers the set call with check's error as the reason).
func LiveParam[T ParamType](n *Node, name string, def T, description string, check func(T) error) func() T {
	return param.DeclareLive(n.p.Params, name, def, param.Descriptor{Description: description + " (live)"}, check).Get
}
