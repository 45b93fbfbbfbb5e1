// Package velma re-implements the core agent of the WUT Velma robot: the
// safety layer velma_core_ve_body and the control layer velma_core_cs, each
// an FSM whose terminal (τ), transition (σ) and error (ε) conditions are
// written down as data exactly as in the behaviour specification
// (docs/velma.md#ve_body-transitions, docs/velma.md#cs-transitions), and the
// per-iteration sequence that ties them to the real effectors:
//
//  1. ve_body reads the effector status and passes it up (states *_st);
//  2. cs reads the task command, runs its behaviour and returns a command;
//  3. ve_body runs again, checks that command and sends it to the effectors
//     (transp) or computes joint damping itself (safe).
//
// The package has no ROS dependency. The effectors are an interface
// (Effectors), implemented by the simulator in package velma/sim or by a
// hardware driver; a node adapts TaskCommand and the reports to ROS topics,
// services and actions. Agent.Iterate must be called from one goroutine; the
// 500 Hz Loop measures its own period and overruns behind a Clock interface
// so tests can step it without real time.
package velma
