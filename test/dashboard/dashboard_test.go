package dashboard

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
)

// TestDashboardInChromium: the dashboard of the demo as make run starts
// it, driven in Chromium panel by panel; every step is checked over DDS by
// the test's own observers.
func TestDashboardInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the demo, the bridge and a browser: takes minutes")
	}
	chrome := findChromium(t)
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := testenv.ExecutableDir(t, "cmd/fsmnodes", "nodes/...")
	domain := testenv.Domain(t)
	env := append(os.Environ(), fmt.Sprintf("ROS_DOMAIN_ID=%d", domain))
	// The demo as make run starts it, foxglove_bridge included (on a free
	// port instead of 8765, so parallel runs do not collide).
	port := freePort(t)
	testenv.HeavyN(t, 2) // the demo and a browser
	testenv.LaunchDemo(t, domain, fmt.Sprintf("foxglove_port:=%d", port))
	// A second bridge that also offers hidden topics and services (the
	// actions' …/_action/send_goal, through which the Velma panel sends
	// joint goals).
	hiddenPort := freePort(t)
	testenv.Start(t, "foxglove_bridge_hidden", env, filepath.Join(bin, "foxglove_bridge"),
		"--ros-args", "-r", "__node:=foxglove_bridge_hidden", "-p", fmt.Sprintf("port:=%d", hiddenPort), "-p", "include_hidden:=true")

	r := &dashboardRun{hiddenBase: fmt.Sprintf("http://127.0.0.1:%d", hiddenPort)}
	r.observe(t, domain)
	r.b = startDashboardBrowser(t, chrome, fmt.Sprintf("http://127.0.0.1:%d", port))
	b := r.b
	t.Logf("screenshots go to %s", b.dir)

	// The page comes from the bridge (the port also serves HTTP).
	waitListening(t, port)
	b.open("ns=/diffbot&view=robot")
	b.waitText("#rsm-state", "RSM to finish booting", 60*time.Second, func(s string) bool { return s == "Idle" })

	t.Run("e-stop", r.eStop)
	t.Run("teleop with the arrow keys", r.teleop)
	t.Run("waypoint by clicking the map, then followed", r.waypointByClick)
	t.Run("goal, stop goal, exploration, reverse, waypoint at robot, reset", r.goalExplorationReverseReset)
	t.Run("hexapod stands up", r.hexapodStandsUp)
	t.Run("topics and log", r.topicsAndLog)
	t.Run("velma motors", r.velmaMotors)
	t.Run("velma joint goal through a bridge with hidden services", r.velmaJointGoal)
	b.t = t

	if *updateDocs {
		writeDocImages(t, root, b.shot)
	}
}

// dashboardRun is the test's side of TestDashboardInChromium: the browser
// on the demo's bridge, the bridge with hidden services, and independent
// observers over DDS.
type dashboardRun struct {
	b          *browser
	hiddenBase string // the page from the bridge with hidden services
	n          *ros.Node

	state, hexState, csState     testenv.Latest[std_msgs_msg.String] // RSM's stateInfo, the hexapod's and cs's state
	opMode                       testenv.Latest[rsm_msgs_msg.OperationMode]
	waypoints                    testenv.Latest[rsm_msgs_msg.WaypointArray]
	odom                         testenv.Latest[nav_msgs_msg.Odometry]
	explorationMode, reverseMode testenv.Latest[std_msgs_msg.Bool]
	hexJoints                    testenv.Latest[sensor_msgs_msg.JointState]
}

