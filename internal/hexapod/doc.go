// Package hexapod is the motion controller of the six-legged robot "Lepta"
// (Project Leptan), re-implemented in pure Go without any ROS dependency.
//
// It contains the seven-state motion state machine of the original
// motion_control.cpp (Unknown, Idle, Sitting, StandingUp, Standing, Walking,
// SittingDown), body posing while standing, the alternating tripod gait, the
// three-joint inverse and forward kinematics of each leg, the leg geometry as
// a configuration value, a simulated servo driver, joystick and cmd_vel input
// handling, and a Controller that runs one 100 Hz control tick: commands in,
// joint angles out.
//
// Nothing in this package is safe for concurrent use; the node that adapts it
// to ROS calls every method from its single callback goroutine.
//
// Units are metres, seconds and radians throughout. The body frame has x
// forward, y to the left and z up; legs are indexed in the original order
// RR, RM, RF, LR, LM, LF (0..5).
package hexapod
