// Package rsm is the Robot Statemachine (RSM) of fsmnodes: a Go port of
// MarcoStb1993/robot_statemachine (ROS 1) without any ROS types in its API.
//
// The package holds four independent pieces of behaviour, each driven by a
// ROS 2 node in internal/rsm/rsmnode:
//
//   - StateInterface and the states (Boot, Emergency Stop, Idle,
//     Teleoperation, Waypoint Following and the plugin states Calculate
//     Goal, Navigation, Mapping Dummy and the Reversing routine), run by the
//     state_interface node (rsmNode).
//   - Mux, the robot control multiplexer (Stopped / Autonomy /
//     Teleoperation, software e-stop, teleoperation idle timer, joystick),
//     run by the robot_control_mux node (robotControlMuxNode).
//   - Store, the data store of waypoints, navigation goal, exploration and
//     reverse mode, run by the service_provider node (serviceProviderNode).
//   - ReverseRelay, the reverse-driving relay of the original's additions
//     (a second navigation stack's velocities with the linear part
//     negated), run by the cmd_vel_reverse node.
//
// States reach the data store, the boot check and Nav2 through the small
// interfaces DataStore, BootService and Navigator, so every transition is
// tested without middleware. Time comes in through Clock; nothing in this
// package starts goroutines or timers of its own: timers are deadlines that
// are checked on every tick.
//
// Threading: every exported method of StateInterface, Mux and Store must be
// called from one goroutine at a time (the node's callback goroutine). None
// of them locks.
//
// Deviations from the original, all deliberate and marked "FIX:" in the code:
// Boot answers the waypoint following hooks (the original misnamed its
// handler and returned an uninitialised success); Navigation's stuck
// detection sees the operation mode and measures real movement, so it fires
// (it never did in the original); the mux honours joystick_used (the
// original always subscribed to the joystick); Calculate Goal no longer
// overwrites a simple goal that interrupts it; the e-stop locks the
// operation mode and its release lands in STOPPED; Navigation gives up on a
// missing action server after a timeout instead of waiting for ever.
package rsm