// observe starts the test's own node in domain with its subscriptions.
func (r *dashboardRun) observe(t *testing.T, domain uint32) {
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &domain, NoSignals: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	go func() { _ = rc.Spin(context.Background()) }()
	if r.n, err = rc.NewNode("dashboard_test", ""); err != nil {
		t.Fatal(err)
	}
	n := r.n
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ros.NewSubscription(n, "/diffbot/rsm/stateInfo", ros.QoSDefault, func(m *std_msgs_msg.String) { r.state.Set(m, m.Data) }))
	must(ros.NewSubscription(n, "/diffbot/rsm/operationMode", ros.QoSDefault, func(m *rsm_msgs_msg.OperationMode) { r.opMode.Set(m, "") }))
	must(ros.NewSubscription(n, "/diffbot/rsm/waypoints", ros.QoSDefault, func(m *rsm_msgs_msg.WaypointArray) { r.waypoints.Set(m, "") }))
	must(ros.NewSubscription(n, "/diffbot/rsm/explorationMode", ros.QoSDefault, func(m *std_msgs_msg.Bool) { r.explorationMode.Set(m, "") }))
	must(ros.NewSubscription(n, "/diffbot/rsm/reverseMode", ros.QoSDefault, func(m *std_msgs_msg.Bool) { r.reverseMode.Set(m, "") }))
	must(ros.NewSubscription(n, "/diffbot/odom", ros.QoSDefault, func(m *nav_msgs_msg.Odometry) { r.odom.Set(m, "") }))
	must(ros.NewSubscription(n, "/hexapod/hexapod_controller/state", ros.QoSLatched, func(m *std_msgs_msg.String) { r.hexState.Set(m, m.Data) }))
	must(ros.NewSubscription(n, "/hexapod/joint_states", ros.QoSDefault, func(m *sensor_msgs_msg.JointState) { r.hexJoints.Set(m, "") }))
	must(ros.NewSubscription(n, "/velma/velma_core/cs/state", ros.QoSLatched, func(m *std_msgs_msg.String) { r.csState.Set(m, m.Data) }))
}

// startDashboardBrowser starts headless Chromium with a fresh profile and
// nothing from the network, on pages from base. Errors on the browser's
// console fail the test at its end.
func startDashboardBrowser(t *testing.T, chrome, base string) *browser {
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromiumOptions(t, chrome, 1440, 1000)...)
	t.Cleanup(cancelAlloc)
	var logMu sync.Mutex
	var consoleErrors []string
	// chromedp's CDP bindings lag behind Debian's Chromium: events with
	// enum values they do not know (Network.IPAddressSpace "Loopback") are
	// reported and skipped. The test uses none of them; count, do not spam.
	var skippedEvents atomic.Int64
	errorf := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if strings.HasPrefix(msg, "could not unmarshal event") {
			if skippedEvents.Add(1) == 1 {
				t.Logf("chromedp: %s (further ones counted)", msg)
			}
			return
		}
		t.Logf("chromedp error: %s", msg)
	}
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf), chromedp.WithErrorf(errorf))
	t.Cleanup(cancelBrowser)
	t.Cleanup(func() { t.Logf("chromedp skipped %d events it cannot decode", skippedEvents.Load()) })
	chromedp.ListenTarget(bctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			logMu.Lock()
			consoleErrors = append(consoleErrors, e.ExceptionDetails.Error())
			logMu.Unlock()
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				logMu.Lock()
				consoleErrors = append(consoleErrors, strings.Join(parts, " "))
				logMu.Unlock()
			}
		}
	})
	// Start the browser on bctx itself: a browser first started by Run on a
	// child context (with a timeout) would close with that context.
	if err := chromedp.Run(bctx); err != nil {
		t.Fatalf("start %s: %v", chrome, err)
	}
	t.Cleanup(func() {
		logMu.Lock()
		defer logMu.Unlock()
		for _, e := range consoleErrors {
			t.Errorf("browser console error: %s", e)
		}
	})
	return &browser{t: t, ctx: bctx, base: base, dir: screenshotDir(t), shot: map[string][]byte{}}
}

