package multihost

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// event is one line of an mhprobe observer whose payload is text (state).
type event struct {
	at   time.Time
	text string
}

// events parses the lines of kind ("state") the probe p printed.
func events(p *testenv.Process, kind string) []event {
	var out []event
	for _, line := range strings.Split(p.Output(), "\n") {
		k, rest, ok := strings.Cut(line, " ")
		if !ok || k != kind {
			continue
		}
		nsStr, text, _ := strings.Cut(rest, " ")
		if ns, err := strconv.ParseInt(nsStr, 10, 64); err == nil {
			out = append(out, event{time.Unix(0, ns), text})
		}
	}
	return out
}

// isStill is an odometry sample of a robot at rest.
func isStill(o sample) bool { return math.Abs(o.x) < 1e-3 && math.Abs(o.z) < 1e-3 }

// isMoving is an odometry sample of a robot under way.
func isMoving(o sample) bool { return math.Abs(o.x) > 0.05 }

// stillFor waits for the first odometry sample after t from which the
// robot stays at rest for hold (every sample until then still), and
// returns it.
func stillFor(tb *testing.T, odom *testenv.Process, t time.Time, hold, limit time.Duration, what string) sample {
	tb.Helper()
	var got sample
	testenv.WaitFor(tb, limit, what, func() bool {
		ss := samples(odom, "odom")
		for i, s := range ss {
			if !s.at.After(t) || !isStill(s) {
				continue
			}
			ok := false
			for _, u := range ss[i:] {
				if !isStill(u) {
					break
				}
				if u.at.Sub(s.at) >= hold {
					ok = true
					break
				}
			}
			if ok {
				got = s
				return true
			}
		}
		odom.MustRun(tb)
		return false
	})
	return got
}

