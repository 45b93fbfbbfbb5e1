package fault

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	geometry_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/geometry_msgs/msg"
	nav2_msgs_action "github.com/fsmnodes/fsmnodes/msgs/nav2_msgs/action"
	rcl_interfaces_srv "github.com/fsmnodes/fsmnodes/msgs/rcl_interfaces/srv"
	rsm_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/msg"
	rsm_msgs_srv "github.com/fsmnodes/fsmnodes/msgs/rsm_msgs/srv"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
)

// The diffbot patrols between these two waypoints (rooms 1 and 3 of the
// built-in flat, about 11 m apart through both doorways).
var patrol = [2][2]float64{{0.0, 0.3}, {9.5, 5.8}}

// Node names of the demo.
const (
	nodeSim      = "/diffbot/diff_drive_sim"
	nodeNav      = "/diffbot/navigator"
	nodeFrontier = "/diffbot/frontier_detector"
	nodeMux      = "/diffbot/robotControlMuxNode"
	nodeProvider = "/diffbot/serviceProviderNode"
	nodeRSM      = "/diffbot/rsmNode"
	nodeBoot     = "/diffbot/bootUpNode"
	nodeHexapod  = "/hexapod/hexapod_controller"
	nodeVelma    = "/velma/velma_core"
	nodeFoxglove = "/foxglove_bridge"
	nodeRecorder = "/flight_recorder"
)

// suite is the shared state of the subtests of TestFaults.
type suite struct {
	d *demo
	o *observer
}

func (s *suite) setMode(t *testing.T, mode uint8) {
	t.Helper()
	req := &rsm_msgs_srv.SetOperationMode_Request{OperationMode: rsm_msgs_msg.OperationMode{Mode: mode}}
	if r, err := call(t, s.o.n, "/diffbot/rsm/setOperationMode", rsm_msgs_srv.SetOperationMode, req); err != nil || !r.Success {
		t.Fatalf("setOperationMode %d: %+v %v", mode, r, err)
	}
}

func (s *suite) rsmState(t *testing.T) string {
	t.Helper()
	r, err := call(t, s.o.n, "/diffbot/rsm/stateInfo", std_srvs_srv.Trigger, &std_srvs_srv.Trigger_Request{})
	if err != nil {
		return ""
	}
	return r.Message
}