// eStop: the e-stop button stops RSM (stateInfo, operationMode) and releases it.
func (r *dashboardRun) eStop(t *testing.T) {
	b := r.b
	b.t = t
	// A failure here must not leave the e-stop on for the subtests
	// after it (they would all fail for that one reason).
	t.Cleanup(func() {
		if t.Failed() {
			releaseEStop(t, r.n)
		}
	})
	// On a failure, say what the page reported for its call (its control
	// info line: an error, a timeout or the answer) before the release
	// above overwrites it. Cleanups run last-in first-out.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("page's RSM info lines: %q; page state: %s", b.texts("#panel-rsm .info"), b.diagnose())
		}
	})
	// The page can only call setOperationMode once the bridge has
	// advertised it; stateInfo (which the boot wait saw) is a topic and can
	// come first on a loaded machine.
	b.waitService("/diffbot/rsm/setOperationMode", 30*time.Second)
	b.run("click e-stop", chromedp.Click("#rsm-estop", chromedp.ByQuery))
	testenv.WaitFor(t, 20*time.Second, `"Emergency Stop" on /diffbot/rsm/stateInfo`, func() bool { return r.state.Seen("Emergency Stop") })
	seen := time.Now()
	b.waitText("#rsm-state", "the page to show Emergency Stop", 30*time.Second, func(s string) bool { return s == "Emergency Stop" })
	t.Logf("the page showed Emergency Stop %v after stateInfo carried it", time.Since(seen).Round(time.Millisecond))
	testenv.WaitFor(t, 10*time.Second, "operationMode with emergency_stop", func() bool {
		m := r.opMode.Get()
		return m != nil && m.EmergencyStop
	})
	b.waitText("#rsm-estop", "the e-stop button to show it is on", 5*time.Second, func(s string) bool { return strings.Contains(s, "ON") })
	b.screenshot("rsm-control-estop", "#panel-rsm")
	b.run("release e-stop", chromedp.Click("#rsm-estop", chromedp.ByQuery))
	b.waitText("#rsm-state", "Idle after releasing the e-stop", 20*time.Second, func(s string) bool { return s == "Idle" })
	testenv.WaitFor(t, 10*time.Second, "operationMode without emergency_stop", func() bool {
		m := r.opMode.Get()
		return m != nil && !m.EmergencyStop
	})
}

// teleop: the arrow keys teleoperate the diffbot; releasing them returns to STOPPED and Idle.
func (r *dashboardRun) teleop(t *testing.T) {
	b := r.b
	b.t = t
	x0 := r.odom.Get().Pose.Pose.Position.X
	b.run("press ArrowUp", keyEvent(input.KeyRawDown, "ArrowUp", 38))
	testenv.WaitFor(t, 15*time.Second, "TELEOPERATION while the key is held", func() bool {
		m := r.opMode.Get()
		return m != nil && m.Mode == rsm_msgs_msg.OperationMode_TELEOPERATION
	})
	testenv.WaitFor(t, 20*time.Second, "the robot to move forward", func() bool {
		return r.odom.Get().Pose.Pose.Position.X-x0 > 0.2
	})
	b.run("release ArrowUp", keyEvent(input.KeyUp, "ArrowUp", 38))
	// The pad sends a zero Twist on release; the mux drops back to
	// STOPPED after its idle timer and RSM to Idle.
	testenv.WaitFor(t, 15*time.Second, "STOPPED after the key is released", func() bool {
		m := r.opMode.Get()
		return m != nil && m.Mode == rsm_msgs_msg.OperationMode_STOPPED
	})
	b.waitText("#rsm-state", "Idle after teleoperation", 15*time.Second, func(s string) bool { return s == "Idle" })
}

