package rsm

import (
	"context"
	"time"
)

// Reply texts shared by several states (the original's strings).
const (
	msgExplorationNotRunning       = "Exploration not running"
	msgWaypointFollowingNotRunning = "Waypoint following not running"
	msgExplorationRunning          = "Exploration running"
	msgWaypointFollowingRunning    = "Waypoint following running"
	msgExplorationStopped          = "Exploration stopped"
	msgWaypointFollowingStopped    = "Waypoint following stopped"
)

// Boot is the first state. It calls /rsm/bootUpFinished on every tick and
// goes to Idle once the robot reports success. Only the e-stop interrupts
// it.
type Boot struct {
	Base
	report       onceReporter
	missingSince time.Time // first failed call of the current burst
}

// bootReportGrace is how long Boot waits quietly for /rsm/bootUpFinished
// before reporting it missing: the nodes of one launch file start in any
// order, and a boot service that appears within this time is no error.
const bootReportGrace = 5 * time.Second

// NewBoot returns the "Boot" state.
func NewBoot() *Boot { return &Boot{Base: Base{name: "Boot"}} }

// OnActive asks the boot service whether the robot is ready. A missing
// service is reported once (not on every tick) with what to start.
func (s *Boot) OnActive(ctx context.Context) {
	if s.Leaving() {
		return
	}
	log := s.si.Log()
	r, err := s.si.Boot().BootUpFinished(ctx)
	if err != nil {
		now := s.si.Now()
		if s.missingSince.IsZero() {
			s.missingSince = now
		}
		if now.Sub(s.missingSince) < bootReportGrace {
			return
		}
		s.report.fail(log, "rsm: Boot: cannot call /rsm/bootUpFinished: %v; "+
			"start a node that serves it (fsmnodes: `rsm_boot`, or your robot's boot node); "+
			"staying in Boot until it answers", err)
		return
	}
	s.missingSince = time.Time{}
	s.report.ok(log, "rsm: Boot: /rsm/bootUpFinished answers again")
	if r.Success {
		s.Next(NewIdle())
	}
}

// OnExplorationStart refuses: "Still booting".
func (s *Boot) OnExplorationStart(context.Context) Reply { return fail("Still booting") }

// OnExplorationStop refuses: "Still booting".
func (s *Boot) OnExplorationStop(context.Context) Reply { return fail("Still booting") }

// OnWaypointFollowingStart refuses: "Still booting". FIX: the original
// misnamed this handler (onWaypointFollowingStartStop), so waypoint start
// fell back to the empty base method with an uninitialised success flag.
func (s *Boot) OnWaypointFollowingStart(context.Context) Reply { return fail("Still booting") }

// OnWaypointFollowingStop refuses: "Still booting" (FIX: see
// OnWaypointFollowingStart).
func (s *Boot) OnWaypointFollowingStop(context.Context) Reply { return fail("Still booting") }

// OnInterrupt handles only the e-stop (→ Emergency Stop).
func (s *Boot) OnInterrupt(_ context.Context, i Interrupt) {
	if i == EmergencyStopInterrupt {
		s.InterruptTo(NewEmergencyStop())
	}
}

// EmergencyStop is active while the software e-stop is pressed; its release
// (INTERRUPT_END) leads to Idle.
type EmergencyStop struct{ Base }

// NewEmergencyStop returns the "Emergency Stop" state.
func NewEmergencyStop() *EmergencyStop { return &EmergencyStop{Base{name: "Emergency Stop"}} }

// OnActive does nothing.
func (s *EmergencyStop) OnActive(context.Context) {}

// OnExplorationStart refuses: "Emergency Stop".
func (s *EmergencyStop) OnExplorationStart(context.Context) Reply { return fail("Emergency Stop") }

// OnExplorationStop refuses: "Exploration not running".
func (s *EmergencyStop) OnExplorationStop(context.Context) Reply {
	return fail(msgExplorationNotRunning)
}

// OnWaypointFollowingStart refuses: "Emergency Stop".
func (s *EmergencyStop) OnWaypointFollowingStart(context.Context) Reply {
	return fail("Emergency Stop")
}

// OnWaypointFollowingStop refuses: "Waypoint following not running".
func (s *EmergencyStop) OnWaypointFollowingStop(context.Context) Reply {
	return fail(msgWaypointFollowingNotRunning)
}

// OnInterrupt goes to Idle when the e-stop is released (INTERRUPT_END).
func (s *EmergencyStop) OnInterrupt(_ context.Context, i Interrupt) {
	if i == InterruptEnd {
		s.InterruptTo(NewIdle())
	}
}

// Idle is the resting state; exploration and waypoint following start here.
type Idle struct{ Base }

// NewIdle returns the "Idle" state.
func NewIdle() *Idle { return &Idle{Base{name: "Idle"}} }

// OnActive does nothing.
func (s *Idle) OnActive(context.Context) {}

// OnExplorationStart starts exploration with the calculate-goal plugin.
func (s *Idle) OnExplorationStart(context.Context) Reply {
	s.nextPlugin(CalculateGoalPlugin, "")
	return ok("Exploration started")
}

// OnExplorationStop refuses: "Exploration not running".
func (s *Idle) OnExplorationStop(context.Context) Reply { return fail(msgExplorationNotRunning) }

// OnWaypointFollowingStart goes to Waypoint Following.
func (s *Idle) OnWaypointFollowingStart(context.Context) Reply {
	s.Next(NewWaypointFollowing())
	return ok("Waypoint following started")
}

// OnWaypointFollowingStop refuses: "Waypoint following not running".
func (s *Idle) OnWaypointFollowingStop(context.Context) Reply {
	return fail(msgWaypointFollowingNotRunning)
}

// OnInterrupt: e-stop, teleoperation and simple goal (common pattern).
func (s *Idle) OnInterrupt(_ context.Context, i Interrupt) { s.commonInterrupt(i) }

// Teleoperation is active while an operator drives the robot; it ends
// (INTERRUPT_END) when the mux's idle timer returns to STOPPED.
type Teleoperation struct{ Base }

// NewTeleoperation returns the "Teleoperation" state.
func NewTeleoperation() *Teleoperation { return &Teleoperation{Base{name: "Teleoperation"}} }

// OnActive does nothing.
func (s *Teleoperation) OnActive(context.Context) {}

// OnExplorationStart refuses: "Teleoperation active".
func (s *Teleoperation) OnExplorationStart(context.Context) Reply {
	return fail("Teleoperation active")
}

// OnExplorationStop refuses: "Exploration not running".
func (s *Teleoperation) OnExplorationStop(context.Context) Reply {
	return fail(msgExplorationNotRunning)
}

// OnWaypointFollowingStart refuses: "Teleoperation active".
func (s *Teleoperation) OnWaypointFollowingStart(context.Context) Reply {
	return fail("Teleoperation active")
}

// OnWaypointFollowingStop refuses: "Waypoint following not running".
func (s *Teleoperation) OnWaypointFollowingStop(context.Context) Reply {
	return fail(msgWaypointFollowingNotRunning)
}

// OnInterrupt: e-stop → Emergency Stop, INTERRUPT_END → Idle.
func (s *Teleoperation) OnInterrupt(_ context.Context, i Interrupt) {
	switch i {
	case EmergencyStopInterrupt:
		s.InterruptTo(NewEmergencyStop())
	case InterruptEnd:
		s.InterruptTo(NewIdle())
	}
}