func (s *suite) setBool(t *testing.T, name string, v bool) *std_srvs_srv.SetBool_Response {
	t.Helper()
	r, err := call(t, s.o.n, name, std_srvs_srv.SetBool, &std_srvs_srv.SetBool_Request{Data: v})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// answering waits until the node answers its list_parameters service.
func (s *suite) answering(t *testing.T, fqn string, within time.Duration) {
	t.Helper()
	if err := s.answers(fqn, within); err != nil {
		t.Fatal(err)
	}
}

// answers is answering for deferred calls: it returns the failure.
//
// A request sent before this client has matched the (re)started server,
// or sent to the endpoints of a killed run whose lease has not expired
// yet, gets no answer. So each attempt first waits for the service to be
// available, and an unanswered call is retried with a per-call wait that
// doubles from 250 ms up to 4 s: a lost request costs a quarter second,
// not seconds, and a slow answer on a loaded machine is still taken; within
// alone bounds the whole wait.
func (s *suite) answers(fqn string, within time.Duration) error {
	c, err := ros.NewClient(s.o.n, fqn+"/list_parameters", rcl_interfaces_srv.ListParameters)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	wait := 250 * time.Millisecond
	for {
		err := c.WaitForService(ctx)
		if err == nil {
			callCtx, cancelCall := context.WithTimeout(ctx, wait)
			_, err = c.Call(callCtx, &rcl_interfaces_srv.ListParameters_Request{})
			cancelCall()
			if err == nil {
				return nil
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s does not answer list_parameters within %v: %v", fqn, within, err)
		}
		wait = min(2*wait, 4*time.Second)
		time.Sleep(50 * time.Millisecond)
	}
}

// publishFor publishes m on topic at rate for d and returns how many it
// published (fewer than hz·d when the machine is too busy to keep pace).
func publishFor[T any, PT rosidl.Ptr[T]](t *testing.T, n *ros.Node, topic string, m *T, hz float64, d time.Duration) uint64 {
	t.Helper()
	pub, err := ros.NewPublisher[T, PT](n, topic, ros.QoSDefault)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	// Every subscriber the graph knows matched first: commands published
	// before the match are lost, and the counts checked after would be
	// short on a loaded machine.
	name, err := n.ResolveTopicName(topic)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 20*time.Second, "the subscribers of "+topic+" to match", func() bool {
		c, err := pub.SubscriptionCount()
		return err == nil && c > 0 && c >= n.Context().CountSubscribers(name)
	})
	tk := time.NewTicker(time.Duration(float64(time.Second) / hz))
	defer tk.Stop()
	end := time.Now().Add(d)
	var sent uint64
	for time.Now().Before(end) {
		if err := pub.Publish(m); err != nil {
			t.Fatal(err)
		}
		sent++
		<-tk.C
	}
	return sent
}

// linesSince counts the lines of a process's output after mark that
// contain sub.
func linesSince(p *proc, mark int, sub string) int {
	out := p.out.String()
	if mark > len(out) {
		mark = len(out)
	}
	return strings.Count(out[mark:], sub)
}

func distToPatrol(pose [2]float64) float64 {
	d := math.Inf(1)
	for _, w := range patrol {
		d = math.Min(d, math.Hypot(pose[0]-w[0], pose[1]-w[1]))
	}
	return d
}

// TestFaults runs two demos side by side, each on a domain and with a
// ROS_HOME of its own, and splits the cases between them so that neither
// waits for the other's robot:
//
//   - the whole demo: kill -9 and SIGSTOP of the diffbot's mux, rsmNode and
//     navigator (each stops a driving diffbot) and, beside them, of every
//     node that moves no diffbot; then hostile CDR at every input of the
//     demo and a failed save;
//   - the diffbot and the hexapod, with foxglove_bridge and the flight
//     recorder: CLI timeouts, absurd commands and
//     invalid parameters, bad requests, then kill -9 and SIGSTOP of
//     diff_drive_sim and serviceProviderNode, then inputs beyond their
//     bounds and fake data (roundTwo).
//
// Each case needs only its own demo's robots (the diffbot's faults one
// driving diffbot, in turn); at the end every node of both must answer.
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault suite runs the whole demo for a few minutes")
	}
	t.Run("whole demo", func(t *testing.T) {
		t.Parallel()
		s := newSuite(t)
		t.Run("waypoints persisted in ROS_HOME", s.persistence)
		t.Run("kill -9 and SIGSTOP of every node", func(t *testing.T) {
			s.killAndStop(t, []laneStep{{nodeMux, both}, {nodeRSM, both}, {nodeNav, both}}, true, nodeSim, nodeProvider)
		})
		t.Run("hostile CDR at every input", s.hostile)
		t.Run("failed save answers false", s.failedSave)
		t.Run("every node still answers", s.allAnswer)
	})
	t.Run("diffbot, hexapod and the bridges", func(t *testing.T) {
		t.Parallel()
		// With the two nodes that listen to every robot: a fault of the
		// diffbot's simulator or waypoint store must not take them down.
		s := newSuite(t, "/diffbot", "/hexapod", nodeFoxglove, nodeRecorder)
		// These three do not disturb one another (the CLI's navigation goal
		// moves no robot while the mux is STOPPED or in TELEOPERATION, the
		// parameters tried are refused or are the navigator's own limit), and
		// mostly wait on timeouts and publishing periods: side by side.
		t.Run("CLI, commands, parameters", func(t *testing.T) {
			for _, c := range []struct {
				name string
				f    func(*testing.T)
			}{
				{"CLI waits bounded by --timeout", s.cliTimeouts},
				{"absurd commands clamped and said once", s.absurdCommands},
				{"invalid parameters refused", s.parameters},
			} {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.f(t)
				})
			}
		})
		t.Run("bad requests refused, logged and counted", s.badRequests)
		t.Run("waypoints persisted in ROS_HOME", s.persistence)
		// A restarted simulator puts the robot back at its start, beside
		// a waypoint: diff_drive_sim is killed after it is stopped.
		t.Run("kill -9 and SIGSTOP of the simulator and the waypoint store", func(t *testing.T) {
			s.killAndStop(t, []laneStep{{nodeSim, []syscall.Signal{syscall.SIGSTOP, syscall.SIGKILL}}, {nodeProvider, both}}, false)
		})
		t.Run("bounds and fake data (issue 25)", s.roundTwo)
		t.Run("every node still answers", s.allAnswer)
	})
}

// newSuite starts a demo (only the nodes under namespaces, if given) with
// an observer and waits until every node answers and rsmNode has booted.
func newSuite(t *testing.T, namespaces ...string) *suite {
	t.Helper()
	d := startDemo(t, namespaces...)
	s := &suite{d: d, o: newObserver(t, d)}
	testenv.WaitFor(t, 90*time.Second, "rsmNode to finish booting", func() bool { return s.rsmState(t) == "Idle" })
	for _, fqn := range d.order {
		if fqn != nodeBoot { // it exits once it has answered bootUpFinished
			s.answering(t, fqn, 60*time.Second)
		}
	}
	return s
}

// allAnswer requires every node of the demo to answer.
func (s *suite) allAnswer(t *testing.T) {
	for _, fqn := range s.d.order {
		if fqn != nodeBoot {
			s.answering(t, fqn, 20*time.Second)
		}
	}
}