// waypointByClick: two waypoints clicked on the map are followed and visited in a SINGLE run.
func (r *dashboardRun) waypointByClick(t *testing.T) {
	b := r.b
	b.t = t
	// Autonomy first: the robot only drives autonomously in AUTONOMOUS.
	b.run("select Autonomy", chromedp.Click("#rsm-mode-1", chromedp.ByQuery))
	testenv.WaitFor(t, 10*time.Second, "AUTONOMOUS on operationMode", func() bool {
		m := r.opMode.Get()
		return m != nil && m.Mode == rsm_msgs_msg.OperationMode_AUTONOMOUS && !m.EmergencyStop
	})
	b.run("add-waypoint mode", chromedp.Click(`label:has(#map-mode-waypoint)`, chromedp.ByQuery))
	b.waitText(".map-panel .map-status", "the map to be drawn", 30*time.Second, func(s string) bool { return strings.Contains(s, "120×80") })
	// Two waypoints, clicked on the map.
	wps := [][2]float64{{2.0, 0.5}, {4.0, 1.5}}
	for i, w := range wps {
		var pt struct{ X, Y float64 }
		b.eval(fmt.Sprintf(`window.fsmDashboard.views.find((v) => v.worldToClient).worldToClient(%v, %v)`, w[0], w[1]), &pt)
		b.run("click the map", chromedp.MouseClickXY(pt.X, pt.Y))
		testenv.WaitFor(t, 15*time.Second, fmt.Sprintf("waypoint %d on /diffbot/rsm/waypoints", i+1), func() bool {
			m := r.waypoints.Get()
			return m != nil && len(m.Waypoints) == i+1
		})
		got := r.waypoints.Get().Waypoints[i].Pose.Position
		// One screen pixel is 1/scale metres; the fitted map has > 50 px/m.
		if d := math.Hypot(got.X-w[0], got.Y-w[1]); d > 0.05 {
			t.Errorf("waypoint %d at (%.3f, %.3f), clicked at %v", i+1, got.X, got.Y, w)
		}
	}
	b.waitText("#rsm-waypoint-table tbody", "both waypoints in the list", 10*time.Second, func(s string) bool { return strings.Count(s, "pending") == 2 })
	b.screenshot("rsm-map-waypoints", "#panel-map")

	b.run("start waypoint following", chromedp.Click("#rsm-waypoints", chromedp.ByQuery))
	testenv.WaitFor(t, 15*time.Second, "W: Waypoint Following on stateInfo", func() bool { return r.state.Seen("W: Waypoint Following") })
	testenv.WaitFor(t, 3*time.Minute, "the first waypoint to be visited", func() bool {
		m := r.waypoints.Get()
		return m != nil && len(m.Waypoints) == 2 && m.Waypoints[0].Visited
	})
	b.waitText("#rsm-waypoint-table tbody", "the list to show it visited", 10*time.Second, func(s string) bool { return strings.Contains(s, "visited") })
	// On the way to the second one: visited, pending and the goal on the map.
	b.pause(1500*time.Millisecond, "the robot under way to the second waypoint")
	b.screenshot("rsm-control", "#panel-rsm")
	b.screenshot("rsm-map", "#panel-map")
	testenv.WaitFor(t, 3*time.Minute, "the second waypoint to be visited", func() bool {
		m := r.waypoints.Get()
		return m != nil && len(m.Waypoints) == 2 && m.Waypoints[1].Visited
	})
	b.waitText("#rsm-state", "Idle at the end of a SINGLE run", 30*time.Second, func(s string) bool { return s == "Idle" })
	if p := r.odom.Get().Pose.Pose.Position; math.Hypot(p.X-wps[1][0], p.Y-wps[1][1]) > 0.4 {
		t.Errorf("robot at (%.2f, %.2f) after visiting the waypoint at %v", p.X, p.Y, wps[1])
	}
	t.Logf("stateInfo history: %v", r.state.History())
}