// TestOperatorGoalsLinkDrop breaks the operator's link while the robot
// (launch/rsm_sim.launch.xml) carries out what the operator started from
// the operator station, and checks that each ends as the supervision
// rules of docs/rsm.md and docs/multihost.md say:
//
//   - a navigate_to_pose goal the operator's CLI sent straight to the
//     navigator: its client is lost with the link, so the navigator aborts
//     it and stops the robot (action.ClientWatch; the CLI's 2 s lease +
//     0.5 s), short of the goal;
//   - a navigation goal the operator gave RSM (rsm/simpleGoal) and a
//     waypoint run the operator started (rsm/startStopWaypointFollowing):
//     their action client is RSM's, on the robot, so they go on to their
//     end without the operator, and the robot comes to rest there.
//
// After each drop the link comes back; at the end the operator drives the
// robot with the joystick, nothing restarted. Times are logged as figures
// (docs/multihost.md), never asserted.
func TestOperatorGoalsLinkDrop(t *testing.T) {
	needNetns(t)
	t.Parallel()
	s := startRobotSystem(t, nil, nil)
	cli := filepath.Join(s.bin, "fsmnodes")
	mode := s.robot.Start(t, "mode-observer", s.robotEnv, s.probe, "mode", "/rsm/operationMode")
	wps := s.robot.Start(t, "waypoints-observer", s.robotEnv, s.probe, "waypoints", "/rsm/waypoints")
	state := s.robot.Start(t, "state-observer", s.robotEnv, s.probe, "state", "/rsm/stateInfo")
	pose := s.robot.Start(t, "pose-observer", s.robotEnv, s.probe, "pose", "/odom")
	// at is the robot's position (odometry, the map's frame in the
	// simulator) at time t.
	at := func(t time.Time) (float64, float64) {
		var x, y float64
		for _, p := range samples(pose, "pose") {
			if p.at.After(t) {
				break
			}
			x, y = p.x, p.z
		}
		return x, y
	}
	var last []byte
	defer func() {
		if t.Failed() {
			t.Logf("last operator CLI output:\n%s", last)
		}
	}()
	// call runs the operator's CLI on the operator host until its output
	// contains want.
	call := func(what, want string, args ...string) {
		t.Helper()
		testenv.WaitFor(t, 60*time.Second, what, func() bool {
			out, _ := s.op.Command(s.operatorEnv, cli, args...).CombinedOutput()
			last = out
			return strings.Contains(string(out), want)
		})
	}
	autonomous := func() {
		t.Helper()
		call("AUTONOMOUS from the operator", "success=True", "service", "call", "/rsm/setOperationMode",
			"rsm_msgs/srv/SetOperationMode", "{operation_mode: {mode: 1}}")
		firstAfter(t, mode, "mode", time.Time{}, 10*time.Second, "AUTONOMOUS on rsm/operationMode", func(m sample) bool { return m.x == 1 && m.z == 0 })
	}
	autonomous()

	// 1. A goal straight to the navigator, from the operator's CLI.
	t.Run("navigate_to_pose from the operator's CLI", func(t *testing.T) {
		goal := s.op.Start(t, "nav-goal", s.operatorEnv, cli, "action", "send_goal", "/navigate_to_pose", "nav2_msgs/action/NavigateToPose",
			"{pose: {header: {frame_id: map}, pose: {position: {x: 4.0, y: 1.5}, orientation: {w: 1.0}}}}")
		goal.WaitOutput(t, 60*time.Second, regexp.MustCompile(`Goal accepted`))
		firstAfter(t, s.odom, "odom", time.Now(), 20*time.Second, "the robot to drive to the operator's goal", isMoving)
		tDown := time.Now()
		s.op.LinkDown()
		stop := firstAfter(t, s.cmd, "twist", tDown, 30*time.Second, "the mux's output to go to zero after the link dropped", isZero)
		still := stillFor(t, s.odom, tDown, time.Second, 30*time.Second, "the robot to stand still after the link dropped")
		t.Logf("FIGURE time to safe, operator's navigate_to_pose goal (CLI, 2 s lease), link down: mux output zero %.2f s, "+
			"robot still (odom) %.2f s after the link dropped (rule: the navigator aborts a goal whose client is lost: "+
			"the client's lease + 0.5 s)", stop.at.Sub(tDown).Seconds(), still.at.Sub(tDown).Seconds())
		// The goal must not go on: nothing but zero at the mux after the
		// stop while the link is down.
		time.Sleep(2 * time.Second)
		for _, c := range samples(s.cmd, "twist") {
			if c.at.After(still.at) && !isZero(c) {
				t.Errorf("the mux forwarded %+v at %s after the goal was aborted", c, c.at.Format("15:04:05.000"))
				break
			}
		}
		if x, y := at(time.Now()); math.Hypot(x-4.0, y-1.5) < 0.5 {
			t.Errorf("the robot reached the goal (%.2f, %.2f) with the goal's client cut off", x, y)
		}
		tUp := time.Now()
		s.op.LinkUp()
		t.Logf("the link was down %.1f s", tUp.Sub(tDown).Seconds())
		// The CLI, cut off, ends with the goal's fate once the link is back
		// (or with its own error); either way the robot did not reach the goal.
		if out := goal.Output(); strings.Contains(out, "SUCCEEDED") {
			t.Errorf("the goal succeeded with its client cut off:\n%s", out)
		}
	})

	// 2. A navigation goal given to RSM from the operator station.
	t.Run("rsm/simpleGoal from the operator", func(t *testing.T) {
		autonomous()
		mark := time.Now()
		call("the operator's goal to RSM", "publishing", "topic", "pub", "--once", "-w", "1", "/rsm/simpleGoal", "geometry_msgs/msg/PoseStamped",
			"{header: {frame_id: map}, pose: {position: {x: 2.0, y: 0.5}, orientation: {w: 1.0}}}")
		waitEvent(t, state, mark, 30*time.Second, "G: Navigation on rsm/stateInfo", func(e event) bool { return strings.HasPrefix(e.text, "G:") })
		firstAfter(t, s.odom, "odom", mark, 20*time.Second, "the robot to drive to the goal", isMoving)
		tDown := time.Now()
		s.op.LinkDown()
		idle := waitEvent(t, state, tDown, 90*time.Second, "RSM to end the navigation (Idle) with the operator cut off", func(e event) bool { return e.text == "Idle" })
		still := stillFor(t, s.odom, tDown, time.Second, 30*time.Second, "the robot at rest at the goal")
		for _, e := range events(state, "state") {
			if e.at.After(mark) && e.at.Before(idle.at) && strings.Contains(e.text, "Abort") {
				t.Errorf("the navigation was aborted (%q) with the operator cut off: RSM's own goals go on", e.text)
			}
		}
		if x, y := at(still.at.Add(time.Second)); math.Hypot(x-2.0, y-0.5) > 0.3 {
			t.Errorf("the navigation ended at (%.2f, %.2f), not at the operator's goal (2.0, 0.5)", x, y)
		}
		tUp := time.Now()
		s.op.LinkUp()
		t.Logf("FIGURE operator's rsm/simpleGoal, link down: the navigation went on; RSM Idle %.2f s and the robot at rest %.2f s after the link dropped (link down %.1f s)",
			idle.at.Sub(tDown).Seconds(), still.at.Sub(tDown).Seconds(), tUp.Sub(tDown).Seconds())
	})

	// 3. A waypoint run started from the operator station, through a drop
	// longer than the DDS lease; then the operator drives again.
	t.Run("waypoint run from the operator, then drive again", func(t *testing.T) {
		autonomous()
		for _, w := range [][2]float64{{1.0, 0.0}, {2.0, 0.5}} {
			call("a waypoint from the operator", "success=True", "service", "call", "/rsm/addWaypoint", "rsm_msgs/srv/AddWaypoint",
				fmt.Sprintf("{waypoint: {pose: {position: {x: %g, y: %g}, orientation: {w: 1.0}}}, position: -1}", w[0], w[1]))
		}
		firstAfter(t, wps, "waypoints", time.Time{}, 20*time.Second, "two waypoints on rsm/waypoints", func(w sample) bool { return w.x >= 2 })
		mark := time.Now()
		call("the waypoint run from the operator", "success=True", "service", "call", "/rsm/startStopWaypointFollowing", "std_srvs/srv/SetBool", "{data: true}")
		waitEvent(t, state, mark, 30*time.Second, "W: Waypoint Following on rsm/stateInfo", func(e event) bool { return strings.HasPrefix(e.text, "W:") })
		firstAfter(t, s.odom, "odom", mark, 20*time.Second, "the robot under way to the waypoints", isMoving)
		tDown := time.Now()
		s.op.LinkDown()
		done := firstAfter(t, wps, "waypoints", tDown, 120*time.Second, "every waypoint visited with the operator cut off", func(w sample) bool { return w.x >= 2 && w.z == w.x })
		idle := waitEvent(t, state, tDown, 60*time.Second, "RSM Idle at the end of the run", func(e event) bool { return e.text == "Idle" })
		still := stillFor(t, s.odom, idle.at, time.Second, 30*time.Second, "the robot at rest after the run")
		if x, y := at(still.at.Add(time.Second)); math.Hypot(x-2.0, y-0.5) > 0.3 {
			t.Errorf("the run ended at (%.2f, %.2f), not at its last waypoint (2.0, 0.5)", x, y)
		}
		// Past the 10 s lease, so that the operator's processes are
		// forgotten and must be rediscovered.
		if wait := 12*time.Second - time.Since(tDown); wait > 0 {
			time.Sleep(wait)
		}
		tUp := time.Now()
		s.op.LinkUp()
		t.Logf("FIGURE operator's waypoint run, link down: the run went on; every waypoint visited %.2f s, RSM Idle %.2f s, the robot at rest %.2f s after the link dropped (link down %.1f s)",
			done.at.Sub(tDown).Seconds(), idle.at.Sub(tDown).Seconds(), still.at.Sub(tDown).Seconds(), tUp.Sub(tDown).Seconds())
		// The operator takes over with the joystick: its driver and teleop
		// ran through the drop and were never restarted.
		s.hold(t)
		back := firstAfter(t, s.cmd, "twist", tUp, 60*time.Second, "the joystick's command at the robot after the link came back", isDriving)
		t.Logf("FIGURE rediscovery after the waypoint run's drop (%.1f s): the operator drives again %.2f s after the link came back (nothing restarted)",
			tUp.Sub(tDown).Seconds(), back.at.Sub(tUp).Seconds())
		firstAfter(t, mode, "mode", tUp, 10*time.Second, "TELEOPERATION on rsm/operationMode", func(m sample) bool { return m.x == 2 })
	})
}

// waitEvent waits until p printed an event of kind state after t that
// satisfies cond, and returns it.
func waitEvent(tb *testing.T, p *testenv.Process, t time.Time, limit time.Duration, what string, cond func(event) bool) event {
	tb.Helper()
	var got event
	testenv.WaitFor(tb, limit, what, func() bool {
		for _, e := range events(p, "state") {
			if e.at.After(t) && cond(e) {
				got = e
				return true
			}
		}
		p.MustRun(tb)
		return false
	})
	return got
}