// Issue 13 item 8: `action send_goal` had no --timeout; `service call`'s
// bounds its wait and says it is waiting as ros2 does.
func (s *suite) cliTimeouts(t *testing.T) {
	out, errs, code, took := s.d.cli(t, 60*time.Second, "service", "call", "--timeout", "1", "/diffbot/rsm/noSuchService", "std_srvs/srv/Trigger")
	if code != 1 || !strings.Contains(out, "waiting for service to become available...") ||
		!strings.Contains(errs, "did not become available within the timeout") {
		t.Errorf("service call --timeout 1 on a missing service: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	t.Logf("service call --timeout 1 on a missing service returned after %.1f s", took.Seconds())
	// The mux is STOPPED (the demo starts so) or forwarding the absurd
	// commands' teleoperation, never the navigator's output: the goal
	// moves no robot.
	goal := fmt.Sprintf("{pose: {header: {frame_id: map}, pose: {position: {x: %g, y: %g}, orientation: {w: 1.0}}}}", patrol[1][0], patrol[1][1])
	out, errs, code, took = s.d.cli(t, 60*time.Second, "action", "send_goal", "--timeout", "3", "/diffbot/navigate_to_pose", "nav2_msgs/action/NavigateToPose", goal)
	if code != 1 || !strings.Contains(out, "Goal accepted with ID") || !strings.Contains(out, "Canceling goal...") ||
		!strings.Contains(out, "Goal canceled.") || !strings.Contains(errs, "goal did not finish within the timeout") {
		t.Errorf("action send_goal --timeout 3 on a long goal: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	t.Logf("action send_goal --timeout 3 on a long goal returned after %.1f s", took.Seconds())
	out, errs, code, _ = s.d.cli(t, 60*time.Second, "action", "send_goal", "--timeout", "1", "/diffbot/no_such_action", "nav2_msgs/action/NavigateToPose", "{}")
	if code != 1 || !strings.Contains(out, "Waiting for an action server to become available...") ||
		!strings.Contains(errs, "did not become available within the timeout") {
		t.Errorf("action send_goal --timeout 1 on a missing action: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// Issue 13 item 2: linear.x = 1e308 was forwarded to /cmd_vel unchanged
// and switched to TELEOPERATION. Item 7: the simulator's rejection warning
// repeated 20 times a second.
func (s *suite) absurdCommands(t *testing.T) {
	// The two robots side by side.
	t.Run("diffbot", func(t *testing.T) {
		t.Parallel()
		s.absurdDiffbot(t)
	})
	t.Run("hexapod", func(t *testing.T) {
		t.Parallel()
		s.absurdHexapod(t)
	})
}

// hugeTwist is a finite command far beyond every robot's limits.
func hugeTwist() *geometry_msgs_msg.Twist {
	return &geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: 1e308}, Angular: geometry_msgs_msg.Vector3{Z: -1e300}}
}

// absurdDiffbot: through the mux and straight into the simulator.
func (s *suite) absurdDiffbot(t *testing.T) {
	mux, sim := s.d.proc(t, nodeMux), s.d.proc(t, nodeSim)
	n := s.o.n
	huge, nan := hugeTwist(), &geometry_msgs_msg.Twist{Linear: geometry_msgs_msg.Vector3{X: math.NaN()}}
	const maxLin = 0.5 // rsm_sim.launch.xml's mux and params/sim.yaml's diff_drive_sim limit

	// teleoperation through the mux
	s.o.resetMax()
	muxMark := len(mux.out.String())
	teleSent := publishFor(t, n, "/diffbot/teleoperation/cmd_vel", huge, 20, 1500*time.Millisecond)
	// The mux switched to TELEOPERATION on them: seen on
	// rsm/operationMode (a sample of the mode just after the last command
	// found STOPPED once on a loaded machine, the idle timer having run
	// out in a stall).
	testenv.WaitFor(t, 5*time.Second, "TELEOPERATION on rsm/operationMode after the teleoperation commands", func() bool {
		return s.o.sawMode(rsm_msgs_msg.OperationMode_TELEOPERATION)
	})
	snap := s.o.get()
	if snap.maxCmd > maxLin || snap.maxCmd < maxLin-1e-9 {
		t.Errorf("the mux forwarded |linear.x| up to %g, want exactly the limit %g", snap.maxCmd, maxLin)
	}
	if snap.maxSpeed > maxLin+1e-9 {
		t.Errorf("the robot drove %g m/s, above the limit %g", snap.maxSpeed, maxLin)
	}
	if c := linesSince(mux, muxMark, "teleoperation cmd_vel clamped"); c != 1 {
		t.Errorf("the mux logged %d clamp warnings for %d clamped commands, want 1", c, teleSent)
	}
	testenv.WaitFor(t, 10*time.Second, "STOPPED after teleoperation", func() bool {
		return s.o.get().op.Mode == rsm_msgs_msg.OperationMode_STOPPED
	})

	// straight into the simulator, beside the mux's 20 Hz zeros: NaN for 3 s
	simMark := len(sim.out.String())
	nanSent := publishFor(t, n, "/diffbot/cmd_vel", nan, 20, 3*time.Second)
	rejected := linesSince(sim, simMark, "cmd_vel rejected")
	if rejected != 1 {
		t.Errorf("diff_drive_sim logged %d rejection warnings for 3 s of NaN at 20 Hz interleaved with good commands, want 1", rejected)
	}
	t.Logf("diff_drive_sim: %d rejection warning lines for %d NaN commands in 3 s", rejected, nanSent)
	s.o.resetMax()
	simMark = len(sim.out.String())
	hugeSent := publishFor(t, n, "/diffbot/cmd_vel", huge, 20, time.Second)
	if c := linesSince(sim, simMark, "cmd_vel clamped"); c != 1 {
		t.Errorf("diff_drive_sim logged %d clamp warnings, want 1", c)
	}
	// The clamp is what is checked; that the robot moved at all depends
	// on where earlier parts left it (against a wall it rightly stays) and
	// on how the commands interleave with the mux's zeros: logged.
	if sp := s.o.get().maxSpeed; sp > maxLin+1e-9 {
		t.Errorf("the robot drove up to %g m/s on 1e308 commands, want up to the limit %g", sp, maxLin)
	} else if sp == 0 {
		t.Logf("the robot did not move on 1e308 commands interleaved with the mux's zeros (pose %+v)", s.o.get().pose)
	}
	// Said once, counted every time: commands_rejected on /diagnostics.
	s.rejectedCounted(t, nodeMux, teleSent)
	s.rejectedCounted(t, nodeSim, nanSent+hugeSent)
}

// absurdHexapod: the hexapod's cmd_vel.
func (s *suite) absurdHexapod(t *testing.T) {
	hex := s.d.proc(t, nodeHexapod)
	hexMark := len(hex.out.String())
	sent := publishFor(t, s.o.n, "/hexapod/cmd_vel", hugeTwist(), 10, time.Second)
	if c := linesSince(hex, hexMark, "cmd_vel clamped"); c != 1 {
		t.Errorf("motion_control logged %d clamp warnings, want 1", c)
	}
	s.rejectedCounted(t, nodeHexapod, sent)
}

// rejectedCounted waits for a node's commands_rejected on /diagnostics to
// reach atLeast, the commands the suite sent it (a fixed figure failed when
// a busy machine published fewer). A command the node's subscription queue dropped while its
// callbacks were late (a loaded machine) is counted as dropped_samples
// instead: every command must be counted as one or the other.
func (s *suite) rejectedCounted(t *testing.T, node string, atLeast uint64) {
	t.Helper()
	counted := func() (uint64, uint64) {
		return s.o.counter(node, ros.CounterCommandsRejected), s.o.counter(node, ros.CounterDroppedSamples)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r, d := counted()
		if r+d >= atLeast {
			if d > 0 {
				t.Logf("%s: %d commands rejected, %d samples dropped by a full queue", node, r, d)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: commands_rejected %d + dropped_samples %d on /diagnostics 20 s after the suite sent %d commands, want them all counted", node, r, d, atLeast)
		}
	}
}

// Issue 13 item 7: bad service and action requests were counted but never
// logged or visible. They are refused with the reason, logged at most once
// a second and counted (requests_rejected on /diagnostics).
func (s *suite) badRequests(t *testing.T) {
	n := s.o.n
	provider, nav := s.d.proc(t, nodeProvider), s.d.proc(t, nodeNav)
	pMark, nMark := len(provider.out.String()), len(nav.out.String())
	before := s.o.counter(nodeProvider, ros.CounterRequestsRejected)
	start := time.Now()
	for range 20 {
		req := &rsm_msgs_srv.AddWaypoint_Request{Position: -1}
		req.Waypoint.Pose.Position.X = math.NaN()
		req.Waypoint.Pose.Orientation.W = 1
		r, err := call(t, n, "/diffbot/rsm/addWaypoint", rsm_msgs_srv.AddWaypoint, req)
		if err != nil || r.Success || !strings.Contains(r.Message, "not finite") {
			t.Fatalf("addWaypoint with a NaN position: %+v %v; want refused with the reason", r, err)
		}
	}
	// Goals the navigator cannot interpret, as fast as it answers. The
	// client is closed afterwards: it listens to the action's topics and
	// would hide a lost client from the navigator's supervision.
	nc, err := ros.NewActionClient(n, "/diffbot/navigate_to_pose", nav2_msgs_action.NavigateToPose)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := nc.WaitForServer(ctx); err != nil {
		t.Fatal(err)
	}
	const goals = 20
	for range goals {
		g := &nav2_msgs_action.NavigateToPose_Goal{}
		g.Pose.Header.FrameId, g.Pose.Pose.Orientation.W = "nowhere", 1
		if _, err := nc.SendGoal(ctx, g, nil); !errors.Is(err, ros.ErrGoalRejected) {
			t.Fatalf("a goal in frame \"nowhere\": %v, want it rejected", err)
		}
	}
	nc.Close()
	elapsed := time.Since(start)
	testenv.WaitFor(t, 10*time.Second, "requests_rejected of serviceProviderNode to count the 20 refusals", func() bool {
		return s.o.counter(nodeProvider, ros.CounterRequestsRejected) >= before+20
	})
	testenv.WaitFor(t, 10*time.Second, "requests_rejected of the navigator to count the rejected goals", func() bool {
		return s.o.counter(nodeNav, ros.CounterRequestsRejected) >= goals
	})
	// At most one line a second for each.
	limit := int(elapsed/time.Second) + 2
	if c := linesSince(provider, pMark, "addWaypoint refused"); c < 1 || c > limit {
		t.Errorf("serviceProviderNode logged %d lines for 20 refused addWaypoint calls in %.1f s, want 1..%d", c, elapsed.Seconds(), limit)
	}
	if c := linesSince(nav, nMark, "rejected"); c < 1 || c > limit {
		t.Errorf("the navigator logged %d lines for %d rejected goals in %.1f s, want 1..%d", c, goals, elapsed.Seconds(), limit)
	}
}

// Issue 13 item 7: the simulator and navigator accepted invalid run-time
// parameter changes and reported success without applying them.
func (s *suite) parameters(t *testing.T) {
	set := func(node, name, value string) (string, int) {
		out, errs, code, _ := s.d.cli(t, 60*time.Second, "param", "set", node, name, value)
		return out + errs, code
	}
	for _, c := range []struct{ node, name, value, why string }{
		{nodeSim, "rate", "5.0", "read-only"},
		{nodeSim, "publish_clock", "true", "read-only"},
		{nodeNav, "control_rate", "5.0", "read-only"},
		{nodeNav, "cmd_vel_topic", "elsewhere", "read-only"},
		{nodeFrontier, "min_frontier_size", "1", "read-only"},
		{nodeSim, "max_linear_velocity", "-1.0", "outside the floating point range"},
		{nodeNav, "max_angular_velocity", "0.0", "must be above 0"},
	} {
		if out, code := set(c.node, c.name, c.value); code != 1 || !strings.Contains(out, c.why) {
			t.Errorf("param set %s %s %s: exit %d %q, want refused: %s", c.node, c.name, c.value, code, out, c.why)
		}
	}
	// A valid limit is applied at once.
	nav := s.d.proc(t, nodeNav)
	mark := len(nav.out.String())
	if out, code := set(nodeNav, "max_linear_velocity", "0.3"); code != 0 {
		t.Errorf("param set max_linear_velocity 0.3: exit %d %q", code, out)
	}
	testenv.WaitFor(t, 10*time.Second, "the navigator to apply the new limit", func() bool {
		return linesSince(nav, mark, "velocity limits now 0.3 m/s") == 1
	})
	if out, code := set(nodeNav, "max_linear_velocity", "0.4"); code != 0 {
		t.Errorf("param set max_linear_velocity 0.4: exit %d %q", code, out)
	}
}

// Issue 13 item 4: the demo lost its waypoints on restart.
func (s *suite) persistence(t *testing.T) {
	n := s.o.n
	mode := &rsm_msgs_srv.SetWaypointFollowingMode_Request{Mode: rsm_msgs_msg.WaypointArray_PATROL}
	if r, err := call(t, n, "/diffbot/rsm/setWaypointFollowingMode", rsm_msgs_srv.SetWaypointFollowingMode, mode); err != nil || !r.Success {
		t.Fatalf("setWaypointFollowingMode: %+v %v", r, err)
	}
	for _, w := range patrol {
		req := &rsm_msgs_srv.AddWaypoint_Request{Position: -1}
		req.Waypoint.Pose.Position = geometry_msgs_msg.Point{X: w[0], Y: w[1]}
		req.Waypoint.Pose.Orientation.W = 1
		if r, err := call(t, n, "/diffbot/rsm/addWaypoint", rsm_msgs_srv.AddWaypoint, req); err != nil || !r.Success {
			t.Fatalf("addWaypoint %v: %+v %v", w, r, err)
		}
	}
	path := filepath.Join(s.d.home, "fsmnodes", "diffbot", "waypoints.yaml")
	arr, err := rsm.LoadWaypoints(path)
	if _, statErr := os.Stat(path); statErr != nil || err != nil || len(arr.Waypoints) != 2 || arr.Mode != rsm.Patrol {
		t.Fatalf("%s after two addWaypoint calls: %v %v, %+v; want both waypoints in PATROL mode", path, statErr, err, arr)
	}
}

// Issue 13 item 4: a failed save answered success=true.
func (s *suite) failedSave(t *testing.T) {
	dir := filepath.Join(s.d.home, "fsmnodes")
	aside := dir + ".aside"
	if err := os.MkdirAll(dir, 0o755); err != nil { // nothing may have been saved yet
		t.Fatal(err)
	}
	if err := os.Rename(dir, aside); err != nil {
		t.Fatal(err)
	}
	restore := func() {
		_ = os.Remove(dir)
		_ = os.Rename(aside, dir)
	}
	defer restore()
	// A regular file where the directory must be: no save can succeed,
	// whoever runs the test.
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Each call changes the routine: a change that changes nothing is not
	// saved at all (and answers success).
	n := 0
	routine := func() *rsm_msgs_srv.SetWaypointRoutine_Response {
		n++
		r, err := call(t, s.o.n, "/diffbot/rsm/setWaypointRoutine", rsm_msgs_srv.SetWaypointRoutine,
			&rsm_msgs_srv.SetWaypointRoutine_Request{Position: 0, Routine: fmt.Sprintf("fault_save_%d", n)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := routine(); r.Success || !strings.Contains(r.Message, "not saved") {
		t.Errorf("setWaypointRoutine with an unwritable waypoints file: %+v, want success=false and the reason", r)
	}
	restore()
	if r := routine(); !r.Success {
		t.Errorf("setWaypointRoutine after the file is writable again: %+v", r)
	}
}

// arm gets the diffbot patrolling in AUTONOMOUS and returns once it moves
// at least 2 m from both patrol waypoints, so that a stop seen after a
// fault is a stop en route, not the end of a leg.
//
// A fault often ends the RSM's goal, and the patrol then turns back. When
// that leaves the robot within 2 m of the waypoint it now drives to, it
// would have to reach it, turn and leave it again before it is armed: arm
// then restarts waypoint following towards the farther waypoint instead
// (once), as it does when waypoint following is not running at all.
func (s *suite) arm(t *testing.T) {
	t.Helper()
	aimed, start := false, time.Now()
	deadline := start.Add(45 * time.Second)
	for time.Now().Before(deadline) {
		snap := s.o.get()
		if snap.op.EmergencyStop || snap.op.Mode != rsm_msgs_msg.OperationMode_AUTONOMOUS || time.Since(snap.opAt) > time.Second {
			s.setMode(t, rsm_msgs_msg.OperationMode_AUTONOMOUS)
		}
		// Driven, not coasting on a stale state: the mux forwards a
		// command and the odometry moves (a simulator resumed after
		// SIGSTOP reports its old speed once).
		moving := time.Since(snap.movedAt) < 200*time.Millisecond && math.Abs(snap.twist[0]) > 0.05 &&
			time.Since(snap.cmdNonzeroAt) < 200*time.Millisecond
		dist := distToPatrol(snap.pose)
		switch st := s.rsmState(t); {
		case st == "Idle":
			if !aimed {
				s.aim(t, snap.pose)
				aimed = true
			}
			s.setBool(t, "/diffbot/rsm/startStopWaypointFollowing", true)
		case strings.HasPrefix(st, "W:"):
			if moving && dist > 2 {
				t.Logf("armed after %.1f s at (%.1f, %.1f), %.1f m from the nearer waypoint", time.Since(start).Seconds(), snap.pose[0], snap.pose[1], dist)
				return
			}
			if !aimed && dist < 2 {
				s.setBool(t, "/diffbot/rsm/startStopWaypointFollowing", false) // to Idle, then aimed
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the diffbot did not get going on its patrol; last %+v, state %q", s.o.get(), s.rsmState(t))
}

// aim makes the waypoint farther from pose the next one of the patrol
// (rsm.WaypointFollowing drives to the first waypoint neither visited nor
// unreachable, from the end when reversed). The RSM must be Idle.
func (s *suite) aim(t *testing.T, pose [2]float64) {
	t.Helper()
	far := 0
	if math.Hypot(pose[0]-patrol[1][0], pose[1]-patrol[1][1]) > math.Hypot(pose[0]-patrol[0][0], pose[1]-patrol[0][1]) {
		far = 1
	}
	n := s.o.n
	mode := &rsm_msgs_srv.SetWaypointFollowingMode_Request{Mode: rsm_msgs_msg.WaypointArray_PATROL, Reverse: far == 0}
	if r, err := call(t, n, "/diffbot/rsm/setWaypointFollowingMode", rsm_msgs_srv.SetWaypointFollowingMode, mode); err != nil || !r.Success {
		t.Fatalf("setWaypointFollowingMode: %+v %v", r, err)
	}
	if r, err := call(t, n, "/diffbot/rsm/resetWaypoints", std_srvs_srv.Trigger, &std_srvs_srv.Trigger_Request{}); err != nil || !r.Success {
		t.Fatalf("resetWaypoints: %+v %v", r, err)
	}
	visited := &rsm_msgs_srv.WaypointVisited_Request{Position: int64(1 - far)}
	if r, err := call(t, n, "/diffbot/rsm/waypointVisited", rsm_msgs_srv.WaypointVisited, visited); err != nil || !r.Success {
		t.Fatalf("waypointVisited %d: %+v %v", 1-far, r, err)
	}
}

// target is a node to fault and what its fault means.
type target struct {
	fqn string
	// diffbotStops: the diffbot must stop (en route) after the fault;
	// own: the robot inside this process, whose joint_states stop.
	diffbotStops bool
	own          string
}

// faultCase is one signal to one node.
type faultCase struct {
	tg  target
	sig syscall.Signal
}

func (c faultCase) signalName() string {
	if c.sig == syscall.SIGKILL {
		return "kill -9"
	}
	return "SIGSTOP"
}

// faults is the state shared by the lanes of killAndStop.
type faults struct {
	mu     sync.Mutex
	active map[string]string            // node -> signal of the faults in progress
	table  map[string]map[string]string // node -> signal -> outcome
}

func (f *faults) begin(c faultCase) {
	f.mu.Lock()
	f.active[c.tg.fqn] = c.signalName()
	f.mu.Unlock()
}

func (f *faults) end(c faultCase, result string) {
	f.mu.Lock()
	delete(f.active, c.tg.fqn)
	if result != "" {
		if f.table[c.tg.fqn] == nil {
			f.table[c.tg.fqn] = map[string]string{}
		}
		f.table[c.tg.fqn][c.signalName()] = result
	}
	f.mu.Unlock()
}

// inProgress lists the faults in progress, for messages.
func (f *faults) inProgress() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var l []string
	for n, sig := range f.active {
		l = append(l, sig+" of "+n)
	}
	sort.Strings(l)
	return strings.Join(l, ", ")
}

// both is the two signals each node of a lane gets, in this order.
var both = []syscall.Signal{syscall.SIGKILL, syscall.SIGSTOP}

// laneStep is a node of the diffbot's lane and its signals, in order.
type laneStep struct {
	fqn  string
	sigs []syscall.Signal
}

// killAndStop sends each node of steps its signals in turn (the diffbot's
// lane: nodes whose fault must stop the driving diffbot, each case arms it
// first, and serviceProviderNode, which the RSM and arm call) and, with
// beside, kill -9 then SIGSTOP to every other node of the demo, but those
// elsewhere (faulted in the other demo), in a second lane alongside: the nodes that move no diffbot (foxglove_bridge, the
// robot_state_publishers, frontier_detector, which only serves
// exploration) and the hexapod and Velma, robots of their own.
//
// A process that ends without the suite killing it fails the case that
// sees it, whichever lane faults what.
func (s *suite) killAndStop(t *testing.T, steps []laneStep, beside bool, elsewhere ...string) {
	// What each node's death means; every other node of the demo
	// (foxglove_bridge, robot_state_publisher, ...) moves no robot.
	known := map[string]target{
		nodeSim:     {nodeSim, true, ""},
		nodeNav:     {nodeNav, true, ""},
		nodeMux:     {nodeMux, true, ""},
		nodeRSM:     {nodeRSM, true, ""},
		nodeHexapod: {nodeHexapod, false, "hexapod"},
		nodeVelma:   {nodeVelma, false, "velma"},
	}
	var diffbot, other []faultCase
	for _, step := range steps {
		tg, ok := known[step.fqn]
		if !ok {
			tg = target{fqn: step.fqn}
		}
		s.d.proc(t, step.fqn)
		for _, sig := range step.sigs {
			diffbot = append(diffbot, faultCase{tg, sig})
		}
	}
	for _, fqn := range s.d.order {
		if !beside {
			break
		}
		if fqn == nodeBoot { // it exits by itself once rsmNode has booted
			continue
		}
		if slices.ContainsFunc(steps, func(st laneStep) bool { return st.fqn == fqn }) || slices.Contains(elsewhere, fqn) {
			continue
		}
		tg, ok := known[fqn]
		if !ok {
			tg = target{fqn: fqn}
		}
		if tg.diffbotStops {
			t.Fatalf("%s stops the diffbot but is in no diffbot lane", fqn)
		}
		for _, sig := range both {
			other = append(other, faultCase{tg, sig})
		}
	}
	f := &faults{active: map[string]string{}, table: map[string]map[string]string{}}
	t.Cleanup(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		var b strings.Builder
		for _, fqn := range s.d.order {
			for _, sig := range []string{"kill -9", "SIGSTOP"} {
				if r, ok := f.table[fqn][sig]; ok {
					fmt.Fprintf(&b, "\n  %-32s %-8s %s", fqn, sig, r)
				}
			}
		}
		t.Logf("kill -9 / SIGSTOP outcomes (the demo's settings: Cyclone's default 10 s lease):%s", b.String())
	})
	for _, lane := range []struct {
		name  string
		cases []faultCase
	}{{"diffbot", diffbot}, {"beside", other}} {
		if len(lane.cases) == 0 {
			continue
		}
		t.Run(lane.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range lane.cases {
				s.fault(t, f, c)
			}
		})
	}
}

// maxDriven is how far the diffbot may drive after a fault of a node of
// its chain before it stops: the slowest watchdog of the chain (the mux's
// 2 s autonomy_cmd_vel_timeout) at the navigator's top speed, with room to
// spare. Supervision that waited for Cyclone's default 10 s lease drove
// 2.6 m (issue 25 finding 2).
const maxDriven = 1.5

// fault runs one case: signal, check what the robots do, bring the node
// back, check it has lost nothing.
func (s *suite) fault(t *testing.T, f *faults, c faultCase) {
	tg, sig, name := c.tg, c.sig, c.signalName()
	label := strings.ReplaceAll(strings.TrimPrefix(tg.fqn, "/"), "/", ".") + " " + name
	t.Run(label, func(t *testing.T) {
		p := s.d.proc(t, tg.fqn)
		if tg.diffbotStops {
			s.arm(t)
		}
		result := ""
		f.begin(c)
		odo0 := s.o.get().odometer
		at := time.Now()
		p.signal(t, sig)
		// Bring it back however this case ends.
		defer func() {
			if sig == syscall.SIGSTOP {
				p.signal(t, syscall.SIGCONT)
			} else {
				p.start(t)
				if tg.fqn == nodeRSM {
					s.d.proc(t, nodeBoot).start(t) // a new rsmNode boots again
				}
			}
			if err := s.answers(tg.fqn, 30*time.Second); err != nil {
				t.Errorf("after %s: %v", name, err)
			}
			f.end(c, result)
		}()
		switch {
		case tg.diffbotStops:
			var stopAt time.Time
			stopped := false
			for end := time.Now().Add(15 * time.Second); !stopped && time.Now().Before(end); {
				time.Sleep(50 * time.Millisecond)
				stopAt, stopped = s.o.get().stoppedSince(time.Now())
			}
			snap := s.o.get()
			if !stopped {
				result = fmt.Sprintf("diffbot NOT stopped 15 s after the signal, drove %.2f m", snap.odometer-odo0)
				t.Fatalf("the diffbot did not stop within 15 s of %s of %s (drove %.2f m)", name, tg.fqn, snap.odometer-odo0)
			}
			if dist := distToPatrol(snap.pose); dist < 0.5 {
				t.Errorf("the diffbot stopped %.2f m from a patrol waypoint: it finished its leg instead of stopping", dist)
			}
			time.Sleep(time.Second)
			if _, ok := s.o.get().stoppedSince(time.Now()); !ok {
				t.Errorf("the diffbot moved again within 1 s of stopping")
			}
			driven := snap.odometer - odo0
			if driven > maxDriven {
				t.Errorf("the diffbot drove %.2f m after %s of %s (at most %.1f m allowed): nobody stopped it", driven, name, tg.fqn, maxDriven)
			}
			result = fmt.Sprintf("diffbot stopped %.2f s after the signal, drove %.2f m, %.2f m short of its waypoint", stopAt.Sub(at).Seconds(), driven, distToPatrol(snap.pose))
		case tg.own != "":
			testenv.WaitFor(t, 10*time.Second, tg.own+" joint_states to stop", func() bool {
				snap := s.o.get()
				last := snap.hexAt
				if tg.own == "velma" {
					last = snap.velmaAt
				}
				return time.Since(last) > settle
			})
			result = tg.own + " stopped with its process"
		default:
			time.Sleep(time.Second)
			result = "no robot affected"
		}
		// No other process went down with it (nor with a fault of the
		// other lane: a kill by the suite is never taken for a crash).
		for _, other := range s.d.order {
			if other != nodeBoot && s.d.procs[other].exitedUnbidden() {
				t.Errorf("%s exited during %s of %s (faults in progress: %s)", other, name, tg.fqn, f.inProgress())
			}
		}
	})
	// After the node is back: a restarted rsmNode boots, a restarted
	// serviceProviderNode has kept the waypoints.
	t.Run(label+" back", func(t *testing.T) {
		if tg.fqn == nodeRSM && sig == syscall.SIGKILL {
			testenv.WaitFor(t, 60*time.Second, "the restarted rsmNode to boot", func() bool { return s.rsmState(t) == "Idle" })
		}
		if tg.fqn == nodeProvider && sig == syscall.SIGKILL {
			r, err := call(t, s.o.n, "/diffbot/rsm/getWaypoints", rsm_msgs_srv.GetWaypoints, &rsm_msgs_srv.GetWaypoints_Request{})
			if err != nil || len(r.WaypointArray.Waypoints) != 2 || r.WaypointArray.Mode != rsm_msgs_msg.WaypointArray_PATROL {
				t.Errorf("waypoints after serviceProviderNode was killed and restarted: %+v %v; want the two patrol waypoints", r, err)
			}
		}
	})
}