// goalExplorationReverseReset: a goal clicked on the map and stopped, exploration started and stopped, reverse on and off, a waypoint at the robot pose (or the page's refusal without one), reset and remove.
func (r *dashboardRun) goalExplorationReverseReset(t *testing.T) {
	b := r.b
	b.t = t
	b.run("send-goal mode", chromedp.Click(`label:has(#map-mode-goal)`, chromedp.ByQuery))
	var pt struct{ X, Y float64 }
	b.eval(`window.fsmDashboard.views.find((v) => v.worldToClient).worldToClient(2.5, 0.5)`, &pt)
	b.run("click the map", chromedp.MouseClickXY(pt.X, pt.Y))
	testenv.WaitFor(t, 20*time.Second, "G: Navigation on stateInfo", func() bool { return r.state.Seen("G: Navigation") })
	b.run("stop 2D nav goal", chromedp.Click("#rsm-stop-goal", chromedp.ByQuery))
	b.waitText("#rsm-state", "Idle after Stop 2D Nav Goal", 20*time.Second, func(s string) bool { return s == "Idle" })

	b.run("exploration mode Interrupt", chromedp.SetValue("#rsm-exploration-mode", "1", chromedp.ByQuery))
	b.run("start exploration", chromedp.Click("#rsm-exploration", chromedp.ByQuery))
	testenv.WaitFor(t, 20*time.Second, "an exploration state on stateInfo", func() bool {
		m := r.state.Get()
		return m != nil && strings.HasPrefix(m.Data, "E:")
	})
	testenv.WaitFor(t, 10*time.Second, "explorationMode true (Interrupt)", func() bool {
		m := r.explorationMode.Get()
		return m != nil && m.Data
	})
	b.waitText("#rsm-exploration", "the button to offer Stop", 10*time.Second, func(s string) bool { return s == "Stop" })
	b.run("stop exploration", chromedp.Click("#rsm-exploration", chromedp.ByQuery))
	b.waitText("#rsm-state", "Idle after stopping exploration", 20*time.Second, func(s string) bool { return s == "Idle" })

	b.run("reverse on", chromedp.Click("#rsm-reverse", chromedp.ByQuery))
	testenv.WaitFor(t, 10*time.Second, "reverseMode true", func() bool {
		m := r.reverseMode.Get()
		return m != nil && m.Data
	})
	b.run("reverse off", chromedp.Click("#rsm-reverse", chromedp.ByQuery))
	testenv.WaitFor(t, 10*time.Second, "reverseMode false", func() bool {
		m := r.reverseMode.Get()
		return m != nil && !m.Data
	})

	// Set Waypoint asks the service provider for the robot pose; it
	// answers an all-zero pose while TF has no map → robot transform,
	// and the page must then refuse instead of adding a waypoint at 0.
	gp, err := ros.NewClient(r.n, "/diffbot/rsm/getRobotPose", rsm_msgs_srv.GetRobotPose)
	if err != nil {
		t.Fatal(err)
	}
	defer gp.Close()
	pctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := gp.WaitForService(pctx); err != nil {
		t.Fatal(err)
	}
	pose, err := gp.Call(pctx, &rsm_msgs_srv.GetRobotPose_Request{})
	if err != nil {
		t.Fatal(err)
	}
	n0 := len(r.waypoints.Get().Waypoints)
	b.run("set waypoint at the robot pose", chromedp.Click("#rsm-set-waypoint", chromedp.ByQuery))
	if q := pose.Pose.Orientation; q.X == 0 && q.Y == 0 && q.Z == 0 && q.W == 0 {
		t.Logf("the service provider has no robot pose (no TF map → robot frame): checking the page's refusal")
		b.waitText("#panel-rsm", "the page to say there is no robot pose", 10*time.Second, func(s string) bool { return strings.Contains(s, "no robot pose yet") })
		if m := r.waypoints.Get(); len(m.Waypoints) != n0 {
			t.Fatalf("a waypoint was added without a robot pose: %d waypoints, had %d", len(m.Waypoints), n0)
		}
	} else {
		testenv.WaitFor(t, 10*time.Second, "a waypoint at the robot pose", func() bool {
			m := r.waypoints.Get()
			return len(m.Waypoints) == n0+1
		})
		w := r.waypoints.Get().Waypoints[n0].Pose.Position
		if p := r.odom.Get().Pose.Pose.Position; math.Hypot(p.X-w.X, p.Y-w.Y) > 0.2 {
			t.Errorf("waypoint set at (%.2f, %.2f), robot at (%.2f, %.2f)", w.X, w.Y, p.X, p.Y)
		}
	}
	n1 := len(r.waypoints.Get().Waypoints)
	b.run("reset waypoints", chromedp.Click("#rsm-reset", chromedp.ByQuery))
	testenv.WaitFor(t, 10*time.Second, "no waypoint visited after Reset", func() bool {
		for _, w := range r.waypoints.Get().Waypoints {
			if w.Visited || w.Unreachable {
				return false
			}
		}
		return true
	})
	b.run("remove the last waypoint", chromedp.Click(fmt.Sprintf(`button[title="remove waypoint %d"]`, n1), chromedp.ByQuery))
	testenv.WaitFor(t, 10*time.Second, "the waypoint removed", func() bool { return len(r.waypoints.Get().Waypoints) == n1-1 })
}

