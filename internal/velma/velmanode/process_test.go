package velmanode

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/action"
	"github.com/fsmnodes/fsmnodes/internal/rosidl"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/internal/velma"
	control_msgs_action "github.com/fsmnodes/fsmnodes/msgs/control_msgs/action"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
	std_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/std_msgs/msg"
	std_srvs_srv "github.com/fsmnodes/fsmnodes/msgs/std_srvs/srv"
	velma_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/velma_msgs/msg"
)

// The test binary doubles as the command-source process: with
// VELMA_TEST_HELPER=<mode> it runs helperMain instead of the tests. The
// process tests mostly wait (for motions, DDS leases, restarts): four run
// at a time.
func TestMain(m *testing.M) {
	if mode := os.Getenv("VELMA_TEST_HELPER"); mode != "" {
		if err := helperMain(mode); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	testenv.DefaultParallel(4)
	os.Exit(testenv.Main(m))
}

// helperMain sends one body goal moving right_arm_1 by VELMA_TEST_DQ over
// VELMA_TEST_SECONDS. Mode "execute" waits for success; mode "hang" prints
// "accepted" and blocks until killed.
func helperMain(mode string) error {
	domain, _ := strconv.Atoi(os.Getenv("ROS_DOMAIN_ID"))
	d := uint32(domain)
	dq, _ := strconv.ParseFloat(os.Getenv("VELMA_TEST_DQ"), 64)
	secs, _ := strconv.Atoi(os.Getenv("VELMA_TEST_SECONDS"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs+20)*time.Second)
	defer cancel()
	rc, err := ros.NewContext(ros.ContextOptions{DomainID: &d, NoSignals: true, LogOutput: io.Discard})
	if err != nil {
		return err
	}
	defer rc.Close()
	n, err := rc.NewNode("velma_goal_sender", "")
	if err != nil {
		return err
	}
	qc := make(chan [velma.BodyDOF]float64, 1)
	_, err = ros.NewSubscription(n, "/joint_states", ros.QoSDefault, func(m *sensor_msgs_msg.JointState) {
		var q [velma.BodyDOF]float64
		if len(m.Position) >= velma.BodyDOF {
			copy(q[:], m.Position)
			select {
			case qc <- q:
			default:
			}
		}
	})
	if err != nil {
		return err
	}
	cli, err := ros.NewActionClient(n, "/velma_core/spline_trajectory_action_joint", control_msgs_action.FollowJointTrajectory)
	if err != nil {
		return err
	}
	go func() { _ = rc.Spin(ctx) }()
	if err := cli.WaitForServer(ctx); err != nil {
		return err
	}
	var q [velma.BodyDOF]float64
	select {
	case q = <-qc:
	case <-ctx.Done():
		return ctx.Err()
	}
	g, err := cli.SendGoal(ctx, bodyGoal(q, dq, time.Duration(secs)*time.Second), nil)
	if err != nil {
		return err
	}
	if mode == "hang" {
		fmt.Println("accepted")
		select {}
	}
	res, st, err := g.Result(ctx)
	if err != nil {
		return err
	}
	if st != action.StatusSucceeded {
		return fmt.Errorf("goal ended %v: %+v", st, res)
	}
	return nil
}

// Multi-process test (a domain of its own): the velma_bridge executable, the
// test as observer/service caller, and goal senders in separate processes.
func TestProcesses_BridgeGoalSenderKilledMidMotion(t *testing.T) {
	t.Parallel()     // own ROS_DOMAIN_ID
	testenv.Heavy(t) // Velma's 500 Hz loops in processes of their own
	if testing.Short() {
		t.Skip("multi-process DDS test")
	}
	domain := testenv.Domain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Second)
	defer cancel()
	bin := testenv.Executable(t, "nodes/velma_bridge")
	env := append(os.Environ(), fmt.Sprintf("ROS_DOMAIN_ID=%d", domain))
	bridge := testenv.Start(t, "velma_bridge", env, bin, "--ros-args", "--params-file", "../../../params/velma.yaml")
	defer func() { // it stops on SIGINT, and cleanly
		for _, problem := range bridge.Stop() {
			t.Error(problem)
		}
		if _, err := bridge.Exited(); err != nil {
			t.Errorf("velma_bridge exit: %v", err)
		}
	}()

	rc := newCtx(t, domain)
	n, err := rc.NewNode("velma_observer", "")
	if err != nil {
		t.Fatal(err)
	}
	var body, cs latest[string]
	var st latest[*velma_msgs_msg.Status]
	var js latest[*sensor_msgs_msg.JointState]
	for _, e := range []error{
		sub(n, "/velma_core/ve_body/state", ros.QoSLatched, func(m *std_msgs_msg.String) { body.set(m.Data) }),
		sub(n, "/velma_core/cs/state", ros.QoSLatched, func(m *std_msgs_msg.String) { cs.set(m.Data) }),
		sub(n, "/velma_core/status", ros.QoSDefault, func(m *velma_msgs_msg.Status) { st.set(m) }),
		sub(n, "/joint_states", ros.QoSDefault, func(m *sensor_msgs_msg.JointState) { js.set(m) }),
	} {
		if e != nil {
			t.Fatal(e)
		}
	}
	go func() { _ = rc.Spin(ctx) }()
	call := func(name string) {
		t.Helper()
		cli, err := ros.NewClient(n, name, std_srvs_srv.Trigger)
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		if err := cli.WaitForService(ctx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r, err := cli.Call(ctx, &std_srvs_srv.Trigger_Request{})
		if err != nil || !r.Success {
			t.Fatalf("%s: %v %+v", name, err, r)
		}
	}
	waitFor(t, ctx, "ve_body transp", func() bool { v, _ := body.get(); return v == "transp" })
	waitFor(t, ctx, "cs safe", func() bool { v, _ := cs.get(); return v == "safe" })
	// ~/status shows ve_body's two-state cycle and the loop's timing while
	// the loop runs
	waitFor(t, ctx, "ve_body cycle and loop timing in ~/status", func() bool {
		s, _ := st.get()
		return s != nil && strings.Join(s.VeBodyCycle, " ") == "transp transp_st" &&
			s.LoopPeriodP50 > 0 && s.LoopPeriodP99 >= s.LoopPeriodP50 && s.LoopPeriodMax >= s.LoopPeriodP99 && s.LoopStepMax > 0
	})
	if s, _ := st.get(); s != nil {
		t.Logf("~/status loop: period p50 %.3f ms, p99 %.3f ms, max %.3f ms, step max %.3f ms, %d overruns in %d iterations",
			s.LoopPeriodP50*1e3, s.LoopPeriodP99*1e3, s.LoopPeriodMax*1e3, s.LoopStepMax*1e3, s.Overruns, s.Iteration)
	}
	call("/velma_core/motors/enable")
	waitFor(t, ctx, "enabled", func() bool { s, _ := st.get(); return s != nil && s.Motors[1].Enabled && s.Motors[2].Enabled })
	call("/velma_core/motors/hp/home")
	call("/velma_core/motors/ht/home")
	waitFor(t, ctx, "motors ready", func() bool { s, _ := st.get(); return s != nil && s.MotorsReady })

	helper := func(mode string, dq float64, secs int) *exec.Cmd {
		c := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		// a 1 s participant lease: the bridge learns of a killed sender
		// after about a second instead of Cyclone's default 10 s
		uri := "<CycloneDDS><Domain><Discovery><LeaseDuration>1s</LeaseDuration></Discovery></Domain></CycloneDDS>"
		if old := os.Getenv("CYCLONEDDS_URI"); old != "" {
			uri = old + "," + uri
		}
		c.Env = append(env, "VELMA_TEST_HELPER="+mode, fmt.Sprintf("VELMA_TEST_DQ=%g", dq),
			fmt.Sprintf("VELMA_TEST_SECONDS=%d", secs), "CYCLONEDDS_URI="+uri)
		c.Stderr = os.Stderr
		return c
	}
	// 1. a goal from another process succeeds while cs shows jnt_imp
	if out, err := helper("execute", 0.3, 2).Output(); err != nil {
		t.Fatalf("goal sender: %v %s", err, out)
	}
	if !slices.Contains(cs.history(), "jnt_imp") {
		t.Fatalf("cs states %v, want jnt_imp among them", cs.history())
	}

	// 2. a slow goal whose sender is SIGKILLed mid-motion: the bridge
	// notices the lost client (after the DDS lease), cs faults out of
	// jnt_imp (IN_ERROR → idle) and returns to safe, and the arm comes to
	// rest; ve_body stays transparent
	h := helper("hang", 0.5, 30)
	out, _ := h.StdoutPipe()
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "accepted\n" {
		t.Fatalf("helper said %q", line)
	}
	waitFor(t, ctx, "motion", func() bool { m, _ := js.get(); return m.Velocity[2] > 0.005 })
	if v, _ := cs.get(); v != "jnt_imp" {
		t.Fatalf("cs %s during the motion, want jnt_imp", v)
	}
	_, nStates := cs.get()
	m0, _ := js.get()
	_ = h.Process.Signal(syscall.SIGKILL)
	_ = h.Wait()
	waitFor(t, ctx, "cs safe after the kill", func() bool { v, n := cs.get(); return n > nStates && v == "safe" })
	after := cs.history()[nStates-1:]
	// the one-iteration idle may be overwritten before delivery (depth 1)
	if want := "[jnt_imp idle safe]"; fmt.Sprint(after) != want && fmt.Sprint(after) != "[jnt_imp safe]" {
		t.Fatalf("cs states after the kill %v, want %s", after, want)
	}
	var stopped time.Time
	waitFor(t, ctx, "arm at rest", func() bool {
		m, _ := js.get()
		if m.Velocity[2] > 0.002 {
			stopped = time.Time{}
			return false
		}
		if stopped.IsZero() {
			stopped = time.Now()
		}
		return time.Since(stopped) > time.Second
	})
	m1, _ := js.get()
	if moved := m1.Position[2] - m0.Position[2]; moved > 0.4 {
		t.Fatalf("right_arm_1 moved %.3f after the kill, want it stopped well short of +0.5 (cs states %v, ve_body states %v)", moved, cs.history(), body.history())
	}
	if v, _ := body.get(); v != "transp" {
		t.Fatalf("ve_body %s after the stop", v)
	}
	if v, _ := cs.get(); v != "safe" {
		t.Fatalf("cs %s after the stop, want safe", v)
	}
	t.Logf("arm moved %.3f rad after the kill; cs states %v", m1.Position[2]-m0.Position[2], cs.history())
}

func sub[T any, P rosidl.Ptr[T]](n *ros.Node, topic string, qos ros.QoS, cb func(P)) error {
	_, err := ros.NewSubscription[T, P](n, topic, qos, cb)
	return err
}