// hexapodStandsUp: the hexapod panel starts and stands the hexapod up, and the arrow key walks it.
func (r *dashboardRun) hexapodStandsUp(t *testing.T) {
	b := r.b
	b.t = t
	b.show("ns=/hexapod&view=robot")
	// The state is latched and published on change only; the page shows
	// it once the bridge delivers it. Start from the DDS view of it.
	testenv.WaitFor(t, 30*time.Second, "Idle on /hexapod/hexapod_controller/state", func() bool {
		m := r.hexState.Get()
		return m != nil && m.Data == "Idle"
	})
	b.waitText("#panel-hexapod", "the hexapod panel", 30*time.Second, func(s string) bool { return s != "" })
	b.run("start", chromedp.Click("#hexapod-start", chromedp.ByQuery))
	b.waitText("#hexapod-state", "Sitting after start", 15*time.Second, func(s string) bool { return s == "Sitting" })
	b.run("stand up", chromedp.Click("#hexapod-stand", chromedp.ByQuery))
	testenv.WaitFor(t, 20*time.Second, "Standing_up then Walking on ~/state", func() bool {
		return r.hexState.Seen("Standing_up") && r.hexState.Seen("Walking")
	})
	b.waitText("#hexapod-state", "the page to show Walking", 10*time.Second, func(s string) bool { return s == "Walking" })
	// Walk forward with the arrow key (the pad publishes /hexapod/cmd_vel).
	j0 := r.hexJoints.Get()
	b.run("press ArrowUp", keyEvent(input.KeyRawDown, "ArrowUp", 38))
	testenv.WaitFor(t, 10*time.Second, "the legs to move while ArrowUp is held", func() bool {
		j := r.hexJoints.Get()
		if j == nil || j0 == nil || len(j.Position) != len(j0.Position) {
			return false
		}
		for i := range j.Position {
			if math.Abs(j.Position[i]-j0.Position[i]) > 0.05 {
				return true
			}
		}
		return false
	})
	b.pause(700*time.Millisecond, "mid-stride")
	b.screenshot("hexapod", "#panel-hexapod")
	b.run("release ArrowUp", keyEvent(input.KeyUp, "ArrowUp", 38))
}

// topicsAndLog: the topic list shows rates and a message; the log shows rsmNode's state changes from /rosout.
func (r *dashboardRun) topicsAndLog(t *testing.T) {
	b := r.b
	b.t = t
	b.show("ns=/diffbot&view=topics")
	b.run("only /diffbot", chromedp.Click(`#panel-topics .toolbar input[type="checkbox"]`, chromedp.ByQuery))
	b.waitText("#topic-table", "rates in the topic list", 20*time.Second, func(s string) bool { return strings.Contains(s, "/diffbot/odom") && strings.Contains(s, "Hz") })
	// The table is redrawn as rates change: click the row through the
	// page (a DevTools node id can go stale between lookup and click),
	// again until the detail shows it.
	b.waitText("#topics-detail", "the last odom message", 20*time.Second, func(s string) bool {
		if strings.Contains(s, "child_frame_id") {
			return true
		}
		var clicked bool
		b.run("select /diffbot/odom", chromedp.Evaluate(`(() => { const r = document.querySelector('#topic-table tr[data-topic="/diffbot/odom"]'); if (r) r.click(); return !!r; })()`, &clicked))
		return false
	})
	b.pause(3*time.Second, "a full rate window")
	b.screenshot("topics", "#panel-topics")
	b.show("ns=/diffbot&view=log")
	// Make rsmNode log: it logs every state change at INFO.
	c, err := ros.NewClient(r.n, "/diffbot/rsm/setOperationMode", rsm_msgs_srv.SetOperationMode)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, estop := range []bool{true, false} {
		req := &rsm_msgs_srv.SetOperationMode_Request{}
		req.OperationMode.EmergencyStop = estop
		mark := r.state.Mark()
		if _, err := c.Call(ctx, req); err != nil {
			t.Fatalf("setOperationMode: %v", err)
		}
		testenv.WaitFor(t, 20*time.Second, fmt.Sprintf("a state change on stateInfo after e-stop %v", estop), func() bool {
			return len(r.state.Since(mark)) > 0
		})
	}
	b.waitText("#log-table tbody", "rsmNode's state changes from /rosout", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "diffbot.rsmNode") && strings.Contains(s, `"Emergency Stop"`)
	})
	b.run("show DEBUG and above", chromedp.SetValue("#log-level", "10", chromedp.ByQuery))
	b.screenshot("log", "#panel-log")
}

// velmaMotors: without hidden services the goal form says what is missing; the motors are enabled and homed.
func (r *dashboardRun) velmaMotors(t *testing.T) {
	b := r.b
	b.t = t
	b.show("ns=/velma&view=robot")
	// The demo's bridge offers no hidden services, so no action goals:
	// the form is disabled and says what is missing.
	b.waitText("#panel-velma", "the form to explain what is missing", 20*time.Second, func(s string) bool { return strings.Contains(s, "include_hidden:=true") })
	var disabled bool
	b.eval(`document.querySelector('#velma-send-goal').disabled`, &disabled)
	if !disabled {
		t.Error("Send goal is enabled without the action's services")
	}
	// The test's own subscription first: a page that lags behind the
	// graph is a page bug, a graph without the state is not.
	testenv.WaitFor(t, 60*time.Second, "cs in safe on /velma/velma_core/cs/state", func() bool { return r.csState.Seen("safe") })
	b.waitText("#velma-cs", "the page to show cs in safe", 30*time.Second, func(s string) bool { return s == "safe" })
	b.run("enable motors", chromedp.Click("#velma-enable", chromedp.ByQuery))
	b.waitText("#panel-velma .info", "enable to answer", 15*time.Second, func(s string) bool { return s != "" })
	// Homing is refused until the enable has reached the effectors (through
	// cs and ve_body, other processes): wait, as an operator would, for the
	// motors table to show every motor enabled ('—' marks one that is not).
	b.waitText("#panel-velma table.motors tbody", "the motors table to show them enabled", 30*time.Second, func(s string) bool {
		return s != "" && !strings.Contains(s, "—")
	})
	b.run("home head pan", chromedp.Click("#velma-home-hp", chromedp.ByQuery))
	b.run("home head tilt", chromedp.Click("#velma-home-ht", chromedp.ByQuery))
	b.waitText("#velma-ready", "motors ready", 60*time.Second, func(s string) bool { return s == "motors ready" })
}

// velmaJointGoal: through the bridge with hidden services, a joint goal from the form is followed in jnt_imp.
func (r *dashboardRun) velmaJointGoal(t *testing.T) {
	b := r.b
	b.t = t
	b.base = r.hiddenBase
	b.open("ns=/velma&view=robot")
	b.waitText("#velma-ready", "motors ready", 30*time.Second, func(s string) bool { return s == "motors ready" })
	// A joint goal: the current pose with the right arm raised.
	b.waitText("#velma-send-goal", "the send button to be enabled", 20*time.Second, func(string) bool {
		var disabled bool
		b.eval(`document.querySelector('#velma-send-goal').disabled`, &disabled)
		return !disabled
	})
	b.pause(2*time.Second, "some history in the plots")
	b.run("fill the form", chromedp.Click("#velma-fill", chromedp.ByQuery))
	var cur string
	b.eval(`document.querySelector('[aria-label="right_arm_1_joint"]').value`, &cur)
	var v float64
	if _, err := fmt.Sscan(cur, &v); err != nil {
		t.Fatalf("right_arm_1_joint field: %q", cur)
	}
	b.run("edit the form",
		chromedp.SetValue(`[aria-label="right_arm_1_joint"]`, fmt.Sprintf("%.3f", v+0.4), chromedp.ByQuery),
		chromedp.SetValue("#velma-duration", "2", chromedp.ByQuery))
	b.run("send the goal", chromedp.Click("#velma-send-goal", chromedp.ByQuery))
	testenv.WaitFor(t, 20*time.Second, "cs in jnt_imp", func() bool { return r.csState.Seen("jnt_imp") })
	b.waitText("#velma-goal-info", "the goal to succeed", 60*time.Second, func(s string) bool { return strings.Contains(s, "SUCCESSFUL") })
	b.pause(time.Second, "the arm at its goal in the plots")
	b.screenshot("velma", "#panel-velma")
}
